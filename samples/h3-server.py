#!/usr/bin/env python3
"""A small HTTP/3 server (aioquic) for the QUIC sample captures (samples/make-quic-samples.sh).

    python3 samples/h3-server.py --host 10.235.0.2 --port 443 --cert C --key K \
        --keylog FILE --qlog-dir DIR [--retry] [--versions 1] [--host6 fd00::2] [--session-tickets]

Routes (all content fixed, so every run has the same sizes):
  GET  /small   application/json, 300 bytes, one set-cookie
  GET  /gzip    application/json, ~20 KB gzip-compressed (gzip mtime 0), content-encoding: gzip
  GET  /large   application/octet-stream, 1 200 000 random bytes (seed 9114)
  GET  /medium  application/octet-stream, the first 80 000 bytes of /large
  POST /upload  reads the body, answers 201 with a small JSON and two set-cookie fields
  anything else 404 text/plain
No date header (so that field sections have the same size on every run).
--session-tickets: the server issues session tickets (with max_early_data, so 0-RTT) and accepts each once.
"""
import argparse
import asyncio
import gzip
import json
import random
import signal

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated, QuicEvent
from aioquic.quic.logger import QuicFileLogger
from aioquic.quic.packet import QuicProtocolVersion


def small_json() -> bytes:
    doc = {"service": "traffic-h3-sample", "status": "ok", "items": [
        {"id": i, "name": "item-%02d" % i, "price": 10 + i} for i in range(5)]}
    raw = json.dumps(doc, separators=(",", ":")).encode()
    return raw + b" " * (299 - len(raw)) + b"\n"   # exactly 300 bytes


def gzip_json() -> tuple[bytes, bytes]:
    rows = [{"seq": i, "word": ["alpha", "beta", "gamma", "delta"][i % 4], "value": (i * 37) % 1000,
             "tag": "row-%04d" % i} for i in range(330)]
    raw = json.dumps({"rows": rows}, indent=1).encode()
    return raw, gzip.compress(raw, compresslevel=6, mtime=0)


SMALL = small_json()
GZIP_RAW, GZIP_BODY = gzip_json()
LARGE = random.Random(9114).randbytes(1_200_000)


class H3Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = None
        self.requests = {}   # stream_id -> [headers, body]

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.h3 = H3Connection(self._quic)
        if self.h3 is None:
            return
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                self.requests[ev.stream_id] = [dict(ev.headers), b""]
                if ev.stream_ended:
                    self.respond(ev.stream_id)
            elif isinstance(ev, DataReceived):
                req = self.requests.setdefault(ev.stream_id, [{}, b""])
                req[1] += ev.data
                if ev.stream_ended:
                    self.respond(ev.stream_id)

    def respond(self, stream_id: int) -> None:
        headers, body = self.requests.pop(stream_id)
        method = headers.get(b":method", b"")
        path = headers.get(b":path", b"").split(b"?")[0]
        extra = []
        if method == b"GET" and path == b"/small":
            status, ctype, data = b"200", b"application/json", SMALL
            extra = [(b"set-cookie", b"sid=4f2a9c0d17e3b5a8; Path=/; Secure; HttpOnly")]
        elif method == b"GET" and path == b"/gzip":
            status, ctype, data = b"200", b"application/json", GZIP_BODY
            extra = [(b"content-encoding", b"gzip"), (b"vary", b"accept-encoding")]
        elif method == b"GET" and path == b"/large":
            status, ctype, data = b"200", b"application/octet-stream", LARGE
        elif method == b"GET" and path == b"/medium":
            status, ctype, data = b"200", b"application/octet-stream", LARGE[:80_000]
        elif method == b"POST" and path == b"/upload":
            status, ctype = b"201", b"application/json"
            data = json.dumps({"received": len(body)}).encode() + b"\n"
            extra = [(b"set-cookie", b"upload=ok; Max-Age=60; Path=/"),
                     (b"set-cookie", b"theme=dark; Max-Age=3600; Path=/; SameSite=Lax")]
        else:
            status, ctype, data = b"404", b"text/plain", b"not found\n"
        self.h3.send_headers(stream_id, [(b":status", status), (b"server", b"traffic-h3-sample"),
                                         (b"content-type", ctype),
                                         (b"content-length", str(len(data)).encode())] + extra)
        self.h3.send_data(stream_id, data, end_stream=True)
        self.transmit()


async def main(args):
    cfg = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN, max_datagram_frame_size=None)
    cfg.load_cert_chain(args.cert, args.key)
    cfg.secrets_log_file = open(args.keylog, "a", buffering=1)
    cfg.quic_logger = QuicFileLogger(args.qlog_dir)
    if args.versions:
        cfg.supported_versions = [int(v, 0) for v in args.versions.split(",")]
    hosts = [args.host] + ([args.host6] if args.host6 else [])
    tickets = {}   # ticket -> SessionTicket; each is accepted once (pop)
    kw = dict(session_ticket_fetcher=lambda k: tickets.pop(k, None),
              session_ticket_handler=lambda t: tickets.__setitem__(t.ticket, t)) if args.session_tickets else {}
    for h in hosts:
        await serve(h, args.port, configuration=cfg, create_protocol=H3Server, retry=args.retry, **kw)
    print("listening", hosts, args.port, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(s, stop.set)
    await stop.wait()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--host6")
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--keylog", required=True)
    ap.add_argument("--qlog-dir", required=True)
    ap.add_argument("--retry", action="store_true")
    ap.add_argument("--session-tickets", action="store_true")
    ap.add_argument("--versions", help="comma-separated supported versions, e.g. 0x1 (default: v1,v2)")
    asyncio.run(main(ap.parse_args()))
