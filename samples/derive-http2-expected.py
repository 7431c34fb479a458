#!/usr/bin/env python3
"""Derive the expected numbers of the HTTP/2 samples (issue 22) without the project's code.

    python3 samples/derive-http2-expected.py [NAME ...]      # default: every sample in SAMPLES

Needs tshark 4.0 and the Python `hpack` library (pip install hpack); imports the TCP helpers of
samples/derive-expected.py (tshark runs, connection rows, reassembly checked against follow,tcp,raw).

Every number comes from our own walk over the byte streams: tshark's `follow,tcp,raw` (cleartext) or
`follow,tls,raw` with the key log (TLS) gives each direction's bytes in capture order; a frame walker
written here (RFC 9113 section 4.1) splits them into frames; an HPACK representation walker written here
(RFC 7541 sections 5.1, 5.2, 6) splits every header block into representations; `hpack` decodes them
(one representation at a time, and again a whole block at a time with a second decoder: both must
agree). tshark's own HTTP/2 dissection (PDML) is the cross-check: its frames (type, flags, stream,
length, pad length) must equal ours one for one, and its decoded header fields and their representation
sizes must equal ours wherever its 4.0 dissector can see them (not across HEADERS -> CONTINUATION).

Files in samples/expected/http2-NAME/ (definitions in samples/README.md, "HTTP/2 samples"):
  connections.tshark.csv  TCP connection rows as for every sample (derive-expected.py's, checked with conv,tcp)
  records.csv       one row per request/response record (the contract of issue 22)
  connections.csv   per connection and direction: delivered bytes and h2_control_bytes
  conservation.txt  per connection and direction: delivered = sum(transfer) + control + other, checked
  frames.csv        every HTTP/2 frame (and the preface, the HTTP/1.1 heads of an upgrade) as we walked it
  blocks.txt        every header block: its frames and each representation (offset, bytes, decoded field)
  crosscheck.txt    what tshark's dissection agreed with and where it could not (and why)
  tshark.txt        (cleartext samples) the tshark command and its per-frame field output
"""
import base64
import collections
import csv
import gzip
import importlib.util
import os
import re
import shlex
import sys
import xml.etree.ElementTree as ET
import zlib

import hpack

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("derive_expected", os.path.join(HERE, "derive-expected.py"))
dx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dx)

# name -> (capture, key log or None, server port, tshark decode-as protocol for that port)
SAMPLES = {
    "http2-h2c-prior": ("http2-h2c-prior.pcap", None, 8080, "http2"),
    "http2-tls": ("http2-tls.pcap", "http2-tls.keys", 8443, None),
    "http2-tls12": ("http2-tls12.pcap", "http2-tls12.keys", 8443, None),
    "http2-h2c-upgrade": ("http2-h2c-upgrade.pcap", None, 8081, "http"),
    "http2-features": ("http2-features.pcap", None, 8082, "http2"),
    "http2-grpc": ("http2-grpc.pcap", None, 50051, "http2"),
}
TSHARK_TXT = {"http2-h2c-prior", "http2-h2c-upgrade", "http2-features", "http2-grpc"}

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
TYPE_NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
              "WINDOW_UPDATE", "CONTINUATION"]
END_STREAM, END_HEADERS, PADDED, PRIO_FLAG = 0x1, 0x4, 0x8, 0x20
DIRS = ("c2s", "s2c")
DIR_NAMES = {"c2s": "client_to_server", "s2c": "server_to_client"}

RECORD_HEADER = ["connection", "stream_id", "index", "kind", "version", "method", "host", "path", "query", "status",
                 "line_bytes", "header_bytes", "header_decoded_bytes", "cookie_bytes", "cookie_decoded_bytes",
                 "body_bytes", "encoded_body_bytes", "decoded_body_bytes", "transfer_bytes", "complete", "flags"]
CONN_HEADER = ["connection", "direction", "delivered_bytes", "h2_control_bytes"]
FRAME_HEADER = ["connection", "direction", "offset", "what", "type", "flags", "stream_id", "length", "pad_length",
                "bytes"]


def die(msg):
    print("derive-http2-expected: ERROR: " + msg, file=sys.stderr)
    sys.exit(1)


def tshark_opts(keys):
    opts = list(dx.TSHARK_OPTS) + ["-o", "tcp.desegment_tcp_streams:TRUE"]
    if keys:
        opts += ["-o", "tls.keylog_file:" + keys, "-o", "tls.desegment_ssl_records:TRUE",
                 "-o", "tls.desegment_ssl_application_data:TRUE"]
    return opts


# ----------------------------------------------------------------------------- byte streams
def follow(path, sid, client, tls):
    """The connection's bytes in capture order: [(dir, bytes)] (TCP segments or decrypted TLS records)."""
    out = dx.tshark(path, "-q", "-z", "follow,%s,raw,%d" % ("tls" if tls else "tcp", sid))
    node0, chunks = None, []
    for line in out.splitlines():
        if line.startswith("Node 0: "):
            node0 = line[8:].strip()
            continue
        if node0 is None or line.startswith("===") or line.startswith("Node 1: ") or not line.strip():
            continue
        data = bytes.fromhex(line.strip())
        if dx.GAP_TEXT.match(data):
            die("%s stream %d: bytes missing in the capture" % (path, sid))
        chunks.append((line.startswith("\t"), data))
    # Node 0 is the sender of the first chunk; tshark 4.0 prints the TLS Node 0 as ":0" sometimes: decide
    # by who sent the first chunk when the address does not say (in TLS 1.3 the server may speak first).
    if node0 == client:
        n0 = "c2s"
    elif node0 and node0 != ":0" and not node0.startswith(":"):
        n0 = "s2c"
    else:
        n0 = None
    if n0 is None:
        die("%s stream %d: cannot tell the follow nodes apart (Node 0: %s)" % (path, sid, node0))
    other = "s2c" if n0 == "c2s" else "c2s"
    return [((other if from1 else n0), data) for from1, data in chunks]


