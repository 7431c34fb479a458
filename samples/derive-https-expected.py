#!/usr/bin/env python3
"""Derive the expected numbers for the HTTPS samples (captures with key logs) without our code.

    python3 samples/derive-https-expected.py samples/https-*.pcap samples/https-*.pcapng

Needs python3 (standard library only) and tshark 4.0; imports the HTTP/1.x parser, the connection
rows and the PDML message reader of samples/derive-expected.py.

For samples/https-NAME.pcap the key log is samples/https-NAME.keys (tshark `-o tls.keylog_file:`);
a .pcapng carries its secrets in a Decryption Secrets Block, which tshark reads by itself. The
directory is samples/expected/NAME/ (derive-expected.py's naming: https-dsb.pcapng ->
https-dsb-pcapng). Files written (definitions in samples/README.md, "HTTPS samples"):

  connections.tshark.csv  as for the cleartext samples (tshark fields, checked against conv,tcp)
  messages.tshark.csv     one row per HTTP message, derived twice: (1) tshark PDML with the key log
                          (TLS and TCP reassembly, dechunking, decompression) and (2) the independent
                          HTTP/1.x parser of derive-expected.py run over the decrypted byte streams
                          of `tshark -q -z follow,tls,raw,N`.  source=tshark when both agree on every
                          column, else the raw numbers with source=raw and discrepancies.txt (only
                          accepted for the samples in KNOWN_TSHARK_ISSUES).
  tls-records.csv         one row per (connection, direction): record bytes by real content type,
                          decrypted application bytes, TLS overhead, TCP payload bytes; the script
                          asserts handshake + application + alert + incomplete = tcp_payload_bytes and
                          application_plaintext_bytes = bytes of follow,tls,raw in that direction.
  records.csv             every TLS record: frame, outer and real content type, record bytes,
                          decrypted plaintext bytes, handshake message types.
  features.txt            per connection what tshark saw: version, suite, ALPN, encrypt_then_mac,
                          extended_master_secret, resumption, HelloRetryRequest, KeyUpdates, 0-RTT.
                          The script asserts the feature each sample was made to show (FEATURES).
  keylogs.csv             (samples with variant key logs https-NAME.{wrong,truncated,other}.keys)
                          per key log, connection and direction: records, encrypted records,
                          decrypted records, decrypted application bytes, HTTP messages tshark saw.
  streams.txt             decrypted stream bytes and the sum of transfer_bytes per direction.
"""
import collections
import csv
import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("derive_expected", os.path.join(HERE, "derive-expected.py"))
dx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dx)

BASE_OPTS = list(dx.TSHARK_OPTS) + ["-o", "tls.desegment_ssl_records:TRUE",
                                    "-o", "tls.desegment_ssl_application_data:TRUE"]

RECORDS_HEADER = ["connection", "direction", "tls_version", "cipher_suite", "records", "handshake_record_bytes",
                  "application_record_bytes", "alert_record_bytes", "application_plaintext_bytes",
                  "tls_overhead_bytes", "incomplete_record_bytes", "tcp_payload_bytes"]
DETAIL_HEADER = ["connection", "direction", "frame", "outer_type", "content_type", "record_bytes",
                 "plaintext_bytes", "decrypted", "handshake_types"]
KEYLOG_HEADER = ["keylog", "connection", "direction", "records", "encrypted_records", "decrypted_records",
                 "application_plaintext_bytes", "http_messages"]
DIRS = {"c2s": "client_to_server", "s2c": "server_to_client"}
VERSIONS = {"0x0301": "TLS 1.0", "0x0302": "TLS 1.1", "0x0303": "TLS 1.2", "0x0304": "TLS 1.3"}
TYPE_BUCKET = {20: "handshake", 22: "handshake", 23: "application", 21: "alert"}
HRR_RANDOM = "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c"

# Samples where tshark 4.0 is expected to disagree with the raw derivation of the messages.
KNOWN_TSHARK_ISSUES = {
    "https-v13-cut": "the capture ends inside the last record of the 20,000-byte response: the records "
                     "before it decrypt, the response is incomplete (body_bytes counts the decrypted bytes "
                     "present) and tshark never completes it",
}
# Samples that end inside a TLS record (bytes of the TCP stream that are in no complete record).
CUT = {"https-v13-cut"}

