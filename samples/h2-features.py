#!/usr/bin/env python3
"""HTTP/2 client and server (Python `h2`) that exercise the frame features of the http2-features sample.

    python3 samples/h2-features.py server ADDRESS PORT     # serves until killed
    python3 samples/h2-features.py client ADDRESS PORT     # one connection, then exits (0 = all seen)

One h2c (prior knowledge) connection. In order, the client sends:
  stream 1  GET /           HEADERS with the PRIORITY flag (exclusive, weight 201) and 7 bytes of padding;
                            its header block is split into HEADERS + 2 CONTINUATION frames: the first split
                            falls in the middle of the representation of the long `cookie` crumb (`prefs=…`;
                            h2 sends the cookie as crumbs, RFC 9113 8.2.3, with split_outbound_cookies), the
                            second 4 bytes into the next representation (the `theme=dark` crumb)
  stream 3  POST /upload    40 000-byte body in 4 padded DATA frames, then a trailer block (x-checksum)
            PRIORITY        a PRIORITY frame for stream 3 (depends on 1, weight 32)
  stream 5  GET /no-content
  PING                      8 bytes `traffic!`
  unknown                   a frame of type 0xfa on stream 0 (8 bytes) that receivers must ignore
  stream 7  GET /download   reset by the client (RST_STREAM CANCEL) as soon as its first DATA arrives
and, once everything has been answered, GOAWAY. The server answers:
  stream 1  103 Early Hints (link), PUSH_PROMISE of /style.css (promised stream 2), then 200 with two
            set-cookie fields, and its body in one DATA frame padded with 32 bytes
  stream 2  the pushed /style.css (HEADERS, DATA)
  stream 3  200 (HEADERS padded with 5 bytes by rewriting h2's frame), DATA, trailers (x-upload-status)
  stream 5  204
  stream 7  200, 16 384 bytes of DATA, then (after 0.3 s without reading, so after the client's RST_STREAM)
            two more DATA frames of 8 192 bytes; h2 on the client side answers each DATA frame that
            arrives on its reset stream with RST_STREAM (STREAM_CLOSED); no END_STREAM ever
  PING ACK, WINDOW_UPDATEs for received DATA (h2's window manager), and GOAWAY after the client's.
Padding, the CONTINUATION split and the unknown frame are done by rewriting the bytes h2 hands over
(`data_to_send()`), which does not change HPACK state: the header block bytes stay the same.
"""
import select
import socket
import struct
import sys
import time

import h2.config
import h2.connection
import h2.errors
import h2.events

PADDED, PRIORITY, END_HEADERS, END_STREAM = 0x8, 0x20, 0x4, 0x1
HEADERS, CONTINUATION = 0x1, 0x9
COOKIE = ("session=4f3c2a1b0e9d8c7b6a5f; prefs=lang%3Den-GB%26tz%3DEurope%2FBerlin%26units%3Dmetric%26density"
          "%3Dcompact; theme=dark; consent=analytics-no")
INDEX = b"<!doctype html>\n<title>h2 features</title>\n<link rel=stylesheet href=/style.css>\n" + b"<p>padded</p>\n" * 30
CSS = b"body { font: 14px/1.4 sans-serif; color: #222; }\n" * 12
UPLOAD = bytes((i * 7 + 3) % 251 for i in range(40000))


def frames(data):
    """Split a byte string of whole HTTP/2 frames: [(type, flags, stream, payload)]."""
    out, i = [], 0
    while i < len(data):
        length = int.from_bytes(data[i:i + 3], "big")
        ftype, flags = data[i + 3], data[i + 4]
        sid = struct.unpack(">I", data[i + 5:i + 9])[0] & 0x7FFFFFFF
        out.append((ftype, flags, sid, data[i + 9:i + 9 + length]))
        i += 9 + length
    assert i == len(data), "data_to_send() ended inside a frame"
    return out


def frame(ftype, flags, sid, payload):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def hpack_int(block, i, bits):
    mask = (1 << bits) - 1
    v = block[i] & mask
    i += 1
    if v < mask:
        return v, i
    m = 0
    while True:
        b = block[i]
        i += 1
        v += (b & 0x7F) << m
        m += 7
        if not b & 0x80:
            return v, i


def representations(block):
    """(start, end, name_index) of every representation of an HPACK block (RFC 7541 section 6)."""
    out, i = [], 0
    while i < len(block):
        start, b = i, block[i]
        if b & 0x80:
            idx, i = hpack_int(block, i, 7)
        elif b & 0x20 and not b & 0x40:
            idx, i = hpack_int(block, i, 5)
            idx = None
        else:
            idx, i = hpack_int(block, i, 6 if b & 0x40 else 4)
            for _ in range(1 if idx else 2):
                n, i = hpack_int(block, i, 7)
                i += n
        out.append((start, i, idx))
    return out