# ----------------------------------------------------------------------------- HTTP/1.1 head (upgrade)
def http1_head(buf, pos):
    """(start_line_bytes, header_field_bytes incl. final CRLF, cookie line bytes, fields, end) of a head."""
    buf = bytes(buf)
    end = buf.find(b"\r\n\r\n", pos)
    if end < 0:
        die("HTTP/1.1 head without its end")
    line_end = buf.find(b"\r\n", pos) + 2
    fields, cookie_lines = [], []
    p = line_end
    while p < end + 2:
        e = buf.find(b"\r\n", p) + 2
        name, value = buf[p:e - 2].split(b":", 1)
        fields.append((name.strip().lower(), value.strip()))
        if name.strip().lower() in (b"cookie", b"set-cookie"):
            cookie_lines.append(e - p)
        p = e
    return line_end - pos, end + 4 - line_end, cookie_lines, fields, end + 4, buf[pos:line_end - 2]


# ----------------------------------------------------------------------------- frames
def walk_frames(buf, pos, base_chunks):
    """Every frame from pos to the end: dicts with offset, type, flags, sid, length, payload, t (order key)."""
    frames = []
    while pos < len(buf):
        if pos + 9 > len(buf):
            die("a frame header cut at offset %d of %d" % (pos, len(buf)))
        length = int.from_bytes(buf[pos:pos + 3], "big")
        ftype, flags = buf[pos + 3], buf[pos + 4]
        sid = int.from_bytes(buf[pos + 5:pos + 9], "big") & 0x7FFFFFFF
        if pos + 9 + length > len(buf):
            die("a frame payload cut at offset %d (length %d, %d bytes left)" % (pos, length, len(buf) - pos - 9))
        frames.append({"offset": pos, "type": ftype, "flags": flags, "sid": sid, "length": length,
                       "payload": bytes(buf[pos + 9:pos + 9 + length]), "t": base_chunks(pos + 9 + length - 1)})
        pos += 9 + length
    return frames


def unpad(f):
    """(pad_length or None, payload without the pad-length byte and padding)."""
    p = f["payload"]
    if f["type"] in (DATA, HEADERS, PUSH_PROMISE) and f["flags"] & PADDED:
        pad = p[0]
        if pad >= len(p):
            die("padding longer than the frame payload")
        return pad, p[1:len(p) - pad]
    return None, p


# ----------------------------------------------------------------------------- HPACK
def hpack_int(block, i, bits):
    """RFC 7541 5.1: (value, next offset) of the integer whose prefix has `bits` bits at block[i]."""
    if i >= len(block):
        raise ValueError("integer past the end of the block")
    mask = (1 << bits) - 1
    v = block[i] & mask
    i += 1
    if v < mask:
        return v, i
    m = 0
    while True:
        if i >= len(block) or m > 28:
            raise ValueError("integer continuation past the end / too long")
        b = block[i]
        i += 1
        v += (b & 0x7F) << m
        m += 7
        if not b & 0x80:
            return v, i


def hpack_string(block, i):
    huff = bool(block[i] & 0x80)
    n, i = hpack_int(block, i, 7)
    if i + n > len(block):
        raise ValueError("string past the end of the block")
    return i + n, huff, n


KINDS = {"indexed": "indexed", "incr": "literal, incremental indexing", "size": "dynamic table size update",
         "never": "literal, never indexed", "noidx": "literal, without indexing"}


def representations(block):
    """RFC 7541 section 6: [(start, end, kind, index, detail)] for every representation of a block."""
    out, i = [], 0
    while i < len(block):
        start, b = i, block[i]
        detail = ""
        if b & 0x80:
            kind, (idx, i) = "indexed", hpack_int(block, i, 7)
        elif b & 0x40:
            kind, (idx, i) = "incr", hpack_int(block, i, 6)
        elif b & 0x20:
            kind, (idx, i) = "size", hpack_int(block, i, 5)
        else:
            kind, (idx, i) = ("never" if b & 0x10 else "noidx"), hpack_int(block, i, 4)
        if kind in ("incr", "never", "noidx"):
            parts = []
            if idx == 0:
                i, huff, n = hpack_string(block, i)
                parts.append("name %d%s" % (n, " huffman" if huff else ""))
            i, huff, n = hpack_string(block, i)
            parts.append("value %d%s" % (n, " huffman" if huff else ""))
            detail = ", ".join(parts)
        out.append((start, i, kind, idx, detail))
    return out


class Hpack:
    """Two decoders per direction: one fed representation by representation, one whole blocks."""

    def __init__(self):
        self.rep, self.block = hpack.Decoder(), hpack.Decoder()
        for d in (self.rep, self.block):
            d.max_header_list_size = 1 << 30

    def table_limit(self, size):
        for d in (self.rep, self.block):
            d.max_allowed_table_size = max(d.max_allowed_table_size, size)

    def decode(self, block):
        reps = []
        for start, end, kind, idx, detail in representations(block):
            fields = self.rep.decode(bytes(block[start:end]), raw=True)
            if len(fields) != (0 if kind == "size" else 1):
                die("a %s representation decoded to %d fields" % (kind, len(fields)))
            reps.append({"start": start, "end": end, "kind": kind, "index": idx, "detail": detail,
                         "field": fields[0] if fields else None})
        whole = self.block.decode(bytes(block), raw=True)
        if [tuple(r["field"]) for r in reps if r["field"]] != [tuple(f) for f in whole]:
            die("decoding one representation at a time differs from decoding the block")
        return reps