# What each sample must show (per connection, checked against features.txt's values).
F12 = dict(version="TLS 1.2", alpn="http/1.1", hrr="no", early_data="no")
F13 = dict(version="TLS 1.3", alpn="http/1.1", etm="-", ems="-")
FEATURES = {
    "https-v12-aes128gcm": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", ems="yes", resumed="no")],
    "https-v12-aes256gcm": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", ems="yes", resumed="no")],
    "https-v12-chacha20": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", ems="yes")],
    "https-v12-cbc-sha1-etm": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", etm="yes", ems="yes")],
    "https-v12-cbc-sha1-noetm": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", etm="no", ems="yes")],
    "https-v12-cbc-sha256": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", etm="yes", ems="yes")],
    "https-v12-cbc-sha384": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", etm="yes", ems="yes")],
    "https-v12-no-ems": [dict(F12, suite="TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", ems="no")],
    "https-v12-resumed-id": [dict(F12, resumed="no", ems="yes"), dict(F12, resumed="session_id", ems="yes")],
    "https-v12-resumed-ticket": [dict(F12, resumed="no", ems="yes"), dict(F12, resumed="ticket", ems="yes")],
    "https-v13-aes128gcm": [dict(F13, suite="TLS_AES_128_GCM_SHA256", hrr="no", resumed="no")],
    "https-v13-aes256gcm": [dict(F13, suite="TLS_AES_256_GCM_SHA384", hrr="no")],
    "https-v13-chacha20": [dict(F13, suite="TLS_CHACHA20_POLY1305_SHA256", hrr="no")],
    "https-v13-hrr": [dict(F13, hrr="yes", resumed="no")],
    "https-v13-psk": [dict(F13, resumed="no"), dict(F13, resumed="psk")],
    "https-v13-keyupdate": [dict(F13, key_update="c2s:1 s2c:1")],
    "https-v13-early-data": [dict(F13, resumed="no", early_data="no"),
                             dict(F13, resumed="psk", early_data="accepted")],
    "https-dsb-pcapng": [dict(F12, resumed="no"), dict(F13, resumed="no")],
    "https-dsb-late-pcapng": [dict(F12, resumed="no"), dict(F13, resumed="no")],
    "https-v13-cut": [dict(F13)],
}
# Samples whose expected files must be identical (same packets, secrets elsewhere).
SAME_AS = {"https-dsb-late-pcapng": "https-dsb-pcapng"}


def die(msg):
    print("derive-https-expected: ERROR: " + msg, file=sys.stderr)
    sys.exit(1)


def use_keys(keys):
    """Point derive-expected.py's tshark runs at a key log (None: secrets from the pcapng's DSB)."""
    dx.TSHARK_OPTS = BASE_OPTS + (["-o", "tls.keylog_file:" + keys] if keys else [])


def fields(element, name):
    return [f for f in element.iter("field") if f.get("name") == name]


def first(element, name, default=None):
    f = fields(element, name)
    return f[0].get("show") if f else default


# ----------------------------------------------------------------------------- TLS records
def decrypted_sizes(path):
    """Per frame, the sizes of tshark's "Decrypted TLS (N bytes)" data sources, in order."""
    out = dx.tshark(path, "-P", "-x", "-o", "gui.column.format:\"No.\",\"%m\"")
    sizes, frame = collections.defaultdict(list), 0
    for line in out.splitlines():
        if re.match(r"^\s*\d+$", line):  # the summary line: only the frame number column
            frame = int(line)
        m = re.match(r"^Decrypted TLS \((\d+) bytes\):$", line)
        if m:
            sizes[frame].append(int(m.group(1)))
    return sizes


