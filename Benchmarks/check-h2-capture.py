#!/usr/bin/env python3
"""Re-derives the HTTP/2 manifest of `traffic-bench-gen --h2` from the capture alone, independently of the
generator, and compares the two.

Usage: check-h2-capture.py CAPTURE.pcap MANIFEST.json
Exits 0 when they agree, 1 otherwise (differences on stdout).

It reads the classic pcap (Ethernet/IPv4/TCP, as the generator writes it: in order, no loss), joins each
connection's payload per direction, checks the client preface, splits both directions into frames
(RFC 9113 §4.1), decodes every header block with the `hpack` package (python-hyper, an HPACK implementation
unrelated to the generator's), finds each field's representation bytes by walking the block (RFC 7541 §6),
gunzips bodies with Content-Encoding gzip, and totals per host + path template (the generator's templates,
matched by pattern) in the vocabulary of issue 22's records. It also checks framing rules the analyzer relies
on: frame sizes within 16384, CONTINUATION right after its HEADERS, every stream ended both ways. (Flow control
is not re-checked here: the per-direction streams lose the timing of the peer's WINDOW_UPDATEs.)
"""
import collections
import gzip
import json
import re
import struct
import sys

from hpack import Decoder

TEMPLATES = [
    (r"/api/v1/users/\d+", "/api/v1/users/{id}"),
    (r"/api/v1/users/\d+/orders", "/api/v1/users/{id}/orders"),
    (r"/api/v1/users/\d+/settings", "/api/v1/users/{id}/settings"),
    (r"/api/v1/orders/\d+", "/api/v1/orders/{id}"),
    (r"/img/products/\d+/thumb\.jpg", "/img/products/{id}/thumb.jpg"),
    (r"/downloads/\d+/firmware\.bin", "/downloads/{id}/firmware.bin"),
    (r"/v2/uploads/\d+/parts/\d+", "/v2/uploads/{id}/parts/{id}"),
]
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FRAME_NAMES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
               "WINDOW_UPDATE", "CONTINUATION"]


def template(path):
    for pattern, name in TEMPLATES:
        if re.fullmatch(pattern, path):
            return name
    return path


def read_streams(path):
    """Connection key -> [client payload, server payload], in capture order."""
    connections = collections.OrderedDict()
    current = {}
    with open(path, "rb") as f:
        header = f.read(24)
        assert struct.unpack("<I", header[:4])[0] == 0xA1B2C3D4, "classic little-endian pcap expected"
        while True:
            record = f.read(16)
            if not record:
                break
            _, _, caplen, _ = struct.unpack("<IIII", record)
            frame = f.read(caplen)
            ip = frame[14:]
            ihl = (ip[0] & 15) * 4
            total = struct.unpack(">H", ip[2:4])[0]
            src, dst = ip[12:16], ip[16:20]
            tcp = ip[ihl:total]
            sport, dport = struct.unpack(">HH", tcp[:4])
            payload = tcp[(tcp[12] >> 4) * 4:]
            flags = tcp[13]
            if dport == 80:
                key, side = (src, sport, dst, dport), 0
            else:
                key, side = (dst, dport, src, sport), 1
            if flags & 0x02 and side == 0:  # SYN: a new connection (ports are reused across the capture)
                current[key] = key + (len(connections),)
                connections[current[key]] = [bytearray(), bytearray()]
            connections[current[key]][side] += payload
    return connections


