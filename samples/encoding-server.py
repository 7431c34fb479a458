#!/usr/bin/env python3
"""Small HTTP/1.1 test server used by samples/make-samples.sh.

It writes every response byte by hand so the captures contain exactly the
framing we want to test:

  GET  /gzip            Content-Encoding: gzip, Content-Length
  GET  /deflate-zlib    Content-Encoding: deflate (zlib wrapper, RFC 1950)
  GET  /deflate-raw     Content-Encoding: deflate (raw deflate, RFC 1951)
  GET  /br              Content-Encoding: br   (bytes made by the brotli CLI)
  GET  /zstd            Content-Encoding: zstd (bytes made by the zstd CLI)
  GET  /gzip-br         Content-Encoding: gzip, br (gzip applied first, then br)
  GET  /chunked         Transfer-Encoding: chunked with chunk extensions and
                        a trailer field (identity content)
  GET  /chunked-gzip    Transfer-Encoding: chunked + Content-Encoding: gzip
  GET  /http10          HTTP/1.0 response, no Content-Length, close-delimited
  GET  /no-content      204 No Content
  POST /upload          reads a Content-Length body (answers Expect:
                        100-continue with "100 Continue"), replies 201

Usage: encoding-server.py ADDRESS PORT
Standard library only; br and zstd bodies are produced once at start-up with
the `brotli` and `zstd` command-line tools.
"""
import gzip
import http.server
import socketserver
import subprocess
import sys
import zlib

DATE = "Mon, 01 Jan 2024 00:00:00 GMT"  # fixed so captures are reproducible


def text_body(lines):
    words = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet "
             "kilo lima mike november oscar papa quebec romeo sierra tango").split()
    out = []
    for i in range(lines):
        out.append("%04d %s %s %s\n" % (i, words[i % 20], words[(i * 7) % 20], words[(i * 13) % 20]))
    return "".join(out).encode()


PLAIN = text_body(160)  # ~4.5 KB of compressible text


def cli(cmd, data):
    return subprocess.run(cmd, input=data, stdout=subprocess.PIPE, check=True).stdout


def gz(data):
    return gzip.compress(data, compresslevel=6, mtime=0)


def raw_deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


BODIES = {
    "/gzip": ("gzip", gz(PLAIN)),
    "/deflate-zlib": ("deflate", zlib.compress(PLAIN, 6)),
    "/deflate-raw": ("deflate", raw_deflate(PLAIN)),
    "/br": ("br", cli(["brotli", "-c", "-q", "9"], PLAIN)),
    "/zstd": ("zstd", cli(["zstd", "-q", "-c", "-19"], PLAIN)),
    "/gzip-br": ("gzip, br", cli(["brotli", "-c", "-q", "9"], gz(PLAIN))),
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive + 100-continue support

    def log_message(self, fmt, *args):
        pass

    def head(self, status, fields, version="HTTP/1.1"):
        lines = ["%s %s" % (version, status), "Server: sample-encoding-server/1", "Date: " + DATE]
        lines += fields
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def do_GET(self):
        p = self.path.split("?")[0]
        if p in BODIES:
            coding, body = BODIES[p]
            self.head("200 OK", ["Content-Type: text/plain; charset=utf-8",
                                 "Content-Encoding: " + coding,
                                 "Content-Length: %d" % len(body), "Vary: Accept-Encoding"])
            self.wfile.write(body)
        elif p == "/chunked":
            self.head("200 OK", ["Content-Type: text/plain", "Transfer-Encoding: chunked",
                                 "Trailer: X-Checksum"])
            parts = [PLAIN[:1000], PLAIN[1000:1500], PLAIN[1500:]]
            exts = [';name="first"', ";last-modified=0", ""]
            for part, ext in zip(parts, exts):
                self.wfile.write(b"%x%s\r\n" % (len(part), ext.encode()) + part + b"\r\n")
            self.wfile.write(b"0;final\r\nX-Checksum: crc32=%08x\r\n\r\n" % zlib.crc32(PLAIN))
        elif p == "/chunked-gzip":
            body = gz(PLAIN)
            self.head("200 OK", ["Content-Type: text/plain", "Content-Encoding: gzip",
                                 "Transfer-Encoding: chunked"])
            for i in range(0, len(body), 512):
                part = body[i:i + 512]
                self.wfile.write(b"%X\r\n" % len(part) + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif p == "/http10":
            self.head("200 OK", ["Content-Type: text/plain", "Connection: close"], version="HTTP/1.0")
            self.wfile.write(PLAIN[:2500])
            self.close_connection = True
        elif p == "/no-content":
            self.head("204 No Content", [])
        else:
            body = b"not found\n"
            self.head("404 Not Found", ["Content-Type: text/plain", "Content-Length: %d" % len(body)])
            self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        remaining, crc = n, 0
        while remaining:
            chunk = self.rfile.read(min(65536, remaining))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            remaining -= len(chunk)
        body = b'{"received": %d, "crc32": "%08x"}\n' % (n - remaining, crc)
        self.head("201 Created", ["Content-Type: application/json", "Content-Length: %d" % len(body)])
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    addr, port = sys.argv[1], int(sys.argv[2])
    if ":" in addr:
        Server.address_family = __import__("socket").AF_INET6
    Server((addr, port), Handler).serve_forever()
