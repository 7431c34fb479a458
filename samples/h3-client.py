#!/usr/bin/env python3
"""A small HTTP/3 client (aioquic, sans-io with plain sockets) for the QUIC sample captures.

    python3 samples/h3-client.py --server 10.235.0.2 --port 443 --scenario main \
        --keylog FILE --qlog-dir DIR [--version 0x1] [--supported 0x1,...] [--local-port N] [--cipher chacha]

Scenarios:
  main    GET /small and GET /gzip at once (two request streams open together), then GET /large,
          then POST /upload (5 000-byte body), then GET /small again; every request has a cookie field
  small   one GET /small
  rebind  GET /small, GET /gzip, then the client moves to a NEW UDP socket (new source port, same
          connection IDs: a NAT rebinding as the server sees it), then GET /small and GET /gzip again
  bigch   like small, with quantum_readiness_test (a 1 200-byte transport parameter: the ClientHello
          spans two Initial packets)
  0rtt    two connections from one process (two sockets): the first makes GET /small and keeps the
          server's session ticket; the second resumes with it and sends GET /small and GET /gzip in 0-RTT
          (before the handshake), then GET /small in 1-RTT
  keyupdate  GET /small, then GET /medium (80 000 bytes): the client requests a key update after 20 000 body
          bytes and again after 50 000 (key phase 0 -> 1 -> 0, generations 0, 1, 2)
  pair    GET /small and GET /gzip at once
--cipher chacha: offer TLS_CHACHA20_POLY1305_SHA256 only.
At the end the client closes the connection (CONNECTION_CLOSE, H3_NO_ERROR) and waits briefly.
"""
import argparse
import os
import select
import socket
import ssl
import sys
import time

from aioquic.h3.connection import H3_ALPN, H3Connection, ErrorCode
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, HandshakeCompleted
from aioquic.quic.logger import QuicFileLogger
from aioquic.tls import CipherSuite

COOKIE = b"session=abc123; theme=dark"
UPLOAD = (b"field=" + b"0123456789abcdef" * 400)[:5000]