# ----------------------------------------------------------------------------- bodies
def decode_content(data, coding):
    for c in reversed([c.strip().lower() for c in coding.split(",") if c.strip()]):
        if c in ("gzip", "x-gzip"):
            data = gzip.decompress(data)
        elif c == "deflate":
            try:
                data = zlib.decompress(data)
            except zlib.error:
                data = zlib.decompress(data, -15)
        elif c != "identity":
            die("content-coding %s not handled" % c)
    return len(data)


def grpc_decoded(data, encoding):
    """Sum over the length-prefixed messages of 5 + payload length after grpc-encoding decompression."""
    total, i, msgs = 0, 0, []
    while i < len(data):
        if i + 5 > len(data):
            die("a gRPC message prefix cut short")
        flag, n = data[i], int.from_bytes(data[i + 1:i + 5], "big")
        payload = data[i + 5:i + 5 + n]
        if len(payload) < n:
            die("a gRPC message cut short")
        if flag & 1:
            if encoding == "gzip":
                payload = gzip.decompress(payload)
            elif encoding == "deflate":
                payload = zlib.decompress(payload)
            else:
                die("gRPC message compressed with %r" % encoding)
        msgs.append((flag, n, len(payload)))
        total += 5 + len(payload)
        i += 5 + n
    return total, msgs


# ----------------------------------------------------------------------------- records
class Record:
    def __init__(self, conn, sid, kind, version="HTTP/2"):
        self.conn, self.sid, self.kind, self.version = conn, sid, kind, version
        self.index = None
        self.method = self.host = self.path = self.query = self.status = ""
        self.line = self.header = self.body = self.encoded = 0
        self.header_decoded = self.cookie_decoded = None
        self.cookie = 0
        self.data = bytearray()
        self.fields = []
        self.complete = False
        self.reset = self.pushed = self.interim = False
        self.decoded = None
        self.order = 0

    def field(self, name):
        for n, v in self.fields:
            if n == name:
                return v.decode("latin-1")
        return ""

    def set_target(self, fields):
        f = dict(fields)
        self.method = f.get(b":method", b"").decode("latin-1")
        host = f.get(b":authority", f.get(b"host", b""))
        self.host = host.decode("latin-1")
        target = f.get(b":path", b"").decode("latin-1")
        self.path, _, self.query = target.partition("?")

    def copy_target(self, other):
        self.method, self.host, self.path, self.query = other.method, other.host, other.path, other.query

    def row(self):
        decoded = self.decoded
        return [self.conn, self.sid, "" if self.index is None else self.index, self.kind, self.version,
                self.method, self.host, self.path, self.query, self.status, self.line, self.header,
                "" if self.header_decoded is None else self.header_decoded, self.cookie,
                "" if self.cookie_decoded is None else self.cookie_decoded, self.body, self.encoded,
                decoded, self.line + self.header + self.body, "true" if self.complete else "false",
                " ".join(f for f, on in (("reset", self.reset), ("pushed", self.pushed)) if on)]