def tls_records(path, conns):
    """Every TLS record tshark dissects, with its real content type and decrypted size, and the
    handshake facts of each connection."""
    xml = dx.tshark(path, "-T", "pdml")
    root = ET.fromstring(xml[xml.find("<?xml"):].encode("utf-8", errors="surrogateescape"))
    sizes = decrypted_sizes(path)
    records, info = [], collections.defaultdict(lambda: collections.defaultdict(str))
    ccs_seen = set()  # (stream, dir) that sent a TLS 1.2 ChangeCipherSpec
    for pkt in root.iter("packet"):
        frame = stream = src = None
        for proto in pkt:
            if proto.get("name") == "frame":
                frame = int(first(proto, "frame.number"))
            elif proto.get("name") == "tcp":
                stream = int(first(proto, "tcp.stream"))
                port = first(proto, "tcp.srcport")
            elif proto.get("name") in ("ip", "ipv6"):
                src = first(proto, proto.get("name") + ".src")
        if stream is None:
            continue
        ep = ("[%s]:%s" if ":" in src else "%s:%s") % (src, port)
        d = "c2s" if ep == conns[stream]["client"] else "s2c"
        frame_records = []
        for proto in pkt:
            if proto.get("name") != "tls":
                continue
            for rec in fields(proto, "tls.record"):
                outer = first(rec, "tls.record.opaque_type")
                inner = first(rec, "tls.record.content_type")
                length = int(first(rec, "tls.record.length")) + 5
                hs_types = [int(t.get("show")) for t in fields(rec, "tls.handshake.type")]
                c = info[stream]
                if outer is not None:  # TLS 1.3 encrypted record: inner type only when decrypted
                    encrypted, real, decrypted = True, inner, inner is not None
                    outer = int(outer)
                else:
                    outer = int(inner)
                    real = inner
                    encrypted = (stream, d) in ccs_seen and outer != 20
                    if not encrypted:
                        decrypted = False
                    elif outer == 23:
                        # tshark names the application protocol (from ALPN) even when decryption failed:
                        # decided below from the frame's data sources
                        decrypted = "maybe"
                    elif outer == 22:
                        decrypted = bool(hs_types)
                    elif outer == 21:
                        decrypted = bool(fields(rec, "tls.alert_message.desc"))
                    else:
                        decrypted = False
                    if outer == 20 and c["version"] == "TLS 1.2":
                        ccs_seen.add((stream, d))
                r = {"connection": stream, "dir": d, "frame": frame, "outer": outer,
                     "type": int(real) if real is not None else None, "bytes": length,
                     "encrypted": encrypted, "decrypted": decrypted, "plaintext": None, "hs": hs_types}
                frame_records.append(r)
                # handshake facts
                if 1 in hs_types and d == "c2s":
                    c["sni"] = c["sni"] or first(rec, "tls.handshake.extensions_server_name", "")
                    ext = [int(e.get("show")) for e in fields(rec, "tls.handshake.extension.type")]
                    c["ch_early_data"] = "yes" if 42 in ext else c["ch_early_data"]
                    for e in rec.iter("field"):
                        m = re.match(r"^Extension: session_ticket \(len=(\d+)\)", e.get("show", ""))
                        if m and not e.get("name"):
                            c["ch_ticket_len"] = m.group(1)
                    c["ch_session_id"] = first(rec, "tls.handshake.session_id", "")
                if 2 in hs_types and d == "s2c":
                    rnd = first(rec, "tls.handshake.random", "").replace(":", "")
                    ext = [int(e.get("show")) for e in fields(rec, "tls.handshake.extension.type")]
                    if rnd == HRR_RANDOM:
                        c["hrr"] = "yes"
                        c["version"] = "TLS 1.3"
                        continue
                    sv = first(rec, "tls.handshake.extensions.supported_version")
                    c["version"] = VERSIONS.get(sv or first(rec, "tls.handshake.version"), "?")
                    c["suite"] = fields(rec, "tls.handshake.ciphersuite")[0].get("showname").split(": ", 1)[1] \
                        .rsplit(" (", 1)[0]
                    c["etm"] = ("yes" if 22 in ext else "no") if c["version"] == "TLS 1.2" else "-"
                    c["ems"] = ("yes" if 23 in ext else "no") if c["version"] == "TLS 1.2" else "-"
                    c["sh_psk"] = "yes" if 41 in ext else "no"
                    c["sh_session_id"] = first(rec, "tls.handshake.session_id", "")
                    c["alpn"] = c["alpn"] or first(rec, "tls.handshake.extensions_alpn_str", "")
                if 8 in hs_types:  # EncryptedExtensions (TLS 1.3, decrypted)
                    ext = [int(e.get("show")) for e in fields(rec, "tls.handshake.extension.type")]
                    c["ee_early_data"] = "yes" if 42 in ext else "no"
                    c["alpn"] = c["alpn"] or first(rec, "tls.handshake.extensions_alpn_str", "")
                if 11 in hs_types and d == "s2c":
                    c["certificate"] = "yes"
                if 24 in hs_types:
                    c["key_update_" + d] = str(int(c["key_update_" + d] or 0) + hs_types.count(24))
                if 5 in hs_types and d == "c2s":
                    c["end_of_early_data"] = "yes"
        got = sizes.get(frame, [])
        maybe = [r for r in frame_records if r["decrypted"] == "maybe"]
        sure = [r for r in frame_records if r["decrypted"] is True]
        if maybe:
            extra = len(got) - len(sure)
            if extra not in (0, len(maybe)):
                die("%s frame %d: %d of %d TLS 1.2 application records decrypted: cannot tell which"
                    % (path, frame, extra, len(maybe)))
            for r in maybe:
                r["decrypted"] = extra == len(maybe)
        dec = [r for r in frame_records if r["decrypted"]]
        if len(dec) != len(got):
            die("%s frame %d: %d decrypted records in PDML, %d 'Decrypted TLS' data sources"
                % (path, frame, len(dec), len(got)))
        for r, n in zip(dec, got):
            r["plaintext"] = n
        records += frame_records
    return records, info


