#!/usr/bin/env python3
"""Derive the expected numbers ("ground truth") for the sample captures.

    python3 samples/derive-expected.py            # all samples + zeek traces
    python3 samples/derive-expected.py http-basic http-encodings.pcap zeek
                                                   # only these (expected names,
                                                   # file names, or "zeek")

Needs python3 (standard library only), tshark, and for decoding br/zstd
bodies the `brotli` and `zstd` command-line tools.

For every capture samples/FILE it writes samples/expected/NAME/ where NAME is
FILE with every "." replaced by "-" and a final "-pcap" dropped:
    http-basic.pcap      -> http-basic
    http-basic.pcapng    -> http-basic-pcapng
    http-basic.pcap.gz   -> http-basic-pcap-gz
For every trace in /work/shared/corpus/zeek/traces/ (read-only input, not
copied) it writes samples/expected/zeek/TRACENAME/connections.tshark.csv,
TRACENAME being the file name without .gz/.pcap/.pcapng.

Files written (see samples/README.md for the definitions):
  connections.tshark.csv  one row per tcp.stream (tshark fields), cross-checked
                          against `tshark -z conv,tcp`
  messages.tshark.csv     one row per HTTP message.  Every message is derived
                          twice: (1) from tshark PDML (HTTP dissector with
                          desegmentation, dechunking, decompression) and (2) by
                          an independent HTTP/1.x parser run on the TCP payload
                          bytes (reassembled here from tshark's tcp.seq_raw /
                          tcp.payload fields and checked byte-for-byte against
                          `tshark -z follow,tcp,raw`), decoding bodies with
                          python zlib/gzip and the brotli/zstd CLIs.
                          source=tshark: both derivations agree on every column.
                          source=raw: tshark has no (or a wrong) answer; the
                          row holds the raw derivation and the difference is
                          listed in discrepancies.txt.  Discrepancies are only
                          accepted for the samples listed in KNOWN_TSHARK_ISSUES;
                          anywhere else the script fails.
  discrepancies.txt       (only when there are any) tshark vs raw, per message
  streams.txt             per connection and direction: bytes in the reassembled
                          stream, bytes missing (gaps), sum of transfer_bytes
"""
import csv
import gzip
import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "expected")
ZEEK = "/work/shared/corpus/zeek/traces"

CONN_HEADER = ["connection", "client", "server",
               "client_to_server_packets", "client_to_server_frame_bytes", "client_to_server_payload_bytes",
               "server_to_client_packets", "server_to_client_frame_bytes", "server_to_client_payload_bytes"]
MSG_HEADER = ["connection", "kind", "method", "status", "host", "path", "line_bytes", "header_bytes",
              "cookie_bytes", "body_bytes", "encoded_body_bytes", "decoded_body_bytes", "transfer_bytes", "source"]
COMPARED = ["method", "status", "host", "path", "line_bytes", "header_bytes", "cookie_bytes",
            "body_bytes", "encoded_body_bytes", "decoded_body_bytes"]

# Samples where tshark 4.0 is expected to disagree with the raw derivation.
KNOWN_TSHARK_ISSUES = {
    "http-pipelined": "tshark pairs pipelined responses with the wrong requests and "
                      "reads the pipelined HEAD response as having a body",
    "http-netns": "tshark reports the 100 Continue before its request (the POST is only "
                  "complete after its body) and pairs it with no/the wrong request",
    "http-encodings": "tshark 4.0 cannot decode zstd nor stacked 'gzip, br' content codings",
    "http-segments-dropped": "after the missing segment tshark drops every later message on the "
                             "connection",
    "http-segments-truncated": "the capture ends mid-body; tshark never completes the message",
}

# Samples whose messages tshark's dissector and the raw parser here cannot derive: only the connections
# are derived; messages.tshark.csv is written by hand (see samples/README.md for how).
CONNECTIONS_ONLY = {
    "http-segments-midbody": "the server direction starts inside a response body (first packets cut): "
                             "expected messages derived by hand from `tshark -z follow,tcp,raw,0`",
}

TSHARK_OPTS = ["-o", "tcp.analyze_sequence_numbers:TRUE",
               "-o", "tcp.reassemble_out_of_order:TRUE",
               "-o", "ip.defragment:TRUE", "-o", "ipv6.defragment:TRUE"]