class Connection:
    """Walks one connection's two byte streams and builds its records."""

    def __init__(self, name, cid, chunks):
        self.name, self.cid = name, cid
        self.buf = {d: bytearray() for d in DIRS}
        self.chunk_end = {d: [] for d in DIRS}  # (end offset, global chunk number)
        for n, (d, data) in enumerate(chunks):
            self.buf[d] += data
            self.chunk_end[d].append((len(self.buf[d]), n))
        self.control = {d: 0 for d in DIRS}
        self.other = {d: 0 for d in DIRS}
        self.records = []
        self.frames_out = []   # rows of frames.csv
        self.blocks_out = []   # text of blocks.txt
        self.hpack = {d: Hpack() for d in DIRS}
        self.streams = {}      # sid -> {"req": Record, "resps": [Record], "reset_seen": bool}
        self.order = 0
        self.next_index = 1
        self.pending = {d: None for d in DIRS}  # an open header block: dict
        self.frames = {}
        self.block_reps = {}
        self.h2 = False

    def when(self, d):
        ends = self.chunk_end[d]

        def t(off):
            for end, n in ends:
                if off < end:
                    return n
            die("offset past the stream")
        return t

    def frame_row(self, d, off, what, ftype="", flags="", sid="", length="", pad="", nbytes=0):
        self.frames_out.append([self.cid, DIR_NAMES[d], off, what, ftype, flags, sid, length, pad, nbytes])

    def stream(self, sid):
        if sid not in self.streams:
            self.streams[sid] = {"req": None, "resps": [], "reset_seen": False, "promise": None}
        return self.streams[sid]

    def new_record(self, sid, kind, version="HTTP/2"):
        r = Record(self.cid, sid, kind, version)
        self.order += 1
        r.order = self.order
        self.records.append(r)
        s = self.stream(sid)
        if s["reset_seen"]:
            r.reset = True  # created after an RST_STREAM for its stream: it can never be complete
        return r

    # ------------------------------------------------------------------------ walking
    def walk(self):
        c2s, s2c = self.buf["c2s"], self.buf["s2c"]
        pos = {"c2s": 0, "s2c": 0}
        if c2s.startswith(PREFACE):
            self.h2 = True
        elif re.match(rb"^[A-Z]+ \S+ HTTP/1\.1\r\n", c2s):
            line, head, cookies, fields, end, start = http1_head(c2s, 0)
            f = dict(fields)
            if b"h2c" not in f.get(b"upgrade", b"").lower() or b"http2-settings" not in f:
                die("connection %d: HTTP/1.1 without an h2c upgrade" % self.cid)
            if f.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in f:
                die("connection %d: an upgrade request with a body is not handled" % self.cid)
            req = self.new_record(1, "request", "HTTP/1.1")
            req.index, self.next_index = 1, 2
            method, target, _ = start.decode("latin-1").split(" ")
            req.method, req.host = method, f.get(b"host", b"").decode("latin-1")
            req.path, _, req.query = target.partition("?")
            req.line, req.header, req.cookie, req.complete = line, head, sum(cookies), True
            req.fields = fields
            self.stream(1)["req"] = req
            self.frame_row("c2s", 0, "HTTP/1.1 request head", nbytes=line + head)
            # the client's settings for the server's encoder (HTTP2-Settings, RFC 7540 3.2.1)
            raw = base64.urlsafe_b64decode(f[b"http2-settings"] + b"=" * (-len(f[b"http2-settings"]) % 4))
            self.apply_settings("c2s", raw)
            if not s2c.startswith(b"HTTP/1.1 101"):
                die("connection %d: the upgrade was not accepted" % self.cid)
            line, head, cookies, fields, end2, start2 = http1_head(s2c, 0)
            resp = self.new_record(1, "response", "HTTP/1.1")
            resp.copy_target(req)
            resp.index = 1
            resp.status = start2.split(b" ")[1].decode()
            resp.line, resp.header, resp.cookie, resp.complete, resp.interim = line, head, sum(cookies), True, True
            resp.decoded = 0
            self.stream(1)["resps"].append(resp)
            self.frame_row("s2c", 0, "HTTP/1.1 101 head", nbytes=line + head)
            pos = {"c2s": end, "s2c": end2}
            if not c2s[end:].startswith(PREFACE):
                die("connection %d: no client preface after the upgrade request" % self.cid)
            self.h2 = True
        else:
            self.other = {d: len(self.buf[d]) for d in DIRS}
            return
        self.control["c2s"] += len(PREFACE)
        self.frame_row("c2s", pos["c2s"], "client preface", nbytes=len(PREFACE))
        pos["c2s"] += len(PREFACE)
        fl = {d: walk_frames(self.buf[d], pos[d], self.when(d)) for d in DIRS}
        for d in DIRS:
            for f in fl[d]:
                f["dir"] = d
        self.frames = fl
        # both directions in capture order: by the chunk that completes each frame
        merged = sorted(fl["c2s"] + fl["s2c"], key=lambda f: (f["t"], f["offset"]))
        for f in merged:
            self.frame(f)
        for d in DIRS:
            if self.pending[d]:
                die("connection %d %s: a header block never ended" % (self.cid, d))

    def apply_settings(self, d, payload):
        for i in range(0, len(payload) - len(payload) % 6, 6):
            ident, value = int.from_bytes(payload[i:i + 2], "big"), int.from_bytes(payload[i + 2:i + 6], "big")
            if ident == 1:  # SETTINGS_HEADER_TABLE_SIZE: the limit for the peer's encoder
                other = "s2c" if d == "c2s" else "c2s"
                self.hpack[other].table_limit(value)

    def frame(self, f):
        d, t, sid = f["dir"], f["type"], f["sid"]
        pad, _ = unpad(f)
        self.frame_row(d, f["offset"], "frame", TYPE_NAMES[t] if t < len(TYPE_NAMES) else "0x%02x" % t,
                       "0x%02x" % f["flags"], sid, f["length"], "" if pad is None else pad, 9 + f["length"])
        size = 9 + f["length"]
        p = self.pending[d]
        if p is not None and t != CONTINUATION:
            die("connection %d %s: frame type %d inside a header block" % (self.cid, d, t))
        if t in (HEADERS, PUSH_PROMISE):
            _, body = unpad(f)
            if t == HEADERS and f["flags"] & PRIO_FLAG:
                body = body[5:]
            promised = None
            if t == PUSH_PROMISE:
                promised, body = int.from_bytes(body[:4], "big") & 0x7FFFFFFF, body[4:]
            self.pending[d] = {"type": t, "sid": sid, "frames": [f], "block": bytearray(body), "bytes": size,
                               "end_stream": bool(t == HEADERS and f["flags"] & END_STREAM), "promised": promised}
            if f["flags"] & END_HEADERS:
                self.block_done(d)
        elif t == CONTINUATION:
            if p is None or p["sid"] != sid:
                die("connection %d %s: CONTINUATION outside a header block" % (self.cid, d))
            p["frames"].append(f)
            p["block"] += f["payload"]
            p["bytes"] += size
            if f["flags"] & END_HEADERS:
                self.block_done(d)
        elif t == DATA:
            rec = self.body_record(d, sid, "DATA")
            pad, data = unpad(f)
            rec.body += size
            rec.encoded += len(data)
            rec.data += data
            if f["flags"] & END_STREAM:
                rec.complete = True
        else:
            self.control[d] += size
            if t == SETTINGS and not f["flags"] & 0x1:
                self.apply_settings(d, f["payload"])
            if t == RST_STREAM:
                s = self.stream(sid)
                s["reset_seen"] = True
                for r in ([s["req"]] if s["req"] else []) + s["resps"]:
                    if not r.complete:
                        r.reset = True

    def body_record(self, d, sid, what):
        s = self.stream(sid)
        if d == "c2s":
            rec = s["req"]
        else:
            finals = [r for r in s["resps"] if not r.interim]
            rec = finals[-1] if finals else None
        if rec is None:
            die("connection %d %s: %s on stream %d before its header block" % (self.cid, d, what, sid))
        return rec

    def block_done(self, d):
        p = self.pending[d]
        self.pending[d] = None
        sid, block = p["sid"], bytes(p["block"])
        reps = self.hpack[d].decode(block)
        fields = [r["field"] for r in reps if r["field"]]
        s = self.stream(sid)
        what = ""
        if p["type"] == PUSH_PROMISE:
            # the promise is control bytes; the promised stream gets its request target
            self.control[d] += p["bytes"]
            ps = self.stream(p["promised"])
            ps["promise"] = fields
            ps["promised_on"] = sid
            what = "PUSH_PROMISE of stream %d" % p["promised"]
            target = None
        elif d == "c2s" and s["req"] is None:
            rec = self.new_record(sid, "request")
            rec.index, self.next_index = self.next_index, self.next_index + 1
            rec.set_target(fields)
            s["req"] = rec
            target = rec
            what = "request"
        elif d == "s2c" and not [r for r in s["resps"] if not r.interim]:
            rec = self.new_record(sid, "response")
            if s["req"] is not None:
                rec.copy_target(s["req"])
                rec.index = s["req"].index
            elif s["promise"] is not None:
                rec.set_target(s["promise"])
                rec.pushed = True
            else:
                die("connection %d: a response on stream %d without request or promise" % (self.cid, sid))
            rec.status = dict(fields).get(b":status", b"").decode()
            rec.interim = rec.status.startswith("1")
            if rec.interim:
                rec.complete = True  # an interim record is complete when its block ends
                rec.decoded = 0
            s["resps"].append(rec)
            target = rec
            what = "interim response" if rec.interim else "response"
        else:
            rec = self.body_record(d, sid, "trailer block")
            rec.body += p["bytes"]
            if p["end_stream"]:
                rec.complete = True
            target = None
            what = "trailers"
        if target is not None:
            cookie_name = b"cookie" if target.kind == "request" else b"set-cookie"
            target.header = p["bytes"]
            target.fields = fields
            target.header_decoded = sum(len(n) + len(v) for n, v in fields)
            crumbs = [r for r in reps if r["field"] and r["field"][0] == cookie_name]
            target.cookie = sum(r["end"] - r["start"] for r in crumbs)
            target.cookie_decoded = sum(len(r["field"][0]) + len(r["field"][1]) for r in crumbs)
            if p["end_stream"]:
                target.complete = True
        # blocks.txt
        sizes = []
        boundary, acc = [], 0
        for i, fr in enumerate(p["frames"]):
            _, body = unpad(fr)
            if i == 0 and fr["type"] == HEADERS and fr["flags"] & PRIO_FLAG:
                body = body[5:]
            if i == 0 and fr["type"] == PUSH_PROMISE:
                body = body[4:]
            if i > 0:
                body = fr["payload"]
            acc += len(body)
            boundary.append(acc)
            pad, _ = unpad(fr)
            sizes.append("%s %d+%d%s%s" % (TYPE_NAMES[fr["type"]], 9, fr["length"],
                                           "" if pad is None else " (pad length byte + %d padding)" % pad,
                                           " (priority 5)" if i == 0 and fr["type"] == HEADERS and
                                           fr["flags"] & PRIO_FLAG else ""))
        lines = ["connection %d %s stream %d: %s, %d block bytes in %s = %d bytes" %
                 (self.cid, DIR_NAMES[d], sid, what, len(block), ", ".join(sizes), p["bytes"])]
        for r in reps:
            span = [b for b in boundary[:-1] if r["start"] < b < r["end"]]
            name, value = r["field"] if r["field"] else (b"", b"")
            lines.append("  @%-4d %3d bytes %-32s %-12s %s%s%s" % (
                r["start"], r["end"] - r["start"], KINDS[r["kind"]] + (" %d" % r["index"] if r["index"] else ""),
                block[r["start"]:r["end"]][:6].hex() + ("…" if r["end"] - r["start"] > 6 else ""),
                (name + b": " + value).decode("latin-1") if r["field"] else "(size %d)" % r["index"],
                "" if not r["field"] else "  [%d+%d]" % (len(name), len(value)),
                "  SPANS the frame boundary at block offset %s" % span if span else ""))
        self.blocks_out.append("\n".join(lines))
        self.block_reps[(d, p["frames"][0]["offset"])] = reps

    # ------------------------------------------------------------------------ finishing
    def finish(self):
        for r in self.records:
            if r.decoded is not None:
                continue
            if not r.data:
                r.decoded = 0
                continue
            ctype = r.field(b"content-type")
            if ctype.startswith("application/grpc"):
                r.decoded, r.grpc = grpc_decoded(bytes(r.data), r.field(b"grpc-encoding") or "identity")
            else:
                r.decoded = decode_content(bytes(r.data), r.field(b"content-encoding"))
        # rows: by client stream id (the order the client opened them), a pushed stream right after the
        # stream whose PUSH_PROMISE carried it; per stream the request, then interim responses, then the
        # final one (the order of their header blocks)
        def key(r):
            anchor = self.streams[r.sid].get("promised_on")
            if anchor is None:
                return (r.sid, 0, 0 if r.kind == "request" else 1, r.order)
            return (anchor, r.sid, 1, r.order)
        self.records.sort(key=key)