def features(c, records, sid):
    """The features.txt values of one connection."""
    v = c["version"]
    if v == "TLS 1.3":
        resumed = "psk" if c["sh_psk"] == "yes" else "no"
    else:
        abbreviated = c["certificate"] != "yes"
        if not abbreviated:
            resumed = "no"
        elif c["ch_ticket_len"] not in ("", "0"):
            resumed = "ticket"
        else:
            resumed = "session_id" if c["sh_session_id"] and c["sh_session_id"] == c["ch_session_id"] else "?"
    early = [r for r in records if r["connection"] == sid and r["dir"] == "c2s" and r["type"] == 23
             and r["frame"] < min([x["frame"] for x in records if x["connection"] == sid and x["dir"] == "s2c"
                                   and 2 in x["hs"]] or [0])]
    if c["ee_early_data"] == "yes":
        early_data = "accepted"
    elif c["ch_early_data"] == "yes":
        early_data = "rejected"
    else:
        early_data = "no"
    return collections.OrderedDict([
        ("version", v), ("suite", c["suite"]), ("sni", c["sni"]), ("alpn", c["alpn"]), ("etm", c["etm"]),
        ("ems", c["ems"]), ("resumed", resumed), ("hrr", c["hrr"] or "no"),
        ("key_update", "c2s:%s s2c:%s" % (c["key_update_c2s"] or 0, c["key_update_s2c"] or 0)),
        ("early_data", early_data), ("early_data_records", str(len(early))),
        ("end_of_early_data", c["end_of_early_data"] or "no")])


def check_overhead(path, c, r):
    """Record bytes - plaintext must be what the suite adds (exactly for AEAD, a valid padding for CBC)."""
    suite, over = c["suite"], r["bytes"] - r["plaintext"]
    if c["version"] == "TLS 1.3":
        ok = over == 5 + 16 + 1  # header, tag, inner content type (OpenSSL adds no padding)
    elif "GCM" in suite:
        ok = over == 5 + 8 + 16  # header, explicit nonce, tag
    elif "CHACHA20" in suite:
        ok = over == 5 + 16  # header, tag
    elif "CBC" in suite:
        mac = 48 if suite.endswith("SHA384") else 32 if suite.endswith("SHA256") else 20
        pad = over - 5 - 16 - mac  # header, explicit IV, MAC; the rest is padding with its length byte
        encrypted = r["bytes"] - 5 - 16 - (mac if c["etm"] == "yes" else 0)
        ok = 1 <= pad <= 16 and encrypted % 16 == 0  # OpenSSL pads minimally
    else:
        ok = False
    if not ok:
        die("%s frame %d: type %s record of %d bytes has %d plaintext bytes: not %s's overhead"
            % (path, r["frame"], r["type"], r["bytes"], r["plaintext"], suite))