def rewrite(data, fix):
    """Apply fix(type, flags, stream, payload) -> bytes|None to every frame of data."""
    out = b""
    for f in frames(data):
        new = fix(*f)
        out += new if new is not None else frame(*f)
    return out


class Peer:
    def __init__(self, sock, client):
        self.sock = sock
        self.conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=client, header_encoding="utf-8",
                                             split_outbound_cookies=client))
        self.fix = None

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            if self.fix:
                data = rewrite(data, self.fix)
                self.fix = None
            self.sock.sendall(data)

    def pump(self, handle, done, timeout):
        """Read and handle events until done() or timeout; returns False on EOF."""
        end = time.time() + timeout
        while not done() and time.time() < end:
            r, _, _ = select.select([self.sock], [], [], max(0.0, end - time.time()))
            if not r:
                continue
            data = self.sock.recv(65536)
            if not data:
                return False
            for ev in self.conn.receive_data(data):
                handle(ev)
            self.flush()
        return True


# ------------------------------------------------------------------------------------------------ client
def client(addr, port):
    sock = socket.create_connection((addr, port))
    p = Peer(sock, True)
    c = p.conn
    auth = "%s:%d" % (addr, port)
    c.initiate_connection()
    p.flush()

    def split_and_pad(ftype, flags, sid, payload):
        if ftype != HEADERS or sid != 1:
            return None
        assert flags & PRIORITY and flags & END_HEADERS
        prio, block = payload[:5], payload[5:]
        # split inside the longest representation whose name is static index 32 (cookie)
        start, end, _ = max((r for r in representations(block) if r[2] == 32), key=lambda r: r[1] - r[0])
        k = (start + end) // 2   # HEADERS ends inside the long cookie crumb
        m = end + 4              # the first CONTINUATION ends inside the next representation
        assert m < len(block)
        pad = 7
        return (frame(HEADERS, (flags & ~END_HEADERS) | PADDED, 1, bytes([pad]) + prio + block[:k] + b"\0" * pad)
                + frame(CONTINUATION, 0, 1, block[k:m]) + frame(CONTINUATION, END_HEADERS, 1, block[m:]))

    def req(path, method="GET", extra=()):
        return [(":method", method), (":scheme", "http"), (":authority", auth), (":path", path),
                ("user-agent", "h2-features-client/1"), ("accept", "*/*")] + list(extra)

    # stream 1: priority + padding + CONTINUATION, cookie crumbs
    c.send_headers(1, req("/", extra=[("accept-language", "en-GB,en;q=0.8"), ("cookie", COOKIE)]),
                   end_stream=True, priority_weight=201, priority_depends_on=0, priority_exclusive=True)
    p.fix = split_and_pad
    p.flush()
    # stream 3: POST with padded DATA and trailers, then a PRIORITY frame for it
    c.send_headers(3, req("/upload", "POST", [("content-type", "application/octet-stream"),
                                              ("content-length", str(len(UPLOAD))), ("cookie", COOKIE)]))
    for i, n in enumerate((16000, 16000, 6000, 2000)):
        off = sum((16000, 16000, 6000, 2000)[:i])
        c.send_data(3, UPLOAD[off:off + n], pad_length=(i + 1) * 16 if n < 16000 else 200)
    c.send_headers(3, [("x-checksum", "sum32=%d" % sum(UPLOAD))], end_stream=True)
    c.prioritize(3, weight=32, depends_on=1, exclusive=False)
    p.flush()
    # stream 5: 204; PING; a frame of an unknown type; stream 7: a download to cancel. The download comes
    # last: the server answers it after everything else it has read, so the order in which its HPACK encoder
    # sees the responses is the same on every run.
    c.send_headers(5, req("/no-content"), end_stream=True)
    c.ping(b"traffic!")
    p.flush()
    sock.sendall(frame(0xFA, 0, 0, b"unknown!"))
    c.send_headers(7, req("/download"), end_stream=True)
    p.flush()

    state = {"ended": set(), "reset": False, "pong": False, "promised": [], "statuses": [], "goaway": False}

    def handle(ev):
        if isinstance(ev, h2.events.DataReceived):
            if ev.stream_id == 7 and not state["reset"]:
                c.reset_stream(7, h2.errors.ErrorCodes.CANCEL)
                state["reset"] = True
            elif ev.stream_id != 7:
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.StreamEnded):
            state["ended"].add(ev.stream_id)
        elif isinstance(ev, h2.events.PingAckReceived):
            state["pong"] = True
        elif isinstance(ev, h2.events.PushedStreamReceived):
            state["promised"].append(ev.pushed_stream_id)
        elif isinstance(ev, (h2.events.ResponseReceived, h2.events.InformationalResponseReceived)):
            state["statuses"].append((ev.stream_id, dict(ev.headers)[":status"]))
        elif isinstance(ev, h2.events.ConnectionTerminated):
            state["goaway"] = True

    p.pump(handle, lambda: state["ended"] >= {1, 2, 3, 5} and state["reset"] and state["pong"], 10)
    p.pump(handle, lambda: False, 0.8)  # DATA still arriving on the reset stream 7
    c.close_connection()
    p.flush()
    p.pump(handle, lambda: state["goaway"], 3)
    sock.close()
    print("h2-features client: statuses %s, pushed %s, ended %s, reset 7: %s, ping ack: %s, server GOAWAY: %s"
          % (state["statuses"], state["promised"], sorted(state["ended"]), state["reset"], state["pong"],
             state["goaway"]))
    ok = (state["ended"] >= {1, 2, 3, 5} and state["reset"] and state["pong"] and state["goaway"]
          and state["promised"] == [2] and (1, "103") in state["statuses"])
    return 0 if ok else 1