# ----------------------------------------------------------------------------- tshark cross-check
def tshark_frames(path, opts):
    """From tshark's PDML: per (tcp.stream, src endpoint) the HTTP/2 frames it dissected, in order, each
    with its decoded header fields (name, value, representation size) when it shows them."""
    xml = dx.tshark(path, *opts, "-T", "pdml")
    root = ET.fromstring(xml[xml.find("<?xml"):].encode("utf-8", errors="surrogateescape"))
    out = collections.defaultdict(list)
    magic = collections.Counter()

    def first(el, name):
        for f in el.iter("field"):
            if f.get("name") == name:
                return f.get("show")
        return None

    for pkt in root.iter("packet"):
        stream = src = None
        for proto in pkt:
            if proto.get("name") == "tcp":
                stream = int(first(proto, "tcp.stream"))
                port = first(proto, "tcp.srcport")
            elif proto.get("name") == "ip":
                src = first(proto, "ip.src")
        last = None
        for proto in pkt:
            if proto.get("name") == "grpc" and last is not None:
                flag = first(proto, "grpc.compressed_flag")
                length = first(proto, "grpc.message_length")
                last.setdefault("grpc", []).append([int(flag), int(length), None])
                continue
            if proto.get("name") == "protobuf" and last is not None and last.get("grpc"):
                if last["grpc"][-1][2] is None:
                    last["grpc"][-1][2] = int(proto.get("size"))
                continue
            if proto.get("name") != "http2":
                continue
            for f in proto.iter("field"):
                if f.get("name") == "http2.magic":
                    magic[(stream, "%s:%s" % (src, port))] += 1
            for st in proto:
                if st.get("name") != "http2.stream":
                    continue
                fr = {}
                for k in ("http2.length", "http2.type", "http2.flags", "http2.streamid", "http2.pad_length"):
                    for ch in st:
                        if ch.get("name") == k:
                            fr[k] = ch.get("show")
                            break
                if fr.get("http2.length") is None:
                    continue  # the magic only
                for ch in st.iter("field"):
                    m = re.match(r"^Content-encoded entity body \((.*)\): (\d+) bytes -> (\d+) bytes", ch.get("show", ""))
                    if m:
                        fr["content_coded"] = (m.group(1), int(m.group(2)), int(m.group(3)))
                    if ch.get("name") == "http2.body.reassembled.length":
                        fr["reassembled"] = int(ch.get("show"))
                for ch in st:
                    if ch.get("name") == "http2.data.data":
                        fr["data_len"] = int(ch.get("size"))
                last = fr
                fr["headers"] = []
                for ch in st:
                    if ch.get("name") == "http2.header":
                        n = first(ch, "http2.header.name")
                        v = first(ch, "http2.header.value")
                        fr["headers"].append((n, v, int(ch.get("size"))))
                    if ch.get("name") == "http2.header.length":
                        fr["header_length"] = int(ch.get("show"))
                    if ch.get("name") == "http2.header.count":
                        fr["header_count"] = int(ch.get("show"))
                out[(stream, "%s:%s" % (src, port))].append(fr)
    return out, magic