def follow_tls(path, sid, client):
    """The decrypted application data of one connection: (client->server, server->client) bytes."""
    out = dx.tshark(path, "-q", "-z", "follow,tls,raw,%d" % sid)
    got = {"node0": bytearray(), "node1": bytearray()}
    node0 = None
    for line in out.splitlines():
        if line.startswith("Node 0: "):
            node0 = line[8:].strip()
            continue
        if node0 is None or line.startswith("===") or line.startswith("Node 1: ") or not line.strip():
            continue
        got["node1" if line.startswith("\t") else "node0"] += bytes.fromhex(line.strip())
    # Node 0 is the sender of the first decrypted record (the server in an abbreviated TLS 1.2
    # handshake, whose Finished comes first); tshark 4.0 prints Node 1 as ":0".
    if node0 is None or node0 == client:
        return {"c2s": got["node0"], "s2c": got["node1"]}
    return {"c2s": got["node1"], "s2c": got["node0"]}


def raw_stream(data):
    """A derive-expected.py Stream over decrypted bytes (no gaps)."""
    s = dx.Stream()
    s.buf, s.have, s.end = bytearray(data), bytearray(b"\x01" * len(data)), len(data)
    s.gaps, s.missing, s.conflicts = [], 0, 0
    return s


def tcp_payload(path, conns):
    """TCP payload bytes per (stream, dir), retransmissions excluded."""
    out = dx.tshark(path, "-o", "tcp.desegment_tcp_streams:FALSE", "-T", "fields", "-E", "separator=\t",
                    "-e", "tcp.stream", "-e", "tcp.len", "-e", "ip.src", "-e", "tcp.srcport",
                    "-e", "tcp.analysis.retransmission", "-e", "tcp.analysis.fast_retransmission",
                    "-e", "tcp.analysis.spurious_retransmission")
    tot, retrans = collections.Counter(), 0
    for line in out.splitlines():
        v = line.split("\t") + [""] * 7
        if not v[0]:
            continue
        sid = int(v[0])
        d = "c2s" if "%s:%s" % (v[2], v[3]) == conns[sid]["client"] else "s2c"
        if any(v[4:7]):
            retrans += 1
            continue
        tot[(sid, d)] += int(v[1] or 0)
    return tot, retrans


