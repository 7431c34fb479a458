#!/usr/bin/env python3
"""A small HTTP/1.1 server that accepts the h2c upgrade (RFC 7540 section 3.2), for the http2-h2c-upgrade sample.

    python3 samples/h2-upgrade-server.py ADDRESS PORT

nginx does not accept `Upgrade: h2c`, so this server (Python `h2`, H2Connection.initiate_upgrade_connection)
answers a request carrying `Upgrade: h2c` and `HTTP2-Settings` with `101 Switching Protocols`, sends its
SETTINGS, answers the upgrade request as HTTP/2 stream 1, and then serves further requests of the connection
in HTTP/2. A request without the upgrade gets an HTTP/1.1 answer. Fixed bodies and headers (no Date), so
every run sends the same bytes. Serves connections one at a time until killed.
"""
import socket
import sys

import h2.config
import h2.connection
import h2.events

PAGES = {
    "/": b"<!doctype html>\n<title>h2c upgrade</title>\n<p>upgraded to HTTP/2 from HTTP/1.1</p>\n",
    "/second.txt": b"second request on the upgraded connection\n" * 40,
}
SERVER = "h2-upgrade-server/1"


def answer(path):
    body = PAGES.get(path.split("?", 1)[0])
    if body is None:
        return "404", b"not found\n"
    return "200", body


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    fields = {}
    for line in lines[1:]:
        name, value = line.split(":", 1)
        fields[name.strip().lower()] = value.strip()
    return (method, target, fields), rest


def h2_respond(conn, stream_id, path):
    status, body = answer(path)
    conn.send_headers(stream_id, [(":status", status), ("server", SERVER), ("content-type", "text/html"
                                  if path == "/" else "text/plain"), ("content-length", str(len(body)))])
    conn.send_data(stream_id, body, end_stream=True)


def serve(sock):
    req, rest = read_head(sock)
    if req is None:
        return
    method, target, fields = req
    if "h2c" not in fields.get("upgrade", "").lower() or "http2-settings" not in fields:
        status, body = answer(target)
        sock.sendall(("HTTP/1.1 %s %s\r\nServer: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                      % (status, "OK" if status == "200" else "Not Found", SERVER, len(body))).encode() + body)
        return
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_upgrade_connection(fields["http2-settings"])
    sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
    sock.sendall(conn.data_to_send())
    # The upgrade request is stream 1, half-closed (remote): its answer goes out in HTTP/2.
    h2_respond(conn, 1, target)
    sock.sendall(conn.data_to_send())
    data = rest
    while True:
        if data:
            for ev in conn.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    hdrs = dict(ev.headers)
                    h2_respond(conn, ev.stream_id, hdrs[":path"])
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    sock.sendall(conn.data_to_send())
                    return
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
        data = sock.recv(65536)
        if not data:
            return


def main():
    addr, port = sys.argv[1], int(sys.argv[2])
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(8)
    while True:
        sock, _ = srv.accept()
        try:
            serve(sock)
        except (ConnectionError, OSError) as e:
            print("h2-upgrade-server: %s" % e, file=sys.stderr)
        finally:
            sock.close()


if __name__ == "__main__":
    main()
