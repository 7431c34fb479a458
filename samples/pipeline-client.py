#!/usr/bin/env python3
"""HTTP/1.1 pipelining client used by samples/make-samples.sh.

Writes all requests with ONE send() on one TCP connection (a HEAD in the
middle, the last one asks for Connection: close), then reads until the
server closes.  Usage: pipeline-client.py HOST PORT
"""
import socket
import sys

host, port = sys.argv[1], int(sys.argv[2])
h = "Host: pipeline.test\r\nUser-Agent: pipeline-client/1\r\n"
reqs = [
    "GET /index.html HTTP/1.1\r\n" + h + "Accept: */*\r\n\r\n",
    "GET /data-20k.bin HTTP/1.1\r\n" + h + "\r\n",
    "HEAD /page.html HTTP/1.1\r\n" + h + "\r\n",
    "GET /missing.html HTTP/1.1\r\n" + h + "\r\n",
    "GET /search?q=pipelined&n=5 HTTP/1.1\r\n" + h + "\r\n",
    "GET /index.html HTTP/1.1\r\n" + h + "Connection: close\r\n\r\n",
]
s = socket.create_connection((host, port))
s.sendall("".join(reqs).encode())
total = 0
while True:
    data = s.recv(65536)
    if not data:
        break
    total += len(data)
s.close()
print("pipeline-client: received %d bytes" % total, file=sys.stderr)