def crosscheck(name, path, opts, conns):
    ts, magic = tshark_frames(path, opts)
    notes, agree_frames, agree_fields = [], 0, 0
    data_frames = [0]
    padded_quirk = []
    for cid, c in conns.items():
        if not c.h2:
            continue
        for d in DIRS:
            ep = c.client if d == "c2s" else c.server
            theirs = ts.get((cid, ep), [])
            mine = c.frames[d]
            if d == "c2s" and magic.get((cid, ep), 0) != 1:
                notes.append("connection %d: tshark did not show the client preface (magic)" % cid)
            if len(theirs) != len(mine):
                die("%s connection %d %s: tshark shows %d HTTP/2 frames, the walker %d"
                    % (name, cid, d, len(theirs), len(mine)))
            for a, b in zip(mine, theirs):
                pad, _ = unpad(a)
                want = (a["length"], a["type"], a["flags"], a["sid"])
                got = (int(b["http2.length"]), int(b["http2.type"]), int(b["http2.flags"], 16),
                       int(b["http2.streamid"]))
                if want != got:
                    die("%s connection %d %s frame at %d: walker %s, tshark %s" % (name, cid, d, a["offset"], want, got))
                tpad = b.get("http2.pad_length")
                if pad is not None and int(tpad or -1) != pad:
                    die("%s connection %d %s frame at %d: pad length %s, tshark %s" % (name, cid, d, a["offset"],
                                                                                      pad, tpad))
                if a["type"] == DATA and "content_coded" not in b and "reassembled" not in b and b.get("data_len") is not None:
                    # tshark 4.0 shows the padding of a padded DATA frame that ends its stream (and so its
                    # body) as data too: length - 1 (the pad length byte)
                    quirk = pad is not None and b["data_len"] == a["length"] - 1 and pad > 0
                    if b["data_len"] != len(unpad(a)[1]) and not quirk:
                        die("%s connection %d %s DATA at %d: tshark's data %d bytes, ours %d (pad %s)"
                            % (name, cid, d, a["offset"], b["data_len"], len(unpad(a)[1]), pad))
                    data_frames[0] += 1
                    if quirk:
                        padded_quirk.append("connection %d %s stream %d DATA length %d, pad length %d: tshark's "
                                            "http2.data.data is %d bytes (padding included), the data is %d (flags 0x%02x)"
                                            % (cid, DIR_NAMES[d], a["sid"], a["length"], pad, b["data_len"],
                                               len(unpad(a)[1]), a["flags"]))
                a["tshark"] = b
                agree_frames += 1
        # header fields: per block, tshark's fields of every frame of the block (it lists them at the
        # frame where its decoder emitted them) against ours
    for cid, c in conns.items():
        if not c.h2:
            continue
        for d in DIRS:
            blocks = []
            cur = None
            for f in c.frames[d]:
                if f["type"] in (HEADERS, PUSH_PROMISE):
                    cur = [f]
                elif f["type"] == CONTINUATION:
                    cur.append(f)
                else:
                    continue
                if f["flags"] & END_HEADERS:
                    blocks.append(cur)
            for blk in blocks:
                theirs = [h for fr in blk for h in fr["tshark"]["headers"]]
                agree_fields += len(theirs)
                mine = [(r["field"][0].decode("latin-1"), r["field"][1].decode("latin-1"), r["end"] - r["start"])
                        for r in c.block_reps[(d, blk[0]["offset"])] if r["field"]]
                if len(blk) == 1:
                    if [(n, v, s) for n, v, s in theirs] != mine:
                        die("%s connection %d %s block at %d: tshark fields %s, ours %s"
                            % (name, cid, d, blk[0]["offset"], theirs, mine))
                    hl = blk[0]["tshark"].get("header_length")
                    if hl is not None and hl != sum(len(n.encode("latin-1")) + len(v.encode("latin-1")) + 8
                                                    for n, v, _ in mine):
                        die("%s connection %d: tshark's Header Length %d is not sum(name+value+8)" % (name, cid, hl))
                else:
                    notes.append("connection %d %s stream %d: block in %d frames (%s): tshark shows %s; ours %s"
                                  % (cid, DIR_NAMES[d], blk[0]["sid"], len(blk),
                                     " + ".join("%s %d" % (TYPE_NAMES[f["type"]], f["length"]) for f in blk),
                                     ["%s (%d bytes)" % (n, s) for n, v, s in theirs],
                                     ["%s (%d bytes)" % (n, s) for n, v, s in mine]))
    # bodies: tshark's content decoding and gRPC message sizes (it decompresses gzip messages)
    bodies = 0
    for cid, c in conns.items():
        if not c.h2:
            continue
        for r in c.records:
            if r.version != "HTTP/2":
                continue
            d = "c2s" if r.kind == "request" else "s2c"
            data = [f for f in c.frames[d] if f["type"] == DATA and f["sid"] == r.sid]
            if r.interim or not data:
                continue
            info = [f["tshark"] for f in data]
            cc = [i["content_coded"] for i in info if "content_coded" in i]
            msgs = [m for i in info for m in i.get("grpc", [])]
            if r.field(b"content-encoding"):
                if len(cc) != 1 or cc[0][1:] != (r.encoded, r.decoded):
                    die("%s connection %d stream %d %s: tshark's content decoding %s, ours %d -> %d"
                        % (name, cid, r.sid, r.kind, cc, r.encoded, r.decoded))
                bodies += 1
            elif r.field(b"content-type").startswith("application/grpc"):
                theirs = sum(5 + (m[2] if m[2] is not None else m[1]) for m in msgs)
                if [(m[0], m[1]) for m in msgs] != [(f, n) for f, n, _ in r.grpc] or theirs != r.decoded:
                    die("%s connection %d stream %d %s: tshark's gRPC messages %s (sum %d), ours %s (sum %d)"
                        % (name, cid, r.sid, r.kind, msgs, theirs, r.grpc, r.decoded))
                bodies += 1
            else:
                ra = [i["reassembled"] for i in info if "reassembled" in i]
                if ra and ra != [r.encoded]:
                    die("%s connection %d stream %d: tshark reassembled %s body bytes, ours %d"
                        % (name, cid, r.sid, ra, r.encoded))
                if ra:
                    bodies += 1
    notes.insert(0, "BODIES %d %d" % (bodies, data_frames[0]))
    notes.insert(1, padded_quirk)
    return agree_frames, notes


