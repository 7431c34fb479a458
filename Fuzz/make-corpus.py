#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora into Fuzz/corpus/<target>/ from the committed samples/*.pcap.

Python 3 standard library only. Run from anywhere: `python3 Fuzz/make-corpus.py`. Each seed uses the
input layout its target documents (see Fuzz/Sources/Fuzz*/Fuzz*.swift) and stays within 6 KiB so the
fuzzers stay fast; the output is deterministic, so re-running it changes nothing.
"""
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples")
OUT = os.path.join(ROOT, "Fuzz", "corpus")
MAX_SEED = 6 * 1024

# Index of each pcap LINKTYPE in FuzzPackets' `linkTypes` table.
LINK_INDEX = {1: 0, 113: 1, 276: 2, 101: 3, 0: 4, 9: 10, 50: 11, 239: 12}
# Index of each coding in `ContentCoding.allCases`.
CODING_INDEX = {"identity": 0, "gzip": 1, "x-gzip": 1, "deflate": 2, "br": 3, "zstd": 4}


def read_pcap(path):
    """Yields (linktype, [(seconds, frame bytes, original length)])."""
    data = open(path, "rb").read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        return None, []
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    linktype = struct.unpack(endian + "I", data[20:24])[0] & 0xFFFF
    records, offset = [], 24
    while offset + 16 <= len(data):
        sec, frac, caplen, length = struct.unpack(endian + "IIII", data[offset:offset + 16])
        frame = data[offset + 16:offset + 16 + caplen]
        if len(frame) < caplen:
            break
        records.append((sec + frac / (1e9 if nano else 1e6), frame, length))
        offset += 16 + caplen
    return linktype, records


def tcp_of(linktype, frame):
    """(src, sport, dst, dport, seq, flags, payload) of an IPv4/IPv6 TCP frame, or None."""
    if linktype == 1:
        off, ethertype = 14, struct.unpack(">H", frame[12:14])[0]
        while ethertype in (0x8100, 0x88A8):
            ethertype = struct.unpack(">H", frame[off + 2:off + 4])[0]
            off += 4
    elif linktype == 113:
        off, ethertype = 16, struct.unpack(">H", frame[14:16])[0]
    elif linktype == 276:
        off, ethertype = 20, struct.unpack(">H", frame[0:2])[0]
    elif linktype == 101:
        off, ethertype = 0, 0x0800 if frame[0] >> 4 == 4 else 0x86DD
    elif linktype == 0:
        off, ethertype = 4, 0x0800
    else:
        return None
    if ethertype == 0x0800:
        ihl = (frame[off] & 15) * 4
        total = struct.unpack(">H", frame[off + 2:off + 4])[0]
        if frame[off + 9] != 6 or struct.unpack(">H", frame[off + 6:off + 8])[0] & 0x3FFF:
            return None  # not TCP, or a fragment
        src, dst = frame[off + 12:off + 16], frame[off + 16:off + 20]
        tcp, end = off + ihl, off + total
    elif ethertype == 0x86DD:
        if frame[off + 6] != 6:
            return None
        src, dst = frame[off + 8:off + 24], frame[off + 24:off + 40]
        tcp, end = off + 40, off + 40 + struct.unpack(">H", frame[off + 4:off + 6])[0]
    else:
        return None
    sport, dport, seq = struct.unpack(">HHI", frame[tcp:tcp + 8])
    data_off = (frame[tcp + 12] >> 4) * 4
    return src, sport, dst, dport, seq, frame[tcp + 13], frame[tcp + data_off:end]


def streams(linktype, records):
    """{(client, server): [client→server bytes, server→client bytes]} in first-seen order, deduplicated by seq."""
    result, seen = {}, set()
    for _, frame, _ in records:
        t = tcp_of(linktype, frame)
        if not t or not t[6]:
            continue
        src, sport, dst, dport, seq, _, payload = t
        # The server is the lower port: true of every committed sample.
        forward = sport > dport
        key = ((src, sport), (dst, dport)) if forward else ((dst, dport), (src, sport))
        if (key, forward, seq) in seen:
            continue
        seen.add((key, forward, seq))
        result.setdefault(key, [[], []])[0 if forward else 1].append(bytes(payload))
    return result


def split_responses(stream):
    """Yields (head text, raw body as sent, de-chunked body) of each response in a server stream."""
    pos = 0
    while pos < len(stream):
        end = stream.find(b"\r\n\r\n", pos)
        if end < 0:
            return
        head = stream[pos:end].decode("latin-1")
        pos = end + 4
        status = int(head.split(" ", 2)[1])
        fields = {m.group(1).lower(): m.group(2).strip() for m in re.finditer(r"\r\n([^:\r\n]+):([^\r\n]*)", head)}
        if status < 200 or status in (204, 304):
            yield head, b"", b""
        elif "chunked" in fields.get("transfer-encoding", ""):
            start, data = pos, b""
            while True:
                line_end = stream.index(b"\r\n", pos)
                size = int(stream[pos:line_end].split(b";")[0], 16)
                pos = line_end + 2
                if size == 0:
                    pos = stream.index(b"\r\n\r\n", pos - 2) + 4
                    break
                data += stream[pos:pos + size]
                pos += size + 2
            yield head, stream[start:pos], data
        elif "content-length" in fields:
            n = int(fields["content-length"])
            yield head, stream[pos:pos + n], stream[pos:pos + n]
            pos += n
        else:
            yield head, stream[pos:], stream[pos:]
            return


WRITTEN = set()


def write(target, name, data):
    """Writes one seed unless an identical one exists (the http-basic variants share their TCP payloads)."""
    data = data[:MAX_SEED]
    if (target, data) in WRITTEN:
        return
    WRITTEN.add((target, data))
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def packets_seed(linktype, records):
    out, last = bytearray([LINK_INDEX[linktype]]), records[0][0] if records else 0
    for time, frame, length in records:
        record = bytes([min(255, int((time - last) / 16))]) + struct.pack(">HH", len(frame), length - len(frame)) + frame
        if len(out) + len(record) > MAX_SEED:
            break
        out += record
        last = time
    return bytes(out)


def http_seed(pieces):
    """FuzzHTTP operations: each piece split into receives of at most 256 bytes, in capture order."""
    out = bytearray([0])
    for direction, payload in pieces:
        for i in range(0, len(payload), 256):
            chunk = payload[i:i + 256]
            out += bytes([direction, len(chunk) - 1]) + chunk
    return bytes(out)


def ordered_pieces(linktype, records):
    """Per connection: (direction, payload) in capture order."""
    result, seen = {}, set()
    for _, frame, _ in records:
        t = tcp_of(linktype, frame)
        if not t or not t[6]:
            continue
        src, sport, dst, dport, seq, _, payload = t
        forward = sport > dport
        key = ((src, sport), (dst, dport)) if forward else ((dst, dport), (src, sport))
        if (key, forward, seq) not in seen:
            seen.add((key, forward, seq))
            result.setdefault(key, []).append((0 if forward else 1, bytes(payload)))
    return list(result.values())


def main():
    names = sorted(n for n in os.listdir(SAMPLES) if n.endswith(".pcap"))
    for name in names:
        linktype, records = read_pcap(os.path.join(SAMPLES, name))
        if linktype not in LINK_INDEX:
            continue
        stem = name[:-5]
        write("packets", stem, packets_seed(linktype, records))
        # Tight limits (bit 7) over the same frames.
        write("packets", stem + "-tight", bytes([LINK_INDEX[linktype] | 0x80]) + packets_seed(linktype, records)[1:])
        for n, pieces in enumerate(ordered_pieces(linktype, records)):
            write("http", f"{stem}-{n}", http_seed(pieces))
        for n, (_, (_, server)) in enumerate(streams(linktype, records).items()):
            try:
                responses = list(split_responses(b"".join(server)))
            except (ValueError, IndexError):
                continue  # a sample with a gap: its framing is not for seeds
            for m, (head, raw, body) in enumerate(responses):
                lower = head.lower()
                coding = re.search(r"\r\ncontent-encoding:([^\r\n]*)", lower)
                codings = [c.strip() for c in coding.group(1).split(",")] if coding else []
                if "transfer-encoding: chunked" in lower and raw:
                    control = 0x07 | (0x80 if codings == ["gzip"] else 0)
                    write("chunked", f"{stem}-{n}-{m}", bytes([control]) + raw)
                if codings and body and all(c in CODING_INDEX for c in codings) and len(codings) <= 3:
                    indices = [CODING_INDEX[c] for c in codings] + [0] * (3 - len(codings))
                    write("content", f"{stem}-{n}-{m}", bytes([len(codings)] + indices + [0xFF]) + body)
    # Tunnels and link types (issue 28): the small IPv6 sample in every wrapping, frames only.
    tunnels = os.path.join(SAMPLES, "tunnels")
    for name in sorted(n for n in os.listdir(tunnels) if n.startswith("http-ipv6--") and n.endswith(".pcap")):
        linktype, records = read_pcap(os.path.join(tunnels, name))
        write("packets", "tunnel-" + name[len("http-ipv6--"):-5], packets_seed(linktype, records))
    # Hand-made edge cases the samples lack.
    write("chunked", "extensions-trailer", b"\x00" + b"5;a=b\r\nhello\r\n0\r\nX-T: 1\r\n\r\n")
    write("chunked", "bare-lf", b"\x00" + b"3\nabc\n0\n\n")
    write("content", "identity", bytes([1, 0, 0, 0, 0xFF]) + b"plain body")
    write("http", "upgrade", http_seed([
        (0, b"GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"),
        (1, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello"),
        (0, b"\x81\x85abcd1234x")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