# ----------------------------------------------------------------------------- messages
def messages(path, name, conns, plain, tmsgs, known):
    """derive-expected.py's tshark-vs-raw comparison over the decrypted streams."""
    rows, problems, lines = [], [], []
    for sid in sorted(conns):
        st = {d: raw_stream(plain[sid][d]) for d in ("c2s", "s2c")}
        reqs = dx.parse_messages(st["c2s"], "request")
        resps = dx.parse_messages(st["s2c"], "response", [r for r in reqs if "error" not in r])
        for d, ms in (("c2s", reqs), ("s2c", resps)):
            for m in ms:
                if "error" in m:
                    problems.append("stream %d %s: %s" % (sid, d, m["error"]))
            total = sum(m["transfer_bytes"] for m in ms if "error" not in m)
            lines.append("stream %d %s: decrypted_stream_bytes=%d transfer_bytes_sum=%d"
                         % (sid, d, st[d].end, total))
            if total != st[d].end:
                die("%s stream %d %s: sum of transfer_bytes %d != %d decrypted bytes" % (path, sid, d, total, st[d].end))
        ordered = []
        for r in reqs:
            if "error" in r:
                continue
            ordered.append(r)
            ordered += [x for x in resps if x.get("request") is r]
        ordered += [x for x in resps if "error" not in x and x.get("request") is None]
        tlist = [t for t in tmsgs if t["connection"] == sid]
        for kind in ("request", "response"):
            cand = [x for x in (reqs if kind == "request" else resps) if "error" not in x]
            ci = 0
            for t in [t for t in tlist if t["kind"] == kind]:
                j = ci
                while j < len(cand) and cand[j]["start"] != t["start"]:
                    j += 1
                if j == len(cand):
                    problems.append("stream %d: tshark %s in frame %d (%r) matches no message in the raw stream"
                                    % (sid, kind, t["frame"], t["start"]))
                    continue
                cand[j]["tshark"] = t
                ci = j + 1
        for m in ordered:
            row = {k: m[k] for k in dx.MSG_HEADER[1:-1]}
            for k in ("encoded_body_bytes", "decoded_body_bytes"):
                if row[k] is None:
                    problems.append("stream %d %s %r: %s unknown (incomplete/undecodable)" % (sid, m["kind"], m["start"], k))
                    row[k] = row["body_bytes"] if k == "encoded_body_bytes" else row["encoded_body_bytes"]
            t = m.get("tshark")
            diffs = []
            if t is None:
                diffs.append("tshark has no such message")
            else:
                for k in dx.COMPARED:
                    if k == "method" and m["kind"] == "response":
                        continue
                    tv = t[k]
                    if str(tv if tv is not None else "?") != str(row[k]):
                        diffs.append("%s tshark=%s raw=%s" % (k, "?" if tv is None else tv, row[k]))
            if not m["complete"]:
                diffs.append("message incomplete in the capture (body_bytes counts the decrypted bytes present)")
            row["source"] = "raw" if diffs else "tshark"
            if diffs:
                problems.append("stream %d %s %r for %s (tshark frame %s): %s" % (
                    sid, m["kind"], m["start"], m["path"] or "?", t["frame"] if t else "-", "; ".join(diffs)))
            rows.append([sid] + [row[k] for k in dx.MSG_HEADER[1:]])
    return rows, problems, lines


# ----------------------------------------------------------------------------- per sample
def analyse_keys(path, keys, conns):
    """Records and decrypted bytes with one key log (for keylogs.csv)."""
    use_keys(keys)
    records, _ = tls_records(path, conns)
    tmsgs = dx.pdml_messages(path)
    rows = []
    for sid in sorted(conns):
        plain = follow_tls(path, sid, conns[sid]["client"])
        for d in ("c2s", "s2c"):
            rs = [r for r in records if r["connection"] == sid and r["dir"] == d]
            app = sum(r["plaintext"] for r in rs if r["decrypted"] and r["type"] == 23)
            if app != len(plain[d]):
                die("%s with %s stream %d %s: %d decrypted application bytes, follow,tls,raw %d"
                    % (path, keys, sid, d, app, len(plain[d])))
            kind = "request" if d == "c2s" else "response"
            rows.append([os.path.basename(keys), sid, DIRS[d], len(rs), sum(r["encrypted"] for r in rs),
                         sum(r["decrypted"] for r in rs), app,
                         sum(1 for t in tmsgs if t["connection"] == sid and t["kind"] == kind)])
    return rows


def dsb_secrets(path):
    """The TLS key logs of a pcapng's Decryption Secrets Blocks, each with the number of packet
    blocks before it (little-endian pcapng, as editcap writes it)."""
    import struct
    data = open(path, "rb").read()
    if data[:4] != b"\x0a\x0d\x0d\x0a" or data[8:12] != b"\x4d\x3c\x2b\x1a":
        die("%s: not a little-endian pcapng" % path)
    out, pos, packets = [], 0, 0
    while pos + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, pos)
        if btype in (3, 6):
            packets += 1
        elif btype == 0x0A:
            stype, slen = struct.unpack_from("<II", data, pos + 8)
            if stype == 0x544C534B:
                out.append((data[pos + 16:pos + 16 + slen].decode(), packets))
        pos += blen
    return out