def representation_sizes(block):
    """The byte length of each field representation of a header block (RFC 7541 §6), size updates excluded."""
    sizes, i = [], 0

    def integer(prefix):
        nonlocal i
        value = block[i] & ((1 << prefix) - 1)
        i += 1
        if value == (1 << prefix) - 1:
            shift = 0
            while True:
                byte = block[i]
                i += 1
                value += (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
        return value

    def string():
        nonlocal i
        length = integer(7)
        i += length

    while i < len(block):
        start, first = i, block[i]
        if first & 0x80:
            integer(7)
        elif first & 0xE0 == 0x20:
            integer(5)
            continue  # dynamic table size update: not a field
        else:
            prefix = 6 if first & 0x40 else 4
            if integer(prefix) == 0:
                string()
            string()
        sizes.append(i - start)
    return sizes


class Totals(collections.defaultdict):
    def __init__(self):
        super().__init__(int)


def main(capture, manifest_path):
    with open(manifest_path) as f:
        manifest = json.load(f)
    groups = collections.defaultdict(Totals)
    methods = collections.defaultdict(collections.Counter)
    statuses = collections.defaultdict(collections.Counter)
    paths = collections.defaultdict(set)
    frames = collections.Counter()
    control = [0, 0]
    direction_bytes = [0, 0]
    problems = []
    connections = read_streams(capture)

    for key, (client, server) in connections.items():
        direction_bytes[0] += len(client)
        direction_bytes[1] += len(server)
        if not client.startswith(PREFACE):
            problems.append(f"{key}: no client preface")
            continue
        control[0] += len(PREFACE)
        streams = collections.defaultdict(dict)  # stream id -> {"request": {...}, "response": {...}}
        for side, data, offset in ((0, client, len(PREFACE)), (1, server, 0)):
            decoder = Decoder()
            decoder.max_allowed_table_size = 65536
            pending = None  # the header block being continued
            while offset < len(data):
                if offset + 9 > len(data):
                    problems.append(f"{key} side {side}: a frame header cut at the end")
                    break
                length = int.from_bytes(data[offset:offset + 3], "big")
                ftype, flags = data[offset + 3], data[offset + 4]
                stream = int.from_bytes(data[offset + 5:offset + 9], "big") & 0x7FFFFFFF
                payload = bytes(data[offset + 9:offset + 9 + length])
                offset += 9 + length
                frames[FRAME_NAMES[ftype] if ftype < 10 else "unknown"] += 1
                if length > 16384:
                    problems.append(f"{key} side {side}: a {FRAME_NAMES[ftype]} frame of {length} bytes")
                if pending is not None and ftype != 9:
                    problems.append(f"{key} side {side}: frame type {ftype} inside a header block")
                kind = "request" if side == 0 else "response"
                if ftype in (1, 9):
                    if ftype == 1:
                        fragment = payload[5:] if flags & 0x20 else payload
                        pending = {"stream": stream, "block": fragment, "bytes": 9 + length,
                                   "end_stream": bool(flags & 1)}
                    else:
                        pending["block"] += payload
                        pending["bytes"] += 9 + length
                    if flags & 0x4:
                        block = pending["block"]
                        fields = decoder.decode(block, raw=True)
                        sizes = representation_sizes(block)
                        assert len(sizes) == len(fields), "representation walk disagrees with the decoder"
                        message = streams[pending["stream"]].setdefault(kind, {
                            "header_bytes": 0, "decoded": 0, "cookie_bytes": 0, "cookie_decoded": 0,
                            "body_bytes": 0, "payload": bytearray(), "ended": False, "fields": []})
                        message["header_bytes"] += pending["bytes"]
                        cookie = b"cookie" if side == 0 else b"set-cookie"
                        for (name, value), size in zip(fields, sizes):
                            message["decoded"] += len(name) + len(value)
                            message["fields"].append((name.decode(), value.decode()))
                            if name == cookie:
                                message["cookie_bytes"] += size
                                message["cookie_decoded"] += len(name) + len(value)
                        message["ended"] = pending["end_stream"]
                        pending = None
                elif ftype == 0:
                    message = streams[stream].get(kind)
                    if message is None or message["ended"]:
                        problems.append(f"{key} side {side}: DATA on stream {stream} outside a message")
                        continue
                    message["body_bytes"] += 9 + length
                    message["payload"] += payload
                    message["ended"] = bool(flags & 1)
                else:
                    control[side] += 9 + length
        for stream_id, sides in streams.items():
            request, response = sides.get("request"), sides.get("response")
            if request is None or response is None or not request["ended"] or not response["ended"]:
                problems.append(f"{key}: stream {stream_id} incomplete")
                continue
            fields = dict(request["fields"])
            target = fields[":path"]
            path = target.split("?", 1)[0]
            group = (fields[":authority"], template(path))
            response_fields = dict(response["fields"])
            t = groups[group]
            t["requests"] += 1
            t["responses"] += 1
            methods[group][fields[":method"]] += 1
            statuses[group][response_fields[":status"]] += 1
            paths[group].add(path)
            for prefix, message in (("request", request), ("response", response)):
                body = bytes(message["payload"])
                t[f"{prefix}_head_bytes"] += message["header_bytes"]
                t[f"{prefix}_header_decoded_bytes"] += message["decoded"]
                t[f"{prefix}_cookie_bytes"] += message["cookie_bytes"]
                t[f"{prefix}_cookie_decoded_bytes"] += message["cookie_decoded"]
                t[f"{prefix}_body_bytes"] += message["body_bytes"]
                t[f"{prefix}_encoded_body_bytes"] += len(body)
                coded = dict(message["fields"]).get("content-encoding") == "gzip" and body
                t[f"{prefix}_decoded_body_bytes"] += len(gzip.decompress(body)) if coded else len(body)
                t[f"{prefix}_transfer_bytes"] += message["header_bytes"] + message["body_bytes"]

    expected = {(e["host"], e["path"]): e for e in manifest["endpoints"]}
    for group in sorted(set(expected) | set(groups)):
        if group not in groups or group not in expected:
            problems.append(f"{group}: only in the {'manifest' if group in expected else 'capture'}")
            continue
        entry, t = expected[group], groups[group]
        for field, value in t.items():
            if entry.get(field) != value:
                problems.append(f"{group}: {field} = {value} in the capture, {entry.get(field)} in the manifest")
        if entry["methods"] != dict(methods[group]):
            problems.append(f"{group}: methods {dict(methods[group])}, manifest {entry['methods']}")
        if entry["statuses"] != {k: v for k, v in statuses[group].items()}:
            problems.append(f"{group}: statuses {dict(statuses[group])}, manifest {entry['statuses']}")
        if entry["distinct_paths"] != len(paths[group]):
            problems.append(f"{group}: {len(paths[group])} distinct paths, manifest {entry['distinct_paths']}")
    h2 = manifest["http2"]
    for name, value in [("client_to_server_h2_control_bytes", control[0]),
                        ("server_to_client_h2_control_bytes", control[1]),
                        ("client_to_server_bytes", direction_bytes[0]), ("server_to_client_bytes", direction_bytes[1]),
                        ("connections", len(connections))]:
        if h2[name] != value:
            problems.append(f"http2.{name} = {h2[name]} in the manifest, {value} in the capture")
    for name in FRAME_NAMES:
        if h2["frames"][name] != frames[name]:
            problems.append(f"http2.frames.{name} = {h2['frames'][name]} in the manifest, {frames[name]} in the capture")
    for problem in problems[:50]:
        print(problem)
    print(f"{len(connections)} connections, {sum(t['requests'] for t in groups.values())} streams, "
          f"{sum(frames.values())} frames re-derived from the capture: {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
