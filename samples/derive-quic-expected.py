#!/usr/bin/env python3
"""Derive the expected numbers of the QUIC / HTTP/3 samples without the project's code.

    python3 samples/derive-quic-expected.py [NAME ...]     # NAME e.g. quic-h3; default: every sample

Independent parts (definitions in samples/README.md, "QUIC and HTTP/3 captures"):
  * a pcap/pcapng reader and UDP walker written here (Ethernet, IPv4, IPv6, UDP);
  * a QUIC packet walker written here (RFC 8999/9000 section 17, RFC 9369 for v2): long headers end after
    their Length field, Retry and Version Negotiation and long headers of unknown versions take the rest of
    the datagram, a short header runs to the datagram's end, bytes 0x00 after a packet are padding;
  * 1-RTT decryption written here from the NSS key log (HKDF-Expand-Label "quic key"/"quic iv"/"quic hp",
    v2: "quicv2 ..."; AES-GCM or ChaCha20-Poly1305 with the `cryptography` package; key updates followed by
    key generation, "quic ku"; 0-RTT with CLIENT_EARLY_TRAFFIC_SECRET), a frame parser
    (RFC 9000 section 19), stream reassembly by offset, an HTTP/3 frame walker (RFC 9114 section 7) and a
    QPACK representation walker (RFC 9204 section 4.5); pylsqpack decodes the field sections.
Cross-checks (written to crosscheck.txt, the script fails when one does not hold):
  * tshark 4.0: per-frame QUIC packet count (where it differs the reason is written down), SNI, ALPN,
    version; every stream tshark can follow (`-z follow,quic,raw`) equals our reassembled bytes;
  * both ends' qlog (aioquic): packets sent per direction, every STREAM frame (offset, length) sent, and the
    HTTP/3 frames created/parsed (type, length).
Files in samples/expected/<NAME>/: connections.csv, and for keyed captures messages.csv, h3-directions.csv;
always crosscheck.txt (and other-udp.csv when non-QUIC UDP is present).
"""
import collections
import csv
import glob
import gzip
import hashlib
import io
import json
import os
import struct
import subprocess
import sys

import pylsqpack
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "expected")
# name -> (capture, key log or None, qlog directory or None)
SAMPLES = {
    "quic-h3": ("quic-h3.pcap", "quic-h3.keys", "quic-qlog/h3"),
    "quic-rebind-dsb-pcapng": ("quic-rebind-dsb.pcapng", "quic-rebind.keys", "quic-qlog/rebind"),
    "quic-retry": ("quic-retry.pcap", "quic-retry.keys", "quic-qlog/retry"),
    "quic-vn": ("quic-vn.pcap", "quic-vn.keys", "quic-qlog/vn"),
    "quic-v2": ("quic-v2.pcap", "quic-v2.keys", "quic-qlog/v2"),
    "quic-rebind": ("quic-rebind.pcap", "quic-rebind.keys", "quic-qlog/rebind"),
    "quic-bigch": ("quic-bigch.pcap", "quic-bigch.keys", "quic-qlog/bigch"),
    "quic-mixed": ("quic-mixed.pcap", None, "quic-qlog/mixed"),
    "quic-0rtt": ("quic-0rtt.pcap", "quic-0rtt.keys", "quic-qlog/0rtt"),
    "quic-keyupdate": ("quic-keyupdate.pcap", "quic-keyupdate.keys", "quic-qlog/keyupdate"),
    "quic-chacha": ("quic-chacha.pcap", "quic-chacha.keys", "quic-qlog/chacha"),
}
V1, V2 = 0x00000001, 0x6B3343CF
DIRS = ("client_to_server", "server_to_client")


def die(msg):
    sys.exit("derive-quic-expected: ERROR: " + msg)


# ------------------------------------------------------------------------------------ pcap / UDP walker
def read_records(path):
    """Yield (frame_number, linktype, bytes) from a classic pcap or a pcapng file."""
    data = open(path, "rb").read()
    magic = data[:4]
    n = 0
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        linktype = struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF
        pos = 24
        while pos + 16 <= len(data):
            _, _, incl, _ = struct.unpack(e + "IIII", data[pos:pos + 16])
            n += 1
            yield n, linktype, data[pos + 16:pos + 16 + incl]
            pos += 16 + incl
    elif magic == b"\x0a\x0d\x0d\x0a":
        pos, e, links = 0, "<", []
        while pos + 12 <= len(data):
            btype = struct.unpack("<I", data[pos:pos + 4])[0]
            if btype == 0x0A0D0D0A:
                e = "<" if data[pos + 8:pos + 12] == b"\x4d\x3c\x2b\x1a" else ">"
                links = []
            btype, blen = struct.unpack(e + "II", data[pos:pos + 8])
            body = data[pos + 8:pos + blen - 4]
            if btype == 1:
                links.append(struct.unpack(e + "H", body[:2])[0])
            elif btype == 6:
                iface, _, _, caplen, _ = struct.unpack(e + "IIIII", body[:20])
                n += 1
                yield n, links[iface], body[20:20 + caplen]
            elif btype == 3:
                n += 1
                yield n, links[0], body[4:]
            pos += blen
    else:
        die("%s: not a pcap/pcapng file" % path)


def udp_datagrams(path):
    """[(frame, src, sport, dst, dport, udp_length, payload)]; addresses as strings (IPv6 in RFC 5952 form)."""
    import ipaddress
    out = []
    for n, lt, pkt in read_records(path):
        if lt != 1:
            die("link type %d not handled" % lt)
        et, off = struct.unpack(">H", pkt[12:14])[0], 14
        while et in (0x8100, 0x88A8):
            et, off = struct.unpack(">H", pkt[off + 2:off + 4])[0], off + 4
        if et == 0x0800:
            ihl = (pkt[off] & 0x0F) * 4
            if pkt[off + 9] != 17:
                continue
            src, dst = str(ipaddress.IPv4Address(pkt[off + 12:off + 16])), str(ipaddress.IPv4Address(pkt[off + 16:off + 20]))
            off += ihl
        elif et == 0x86DD:
            if pkt[off + 6] != 17:
                continue   # no extension headers in these captures
            src = str(ipaddress.IPv6Address(pkt[off + 8:off + 24]))
            dst = str(ipaddress.IPv6Address(pkt[off + 24:off + 40]))
            off += 40
        else:
            continue
        sport, dport, ulen = struct.unpack(">HHH", pkt[off:off + 6])
        out.append((n, src, sport, dst, dport, ulen, pkt[off + 8:off + ulen]))
    return out


