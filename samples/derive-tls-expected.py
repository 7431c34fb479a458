#!/usr/bin/env python3
"""Derives samples/expected/tls-NAME/tls.tshark.csv from samples/tls-NAME.pcap with tshark alone.

Usage: derive-tls-expected.py samples/tls-*.pcap

Also writes follow-N.txt, tshark's `-z follow,tcp,raw,N` dump of connection N (one payload per line
in capture order, server lines indented by a tab): TrafficTLSTests replays them into the parser.

One row per (connection, direction). Byte columns sum tshark's TLS records as it reassembles them:
each record is its `tls.record.length` plus its 5-byte header, bucketed by `tls.record.content_type`
(or `tls.record.opaque_type`, tshark's name for TLS 1.3 encrypted records): 22 and 20 handshake,
23 application, 21 alert. sni, tls_version, cipher_suite and alpn describe the connection and repeat
on both rows: the ClientHello's server_name, the last ServerHello's version (supported_versions if
present, else legacy version), its cipher suite as tshark names it, and the ALPN the server selected.
"""
import collections
import csv
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HEADER = ["connection", "direction", "sni", "tls_version", "cipher_suite", "alpn", "tls_handshake_bytes",
          "tls_application_bytes", "tls_alert_bytes", "tls_record_header_bytes", "transfer_bytes"]
VERSIONS = {"0x0300": "SSL 3.0", "0x0301": "TLS 1.0", "0x0302": "TLS 1.1", "0x0303": "TLS 1.2", "0x0304": "TLS 1.3"}
BUCKETS = {"20": "handshake", "22": "handshake", "23": "application", "21": "alert"}


def fields(element, name):
    return [f for f in element.iter("field") if f.get("name") == name]


def derive(pcap):
    pdml = subprocess.run(["tshark", "-r", pcap, "-T", "pdml"], check=True, capture_output=True).stdout
    client = {}  # stream -> (ip, port) of the first packet's sender (the SYN)
    conn = collections.defaultdict(dict)
    sums = collections.defaultdict(lambda: collections.Counter())
    for packet in ET.fromstring(pdml).iter("packet"):
        stream = source = None
        for proto in packet.iter("proto"):
            if proto.get("name") == "tcp":
                stream = int(fields(proto, "tcp.stream")[0].get("show"))
                port = fields(proto, "tcp.srcport")[0].get("show")
            elif proto.get("name") in ("ip", "ipv6"):
                source = fields(proto, proto.get("name") + ".src")[0].get("show")
        if stream is None:
            continue
        client.setdefault(stream, (source, port))
        direction = "client_to_server" if client[stream] == (source, port) else "server_to_client"
        for proto in packet.iter("proto"):
            if proto.get("name") != "tls":
                continue
            for record in fields(proto, "tls.record"):
                kind = (fields(record, "tls.record.content_type") + fields(record, "tls.record.opaque_type"))[0]
                length = int(fields(record, "tls.record.length")[0].get("show"))
                bucket = BUCKETS.get(kind.get("show"), "other")
                sums[(stream, direction)][bucket] += length + 5
                sums[(stream, direction)]["headers"] += 5
                for name in fields(record, "tls.handshake.extensions_server_name"):
                    conn[stream].setdefault("sni", name.get("show"))
                types = [t.get("show") for t in fields(record, "tls.handshake.type")]
                if "2" in types and direction == "server_to_client":
                    hello = {"alpn": ""}
                    legacy = fields(record, "tls.handshake.version")[0].get("show")
                    chosen = fields(record, "tls.handshake.extensions.supported_version")
                    hello["tls_version"] = VERSIONS.get((chosen[0] if chosen else fields(record, "tls.handshake.version")[0]).get("show"), legacy)
                    # showname is "Cipher Suite: TLS_AES_128_GCM_SHA256 (0x1301)": keep the name.
                    hello["cipher_suite"] = fields(record, "tls.handshake.ciphersuite")[0].get("showname").split(": ", 1)[1].rsplit(" (", 1)[0]
                    alpn = fields(record, "tls.handshake.extensions_alpn_str")
                    if alpn:
                        hello["alpn"] = alpn[0].get("show")
                    conn[stream].update(hello)
    rows = []
    for stream in sorted(client):
        for direction in ("client_to_server", "server_to_client"):
            s = sums[(stream, direction)]
            c = conn[stream]
            total = s["handshake"] + s["application"] + s["alert"] + s["other"]
            rows.append([stream, direction, c.get("sni", ""), c.get("tls_version", ""), c.get("cipher_suite", ""),
                         c.get("alpn", ""), s["handshake"], s["application"], s["alert"], s["headers"], total])
    return rows


def main():
    for pcap in sys.argv[1:]:
        name = os.path.basename(pcap)[: -len(".pcap")]
        out_dir = os.path.join(os.path.dirname(os.path.abspath(pcap)), "expected", name)
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "tls.tshark.csv"), "w", newline="") as out:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(HEADER)
            rows = derive(pcap)
            writer.writerows(rows)
        for stream in sorted({row[0] for row in rows}):
            follow = subprocess.run(["tshark", "-r", pcap, "-q", "-z", f"follow,tcp,raw,{stream}"],
                                    check=True, capture_output=True, text=True).stdout
            with open(os.path.join(out_dir, f"follow-{stream}.txt"), "w") as out:
                out.write(follow)
        print(f"{out_dir}/tls.tshark.csv")


if __name__ == "__main__":
    main()