def do_sample(path):
    fname = os.path.basename(path)
    name = dx.sample_name(fname)
    outdir = os.path.join(dx.OUT, name)
    os.makedirs(outdir, exist_ok=True)
    keys, dsb_note = None, None
    if fname.endswith(".pcap"):
        keys = path[:-len(".pcap")] + ".keys"
        if not os.path.exists(keys):
            die("%s has no key log %s" % (path, keys))
    else:
        secrets = dsb_secrets(path)
        if not secrets:
            die("%s has no TLS Decryption Secrets Block" % path)
        if any(before for _, before in secrets):
            # tshark 4.0 (even with -2) decrypts nothing before the block that brings the secrets:
            # derive with the same secrets given as a key log, and note what tshark does alone.
            keys = os.path.join(HERE, ".work", name + ".dsb.keys")
            os.makedirs(os.path.dirname(keys), exist_ok=True)
            with open(keys, "w") as f:
                f.write("".join(text for text, _ in secrets))
            use_keys(None)
            fr = dx.read_frames(path)
            alone, _ = tls_records(path, dx.connections(fr)[0])
            enc = [r for r in alone if r["encrypted"]]
            dsb_note = ("Decryption Secrets Blocks: %s\n"
                        "tshark 4.0 with the DSB alone decrypts %d of %d encrypted records (none before the "
                        "block, also with -2); the expected files are derived with the same secrets given as "
                        "-o tls.keylog_file\n" % (", ".join("%d lines after %d packet blocks" % (t.count("\n"), b)
                                                              for t, b in secrets),
                                                    sum(1 for r in enc if r["decrypted"]), len(enc)))
    use_keys(keys)

    # TLS decryption must be complete: every encrypted record decrypted, nothing unknown.
    summary = dx.tshark(path)
    if "Ignored Unknown Record" in summary:
        die("%s: tshark shows 'Ignored Unknown Record'" % path)

    frames = dx.read_frames(path)
    conns, conn_rows = dx.connections(frames)
    dx.check_conv(path, conn_rows)
    dx.write_csv(os.path.join(outdir, "connections.tshark.csv"), dx.CONN_HEADER, conn_rows)

    records, info = tls_records(path, conns)
    undecrypted = [r for r in records if r["encrypted"] and not r["decrypted"]]
    if undecrypted:
        die("%s: %d encrypted records not decrypted (first in frame %d)" % (path, len(undecrypted), undecrypted[0]["frame"]))
    payload, retrans = tcp_payload(path, conns)
    plain = {sid: follow_tls(path, sid, conns[sid]["client"]) for sid in conns}

    rec_rows, detail, feat_lines = [], [], []
    for sid in sorted(conns):
        c = info[sid]
        feats = features(c, records, sid)
        feat_lines.append("connection %d: %s" % (sid, " ".join("%s=%s" % (k, v.replace(" ", "_") if k != "key_update"
                                                                          else v.replace(" ", ","))
                                                               for k, v in feats.items())))
        want = FEATURES.get(name, [])
        if sid < len(want):
            for k, v in want[sid].items():
                if feats[k] != v:
                    die("%s connection %d: %s is %r, the sample was made to show %r" % (path, sid, k, feats[k], v))
        for d in ("c2s", "s2c"):
            rs = [r for r in records if r["connection"] == sid and r["dir"] == d]
            b = collections.Counter()
            for r in rs:
                b[TYPE_BUCKET.get(r["type"], "other")] += r["bytes"]
                if r["decrypted"]:
                    check_overhead(path, c, r)
                detail.append([sid, DIRS[d], r["frame"], r["outer"], r["type"], r["bytes"],
                               "" if r["plaintext"] is None else r["plaintext"], "yes" if r["decrypted"] else "no",
                               " ".join(str(t) for t in r["hs"])])
            if b["other"]:
                die("%s stream %d %s: records of unknown type" % (path, sid, d))
            app_plain = sum(r["plaintext"] for r in rs if r["type"] == 23)
            if app_plain != len(plain[sid][d]):
                die("%s stream %d %s: %d decrypted application bytes in records, %d in follow,tls,raw"
                    % (path, sid, d, app_plain, len(plain[sid][d])))
            tcp = payload[(sid, d)]
            incomplete = tcp - b["handshake"] - b["application"] - b["alert"]
            if incomplete and name not in CUT:
                die("%s stream %d %s: records %d + %d + %d != %d TCP payload bytes"
                    % (path, sid, d, b["handshake"], b["application"], b["alert"], tcp))
            if incomplete < 0:
                die("%s stream %d %s: more record bytes than TCP payload" % (path, sid, d))
            rec_rows.append([sid, DIRS[d], c["version"], c["suite"], len(rs), b["handshake"], b["application"],
                             b["alert"], app_plain, b["application"] - app_plain, incomplete, tcp])
    if name in CUT and not any(r[10] for r in rec_rows):
        die("%s: made to end inside a record, but every TCP byte is in a complete record" % path)
    if retrans:
        die("%s: %d retransmissions (loopback captures should have none)" % (path, retrans))

    tmsgs = dx.pdml_messages(path)
    msg_rows, problems, stream_lines = messages(path, name, conns, plain, tmsgs, KNOWN_TSHARK_ISSUES.get(name))

    dx.write_csv(os.path.join(outdir, "messages.tshark.csv"), dx.MSG_HEADER, msg_rows)
    dx.write_csv(os.path.join(outdir, "tls-records.csv"), RECORDS_HEADER, rec_rows)
    dx.write_csv(os.path.join(outdir, "records.csv"), DETAIL_HEADER, detail)
    with open(os.path.join(outdir, "features.txt"), "w") as f:
        f.write("\n".join(feat_lines) + "\n")
    with open(os.path.join(outdir, "streams.txt"), "w") as f:
        f.write("\n".join(stream_lines) + "\n")
    note = os.path.join(outdir, "dsb.txt")
    if dsb_note:
        with open(note, "w") as f:
            f.write(dsb_note)
    elif os.path.exists(note):
        os.remove(note)
    disc = os.path.join(outdir, "discrepancies.txt")
    known = KNOWN_TSHARK_ISSUES.get(name)
    if problems:
        with open(disc, "w") as f:
            f.write("# tshark vs raw derivation for %s\n" % fname)
            if known:
                f.write("# known: %s\n" % known)
            f.write("\n".join(problems) + "\n")
    elif os.path.exists(disc):
        os.remove(disc)

    # variant key logs: https-NAME.{wrong,truncated,other}.keys
    kl = os.path.join(outdir, "keylogs.csv")
    variants = sorted(f for f in os.listdir(os.path.dirname(path))
                      if keys and f.startswith(fname[:-len(".pcap")] + ".") and f.endswith(".keys")
                      and f != os.path.basename(keys))
    if variants:
        rows = analyse_keys(path, keys, conns)
        for v in variants:
            rows += analyse_keys(path, os.path.join(os.path.dirname(path), v), conns)
        dx.write_csv(kl, KEYLOG_HEADER, rows)
    elif os.path.exists(kl):
        os.remove(kl)

    status = "%d connections, %d messages, %d records" % (len(conns), len(msg_rows), len(records))
    if problems:
        status += ", %d discrepancies (%s)" % (len(problems), "expected" if known else "UNEXPECTED")
    if variants:
        status += ", key logs: " + " ".join(variants)
    print("derive-https-expected: %-26s %s" % (name, status))
    return not problems or bool(known)


def main(argv):
    if not argv:
        argv = sorted(os.path.join(HERE, f) for f in os.listdir(HERE)
                      if f.startswith("https-") and re.search(r"\.(pcap|pcapng)$", f))
    ok = True
    for path in argv:
        ok &= do_sample(path)
    for a, b in SAME_AS.items():
        da, db = os.path.join(dx.OUT, a), os.path.join(dx.OUT, b)
        if os.path.isdir(da) and os.path.isdir(db):
            for f in ("messages.tshark.csv", "tls-records.csv", "records.csv", "features.txt", "connections.tshark.csv"):
                if open(os.path.join(da, f)).read() != open(os.path.join(db, f)).read():
                    die("%s/%s differs from %s's: the same packets must give the same numbers" % (a, f, b))
    if not ok:
        die("unexpected tshark/raw discrepancies (see discrepancies.txt)")


if __name__ == "__main__":
    main(sys.argv[1:])