def ep(addr, port):
    return ("[%s]:%d" if ":" in addr else "%s:%d") % (addr, port)


# ------------------------------------------------------------------------------------ QUIC packet walker
def varint(b, pos):
    first = b[pos]
    ln = 1 << (first >> 6)
    v = first & 0x3F
    for i in range(1, ln):
        v = (v << 8) | b[pos + i]
    return v, pos + ln


def long_type(version, first):
    t = (first >> 4) & 3
    if version == V2:
        return {1: "initial", 2: "0rtt", 3: "handshake", 0: "retry"}[t]
    return {0: "initial", 1: "0rtt", 2: "handshake", 3: "retry"}[t]


def walk_datagram(d, short_dcid_len):
    """Split one UDP payload into QUIC packets: [dict(kind, start, end, version, dcid, scid, ...)], padding."""
    pkts, pos = [], 0
    while pos < len(d):
        first = d[pos]
        if pos > 0 and first == 0x00:
            return pkts, len(d) - pos
        if first & 0x80:
            version = struct.unpack(">I", d[pos + 1:pos + 5])[0]
            p = pos + 5
            dl = d[p]; dcid = d[p + 1:p + 1 + dl]; p += 1 + dl
            sl = d[p]; scid = d[p + 1:p + 1 + sl]; p += 1 + sl
            pk = dict(start=pos, version=version, dcid=dcid, scid=scid, first=first)
            if version == 0:
                pk.update(kind="version_negotiation", end=len(d))
            elif version not in (V1, V2):
                pk.update(kind="unknown_version", end=len(d))
            else:
                kind = long_type(version, first)
                pk["kind"] = kind
                if kind == "retry":
                    pk["end"] = len(d)
                else:
                    if kind == "initial":
                        tl, p = varint(d, p)
                        p += tl
                    ln, p = varint(d, p)
                    pk.update(pn_offset=p, end=p + ln)
            pkts.append(pk)
            pos = pk["end"]
        else:
            dcid = d[pos + 1:pos + 1 + short_dcid_len] if short_dcid_len is not None else None
            pkts.append(dict(kind="1rtt", start=pos, end=len(d), dcid=dcid, first=first,
                             pn_offset=pos + 1 + (short_dcid_len or 0)))
            pos = len(d)
    return pkts, 0


# ------------------------------------------------------------------------------------ key log and 1-RTT keys
def hkdf_label(secret, label, length, hash_alg):
    full = b"tls13 " + label
    info = struct.pack(">H", length) + bytes([len(full)]) + full + b"\x00"
    return HKDFExpand(hash_alg, length, info).derive(secret)


def read_keylog(path):
    keys = collections.defaultdict(dict)
    for line in open(path):
        parts = line.split()
        if len(parts) == 3:
            keys[parts[1].lower()][parts[0]] = bytes.fromhex(parts[2])
    return keys


class OneRtt:
    """Packet protection of one direction (Initial, 0-RTT or 1-RTT; the suite's hash from the secret's length).
    1-RTT key updates (RFC 9001 section 6): generation g has key phase bit g & 1; secret of generation g+1 =
    HKDF-Expand-Label(secret_g, "quic ku" / "quicv2 ku", "", Hash.length); key and IV come from each
    generation's secret, the header protection key stays the one of generation 0."""

    def __init__(self, secret, version, suite):
        self.h = hashes.SHA384() if len(secret) == 48 else hashes.SHA256()
        self.pre = b"quicv2 " if version == V2 else b"quic "
        self.klen = 32 if (len(secret) == 48 or suite == "chacha") else 16
        self.hp = hkdf_label(secret, self.pre + b"hp", self.klen, self.h)
        self.suite = suite
        self.secrets = [secret]
        self.gens = [self.keys_of(secret)]
        self.gen = 0                           # current generation
        self.per_gen = collections.Counter()   # packets decrypted per generation
        self.first_of_gen = {}                 # generation -> first packet number decrypted with it
        self.largest = -1

    def keys_of(self, secret):
        key = hkdf_label(secret, self.pre + b"key", self.klen, self.h)
        iv = hkdf_label(secret, self.pre + b"iv", 12, self.h)
        return key, iv, (ChaCha20Poly1305(key) if self.suite == "chacha" else AESGCM(key))

    def generation(self, g):
        while len(self.gens) <= g:
            nxt = hkdf_label(self.secrets[-1], self.pre + b"ku", self.h.digest_size, self.h)
            self.secrets.append(nxt)
            self.gens.append(self.keys_of(nxt))
        return self.gens[g]

    def mask(self, sample):
        if self.suite == "chacha":
            # RFC 9001 section 5.4.4: counter = sample[0:4] (little-endian), nonce = sample[4:16]
            c = Cipher(algorithms.ChaCha20(self.hp, bytes(sample[:16])), mode=None).encryptor()
            return c.update(b"\x00" * 5)
        c = Cipher(algorithms.AES(self.hp), modes.ECB()).encryptor()
        return c.update(sample)[:5]

    def decrypt(self, d, pk):
        pn_off = pk["pn_offset"]
        m = self.mask(d[pn_off + 4:pn_off + 20])
        long_hdr = d[pk["start"]] & 0x80
        first = d[pk["start"]] ^ (m[0] & (0x0F if long_hdr else 0x1F))
        pnl = (first & 3) + 1
        trunc = int.from_bytes(bytes(d[pn_off + i] ^ m[1 + i] for i in range(pnl)), "big")
        expected, win = self.largest + 1, 1 << (pnl * 8)
        pn = (expected & ~(win - 1)) | trunc
        if pn <= expected - win // 2 and pn + win < (1 << 62):
            pn += win
        elif pn > expected + win // 2 and pn >= win:
            pn -= win
        header = bytes([first]) + d[pk["start"] + 1:pn_off] + pn.to_bytes(pnl, "big")
        payload = bytes(d[pn_off + pnl:pk["end"]])
        if long_hdr:
            tries = [0]
        else:
            phase = (first >> 2) & 1
            # the current generation if its phase bit matches, else the next one (a key update), else the
            # previous one (a packet sent before the update, arriving late)
            tries = [self.gen] if phase == self.gen & 1 else [self.gen + 1] + ([self.gen - 1] if self.gen else [])
        err = None
        for g in tries:
            _, iv, aead = self.generation(g)
            nonce = (int.from_bytes(iv, "big") ^ pn).to_bytes(12, "big")
            try:
                plain = aead.decrypt(nonce, payload, header)
            except Exception as e:
                err = e
                continue
            if g > self.gen:
                self.gen = g
            self.per_gen[g] += 1
            self.last_gen = g
            self.first_of_gen.setdefault(g, pn)
            self.largest = max(self.largest, pn)
            return pn, plain
        raise err


