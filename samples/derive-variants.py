#!/usr/bin/env python3
"""Derive variant captures from the real captures (standard library only).

Reads/writes classic pcap records directly.  Run from the repository root
(samples/make-samples.sh does that):  python3 samples/derive-variants.py

From samples/http-basic.pcap (Ethernet, little-endian, microseconds):
  http-basic-be.pcap      same records, big-endian file and record headers
  http-basic-rawip.pcap   linktype 101 (raw IP): Ethernet header removed
  http-basic-null.pcap    linktype 0 (BSD loopback): 4-byte AF_INET (2) in
                          little-endian (host) order instead of Ethernet
  http-basic-vlan.pcap    802.1Q tag (TPID 0x8100, VID 100, PCP 3) inserted
  http-basic-qinq.pcap    802.1ad outer tag (0x88a8, VID 200) + 802.1Q inner
                          tag (0x8100, VID 100)
  http-basic-ipfrag.pcap  IPv4 packets longer than 1500 bytes split into
                          1480-byte fragments (the 20 KB response's fragments
                          are written in reverse order), and the /account/
                          request split into 64-byte fragments
From samples/http-segments.pcap (veth, MTU 1500, 12 KB response + second
request/response on the same connection):
  http-segments-reordered.pcap   two pairs of server data segments swapped
  http-segments-duplicated.pcap  three server data segments sent twice
                                 (one immediately, two a few packets later)
  http-segments-dropped.pcap     one mid-body server data segment removed
  http-segments-truncated.pcap   file cut in the middle of a packet record
                                 (mid-body of the 12 KB response)
Timestamps keep their original slot order (a reordered or retransmitted
packet gets the timestamp of the slot it is written in).
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        e = "<"
    elif magic == b"\xa1\xb2\xc3\xd4":
        e = ">"
    else:
        raise SystemExit("%s: not a little/big-endian microsecond pcap" % path)
    vmaj, vmin, tz, sig, snap, lt = struct.unpack(e + "HHiIII", data[4:24])
    recs, off = [], 24
    while off < len(data):
        ts, us, incl, orig = struct.unpack(e + "IIII", data[off:off + 16])
        recs.append([ts, us, data[off + 16:off + 16 + incl], orig])
        off += 16 + incl
    return {"snap": snap, "linktype": lt}, recs


def pcap_bytes(hdr, recs, linktype=None, endian="<"):
    out = [struct.pack(endian + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, hdr["snap"],
                       hdr["linktype"] if linktype is None else linktype)]
    for ts, us, pkt, orig in recs:
        out.append(struct.pack(endian + "IIII", ts, us, len(pkt), orig) + pkt)
    return b"".join(out)


def write(name, blob):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(blob)
    print("derive-variants: %s (%d bytes)" % (name, len(blob)))


def with_pkt(rec, pkt, delta=None):
    """Record with new packet bytes; orig_len follows the change in size."""
    ts, us, old, orig = rec
    return [ts, us, pkt, orig + (len(pkt) - len(old) if delta is None else delta)]


def ip_checksum(h):
    s = 0
    for i in range(0, len(h), 2):
        s += (h[i] << 8) + h[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4_fragments(ip, size, ident):
    """Split an IPv4 packet (bytes) into fragments carrying `size` bytes each."""
    ihl = (ip[0] & 15) * 4
    hdr, payload = bytearray(ip[:ihl]), ip[ihl:]
    assert size % 8 == 0
    frags = []
    for off in range(0, len(payload), size):
        part = payload[off:off + size]
        h = bytearray(hdr)
        more = off + size < len(payload)
        struct.pack_into("!H", h, 2, ihl + len(part))
        struct.pack_into("!H", h, 4, ident)
        struct.pack_into("!H", h, 6, (0x2000 if more else 0) | (off // 8))  # DF cleared
        struct.pack_into("!H", h, 10, 0)
        struct.pack_into("!H", h, 10, ip_checksum(h))
        frags.append(bytes(h) + part)
    return frags


def tcp_info(pkt):
    """(src port, payload length, payload) for Ethernet/IPv4/TCP, else None."""
    if struct.unpack("!H", pkt[12:14])[0] != 0x0800:
        return None
    ip = pkt[14:]
    if ip[9] != 6:
        return None
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack("!H", ip[2:4])[0]
    tcp = ip[ihl:tot]
    doff = (tcp[12] >> 4) * 4
    return struct.unpack("!H", tcp[0:2])[0], len(tcp) - doff, tcp[doff:]


def basic_variants():
    hdr, recs = read_pcap(os.path.join(HERE, "http-basic.pcap"))
    assert hdr["linktype"] == 1
    for r in recs:
        assert r[3] == len(r[2]), "snapped packet in http-basic.pcap"
    write("http-basic-be.pcap", pcap_bytes(hdr, recs, endian=">"))
    write("http-basic-rawip.pcap", pcap_bytes(hdr, [with_pkt(r, r[2][14:]) for r in recs], linktype=101))
    write("http-basic-null.pcap", pcap_bytes(
        hdr, [with_pkt(r, struct.pack("<I", 2) + r[2][14:]) for r in recs], linktype=0))
    vlan = struct.pack("!HH", 0x8100, (3 << 13) | 100)
    write("http-basic-vlan.pcap", pcap_bytes(hdr, [with_pkt(r, r[2][:12] + vlan + r[2][12:]) for r in recs]))
    outer = struct.pack("!HH", 0x88A8, 200)
    inner = struct.pack("!HH", 0x8100, 100)
    write("http-basic-qinq.pcap", pcap_bytes(hdr, [with_pkt(r, r[2][:12] + outer + inner + r[2][12:]) for r in recs]))

    out, ident = [], 0x7A00
    for r in recs:
        pkt = r[2]
        info = tcp_info(pkt)
        ip = pkt[14:]
        if len(ip) > 1500:
            frags = ipv4_fragments(ip, 1480, ident)
            if len(frags) > 4:
                frags.reverse()  # out-of-order fragments
        elif info and info[2].startswith(b"GET /account/"):
            frags = ipv4_fragments(ip, 64, ident)
        else:
            out.append(r)
            continue
        ident += 1
        for fr in frags:
            out.append([r[0], r[1], pkt[:14] + fr, 14 + len(fr)])
    write("http-basic-ipfrag.pcap", pcap_bytes(hdr, out))


def segment_variants():
    hdr, recs = read_pcap(os.path.join(HERE, "http-segments.pcap"))
    data = [i for i, r in enumerate(recs) if (lambda t: t and t[0] == 80 and t[1] > 0)(tcp_info(r[2]))]
    # data[0] holds the response head (and the first body bytes); the 12 KB body
    # continues in data[1..8]; the last one(s) are the second response.
    assert len(data) >= 8, data
    ts = [(r[0], r[1]) for r in recs]

    def retime(lst):
        return [[ts[i][0], ts[i][1], r[2], r[3]] if i < len(ts) else r for i, r in enumerate(lst)]

    # reordered: swap data[2] <-> data[3] and data[5] <-> data[6]
    ro = list(recs)
    for a, b in ((data[2], data[3]), (data[5], data[6])):
        ro[a], ro[b] = ro[b], ro[a]
    write("http-segments-reordered.pcap", pcap_bytes(hdr, retime(ro)))

    # duplicated: data[1] repeated right away, data[3] and data[4] repeated two packets later
    du = []
    for i, r in enumerate(recs):
        du.append(r)
        if i == data[1]:
            du.append(list(r))
        if i == data[4] + 2:
            du.append(list(recs[data[3]]))
            du.append(list(recs[data[4]]))
    tsd = []
    for i, r in enumerate(du):  # monotonic timestamps: a repeated packet gets 1 us after its predecessor
        if i and (r[0], r[1]) <= (tsd[-1][0], tsd[-1][1]):
            s, u = tsd[-1][0], tsd[-1][1] + 1
            r = [s + u // 1000000, u % 1000000, r[2], r[3]]
        tsd.append(r)
    write("http-segments-duplicated.pcap", pcap_bytes(hdr, tsd))

    # dropped: data[4] removed (mid-body of the 12 KB response)
    write("http-segments-dropped.pcap", pcap_bytes(hdr, [r for i, r in enumerate(recs) if i != data[4]]))

    # truncated: cut in the middle of the record holding data[5]
    blob = pcap_bytes(hdr, recs)
    off = 24
    for i in range(data[5]):
        off += 16 + len(recs[i][2])
    cut = off + 16 + len(recs[data[5]][2]) // 2
    write("http-segments-truncated.pcap", blob[:cut])


if __name__ == "__main__":
    os.chdir(HERE)
    basic_variants()
    segment_variants()