# ------------------------------------------------------------------------------------------------ server
def serve(sock):
    p = Peer(sock, False)
    c = p.conn
    c.initiate_connection()
    p.flush()
    jobs = []
    st = {"closed": False}

    def pad_headers(ftype, flags, sid, payload):
        if ftype == HEADERS and sid == 3 and not flags & END_STREAM:
            return frame(HEADERS, flags | PADDED, sid, bytes([5]) + payload + b"\0" * 5)
        return None

    def handle(ev):
        if isinstance(ev, h2.events.RequestReceived):
            h = dict(ev.headers)
            path, sid = h[":path"], ev.stream_id
            if path == "/":
                c.send_headers(sid, [(":status", "103"), ("link", "</style.css>; rel=preload; as=style")])
                c.push_stream(sid, 2, [(":method", "GET"), (":scheme", "http"), (":authority", h[":authority"]),
                                       (":path", "/style.css")])
                c.send_headers(sid, [(":status", "200"), ("server", "h2-features-server/1"),
                                     ("content-type", "text/html"), ("content-length", str(len(INDEX))),
                                     ("set-cookie", "sid=4f2a9c0d17e3b5a8; Path=/; HttpOnly"),
                                     ("set-cookie", "theme=dark; Max-Age=3600; Path=/")])
                c.send_data(sid, INDEX, end_stream=True, pad_length=32)
                c.send_headers(2, [(":status", "200"), ("server", "h2-features-server/1"),
                                   ("content-type", "text/css"), ("content-length", str(len(CSS)))])
                c.send_data(2, CSS, end_stream=True)
            elif path == "/download":
                jobs.append(sid)
            elif path == "/no-content":
                c.send_headers(sid, [(":status", "204"), ("server", "h2-features-server/1")], end_stream=True)
        elif isinstance(ev, h2.events.DataReceived):
            c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == 3:
            c.send_headers(3, [(":status", "200"), ("server", "h2-features-server/1"),
                               ("content-type", "text/plain")])
            p.fix = pad_headers
            c.send_data(3, b"stored 40000 bytes\n")
            c.send_headers(3, [("x-upload-status", "complete"), ("x-upload-bytes", "40000")], end_stream=True)
        elif isinstance(ev, h2.events.ConnectionTerminated):
            c.close_connection(last_stream_id=7)
            st["closed"] = True

    while not st["closed"]:
        if not p.pump(handle, lambda: bool(jobs) or st["closed"], 30):
            break
        p.flush()
        while jobs:
            sid = jobs.pop(0)
            c.send_headers(sid, [(":status", "200"), ("server", "h2-features-server/1"),
                                 ("content-type", "application/octet-stream"), ("content-length", "131072")])
            c.send_data(sid, bytes(range(256)) * 64)
            p.flush()
            time.sleep(0.3)  # not reading: the client's RST_STREAM arrives meanwhile
            c.send_data(sid, bytes(range(256)) * 32)
            c.send_data(sid, bytes(range(255, -1, -1)) * 32)
            p.flush()
    p.flush()
    sock.close()


def server(addr, port):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(4)
    while True:
        sock, _ = srv.accept()
        try:
            serve(sock)
        except (ConnectionResetError, BrokenPipeError):
            sock.close()  # a port probe of the make script: connected, sent nothing, closed
        except Exception as e:  # keep serving; the client reports what it missed
            print("h2-features server: %r" % e, file=sys.stderr)
            sock.close()


if __name__ == "__main__":
    role, a, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.exit(client(a, port) if role == "client" else server(a, port))