INITIAL_SALT = {V1: bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a"),
                V2: bytes.fromhex("0dede3def700a6db819381be6e269dcbf9bd2ed9")}


def client_hello(c):
    """Decrypt the client's Initial packets ourselves (RFC 9001 section 5.2, keys from each packet's DCID),
    reassemble CRYPTO by offset per key and parse the first complete ClientHello: (sni, alpn list, frames)."""
    import hmac
    keys, crypto, frames = {}, collections.defaultdict(dict), collections.defaultdict(list)
    k, fresh = None, True
    for n, dr, pk, pay in c.packets:
        if pk["kind"] in ("retry", "version_negotiation"):
            fresh = True   # the client's next Initial derives new keys from its (new) DCID
        if dr != "client_to_server" or pk["kind"] != "initial":
            continue
        if fresh:
            # Initial keys come from the DCID of the client's first Initial (after Retry/VN: its next one)
            # and stay when the client switches to the server's CID
            k = (pk["version"], bytes(pk["dcid"]))
            init = hmac.new(INITIAL_SALT[pk["version"]], k[1], hashlib.sha256).digest()
            keys[k] = OneRtt(hkdf_label(init, b"client in", 32, hashes.SHA256()), pk["version"], "aes")
            fresh = False
        _, plain = keys[k].decrypt(pay, pk)
        for t, f in parse_frames(plain):
            if t == 0x06:
                crypto[k][f["offset"]] = bytes(f["data"])
                frames[k].append(n)
    for k in keys:   # in order of first use
        buf = bytearray()
        for off in sorted(crypto[k]):
            if off > len(buf):
                break
            buf[off:off + len(crypto[k][off])] = crypto[k][off]
        if len(buf) < 4 or buf[0] != 1 or len(buf) < 4 + int.from_bytes(buf[1:4], "big"):
            continue
        ch = bytes(buf[4:4 + int.from_bytes(buf[1:4], "big")])
        p = 2 + 32
        p += 1 + ch[p]
        p += 2 + int.from_bytes(ch[p:p + 2], "big")
        p += 1 + ch[p]
        end = p + 2 + int.from_bytes(ch[p:p + 2], "big")
        p += 2
        sni, alpn = "", []
        while p < end:
            et, el = struct.unpack(">HH", ch[p:p + 4])
            e = ch[p + 4:p + 4 + el]
            if et == 0:
                sni = e[5:5 + int.from_bytes(e[3:5], "big")].decode()
            elif et == 16:
                q = 2
                while q < len(e):
                    alpn.append(e[q + 1:q + 1 + e[q]].decode())
                    q += 1 + e[q]
            p += 4 + el
        return sni, alpn, "ClientHello of %d bytes in CRYPTO frames of frames %s (Initial DCID %s, version 0x%08x)" % (
            len(ch) + 4, sorted(set(frames[k])), k[1].hex(), k[0])
    return "", [], "no complete ClientHello that we could decrypt"


def parse_frames(b):
    """RFC 9000 section 19. Returns [(type, dict)]."""
    out, pos = [], 0
    while pos < len(b):
        t, pos = varint(b, pos)
        f = {}
        if t == 0x00:
            while pos < len(b) and b[pos] == 0:
                pos += 1
        elif t == 0x01 or t == 0x1E:
            pass
        elif t in (0x02, 0x03):
            for _ in range(2):
                _, pos = varint(b, pos)
            cnt, pos = varint(b, pos)
            _, pos = varint(b, pos)
            for _ in range(2 * cnt + (3 if t == 0x03 else 0)):
                _, pos = varint(b, pos)
        elif t == 0x04:
            for _ in range(3):
                _, pos = varint(b, pos)
        elif t == 0x05:
            for _ in range(2):
                _, pos = varint(b, pos)
        elif t == 0x06:
            f["offset"], pos = varint(b, pos)
            ln, pos = varint(b, pos)
            f["data"] = b[pos:pos + ln]; pos += ln
        elif t == 0x07:
            ln, pos = varint(b, pos)
            pos += ln
        elif 0x08 <= t <= 0x0F:
            f["stream_id"], pos = varint(b, pos)
            f["offset"] = 0
            if t & 0x04:
                f["offset"], pos = varint(b, pos)
            if t & 0x02:
                ln, pos = varint(b, pos)
            else:
                ln = len(b) - pos
            f["data"] = b[pos:pos + ln]; pos += ln
            f["fin"] = bool(t & 0x01)
            t = 0x08
        elif t in (0x10, 0x12, 0x13, 0x14, 0x16, 0x17, 0x19):
            _, pos = varint(b, pos)
        elif t in (0x11, 0x15):
            for _ in range(2):
                _, pos = varint(b, pos)
        elif t == 0x18:
            for _ in range(2):
                _, pos = varint(b, pos)
            ln = b[pos]
            f["cid"] = b[pos + 1:pos + 1 + ln]
            pos += 1 + ln + 16
        elif t in (0x1A, 0x1B):
            pos += 8
        elif t in (0x1C, 0x1D):
            _, pos = varint(b, pos)
            if t == 0x1C:
                _, pos = varint(b, pos)
            ln, pos = varint(b, pos)
            pos += ln
        elif t in (0x30, 0x31):
            if t == 0x31:
                ln, pos = varint(b, pos)
            else:
                ln = len(b) - pos
            pos += ln
        else:
            die("unknown QUIC frame type 0x%x" % t)
        out.append((t, f))
    if pos != len(b):
        die("frame parse overran the packet")
    return out


