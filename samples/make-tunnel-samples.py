#!/usr/bin/env python3
"""Wrap real sample captures in tunnels and link types (standard library only).

Run from the repository root:  python3 samples/make-tunnel-samples.py
Then check every output with tshark:  samples/check-tunnel-samples.sh

Reads samples/http-segments.pcap (IPv4) and samples/http-ipv6.pcap (IPv6), both
Ethernet, strips each frame's 14-byte Ethernet header and writes the inner IP
packet, byte for byte and with the same timestamp, inside each encapsulation
below, as samples/tunnels/<capture>--<kind>.pcap. The outer addresses run
192.0.2.1 -> 192.0.2.2 (or 2001:db8:ffff::1 -> ::2) for client-to-server
packets (inner destination port 80) and the other way for the answers, so each
tunnel looks like a real one. Every outer length field is filled in, IPv4
header checksums too; outer UDP checksums are 0 ("none", RFC 768).

kinds (the traffic `encapsulation` list of each connection in brackets):
  vxlan       Ethernet/IPv4/UDP 4789/VXLAN VNI 42/Ethernet/802.1Q VID 7   [vxlan, vlan]
  geneve      .../UDP 6081/Geneve with one 8-byte option, protocol 0x6558/Ethernet  [geneve]
  geneve-ip   .../UDP 6081/Geneve, no options, protocol 0x0800 or 0x86DD (IP directly) [geneve]
  gtpu        .../UDP 2152/GTP-U G-PDU with sequence number and a PDU session
              container extension header (type 0x85)                        [gtpu]
  teredo      .../UDP 3544/Teredo origin indication (the first packet also an
              authentication indicator)/IPv6  (IPv6 capture only)           [teredo]
  gre         .../GRE with key and sequence number, protocol 0x0800/0x86DD  [gre]
  gre-teb     .../GRE with checksum, protocol 0x6558/Ethernet               [gre]
  erspan2     .../GRE seq/ERSPAN type II (0x88BE)/Ethernet                  [gre, erspan]
  erspan3     .../GRE seq/ERSPAN type III (0x22EB) with the 8-byte platform
              subheader (O bit)/Ethernet                                    [gre, erspan]
  ipip        Ethernet/IPv4/IP-in-IP: protocol 4 (or 41 for IPv6 inside)    [ipv4_in_ip] or [ipv6_in_ip]
  in-ipv6     Ethernet/IPv6/next header 4 or 41/IP                          [ipv4_in_ip] or [ipv6_in_ip]
  mpls        Ethernet/MPLS (two labels: 100, 200 with S)/IP                [mpls]
  mpls-pw     Ethernet/MPLS (one label)/RFC 4385 control word/Ethernet      [mpls]
  pppoe       Ethernet/PPPoE session 0x1234/PPP 0x0021 or 0x0057/IP         [pppoe]
  qinq-vxlan-gre  Ethernet/802.1ad/802.1Q/IPv4/GRE/IPv4/UDP/VXLAN/Ethernet   [vlan, vlan, gre, vxlan]
  nested      Ethernet/MPLS/IPv4/GRE/IPv4/UDP/Geneve/IPv4/UDP/GTP-U/IP      [mpls, gre, geneve, gtpu]
  nflog       link type NFLOG (239): family, version 0, resource id 5, TLVs
              (little-endian) NFULA_PACKET_HDR, NFULA_PREFIX "traffic", NFULA_PAYLOAD  []
  ppp         link type PPP (9): ff 03, protocol 0x0021/0x0057, IP         []
  ppp-hdlc    link type PPP_HDLC (50): the same bytes as ppp                []
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tunnels")


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\xd4\xc3\xb2\xa1", path
    recs, off = [], 24
    while off < len(data):
        ts, us, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        assert incl == orig, "wrapping needs whole frames"
        recs.append((ts, us, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return recs


def write_pcap(path, linktype, frames):
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype)]
    for ts, us, frame in frames:
        out.append(struct.pack("<IIII", ts, us, len(frame), len(frame)) + frame)
    with open(path, "wb") as f:
        f.write(b"".join(out))


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


IDENT = [0]


def ipv4(payload, proto, forward, src=b"\xc0\x00\x02\x01", dst=b"\xc0\x00\x02\x02"):
    IDENT[0] = (IDENT[0] + 1) & 0xFFFF
    a, b = (src, dst) if forward else (dst, src)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), IDENT[0], 0x4000, 64, proto, 0, a, b)
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return header + payload


def ipv6(payload, next_header, forward):
    a = bytes.fromhex("20010db8ffff00000000000000000001")
    b = bytes.fromhex("20010db8ffff00000000000000000002")
    if not forward:
        a, b = b, a
    return struct.pack("!IHBB", 0x60000000, len(payload), next_header, 64) + a + b + payload


def udp(payload, port, forward, source_port=49152):
    sport, dport = (source_port, port) if forward else (port, source_port)
    if port == 2152:  # GTP-U peers send from and to the well-known port
        sport = dport = port
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


MAC_A, MAC_B = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def ether(payload, ethertype, forward=True, tags=()):
    a, b = (MAC_A, MAC_B) if forward else (MAC_B, MAC_A)
    head = b + a
    for tpid, vid in tags:
        head += struct.pack("!HH", tpid, vid)
    return head + struct.pack("!H", ethertype) + payload


def ip_info(packet):
    """(is_ipv6, forward): forward when the inner TCP destination port is 80."""
    v6 = packet[0] >> 4 == 6
    tcp = packet[40:] if v6 else packet[(packet[0] & 0x0F) * 4:]
    return v6, struct.unpack("!H", tcp[2:4])[0] == 80


def ethertype_of(v6):
    return 0x86DD if v6 else 0x0800


def vxlan(inner, fwd, v6, tags=((0x8100, 7),)):
    return udp(struct.pack("!BBHI", 0x08, 0, 0, 42 << 8) + ether(inner, ethertype_of(v6), fwd, tags), 4789, fwd)


def gre(inner, proto, flags=0x3000, seq=[0]):
    seq[0] += 1
    head = struct.pack("!HH", flags, proto)
    if flags & 0x8000:
        head += b"\0\0\0\0"  # checksum left 0 here, filled below
    if flags & 0x2000:
        head += struct.pack("!I", 0xBEEF)
    if flags & 0x1000:
        head += struct.pack("!I", seq[0])
    packet = head + inner
    if flags & 0x8000:
        packet = packet[:4] + struct.pack("!H", checksum(packet)) + packet[6:]
    return packet


def geneve(inner, proto, fwd, options=b""):
    assert len(options) % 4 == 0
    head = struct.pack("!BBHI", len(options) // 4, 0, proto, 42 << 8) + options
    return udp(head + inner, 6081, fwd)


def gtpu(inner, fwd, seq=[0]):
    seq[0] += 1
    # E and S set; PDU session container (0x85): length 1 word, PDU type 1 (UL) / QFI 9, next 0.
    extension = bytes([1, 0x10, 9, 0])
    body = struct.pack("!HBB", seq[0], 0, 0x85) + extension + inner
    return udp(struct.pack("!BBHI", 0x36, 0xFF, len(body), 0x1000 + (0 if fwd else 1)) + body, 2152, fwd)


def wrap(kind, packet, first):
    v6, fwd = ip_info(packet)
    et = ethertype_of(v6)
    if kind == "vxlan":
        return ether(ipv4(vxlan(packet, fwd, v6), 17, fwd), 0x0800, fwd)
    if kind == "geneve":
        option = struct.pack("!HBB", 0x0103, 0x80, 1) + b"\xca\xfe\xf0\x0d"  # class, type, length 1 word
        return ether(ipv4(geneve(ether(packet, et, fwd), 0x6558, fwd, option), 17, fwd), 0x0800, fwd)
    if kind == "geneve-ip":
        return ether(ipv4(geneve(packet, et, fwd), 17, fwd), 0x0800, fwd)
    if kind == "gtpu":
        return ether(ipv4(gtpu(packet, fwd), 17, fwd), 0x0800, fwd)
    if kind == "teredo":
        assert v6
        origin = struct.pack("!HH4s", 0, 0xFFFF ^ 3544, bytes(b ^ 0xFF for b in b"\xc6\x33\x64\x01"))
        auth = struct.pack("!HBB", 1, 0, 0) + b"\x01\x02\x03\x04\x05\x06\x07\x08" + b"\x00" if first else b""
        return ether(ipv4(udp(auth + origin + packet, 3544, fwd, source_port=51000), 17, fwd), 0x0800, fwd)
    if kind == "gre":
        return ether(ipv4(gre(packet, et), 47, fwd), 0x0800, fwd)
    if kind == "gre-teb":
        return ether(ipv4(gre(ether(packet, et, fwd), 0x6558, flags=0x8000), 47, fwd), 0x0800, fwd)
    if kind == "erspan2":
        header = struct.pack("!HHI", 0x1000 | 7, 0x2000 | 5, 3)  # ver 1, VLAN 7; COS 1, session 5; index 3
        return ether(ipv4(gre(header + ether(packet, et, fwd), 0x88BE, flags=0x1000), 47, fwd), 0x0800, fwd)
    if kind == "erspan3":
        # ver 2, VLAN 7; COS, BSO, T, session 5; timestamp; SGT; P FT=0 HW ID D Gra O=1; platform subheader.
        header = struct.pack("!HHIHH", 0x2000 | 7, 5, 123456, 0, 0x0001) + struct.pack("!II", 0x18000000, 42)
        return ether(ipv4(gre(header + ether(packet, et, fwd), 0x22EB, flags=0x1000), 47, fwd), 0x0800, fwd)
    if kind == "ipip":
        return ether(ipv4(packet, 41 if v6 else 4, fwd), 0x0800, fwd)
    if kind == "in-ipv6":
        return ether(ipv6(packet, 41 if v6 else 4, fwd), 0x86DD, fwd)
    if kind == "mpls":
        return ether(struct.pack("!II", 100 << 12 | 64, 200 << 12 | 0x100 | 64) + packet, 0x8847, fwd)
    if kind == "mpls-pw":
        return ether(struct.pack("!II", 300 << 12 | 0x100 | 64, 0) + ether(packet, et, fwd), 0x8847, fwd)
    if kind == "pppoe":
        ppp = struct.pack("!H", 0x0057 if v6 else 0x0021) + packet
        return ether(struct.pack("!BBHH", 0x11, 0, 0x1234, len(ppp)) + ppp, 0x8864, fwd)
    if kind == "qinq-vxlan-gre":
        inner = ipv4(udp(struct.pack("!BBHI", 0x08, 0, 0, 9 << 8) + ether(packet, et, fwd), 4789, fwd), 17, fwd,
                     src=b"\x0a\xff\x00\x01", dst=b"\x0a\xff\x00\x02")
        return ether(ipv4(gre(inner, 0x0800, flags=0x2000), 47, fwd), 0x0800, fwd, tags=((0x88A8, 200), (0x8100, 100)))
    if kind == "nested":
        level3 = ipv4(gtpu(packet, fwd), 17, fwd, src=b"\x0a\x03\x00\x01", dst=b"\x0a\x03\x00\x02")
        level2 = ipv4(geneve(level3, 0x0800, fwd), 17, fwd, src=b"\x0a\x02\x00\x01", dst=b"\x0a\x02\x00\x02")
        level1 = ipv4(gre(level2, 0x0800, flags=0), 47, fwd)
        return ether(struct.pack("!I", 100 << 12 | 0x100 | 64) + level1, 0x8847, fwd)
    if kind == "nflog":
        def tlv(kind, value):
            return struct.pack("<HH", 4 + len(value), kind) + value + b"\0" * (-len(value) % 4)
        body = tlv(1, struct.pack("!HBB", et, 3, 0)) + tlv(10, b"traffic\0") + tlv(9, packet)
        return struct.pack("!BBH", 10 if v6 else 2, 0, 5) + body
    if kind in ("ppp", "ppp-hdlc"):
        return struct.pack("!BBH", 0xFF, 0x03, 0x0057 if v6 else 0x0021) + packet
    raise SystemExit("unknown kind " + kind)


LINKTYPES = {"nflog": 239, "ppp": 9, "ppp-hdlc": 50}
KINDS = ["vxlan", "geneve", "geneve-ip", "gtpu", "gre", "gre-teb", "erspan2", "erspan3", "ipip", "in-ipv6", "mpls",
         "mpls-pw", "pppoe", "qinq-vxlan-gre", "nested", "nflog", "ppp", "ppp-hdlc"]
CAPTURES = {"http-segments": KINDS, "http-ipv6": KINDS + ["teredo"]}


def main():
    os.makedirs(OUT, exist_ok=True)
    for capture, kinds in CAPTURES.items():
        recs = read_pcap(os.path.join(HERE, capture + ".pcap"))
        for kind in kinds:
            IDENT[0] = 0
            frames = [(ts, us, wrap(kind, frame[14:], i == 0)) for i, (ts, us, frame) in enumerate(recs)]
            write_pcap(os.path.join(OUT, "%s--%s.pcap" % (capture, kind)), LINKTYPES.get(kind, 1), frames)


if __name__ == "__main__":
    main()