PDML_OPTS = ["-o", "tcp.desegment_tcp_streams:TRUE", "-o", "http.desegment_headers:TRUE",
             "-o", "http.desegment_body:TRUE", "-o", "http.dechunk_body:TRUE",
             "-o", "http.decompress_body:TRUE"]


def die(msg):
    print("derive-expected: ERROR: " + msg, file=sys.stderr)
    sys.exit(1)


def tshark(path, *args):
    """Run tshark on a file; a file cut short is accepted (tshark still prints what it read)."""
    p = subprocess.run(["tshark", "-n", "-r", path] + TSHARK_OPTS + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    err = "\n".join(l for l in err.splitlines() if "Running as user" not in l and l.strip())
    if p.returncode != 0:
        if "cut short in the middle of a packet" not in err:
            die("tshark %s %s failed (%d): %s" % (path, " ".join(args), p.returncode, err))
    elif err:
        print("derive-expected: tshark said for %s: %s" % (os.path.basename(path), err), file=sys.stderr)
    return p.stdout.decode("utf-8", errors="surrogateescape")


# ----------------------------------------------------------------------------- connections
FIELDS = ["frame.number", "tcp.stream", "frame.len", "tcp.len", "ip.src", "ipv6.src", "tcp.srcport",
          "ip.dst", "ipv6.dst", "tcp.dstport", "tcp.flags.syn", "tcp.flags.ack", "tcp.seq_raw", "tcp.payload"]


def flag(v):
    return v in ("1", "True", "true")


def endpoint(ip4, ip6, port):
    return ("[%s]:%s" % (ip6, port)) if ip6 else ("%s:%s" % (ip4, port))


def read_frames(path, payload=True):
    fields = FIELDS if payload else FIELDS[:-1]
    args = ["-o", "tcp.desegment_tcp_streams:FALSE", "-T", "fields", "-E", "separator=\t",
            "-E", "occurrence=l"]
    for f in fields:
        args += ["-e", f]
    frames = []
    for line in tshark(path, *args).splitlines():
        v = line.split("\t")
        v += [""] * (len(fields) - len(v))
        d = dict(zip(fields, v))
        if d["tcp.stream"] == "":
            continue  # not TCP (or an IP fragment that does not complete a datagram)
        d["src"] = endpoint(d["ip.src"], d["ipv6.src"], d["tcp.srcport"])
        d["dst"] = endpoint(d["ip.dst"], d["ipv6.dst"], d["tcp.dstport"])
        frames.append(d)
    return frames


def connections(frames):
    conns = {}
    for f in frames:
        c = conns.setdefault(int(f["tcp.stream"]), {"frames": [], "syn_from": None, "synack_to": None})
        c["frames"].append(f)
        if flag(f["tcp.flags.syn"]) and not flag(f["tcp.flags.ack"]) and c["syn_from"] is None:
            c["syn_from"] = f["src"]
        if flag(f["tcp.flags.syn"]) and flag(f["tcp.flags.ack"]) and c["synack_to"] is None:
            c["synack_to"] = f["dst"]
    rows = []
    for sid in sorted(conns):
        c = conns[sid]
        a, b = c["frames"][0]["src"], c["frames"][0]["dst"]
        if c["syn_from"]:
            client = c["syn_from"]
        elif c["synack_to"]:
            client = c["synack_to"]
        else:
            pa, pb = int(a.rsplit(":", 1)[1]), int(b.rsplit(":", 1)[1])
            client = a if pa >= pb else b  # higher port (a tie keeps the first sender)
        server = b if client == a else a
        c["client"], c["server"] = client, server
        st = {d: [0, 0, 0] for d in ("c2s", "s2c")}
        for f in c["frames"]:
            d = "c2s" if f["src"] == client else "s2c"
            st[d][0] += 1
            st[d][1] += int(f["frame.len"])
            st[d][2] += int(f["tcp.len"] or 0)
        rows.append([sid, client, server] + st["c2s"] + st["s2c"])
    return conns, rows


UNITS = {"bytes": 1, "kB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3}


def check_conv(path, rows):
    """Cross-check frames (exact) and bytes (tshark prints them rounded to a unit) with -z conv,tcp."""
    out = tshark(path, "-q", "-z", "conv,tcp")
    conv = {}
    pat = re.compile(r"^(\S+)\s+<->\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)")
    for line in out.splitlines():
        m = pat.match(line)
        if not m:
            continue
        a, b = m.group(1), m.group(2)
        b2a = (int(m.group(3)), int(m.group(4)), m.group(5))
        a2b = (int(m.group(6)), int(m.group(7)), m.group(8))
        conv.setdefault((a, b), []).append((a2b, b2a))

    def plain(ep):  # conv,tcp prints IPv6 without brackets
        return ep.replace("[", "").replace("]", "")

    used = {}
    for r in rows:
        cl, sv = plain(r[1]), plain(r[2])
        if (cl, sv) in conv:
            key, flip = (cl, sv), False
        elif (sv, cl) in conv:
            key, flip = (sv, cl), True
        else:
            die("%s: conv,tcp has no conversation %s <-> %s" % (path, r[1], r[2]))
        i = used.get(key, 0)
        used[key] = i + 1
        if i >= len(conv[key]):
            die("%s: conv,tcp has fewer conversations %s <-> %s than tcp.stream" % (path, r[1], r[2]))
        a2b, b2a = conv[key][i]
        c2s, s2c = (b2a, a2b) if flip else (a2b, b2a)
        for (frames, num, unit), pk, fb, what in ((c2s, r[3], r[4], "client->server"),
                                                  (s2c, r[6], r[7], "server->client")):
            mult = UNITS[unit]
            if frames != pk or not (num - 1) * mult <= fb <= (num + 1) * mult:
                die("%s stream %s %s: fields say %d frames/%d bytes, conv,tcp says %d frames/%d %s"
                    % (path, r[0], what, pk, fb, frames, num, unit))
    if sum(len(v) for v in conv.values()) != len(rows):
        die("%s: conv,tcp lists %d conversations, tcp.stream %d" % (path, sum(len(v) for v in conv.values()), len(rows)))


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


# ----------------------------------------------------------------------------- TCP streams
class Stream:
    """One direction of a connection, reassembled from the segments' sequence numbers."""

    def __init__(self):
        self.segs = []  # (seq_raw, syn, payload)

    def build(self):
        syn = [s for s, is_syn, _ in self.segs if is_syn]
        data = [(s, p) for s, is_syn, p in self.segs if p]
        if syn:
            base = (syn[0] + 1) & 0xFFFFFFFF
        elif data:
            first = data[0][0]
            rel = [((s - first + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31 for s, _ in data]
            base = (first + min(rel)) & 0xFFFFFFFF
        else:
            base = 0
        end = 0
        placed = []
        for s, p in data:
            off = ((s - base + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31
            if off < 0:  # data before the ISN+1 (SYN data / garbage): ignore the part
                p, off = p[-off:], 0
            placed.append((off, p))
            end = max(end, off + len(p))
        self.buf = bytearray(end)
        self.have = bytearray(end)
        self.conflicts = 0
        for off, p in placed:
            old = self.buf[off:off + len(p)]
            mask = self.have[off:off + len(p)]
            if any(m and o != n for m, o, n in zip(mask, old, p)):
                self.conflicts += 1
            self.buf[off:off + len(p)] = p
            self.have[off:off + len(p)] = b"\x01" * len(p)
        self.end = end
        self.gaps = []
        i = 0
        while i < end:
            if not self.have[i]:
                j = i
                while j < end and not self.have[j]:
                    j += 1
                self.gaps.append((i, j))
                i = j
            else:
                i += 1
        self.missing = sum(j - i for i, j in self.gaps)
        return self

    def has_gap(self, a, b):
        return any(i < b and a < j for i, j in self.gaps)


def build_streams(conns):
    streams = {}
    for sid, c in conns.items():
        st = {"c2s": Stream(), "s2c": Stream()}
        for f in c["frames"]:
            d = "c2s" if f["src"] == c["client"] else "s2c"
            st[d].segs.append((int(f["tcp.seq_raw"]), flag(f["tcp.flags.syn"]),
                               bytes.fromhex(f["tcp.payload"].replace(":", ""))))
        streams[sid] = {d: s.build() for d, s in st.items()}
    return streams


GAP_TEXT = re.compile(rb"^\[(\d+) bytes missing in capture file\]\x00?$")


def check_follow(path, sid, conn, st):
    """The reassembled streams must equal tshark's own `follow,tcp,raw` byte for byte."""
    out = tshark(path, "-q", "-z", "follow,tcp,raw,%d" % sid)
    node0 = None
    got = {"c2s": bytearray(), "s2c": bytearray()}
    gap = {"c2s": 0, "s2c": 0}
    for line in out.splitlines():
        if line.startswith("Node 0: "):
            node0 = line[8:].strip()
            continue
        if node0 is None or line.startswith("===") or line.startswith("Node 1: ") or not line.strip():
            continue
        from_node1 = line.startswith("\t")
        data = bytes.fromhex(line.strip())
        n0_is_client = node0.replace("[", "").replace("]", "") == conn["client"].replace("[", "").replace("]", "")
        d = ("s2c" if n0_is_client else "c2s") if from_node1 else ("c2s" if n0_is_client else "s2c")
        m = GAP_TEXT.match(data)
        if m:
            gap[d] += int(m.group(1))
        else:
            got[d] += data
    for d in ("c2s", "s2c"):
        s = st[d]
        mine = bytes(b for b, h in zip(s.buf, s.have) if h) if s.gaps else bytes(s.buf)
        if bytes(got[d]) != mine or gap[d] != s.missing:
            die("%s stream %d %s: follow,tcp,raw gives %d bytes (%d missing), reassembly %d bytes (%d missing)"
                % (path, sid, d, len(got[d]), gap[d], len(mine), s.missing))


# ----------------------------------------------------------------------------- raw HTTP parser
class Incomplete(Exception):
    pass


def decode_body(data, codings):
    """Undo content codings (listed in the order they were applied). None if impossible."""
    for c in reversed(codings):
        if c in ("identity", ""):
            continue
        if c in ("gzip", "x-gzip"):
            data = gzip.decompress(data)
        elif c == "deflate":
            try:
                data = zlib.decompress(data)
            except zlib.error:
                data = zlib.decompress(data, -15)
        elif c == "br":
            data = subprocess.run(["brotli", "-d", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout
        elif c == "zstd":
            data = subprocess.run(["zstd", "-d", "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout
        else:
            return None
    return data


def parse_head(s, pos):
    """Returns (line_len, header_len, fields, end) for the head starting at pos."""
    buf = s.buf
    eol = buf.find(b"\r\n", pos)
    if eol < 0:
        raise Incomplete("no end of start line")
    line_len = eol + 2 - pos
    fields = []
    p = eol + 2
    while True:
        e = buf.find(b"\r\n", p)
        if e < 0:
            raise Incomplete("no end of head")
        if e == p:
            p += 2
            break
        raw = bytes(buf[p:e + 2])
        name, _, value = raw[:-2].partition(b":")
        fields.append((name.strip().decode("latin-1").lower(), value.strip().decode("latin-1"), len(raw)))
        p = e + 2
    if s.has_gap(pos, p):
        raise Incomplete("gap inside the head")
    return line_len, p - pos - line_len, fields, p


def parse_chunked(s, pos):
    """Returns (end, [data pieces]) of a chunked body starting at pos."""
    buf, pieces, p = s.buf, [], pos
    while True:
        e = buf.find(b"\r\n", p)
        if e < 0:
            raise Incomplete("chunk size line")
        size = int(bytes(buf[p:e]).split(b";")[0].strip(), 16)
        p = e + 2
        if size == 0:
            while True:  # trailer section
                e = buf.find(b"\r\n", p)
                if e < 0:
                    raise Incomplete("trailer")
                done = e == p
                p = e + 2
                if done:
                    return p, pieces
        if p + size + 2 > s.end:
            raise Incomplete("chunk data")
        pieces.append((p, p + size))
        if bytes(buf[p + size:p + size + 2]) != b"\r\n":
            raise Incomplete("chunk boundary")
        p += size + 2


def header(fields, name):
    vals = [v for n, v, _ in fields if n == name]
    return ", ".join(vals) if vals else None


def parse_messages(s, kind, requests=None):
    """Parse the HTTP/1.x messages of one direction.  Responses are paired with `requests`."""
    msgs, pos, final_idx = [], 0, 0
    while pos < s.end:
        try:
            line_len, head_len, fields, body_start = parse_head(s, pos)
        except Incomplete as e:
            msgs.append({"kind": kind, "error": "unparsed tail at %d: %s" % (pos, e), "offset": pos})
            break
        start = bytes(s.buf[pos:pos + line_len - 2]).decode("latin-1")
        m = {"kind": kind, "offset": pos, "start": start, "line_bytes": line_len, "header_bytes": head_len,
             "cookie_bytes": sum(n for name, _, n in fields if name in ("cookie", "set-cookie")),
             "fields": fields, "method": "", "status": "", "host": "", "path": "", "complete": True}
        te = [c.strip().lower() for c in (header(fields, "transfer-encoding") or "").split(",") if c.strip()]
        cl = header(fields, "content-length")
        ce = [c.strip().lower() for c in (header(fields, "content-encoding") or "").split(",") if c.strip()]
        if kind == "request":
            method, target = start.split(" ")[0], start.split(" ")[1]
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", target):
                target = "/" + target.split("://", 1)[1].partition("/")[2]
            m.update(method=method, host=header(fields, "host") or "", path=target.split("?")[0])
            bodyless = False
        else:
            status = int(start.split(" ")[1])
            req = requests[final_idx] if requests is not None and final_idx < len(requests) else None
            m.update(status=str(status), request=req)
            if req:
                m.update(method="", host=req["host"], path=req["path"])
            bodyless = 100 <= status < 200 or status in (204, 304) or (req is not None and req["method"] == "HEAD")
            if status >= 200 or status < 100:
                final_idx += 1
        pieces = []
        if bodyless:
            end = body_start
        elif te and te[-1] == "chunked":
            try:
                end, pieces = parse_chunked(s, body_start)
            except Incomplete:
                end, pieces, m["complete"] = s.end, None, False
        elif cl is not None:
            end = body_start + int(cl.split(",")[0])
            pieces = [(body_start, end)]
            if end > s.end:
                end, m["complete"] = s.end, False
                pieces = [(body_start, end)]
        elif kind == "request":
            end = body_start
        else:  # close-delimited
            end = s.end
            pieces = [(body_start, end)]
        m["body_bytes"] = end - body_start
        if pieces is None:  # incomplete chunked body: count its chunk data as far as it goes
            m["encoded_body_bytes"] = m["decoded_body_bytes"] = None
        else:
            enc = b"".join(bytes(s.buf[a:b]) for a, b in pieces)
            m["encoded_body_bytes"] = sum(b - a for a, b in pieces)
            if not ce or all(c == "identity" for c in ce):
                m["decoded_body_bytes"] = m["encoded_body_bytes"]
            elif not m["complete"] or s.has_gap(body_start, end):
                m["decoded_body_bytes"] = None
            else:
                dec = decode_body(enc, ce)
                m["decoded_body_bytes"] = None if dec is None else len(dec)
        m["gap_bytes"] = sum(min(j, end) - max(i, body_start) for i, j in s.gaps if i < end and body_start < j)
        m["transfer_bytes"] = line_len + head_len + m["body_bytes"]
        msgs.append(m)
        pos = end
    return msgs


# ----------------------------------------------------------------------------- tshark PDML
def pdml_messages(path):
    xml = tshark(path, *PDML_OPTS, "-T", "pdml")
    xml = xml[xml.find("<?xml"):]
    root = ET.fromstring(xml.encode("utf-8", errors="surrogateescape"))
    out = []
    for pkt in root.iter("packet"):
        frame = stream = None
        for proto in pkt:
            if proto.get("name") == "frame":
                for f in proto:
                    if f.get("name") == "frame.number":
                        frame = int(f.get("show"))
            if proto.get("name") == "tcp":
                for f in proto:
                    if f.get("name") == "tcp.stream":
                        stream = int(f.get("show"))
            if proto.get("name") != "http":
                continue
            kids = list(proto)
            first = kids[0]
            m = {"frame": frame, "connection": stream, "start": first.get("show", "").replace("\\r\\n", ""),
                 "line_bytes": int(first.get("size")), "header_bytes": 0, "cookie_bytes": 0,
                 "method": "", "status": "", "host": "", "path": "",
                 "body_bytes": 0, "encoded_body_bytes": 0, "decoded_body_bytes": 0}
            is_req = any(f.get("name") == "http.request" for f in kids)
            m["kind"] = "request" if is_req else "response"
            for f in first:
                if f.get("name") == "http.request.method":
                    m["method"] = f.get("show")
                if f.get("name") == "http.request.uri":
                    m["path"] = f.get("show").split("?")[0]
                if f.get("name") == "http.response.code":
                    m["status"] = f.get("show")
            empty_seen = False
            file_data = None
            for f in kids[1:]:
                name, show = f.get("name"), f.get("show", "")
                if name in ("http.request.line", "http.response.line") and not empty_seen:
                    m["header_bytes"] += int(f.get("size"))
                    if show.lower().startswith(("cookie:", "set-cookie:")):
                        m["cookie_bytes"] += int(f.get("size"))
                elif name == "" and show == "\\r\\n" and not empty_seen:
                    m["header_bytes"] += int(f.get("size"))
                    empty_seen = True
                elif name == "http.host":
                    m["host"] = show
                elif name == "http.response_for.uri":
                    u = show.split("://", 1)[-1]
                    host, _, p = u.partition("/")
                    m["host"], m["path"] = host, ("/" + p).split("?")[0]
                elif name == "" and show == "HTTP chunked response":
                    m["body_bytes"] = int(f.get("size"))
                    m["encoded_body_bytes"] = sum(int(c.get("size")) for c in f.iter("field")
                                                  if c.get("name") == "http.chunk_data")
                    m["decoded_body_bytes"] = m["encoded_body_bytes"]
                    m["chunked"] = True
                elif name == "" and show.startswith("Content-encoded entity body"):
                    mm = re.search(r"\): (\d+) bytes(?: -> (\d+) bytes)?", show)
                    if not m.get("chunked"):
                        m["body_bytes"] = int(mm.group(1))
                    m["encoded_body_bytes"] = int(mm.group(1))
                    m["decoded_body_bytes"] = int(mm.group(2)) if mm.group(2) else None
                    m["content_coded"] = True
                elif name == "http.file_data":
                    file_data = int(f.get("size"))
            if file_data is not None and not m.get("content_coded"):
                if not m.get("chunked"):
                    m["body_bytes"] = m["encoded_body_bytes"] = file_data
                m["decoded_body_bytes"] = file_data
            out.append(m)
    return out


# ----------------------------------------------------------------------------- per sample
def sample_name(fname):
    n = fname.replace(".", "-")
    return n[:-5] if n.endswith("-pcap") else n


def zeek_name(fname):
    n = fname
    for ext in (".gz", ".pcapng", ".pcap"):
        if n.endswith(ext):
            n = n[:-len(ext)]
    return n


def do_sample(path, name):
    outdir = os.path.join(OUT, name)
    frames = read_frames(path)
    conns, rows = connections(frames)
    check_conv(path, rows)
    write_csv(os.path.join(outdir, "connections.tshark.csv"), CONN_HEADER, rows)

    streams = build_streams(conns)
    for sid in conns:
        check_follow(path, sid, conns[sid], streams[sid])
    if name in CONNECTIONS_ONLY:
        print("derive-expected: %-29s connections only (%s)" % (name, CONNECTIONS_ONLY[name]))
        return True
    tmsgs = pdml_messages(path)

    msg_rows, problems, stream_lines = [], [], []
    known = KNOWN_TSHARK_ISSUES.get(name) or KNOWN_TSHARK_ISSUES.get(name.split("-pcap")[0])
    for sid in sorted(conns):
        st = streams[sid]
        reqs = parse_messages(st["c2s"], "request")
        resps = parse_messages(st["s2c"], "response", [r for r in reqs if "error" not in r])
        for d, ms in (("c2s", reqs), ("s2c", resps)):
            for m in ms:
                if "error" in m:
                    problems.append("stream %d %s: %s" % (sid, d, m["error"]))
            total = sum(m["transfer_bytes"] for m in ms if "error" not in m)
            stream_lines.append("stream %d %s: stream_bytes=%d missing_bytes=%d transfer_bytes_sum=%d%s" % (
                sid, d, st[d].end, st[d].missing, total, "" if total == st[d].end else "  MISMATCH"))
            if total != st[d].end:
                die("%s stream %d %s: sum of transfer_bytes %d != %d bytes in the stream"
                    % (path, sid, d, total, st[d].end))
            if st[d].conflicts:
                problems.append("stream %d %s: %d segments overlap with different bytes" % (sid, d, st[d].conflicts))
        # order: each request followed by its responses (interim first); unpaired responses last
        ordered = []
        for r in reqs:
            if "error" in r:
                continue
            ordered.append(r)
            ordered += [x for x in resps if x.get("request") is r]
        ordered += [x for x in resps if "error" not in x and x.get("request") is None]
        # match tshark's messages of this connection (same kind, same start line, in order)
        tlist = [t for t in tmsgs if t["connection"] == sid]
        used = set()
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
            row = {k: m[k] for k in ("kind", "method", "status", "host", "path", "line_bytes", "header_bytes",
                                     "cookie_bytes", "body_bytes", "encoded_body_bytes", "decoded_body_bytes",
                                     "transfer_bytes")}
            for k in ("encoded_body_bytes", "decoded_body_bytes"):
                if row[k] is None:
                    problems.append("stream %d %s %r: %s unknown (gap/incomplete/undecodable)"
                                    % (sid, m["kind"], m["start"], k))
                    row[k] = row["body_bytes"] if k == "encoded_body_bytes" else row["encoded_body_bytes"]
            t = m.get("tshark")
            diffs = []
            if t is None:
                diffs.append("tshark has no such message")
            else:
                for k in COMPARED:
                    tv = t[k]
                    rv = row[k]
                    if k == "method" and m["kind"] == "response":
                        continue
                    if str(tv if tv is not None else "?") != str(rv):
                        diffs.append("%s tshark=%s raw=%s" % (k, "?" if tv is None else tv, rv))
            if not m["complete"]:
                diffs.append("message incomplete in the capture (body_bytes counts the bytes present)")
            if m["gap_bytes"]:
                diffs.append("%d body bytes missing from the capture (counted in body_bytes)" % m["gap_bytes"])
            row["source"] = "raw" if diffs else "tshark"
            if diffs:
                problems.append("stream %d %s %r for %s (tshark frame %s): %s" % (
                    sid, m["kind"], m["start"], m["path"] or "?", t["frame"] if t else "-", "; ".join(diffs)))
            msg_rows.append([sid] + [row[k] for k in MSG_HEADER[1:]])
    write_csv(os.path.join(outdir, "messages.tshark.csv"), MSG_HEADER, msg_rows)
    with open(os.path.join(outdir, "streams.txt"), "w") as f:
        f.write("\n".join(stream_lines) + "\n")
    disc = os.path.join(outdir, "discrepancies.txt")
    if problems:
        with open(disc, "w") as f:
            f.write("# tshark vs raw derivation for %s\n" % os.path.basename(path))
            if known:
                f.write("# known tshark 4.0 behaviour: %s\n" % known)
            f.write("\n".join(problems) + "\n")
    elif os.path.exists(disc):
        os.remove(disc)
    status = "%d connections, %d messages" % (len(rows), len(msg_rows))
    if problems:
        status += ", %d discrepancies (%s)" % (len(problems), "expected" if known else "UNEXPECTED")
    print("derive-expected: %-34s %s" % (name, status))
    return not problems or bool(known)


def do_zeek(path, name):
    frames = read_frames(path, payload=False)
    conns, rows = connections(frames)
    check_conv(path, rows)
    write_csv(os.path.join(OUT, "zeek", name, "connections.tshark.csv"), CONN_HEADER, rows)
    print("derive-expected: zeek/%-29s %d connections" % (name, len(rows)))


def main(argv):
    samples = sorted(f for f in os.listdir(HERE)
                     if re.search(r"\.(pcap|pcapng|pcap\.gz|pcapng\.gz)$", f))
    want = set(argv)
    ok = True
    for f in samples:
        name = sample_name(f)
        if want and f not in want and name not in want:
            continue
        ok &= do_sample(os.path.join(HERE, f), name)
    if not want or "zeek" in want or any(w.startswith("zeek/") for w in want):
        if os.path.isdir(ZEEK):
            for f in sorted(os.listdir(ZEEK)):
                name = zeek_name(f)
                if want and "zeek" not in want and "zeek/" + name not in want:
                    continue
                do_zeek(os.path.join(ZEEK, f), name)
        else:
            print("derive-expected: %s not found, zeek traces skipped" % ZEEK, file=sys.stderr)
    if not ok:
        die("unexpected tshark/raw discrepancies (see discrepancies.txt files above)")


if __name__ == "__main__":
    main(sys.argv[1:])