# ------------------------------------------------------------------------------------ connections
class Conn:
    def __init__(self, idx, client, server):
        self.idx, self.client, self.server = idx, client, server
        self.client_scid_len = None   # DCID length of server->client short headers
        self.server_scid_len = None   # DCID length of client->server short headers
        self.cids = {"client_to_server": set(), "server_to_client": set()}   # DCIDs each side may use
        self.versions = {"client_to_server": [], "server_to_client": []}
        self.stats = {d: [0, 0, 0] for d in DIRS}   # datagrams, udp payload bytes, quic packets
        self.packets = []   # (frame, direction, packet dict, datagram)


def split_connections(dgs, keyed_cids):
    """Assign every datagram to a connection (or to 'other'). The client is the sender of a first Initial."""
    conns, by_tuple, other = [], {}, []
    for n, src, sp, dst, dp, ulen, pay in dgs:
        a, b = ep(src, sp), ep(dst, dp)
        if (a, b) in by_tuple:
            conn, dr = by_tuple[(a, b)]
        else:
            conn = None
            # a new 4-tuple: a short-header packet whose DCID is one of a known connection's CIDs
            if pay and not pay[0] & 0x80:
                for c in conns:
                    for dr_ in DIRS:
                        for cid in c.cids[dr_]:
                            if cid and pay[1:1 + len(cid)] == cid:
                                conn, dr = c, dr_
                if conn is not None:
                    cl, sv = (a, b) if dr == "client_to_server" else (b, a)
                    by_tuple[(cl, sv)] = (conn, "client_to_server")
                    by_tuple[(sv, cl)] = (conn, "server_to_client")
            if conn is None:
                if len(pay) >= 1200 and pay[0] & 0x80 and len(pay) > 5:
                    conn = Conn(len(conns), a, b)
                    conns.append(conn)
                    by_tuple[(a, b)] = (conn, "client_to_server")
                    by_tuple[(b, a)] = (conn, "server_to_client")
                    dr = "client_to_server"
                else:
                    other.append((n, a, b, ulen))
                    continue
        dlen = conn.server_scid_len if dr == "client_to_server" else conn.client_scid_len
        pkts, pad = walk_datagram(pay, dlen)
        st = conn.stats[dr]
        st[0] += 1
        st[1] += ulen - 8
        st[2] += len(pkts)
        for pk in pkts:
            if pk["kind"] in ("initial", "handshake", "0rtt", "retry", "unknown_version"):
                conn.versions[dr].append(pk["version"])
                if dr == "client_to_server":
                    conn.client_scid_len = len(pk["scid"])
                    conn.cids["server_to_client"].add(bytes(pk["scid"]))
                else:
                    conn.server_scid_len = len(pk["scid"])
                    conn.cids["client_to_server"].add(bytes(pk["scid"]))
            conn.packets.append((n, dr, pk, pay))
        for dr_, cid in keyed_cids.get(conn.idx, ()):
            conn.cids[dr_].add(cid)
    return conns, other


def negotiated_version(c):
    for v in c.versions["server_to_client"]:
        if v not in (0,):
            return v
    return c.versions["client_to_server"][0]