class Client:
    def __init__(self, args, session_ticket=None, ticket_handler=None, early=()):
        cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=args.sni,
                                verify_mode=ssl.CERT_NONE)
        if args.cipher == "chacha":
            cfg.cipher_suites = [CipherSuite.CHACHA20_POLY1305_SHA256]
        cfg.session_ticket = session_ticket
        cfg.secrets_log_file = open(args.keylog, "a", buffering=1)
        cfg.quic_logger = QuicFileLogger(args.qlog_dir)
        if args.supported:
            cfg.supported_versions = [int(v, 0) for v in args.supported.split(",")]
        if args.version:
            cfg.original_version = int(args.version, 0)
        if args.scenario == "bigch":
            cfg.quantum_readiness_test = True
        self.cfg = cfg
        self.family = socket.AF_INET6 if ":" in args.server else socket.AF_INET
        # the address tuple must equal what recvfrom returns (4 items for IPv6), or aioquic sees a new path
        self.addr = (args.server, args.port, 0, 0) if self.family == socket.AF_INET6 else (args.server, args.port)
        self.sock = self.new_socket(args.local_port)
        self.quic = QuicConnection(configuration=cfg, session_ticket_handler=ticket_handler)
        self.h3 = H3Connection(self.quic)
        self.responses = {}
        self.done = set()
        self.closed = False
        self.on_data = None   # called with (stream_id, body bytes so far) after DATA
        self.quic.connect(self.addr, now=time.time())
        # requests before the handshake: aioquic sends them in 0-RTT packets when the ticket allows early data
        self.early = [self.request(m, p, flush=False) for m, p in early]
        self.flush()

    def new_socket(self, port=0):
        s = socket.socket(self.family, socket.SOCK_DGRAM)
        s.bind(("::" if self.family == socket.AF_INET6 else "0.0.0.0", port))
        s.setblocking(False)
        return s

    def flush(self):
        for data, addr in self.quic.datagrams_to_send(now=time.time()):
            self.sock.sendto(data, addr)

    def step(self, timeout=0.05):
        t = self.quic.get_timer()
        wait = timeout if t is None else max(0, min(timeout, t - time.time()))
        r, _, _ = select.select([self.sock], [], [], wait)
        while r:
            try:
                data, addr = self.sock.recvfrom(65536)
            except BlockingIOError:
                break
            self.quic.receive_datagram(data, addr, now=time.time())
        t = self.quic.get_timer()
        if t is not None and time.time() >= t:
            self.quic.handle_timer(now=time.time())
        ev = self.quic.next_event()
        while ev is not None:
            if isinstance(ev, ConnectionTerminated):
                self.closed = True
            for h in self.h3.handle_event(ev):
                if isinstance(h, HeadersReceived):
                    self.responses.setdefault(h.stream_id, [None, b""])[0] = h.headers
                    if h.stream_ended:
                        self.done.add(h.stream_id)
                elif isinstance(h, DataReceived):
                    self.responses.setdefault(h.stream_id, [None, b""])[1] += h.data
                    if h.stream_ended:
                        self.done.add(h.stream_id)
                    if self.on_data:
                        self.on_data(h.stream_id, len(self.responses[h.stream_id][1]))
            ev = self.quic.next_event()
        self.flush()

    def handshake(self):
        end = time.time() + 10
        while not self.quic._handshake_complete:
            if time.time() > end or self.closed:
                sys.exit("handshake failed")
            self.step()

    def request(self, method, path, body=None, flush=True):
        sid = self.quic.get_next_available_stream_id()
        headers = [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", self.cfg.server_name.encode()),
                   (b":path", path.encode()), (b"user-agent", b"traffic-h3-client/1"),
                   (b"accept-encoding", b"gzip"), (b"cookie", COOKIE)]
        if body is not None:
            headers += [(b"content-type", b"application/octet-stream"),
                        (b"content-length", str(len(body)).encode())]
        self.h3.send_headers(sid, headers, end_stream=body is None)
        if body is not None:
            self.h3.send_data(sid, body, end_stream=True)
        if flush:
            self.flush()
        return sid

    def wait(self, *sids):
        end = time.time() + 20
        while not all(s in self.done for s in sids):
            if time.time() > end or self.closed:
                sys.exit("request timed out: %r" % (sids,))
            self.step()
        for s in sids:
            hdrs, body = self.responses[s]
            status = dict(hdrs)[b":status"].decode()
            print("stream %d: %s, %d body bytes" % (s, status, len(body)), flush=True)

    def settle(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.step(0.02)

    def rebind(self):
        old = self.sock
        self.sock = self.new_socket(0)
        print("rebind: local port %d -> %d" % (old.getsockname()[1], self.sock.getsockname()[1]), flush=True)
        old.close()

    def close(self):
        self.quic.close(error_code=ErrorCode.H3_NO_ERROR, reason_phrase="done")
        self.flush()
        self.settle(0.3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--sni", default="quic.test")
    ap.add_argument("--scenario", default="small", choices=["main", "small", "rebind", "bigch", "0rtt", "keyupdate", "pair"])
    ap.add_argument("--keylog", required=True)
    ap.add_argument("--qlog-dir", required=True)
    ap.add_argument("--version", help="original version of the first Initial, e.g. 0x1a2a3a4a")
    ap.add_argument("--supported", help="comma-separated supported versions")
    ap.add_argument("--local-port", type=int, default=0)
    ap.add_argument("--cipher", choices=["chacha"])
    args = ap.parse_args()
    if args.scenario == "0rtt":
        zero_rtt(args)
        return
    c = Client(args)
    c.handshake()
    c.settle(0.1)
    if args.scenario == "main":
        a = c.request("GET", "/small")
        b = c.request("GET", "/gzip")
        c.wait(a, b)
        c.settle(0.1)
        c.wait(c.request("GET", "/large"))
        c.settle(0.1)
        c.wait(c.request("POST", "/upload", UPLOAD))
        c.settle(0.1)
        c.wait(c.request("GET", "/small"))
    elif args.scenario == "rebind":
        c.wait(c.request("GET", "/small"))
        c.wait(c.request("GET", "/gzip"))
        c.settle(0.2)
        c.rebind()
        c.wait(c.request("GET", "/small"))
        c.settle(0.1)
        c.wait(c.request("GET", "/gzip"))
    elif args.scenario == "keyupdate":
        c.wait(c.request("GET", "/small"))
        c.settle(0.1)
        marks = [20_000, 50_000]

        def on_data(sid, got):
            while marks and got >= marks[0]:
                print("key update requested after %d body bytes (mark %d)" % (got, marks.pop(0)), flush=True)
                c.quic.request_key_update()
        c.on_data = on_data
        c.wait(c.request("GET", "/medium"))
    elif args.scenario == "pair":
        a = c.request("GET", "/small")
        b = c.request("GET", "/gzip")
        c.wait(a, b)
    else:
        c.wait(c.request("GET", "/small"))
    c.settle(0.2)
    c.close()


def zero_rtt(args):
    tickets = []
    first = Client(args, ticket_handler=tickets.append)
    first.handshake()
    first.wait(first.request("GET", "/small"))
    first.settle(0.2)
    first.close()
    if not tickets:
        sys.exit("no session ticket")
    t = tickets[-1]
    print("ticket: cipher suite %s, max_early_data %s" % (t.cipher_suite.name, t.max_early_data_size), flush=True)
    time.sleep(0.3)
    # the first socket stays open (a different source port for the second connection)
    second = Client(args, session_ticket=t, early=[("GET", "/small"), ("GET", "/gzip")])
    second.handshake()
    print("early data accepted: %s" % second.quic.tls.early_data_accepted, flush=True)
    second.wait(*second.early)
    second.settle(0.1)
    second.wait(second.request("GET", "/small"))
    second.settle(0.2)
    second.close()
    first.sock.close()


if __name__ == "__main__":
    main()