# ----------------------------------------------------------------------------- per sample
def do_sample(name):
    fname, keys, port, decode_as = SAMPLES[name]
    path = os.path.join(HERE, fname)
    keyfile = os.path.join(HERE, keys) if keys else None
    saved = list(dx.TSHARK_OPTS)
    opts = tshark_opts(keyfile)
    if decode_as:
        opts += ["-d", "tcp.port==%d,%s" % (port, decode_as)]
    out_dir = os.path.join(HERE, "expected", name)
    os.makedirs(out_dir, exist_ok=True)

    frames = dx.read_frames(path)
    tconns, conn_rows = dx.connections(frames)
    dx.check_conv(path, conn_rows)
    dx.write_csv(os.path.join(out_dir, "connections.tshark.csv"), dx.CONN_HEADER, conn_rows)
    tcp_streams = dx.build_streams(tconns)
    dx.TSHARK_OPTS = opts
    retrans = collections.Counter()
    for line in dx.tshark(path, "-o", "tcp.desegment_tcp_streams:FALSE", "-Y", "tcp.analysis.retransmission || "
                          "tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission", "-T", "fields",
                          "-e", "tcp.stream", "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.len").splitlines():
        sid, src, sport, n = line.split("\t")
        retrans[(int(sid), "%s:%s" % (src, sport))] += int(n)
    conns = {}
    for cid in sorted(tconns):
        tc = tconns[cid]
        dx.check_follow(path, cid, tc, tcp_streams[cid])
        chunks = follow(path, cid, tc["client"], bool(keys))
        c = Connection(name, cid, chunks)
        c.client, c.server = tc["client"], tc["server"]
        c.tcp_payload = {d: tcp_streams[cid][d].end for d in DIRS}
        row = [r for r in conn_rows if r[0] == cid][0]
        c.retransmitted = {}
        for d, payload in (("c2s", row[5]), ("s2c", row[8])):
            # every payload byte once: the sum of tcp.len counts a retransmitted segment again, and must
            # exceed the stream length by exactly what tshark flags as retransmissions
            c.retransmitted[d] = retrans[(cid, c.client if d == "c2s" else c.server)]
            if payload - c.retransmitted[d] != c.tcp_payload[d]:
                die("%s connection %d %s: sum of tcp.len %d - retransmitted %d is not the stream length %d"
                    % (name, cid, d, payload, c.retransmitted[d], c.tcp_payload[d]))
            if not keys and bytes(c.buf[d]) != bytes(tcp_streams[cid][d].buf):
                die("%s connection %d %s: follow differs from the reassembly" % (name, cid, d))
        if c.buf["c2s"] or c.buf["s2c"]:
            c.walk()
            c.finish()
        conns[cid] = c
    agree, notes = crosscheck(name, path, opts, conns)

    # ---- outputs
    rows, crow, cons = [], [], []
    for cid in sorted(conns):
        c = conns[cid]
        rows += [r.row() for r in c.records]
        for d in DIRS:
            delivered = len(c.buf[d])
            moved = sum(r.line + r.header + r.body for r in c.records
                        if (r.kind == "request") == (d == "c2s"))
            other = delivered - moved - c.control[d]
            crow.append([cid, DIR_NAMES[d], delivered, c.control[d]])
            cons.append("connection %d %s: delivered %d = transfer %d + h2_control %d + other %d%s%s"
                        % (cid, DIR_NAMES[d], delivered, moved, c.control[d], other,
                           "" if not keys else " (decrypted TLS application data; TCP payload %d)"
                           % c.tcp_payload[d],
                           "" if not c.retransmitted[d] else "; the sum of tcp.len is %d more: a %d-byte "
                           "retransmission (tshark's tcp.analysis flags)" % (c.retransmitted[d], c.retransmitted[d])))
            if other != (delivered if not c.h2 else 0):
                die("%s connection %d %s: %d bytes neither in a record nor control" % (name, cid, d, other))
    dx.write_csv(os.path.join(out_dir, "records.csv"), RECORD_HEADER, rows)
    dx.write_csv(os.path.join(out_dir, "connections.csv"), CONN_HEADER, crow)
    dx.write_csv(os.path.join(out_dir, "frames.csv"), FRAME_HEADER,
                 [fr for cid in sorted(conns) for fr in sorted(conns[cid].frames_out, key=lambda x: (x[1], x[2]))])
    with open(os.path.join(out_dir, "conservation.txt"), "w") as f:
        f.write("Per connection and direction: delivered bytes (the direction's %s, each byte once) = the sum of transfer_bytes\n"
                "of that direction's records + h2_control_bytes + other bytes (must be 0 on HTTP/2 connections).\n\n"
                % ("decrypted TLS application data (follow,tls,raw)" if keys else "TCP payload (follow,tcp,raw)"))
        f.write("\n".join(cons) + "\n")
    with open(os.path.join(out_dir, "blocks.txt"), "w") as f:
        f.write("Every header block as the derivation walked it: frames (9-byte header + payload), then each\n"
                "HPACK representation: offset in the block, size as sent, kind (with its index), first bytes,\n"
                "the decoded field [name octets + value octets].\n\n")
        for cid in sorted(conns):
            f.write("\n\n".join(conns[cid].blocks_out) + "\n\n")
    tls_line = ""
    if keys:
        hs = dx.tshark(path, *opts, "-Y", "tls.handshake.type==2 || tls.handshake.type==8", "-T", "fields",
                       "-e", "tls.handshake.extensions_alpn_str", "-e", "tls.handshake.extensions.supported_version",
                       "-e", "tls.handshake.version", "-e", "tls.handshake.ciphersuite").split()
        if len(hs) < 3 or hs[0] != "h2":
            die("%s: tshark does not see ALPN h2 in the decrypted handshake: %s" % (name, hs))
        version = {"0x0304": "TLS 1.3", "0x0303": "TLS 1.2"}[hs[1] if len(hs) == 4 else hs[1]]
        tls_line = ("TLS: tshark sees %s, cipher suite %s, ALPN h2 (in the %s), decrypted with samples/%s\n"
                    % (version, hs[-1], "EncryptedExtensions" if len(hs) == 4 else "ServerHello", keys))
    with open(os.path.join(out_dir, "crosscheck.txt"), "w") as f:
        f.write("tshark %s (options: %s)\n" % ("4.0", " ".join(opts).replace(HERE + "/", "samples/")))
        f.write(tls_line)
        f.write("%d HTTP/2 frames: type, flags, stream id, length and pad length equal to the walker's, in order, "
                "per connection and direction.\n" % agree)
        f.write("Header blocks in one frame: tshark's decoded fields (name, value) and representation sizes "
                "(the size of each http2.header item) equal ours, and its Header Length = sum(name + value + 8).\n")
        _, bodies, data_frames = notes.pop(0).split()
        padded = notes.pop(0)
        f.write("%s DATA frames: tshark's http2.data.data size = payload without pad length byte and padding%s.\n"
                % (data_frames, "" if not padded else ", except for these padded frames with END_STREAM, whose "
                   "padding tshark 4.0 shows as part of the data (the body it hands on): length - 1"))
        for q in padded:
            f.write("  " + q + "\n")
        f.write("%d bodies: tshark's decoded size agrees (\"Content-encoded entity body (X): A bytes -> B bytes\" = "
                "encoded -> decoded; gRPC: its messages' compressed flag and length, and 5 + its protobuf item "
                "size = 5 + decompressed length per message; else http2.body.reassembled.length = encoded).\n"
                % int(bodies))
        if notes:
            f.write("Blocks in several frames (tshark 4.0 decodes what the HEADERS frame holds at that frame and the "
                    "rest, a field that spans the boundary included, at the END_HEADERS frame, with sizes counting "
                    "only the bytes in that frame):\n")
            f.write("\n".join("  " + n for n in notes) + "\n")
    if name in TSHARK_TXT:
        fields = ["frame.number", "tcp.stream", "tcp.srcport", "http2.streamid", "http2.type", "http2.length",
                  "http2.flags", "http2.pad_length", "http.request.method", "http.response.code"]
        args = ["-Y", "http || http2", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]
        for fl in fields:
            args += ["-e", fl]
        out = dx.tshark(path, *opts, *args)
        cmd = "tshark -n -r samples/%s %s" % (fname, " ".join(shlex.quote(a) for a in opts + args))
        with open(os.path.join(out_dir, "tshark.txt"), "w") as f:
            f.write("$ %s\n# columns: %s\n# (http2.pad_length only for padded frames, so that column does not line "
                    "up with the others when a packet holds several frames)\n" % (cmd, "\t".join(fields)))
            f.write(out)
    dx.TSHARK_OPTS = saved
    n = collections.Counter(r[3] for r in rows)
    print("%s: %d connections, %d records (%d requests, %d responses), %d frames agree with tshark"
          % (name, len(conns), len(rows), n["request"], n["response"], agree))


def main(argv):
    names = argv or list(SAMPLES)
    for n in names:
        if n not in SAMPLES:
            die("unknown sample %s (known: %s)" % (n, ", ".join(SAMPLES)))
        do_sample(n)


if __name__ == "__main__":
    main(sys.argv[1:])