# ------------------------------------------------------------------------------------ tshark
def tshark(args):
    r = subprocess.run(["tshark", "-n"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        die("tshark %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def tshark_frames(path, keys):
    opts = ["-r", path] + (["-o", "tls.keylog_file:" + os.path.join(HERE, keys)] if keys else [])
    out = tshark(opts + ["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|", "-e", "frame.number",
                         "-e", "quic.packet_length", "-e", "quic.header_form", "-e", "quic.version",
                         "-e", "tls.handshake.extensions_server_name", "-e", "tls.handshake.extensions_alpn_str",
                         "-e", "tls.handshake.type", "-e", "quic.frame_type"])
    rows = {}
    for line in out.splitlines():
        f = line.split("\t")
        rows[int(f[0])] = dict(lengths=[int(x) for x in f[1].split("|") if x], forms=f[2],
                               versions=f[3], sni=f[4], alpn=f[5], hs=f[6], ftypes=f[7])
    return rows


# ------------------------------------------------------------------------------------ HTTP/3
def h3_frames(data):
    out, pos = [], 0
    while pos < len(data):
        start = pos
        t, pos = varint(data, pos)
        ln, pos = varint(data, pos)
        if pos + ln > len(data):
            die("truncated HTTP/3 frame")
        out.append((t, start, pos - start + ln, data[pos:pos + ln]))
        pos += ln
    return out


def prefix_int(b, pos, bits):
    mask = (1 << bits) - 1
    v = b[pos] & mask
    pos += 1
    if v < mask:
        return v, pos
    m = 0
    while True:
        c = b[pos]; pos += 1
        v += (c & 0x7F) << m
        m += 7
        if not c & 0x80:
            return v, pos


def qpack_representations(block):
    """RFC 9204 section 4.5: the field section prefix, then [(start, size, kind)] per field line."""
    _, pos = prefix_int(block, 0, 8)          # Required Insert Count
    _, pos = prefix_int(block, pos, 7)        # S + Delta Base
    reps = []
    while pos < len(block):
        start, b = pos, block[pos]
        if b & 0x80:
            _, pos = prefix_int(block, pos, 6); kind = "indexed" + ("-static" if b & 0x40 else "-dynamic")
        elif b & 0x40:
            _, pos = prefix_int(block, pos, 4); kind = "literal-name-ref" + ("-static" if b & 0x10 else "-dynamic")
            ln, pos = prefix_int(block, pos, 7); pos += ln
        elif b & 0x20:
            ln, pos = prefix_int(block, pos, 3); pos += ln; kind = "literal-literal-name"
            ln, pos = prefix_int(block, pos, 7); pos += ln
        elif b & 0x10:
            _, pos = prefix_int(block, pos, 4); kind = "indexed-post-base"
        else:
            _, pos = prefix_int(block, pos, 3); kind = "literal-post-base-name-ref"
            ln, pos = prefix_int(block, pos, 7); pos += ln
        reps.append((start, pos - start, kind))
    if pos != len(block):
        die("QPACK walk overran the field section")
    return reps


def derive_h3(streams, notes):
    """streams: {(direction, stream_id): bytes}. Returns messages rows, control bytes per direction, h3 frames."""
    control = {d: 0 for d in DIRS}
    enc = {d: b"" for d in DIRS}
    frames_seen = collections.Counter()   # (direction, stream_id, type, length) from our walk
    settings = {d: {} for d in DIRS}
    for (dr, sid), data in sorted(streams.items(), key=lambda kv: kv[0][1]):
        if sid % 4 in (2, 3):
            control[dr] += len(data)
            st, pos = varint(data, 0)
            if st == 0x02:
                enc[dr] += data[pos:]
            elif st == 0x00:
                for t, _, size, payload in h3_frames(data[pos:]):
                    frames_seen[(dr, sid, t, len(payload))] += 1
                    if t == 0x04:
                        p, st_ = 0, {}
                        while p < len(payload):
                            k, p = varint(payload, p)
                            st_[k], p = varint(payload, p)
                        settings[dr] = st_
    rows = []
    decoders = {}
    for dr in DIRS:
        # field sections sent in direction dr are decoded with the limits the RECEIVER announced in its SETTINGS
        # (QPACK_MAX_TABLE_CAPACITY 0x01, QPACK_BLOCKED_STREAMS 0x07); the sender's encoder stream feeds it
        rcv = settings[DIRS[1 - DIRS.index(dr)]]
        decoders[dr] = pylsqpack.Decoder(rcv.get(1, 0), rcv.get(7, 0))
        notes.append("  QPACK %s: receiver's table capacity %d, blocked streams %d, encoder stream %d bytes"
                     % (dr, rcv.get(1, 0), rcv.get(7, 0), len(enc[dr])))
        if enc[dr]:
            decoders[dr].feed_encoder(enc[dr])
    for (dr, sid), data in sorted(streams.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if sid % 4 != 0:
            continue
        frames = h3_frames(data)
        row = dict(stream_id=sid, kind="request" if dr == "client_to_server" else "response", method="",
                   status="", path="", header_bytes=0, header_decoded_bytes=0, cookie_bytes=0,
                   cookie_decoded_bytes=0, body_bytes=0, encoded_body_bytes=0, decoded_body_bytes=0)
        body, headers_seen, hdrs = b"", False, []
        for t, start, size, payload in frames:
            frames_seen[(dr, sid, t, len(payload))] += 1
            if t == 0x01 and not headers_seen:
                headers_seen = True
                _, fields = decoders[dr].feed_header(sid, payload)
                reps = qpack_representations(payload)
                if len(reps) != len(fields):
                    die("stream %d: %d representations, %d fields" % (sid, len(reps), len(fields)))
                row["header_bytes"] = size
                row["header_decoded_bytes"] = sum(len(n) + len(v) for n, v in fields)
                want = b"cookie" if dr == "client_to_server" else b"set-cookie"
                for (rs, rsize, kind), (n, v) in zip(reps, fields):
                    if n == want:
                        row["cookie_bytes"] += rsize
                        row["cookie_decoded_bytes"] += len(n) + len(v)
                        notes.append("  %s stream %d: %s %s: %d-byte %s representation at %d, first bytes %s"
                                     % (dr, sid, n.decode(), v.decode(), rsize, kind, rs,
                                        payload[rs:rs + min(rsize, 4)].hex()))
                hdrs = fields
            elif t == 0x01:
                row["body_bytes"] += size     # trailing HEADERS
            elif t == 0x00:
                row["body_bytes"] += size
                row["encoded_body_bytes"] += len(payload)
                body += payload
            else:
                control[dr] += size
        h = dict(hdrs)
        row["method"] = h.get(b":method", b"").decode()
        row["status"] = h.get(b":status", b"").decode()
        row["path"] = h.get(b":path", b"").decode()
        ce = h.get(b"content-encoding", b"").lower()
        row["decoded_body_bytes"] = len(gzip.decompress(body)) if ce == b"gzip" else len(body)
        rows.append(row)
    # responses get the path and method of their request
    req = {r["stream_id"]: r for r in rows if r["kind"] == "request"}
    for r in rows:
        if r["kind"] == "response" and r["stream_id"] in req:
            r["path"], r["method"] = req[r["stream_id"]]["path"], req[r["stream_id"]]["method"]
    return rows, control, frames_seen


# ------------------------------------------------------------------------------------ qlog
def load_qlogs(qdir):
    out = {"client": [], "server": []}
    for f in sorted(glob.glob(os.path.join(HERE, qdir, "*.qlog.gz"))):
        side = os.path.basename(f).split("-")[0]
        out[side].append(json.load(gzip.open(f))["traces"][0])
    return out


def qlog_traces_of(traces, c):
    """One trace per side: that one. More (several keyed connections in one capture): the trace whose ODCID is
    the DCID of one of the connection's client Initial packets."""
    if len(traces) <= 1:
        return traces
    dcids = {bytes(pk["dcid"]).hex() for _, dr, pk, _ in c.packets
             if dr == "client_to_server" and pk["kind"] in ("initial", "0rtt")}
    mine = [tr for tr in traces if tr.get("common_fields", {}).get("ODCID") in dcids]
    if len(mine) != 1:
        die("connection %d: %d qlog traces with ODCID in %s" % (c.idx, len(mine), sorted(dcids)))
    return mine


def qlog_check(trace, side, streams, sent_packets, frames_seen, notes):
    """trace: one end's qlog. Compare packets sent, STREAM frames sent and HTTP/3 frames with ours."""
    dr = "client_to_server" if side == "client" else "server_to_client"
    sent = [e for e in trace["events"] if e["name"] == "transport:packet_sent"]
    ok = True
    if sent_packets is not None:
        if len(sent) != sent_packets:
            notes.append("  qlog %s: %d packets sent, capture %d (%s)" % (side, len(sent), sent_packets, dr))
        else:
            notes.append("  qlog %s: packets sent = %d = our %s quic_packets (without Retry/VN)" % (side, len(sent), dr))
    if streams is None:
        return
    ends = collections.defaultdict(int)
    for e in sent:
        for f in e["data"]["frames"]:
            if f["frame_type"] == "stream":
                ends[f["stream_id"]] = max(ends[f["stream_id"]], f["offset"] + f["length"])
    ours = {sid: len(d) for (d_, sid), d in streams.items() if d_ == dr}
    if dict(ends) != ours:
        die("qlog %s: stream lengths %s, ours %s" % (side, dict(ends), ours))
    notes.append("  qlog %s: every stream's length sent (max offset+length of its STREAM frames) = ours: %s"
                 % (side, ", ".join("%d:%d" % kv for kv in sorted(ours.items()))))
    # HTTP/3 frames: created by this side = our frames in this direction, parsed = the other direction
    for name, d_ in (("http:frame_created", dr), ("http:frame_parsed", DIRS[1 - DIRS.index(dr)])):
        q = collections.Counter()
        for e in trace["events"]:
            if e["name"] == name:
                fr = e["data"]["frame"]
                t = {"data": 0, "headers": 1, "settings": 4}.get(fr["frame_type"], fr["frame_type"])
                q[(d_, e["data"]["stream_id"], t, e["data"]["length"])] += 1
        # aioquic logs HEADERS and DATA frames only (not SETTINGS or other control-stream frames)
        mine = collections.Counter({k: v for k, v in frames_seen.items() if k[0] == d_ and k[2] in (0, 1)})
        q = collections.Counter({k: v for k, v in q.items() if k[2] in (0, 1)})
        if q != mine:
            die("qlog %s %s: %s != ours %s" % (side, name, sorted(q.items()), sorted(mine.items())))
        notes.append("  qlog %s %s: %d HTTP/3 frames (type, stream, payload length) = ours" % (side, name, sum(q.values())))


# ------------------------------------------------------------------------------------ one sample
def derive(name):
    cap, keys, qdir = SAMPLES[name]
    path = os.path.join(HERE, cap)
    notes = ["%s (%s%s)" % (name, cap, ", key log " + keys if keys else ", no key log")]
    dgs = udp_datagrams(path)
    tf = tshark_frames(path, keys)
    if len(tf) != len(read_records_list(path)):
        die("tshark saw %d frames" % len(tf))
    # first pass without keys; with keys we learn the NEW_CONNECTION_ID CIDs and redo the split
    conns, other = split_connections(dgs, {})
    streams_by_conn = {}
    if keys:
        kl = read_keylog(os.path.join(HERE, keys))
        extra = collections.defaultdict(set)
        for c in conns:
            c.path, c.keys = path, os.path.join(HERE, keys)
            streams_by_conn[c.idx], cids = decrypt_conn(c, kl, tf, notes)
            extra[c.idx] |= cids
        if any(extra.values()):
            conns2, other = split_connections(dgs, extra)
            if [c.stats for c in conns2] != [c.stats for c in conns]:
                notes.append("  connection split changed after adding NEW_CONNECTION_ID CIDs")
            conns = conns2
    # tshark: per-frame packet counts
    ours_per_frame = collections.Counter()
    for c in conns:
        for n, dr, pk, pay in c.packets:
            ours_per_frame[n] += 1
    diff = []
    for n, src, sp, dst, dp, ulen, pay in dgs:
        if n not in ours_per_frame:
            continue
        t = len(tf[n]["lengths"])
        if t != ours_per_frame[n]:
            diff.append((n, ours_per_frame[n], t, tf[n]["lengths"]))
    notes.append("tshark per-frame QUIC packet count (quic.packet_length occurrences) vs our walker: %d frames differ"
                 % len(diff))
    pays = {x[0]: x[6] for x in dgs}
    for n, o, t, l in diff:
        why = ""
        if t > o and sum(l) == len(pays[n]) and not any(pays[n][sum(l[:o]):]):
            why = (": the %d bytes after our last packet are all 0x00 (padding); tshark shows them as a short-header"
                   " packet (Fixed Bit 0, undecryptable) - this connection's client CID is zero-length, so any"
                   " trailing bytes look like a short header addressed to it" % (len(pays[n]) - sum(l[:o])))
        notes.append("  frame %d: ours %d packets, tshark %d (lengths %s)%s" % (n, o, t, l, why))
    rows = []
    for c in conns:
        tsni = talpn = None
        for n, dr, pk, pay in c.packets:
            if dr == "client_to_server" and tf[n]["sni"] and tsni is None:
                tsni, talpn = tf[n]["sni"].split("|")[0], tf[n]["alpn"].replace("|", ",")
        sni, alpn_l, where = client_hello(c)
        alpn = ",".join(alpn_l)
        notes.append("connection %d: our own Initial decryption: %s: SNI %r, ALPN %r" % (c.idx, where, sni, alpn))
        if tsni is None:
            notes.append("  tshark shows no ClientHello for this connection (ORACLES.md: after Version Negotiation it"
                         " keeps the old Initial keys); sni/alpn_offered are ours only")
        elif (tsni, talpn) != (sni, alpn):
            die("connection %d: tshark SNI/ALPN %r %r, ours %r %r" % (c.idx, tsni, talpn, sni, alpn))
        else:
            notes.append("  tshark agrees: SNI %r, ALPN %r" % (tsni, talpn))
        for dr in DIRS:
            st = c.stats[dr]
            rows.append(dict(connection=c.idx, direction=dr, client=c.client, server=c.server, sni=sni,
                             alpn_offered=alpn, quic_version="0x%08x" % negotiated_version(c),
                             datagrams=st[0], udp_payload_bytes=st[1], quic_packets=st[2]))
        notes.append("connection %d %s -> %s: versions c2s %s, s2c %s" % (
            c.idx, c.client, c.server, sorted({"0x%08x" % v for v in c.versions["client_to_server"]}),
            sorted({"0x%08x" % v for v in c.versions["server_to_client"]})))
        kinds = collections.Counter((dr, pk["kind"]) for _, dr, pk, _ in c.packets)
        notes.append("  packets by kind: " + ", ".join("%s %s %d" % (d[:1] + "2" + d.split("_")[-1][:1], k, v)
                                                       for (d, k), v in sorted(kinds.items())))
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "connections.csv"), ["connection", "direction", "client", "server", "sni",
              "alpn_offered", "quic_version", "datagrams", "udp_payload_bytes", "quic_packets"], rows)
    if other:
        write_csv(os.path.join(d, "other-udp.csv"), ["frame", "source", "destination", "udp_payload_bytes"],
                  [dict(frame=n, source=a, destination=b, udp_payload_bytes=ul - 8) for n, a, b, ul in other])
    if keys:
        mrows, drows = [], []
        for c in conns:
            streams, _ = streams_by_conn[c.idx]
            notes.append("connection %d: HTTP/3" % c.idx)
            m, control, frames_seen = derive_h3(streams, notes)
            mrows += [dict(r, connection=c.idx) for r in m]
            for dr in DIRS:
                drows.append(dict(connection=c.idx, direction=dr, udp_payload_bytes=c.stats[dr][1], h3_control_bytes=control[dr]))
            follow_check(path, keys, c, streams, notes)
            if qdir:
                q = load_qlogs(qdir)
                retry_vn = sum(1 for _, dr, pk, _ in c.packets if pk["kind"] in ("retry", "version_negotiation"))
                for side in ("client", "server"):
                    for tr in qlog_traces_of(q[side], c):
                        dr = "client_to_server" if side == "client" else "server_to_client"
                        qlog_check(tr, side, streams, c.stats[dr][2] - (retry_vn if side == "server" else 0),
                                   frames_seen, notes)
        # a leading connection column only when the capture has more than one (keyed) connection (quic-0rtt)
        cc = ["connection"] if len(conns) > 1 else []
        write_csv(os.path.join(d, "messages.csv"), cc + ["stream_id", "kind", "method", "status", "path", "header_bytes",
                  "header_decoded_bytes", "cookie_bytes", "cookie_decoded_bytes", "body_bytes",
                  "encoded_body_bytes", "decoded_body_bytes"], mrows)
        write_csv(os.path.join(d, "h3-directions.csv"), cc + ["direction", "udp_payload_bytes", "h3_control_bytes"], drows)
    elif qdir:
        q = load_qlogs(qdir)
        for c in conns:
            for side in ("client", "server"):
                dr = "client_to_server" if side == "client" else "server_to_client"
                counts = [len([e for e in tr["events"] if e["name"] == "transport:packet_sent"]) for tr in q[side]]
                notes.append("  qlog %s: packets sent per trace %s; connection %d %s quic_packets %d" % (
                    side, counts, c.idx, dr, c.stats[dr][2]))
                if c.stats[dr][2] not in counts:
                    die("no qlog trace matches connection %d %s" % (c.idx, dr))
    open(os.path.join(d, "crosscheck.txt"), "w").write("\n".join(notes) + "\n")
    print("\n".join(notes))


def read_records_list(path):
    return list(read_records(path))


def decrypt_conn(c, kl, tf, notes):
    """Decrypt the connection's 1-RTT packets with the key log; reassemble streams per direction."""
    # the client random is not in the capture in clear: try every client random of the key log
    crypt = None
    version = negotiated_version(c)
    for cr, secrets in kl.items():
        if "CLIENT_TRAFFIC_SECRET_0" not in secrets:
            continue
        for suite in ("aes", "chacha"):
            cand = {"client_to_server": OneRtt(secrets["CLIENT_TRAFFIC_SECRET_0"], version, suite),
                    "server_to_client": OneRtt(secrets["SERVER_TRAFFIC_SECRET_0"], version, suite)}
            first = [(dr, pk, pay) for _, dr, pk, pay in c.packets if pk["kind"] == "1rtt"][:1]
            try:
                cand[first[0][0]].decrypt(first[0][2], first[0][1])
            except Exception:
                continue
            crypt = {dr: (OneRtt(secrets["CLIENT_TRAFFIC_SECRET_0" if dr == DIRS[0] else "SERVER_TRAFFIC_SECRET_0"],
                                 version, suite)) for dr in DIRS}
            notes.append("connection %d: 1-RTT keys of client random %s..., %s" % (c.idx, cr[:16], suite))
            break
        if crypt:
            break
    if crypt is None:
        die("connection %d: no key in the key log decrypts its 1-RTT packets" % c.idx)
    # 0-RTT (client to server only): CLIENT_EARLY_TRAFFIC_SECRET of the client random whose secret opens the
    # first 0-RTT packet; the suite is the resumed session's (its hash from the secret's length)
    early = None
    zero = [(n, pk, pay) for n, dr, pk, pay in c.packets if pk["kind"] == "0rtt"]
    if zero:
        for cr, secrets in kl.items():
            if "CLIENT_EARLY_TRAFFIC_SECRET" not in secrets:
                continue
            for suite in ("aes", "chacha"):
                try:
                    OneRtt(secrets["CLIENT_EARLY_TRAFFIC_SECRET"], version, suite).decrypt(zero[0][2], zero[0][1])
                except Exception:
                    continue
                early = OneRtt(secrets["CLIENT_EARLY_TRAFFIC_SECRET"], version, suite)
                notes.append("connection %d: 0-RTT keys: CLIENT_EARLY_TRAFFIC_SECRET of client random %s..., %s"
                             " (%d-byte secret); 0-RTT packets in frames %s"
                             % (c.idx, cr[:16], suite, len(secrets["CLIENT_EARLY_TRAFFIC_SECRET"]),
                                [n for n, _, _ in zero]))
                break
            if early:
                break
        if early is None:
            die("connection %d: no CLIENT_EARLY_TRAFFIC_SECRET decrypts its 0-RTT packets" % c.idx)
    pieces = collections.defaultdict(dict)
    cids = set()
    n1 = n0 = 0
    zero_streams = collections.Counter()
    phases = {}   # frame -> key phase bits of its 1-RTT packets (ours)
    for n, dr, pk, pay in c.packets:
        if pk["kind"] == "0rtt":
            if dr != "client_to_server":
                die("0-RTT packet from the server")
            pn, plain = early.decrypt(pay, pk)
            n0 += 1
            for t, f in parse_frames(plain):
                if t == 0x08:
                    zero_streams[f["stream_id"]] += len(f["data"])
        elif pk["kind"] == "1rtt":
            pn, plain = crypt[dr].decrypt(pay, pk)
            n1 += 1
            phases.setdefault(n, []).append(crypt[dr].last_gen & 1)
        else:
            continue
        for t, f in parse_frames(plain):
            if t == 0x08:
                key = (dr, f["stream_id"])
                old = pieces[key].get(f["offset"])
                if old is not None and old != f["data"][:len(old)] and f["data"] != old[:len(f["data"])]:
                    die("retransmitted stream data differs")
                if old is None or len(f["data"]) > len(old):
                    pieces[key][f["offset"]] = bytes(f["data"])
            elif t == 0x18:
                # a CID the receiver issues: the sender of this frame will be addressed with it
                cids.add(("server_to_client" if dr == "client_to_server" else "client_to_server", f["cid"]))
    streams = {}
    for key, ps in pieces.items():
        buf = bytearray()
        for off in sorted(ps):
            if off > len(buf):
                die("hole in stream %r at %d" % (key, len(buf)))
            buf[off:off + len(ps[off])] = ps[off]
        streams[key] = bytes(buf)
    notes.append("connection %d: %d 1-RTT packets decrypted by us, %d streams" % (c.idx, n1, len(streams)))
    if n0:
        notes.append("connection %d: %d 0-RTT packets decrypted by us; STREAM bytes in them per stream: %s"
                     % (c.idx, n0, ", ".join("%d:%d" % kv for kv in sorted(zero_streams.items()))))
    if any(len(crypt[dr].per_gen) > 1 for dr in DIRS):
        out = tshark(["-r", c.path, "-o", "tls.keylog_file:" + c.keys, "-T", "fields", "-E", "occurrence=a",
                      "-E", "aggregator=|", "-e", "frame.number", "-e", "quic.key_phase"])
        theirs = {}
        for line in out.splitlines():
            f = line.split("\t")
            if f[1]:
                theirs[int(f[0])] = [int(x == "True" or x == "1") for x in f[1].split("|")]
        bad = [n for n in phases if theirs.get(n) != phases[n]]
        if bad:
            die("connection %d: tshark's quic.key_phase differs from ours in frames %s" % (c.idx, bad[:10]))
        notes.append("connection %d: tshark's quic.key_phase = ours (generation & 1) in all %d frames with 1-RTT"
                     " packets" % (c.idx, len(phases)))
    if crypt[DIRS[0]].suite == "chacha":
        out = tshark(["-r", c.path, "-o", "tls.keylog_file:" + c.keys, "-Y", "tls.handshake.type == 2",
                      "-T", "fields", "-e", "frame.number", "-e", "tls.handshake.ciphersuite"])
        mine = {n for n, dr, pk, _ in c.packets if dr == "server_to_client"}
        sh = [line.split("\t") for line in out.splitlines() if int(line.split("\t")[0]) in mine]
        if [x[1] for x in sh] != ["0x1303"]:
            die("connection %d: tshark ServerHello cipher suites %s" % (c.idx, sh))
        notes.append("connection %d: tshark: ServerHello in frame %s selects cipher suite 0x1303"
                     " (TLS_CHACHA20_POLY1305_SHA256)" % (c.idx, sh[0][0]))
    for dr in DIRS:
        if len(crypt[dr].per_gen) > 1:
            notes.append("connection %d %s: 1-RTT key update(s): packets per key generation %s (generation g has"
                         " key phase g & 1), first packet number per generation %s"
                         % (c.idx, dr, dict(sorted(crypt[dr].per_gen.items())),
                            dict(sorted(crypt[dr].first_of_gen.items()))))
    return (streams, cids), cids


def follow_check(path, keys, c, streams, notes):
    """tshark -z follow,quic,raw for every stream of the connection: must equal ours where tshark decrypts."""
    agree, silent = [], []
    for sid in sorted({s for _, s in streams}):
        out = tshark(["-r", path, "-o", "tls.keylog_file:" + os.path.join(HERE, keys), "-q",
                      "-z", "follow,quic,raw,%d,%d" % (c.idx, sid)])
        got = {"client_to_server": b"", "server_to_client": b""}
        chunks = {"client_to_server": [], "server_to_client": []}
        body = out.split("Node 1:")[1].split("\n", 1)[1] if "Node 1:" in out else ""
        for line in body.splitlines():
            if line.startswith("===") or not line.strip():
                continue
            # a tab-indented line comes from node 1; node 0 is the first packet's sender (the client)
            dr = "server_to_client" if line.startswith("\t") else "client_to_server"
            got[dr] += bytes.fromhex(line.strip())
            chunks[dr].append(bytes.fromhex(line.strip()))
        for dr in DIRS:
            mine = streams.get((dr, sid), b"")
            if not got[dr] and mine:
                silent.append("%s %d" % (dr[:1], sid))
            elif got[dr] != mine:
                # follow,quic concatenates STREAM frame data in capture order, retransmissions included:
                # every chunk must be a piece of our stream, and together they must cover it
                covered = bytearray(len(mine))
                for ch in chunks[dr]:
                    at = mine.find(ch)
                    if at < 0:
                        die("follow,quic stream %d %s: a %d-byte chunk is not in our stream" % (sid, dr, len(ch)))
                    covered[at:at + len(ch)] = b"\x01" * len(ch)
                if covered.count(0):
                    die("follow,quic stream %d %s: tshark leaves %d bytes uncovered" % (sid, dr, covered.count(0)))
                agree.append("%s %d (%d; tshark %d = with %d retransmitted bytes, each chunk found in ours)"
                             % (dr[:1], sid, len(mine), len(got[dr]), len(got[dr]) - len(mine)))
            elif mine:
                agree.append("%s %d (%d)" % (dr[:1], sid, len(mine)))
    notes.append("  tshark follow,quic,raw equals our reassembled stream: %s" % (", ".join(agree) or "none"))
    if silent:
        notes.append("  tshark follow,quic,raw gives nothing (it did not decrypt) for: %s" % ", ".join(silent))


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def main():
    names = sys.argv[1:] or [n for n in SAMPLES if os.path.exists(os.path.join(HERE, SAMPLES[n][0]))]
    for n in names:
        derive(n)


if __name__ == "__main__":
    main()
