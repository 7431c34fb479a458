#!/usr/bin/env python3
"""Writes the hostile and broken captures of samples/malformed/ (see README.md there).

Python 3 standard library only; classic pcap files written byte by byte, so every case is exactly the
damage it names. Deterministic: re-running it rewrites identical files.

    python3 samples/malformed/make-malformed.py            # all committed cases, into this folder
    python3 samples/malformed/make-malformed.py --syn-flood OUT.pcap.gz [COUNT]
                                                           # the 1 M-SYN flood, made by the tests at run time
    python3 samples/malformed/make-malformed.py --tiny-segments OUT.pcap [COUNT]
                                                           # 200 k held 1-byte segments, also made at run time
    python3 samples/malformed/make-malformed.py --fragment-flood OUT.pcap [COUNT]
                                                           # 1 M empty IPv4 fragments, also made at run time
    python3 samples/malformed/make-malformed.py --interim-flood OUT.pcap [COUNT]
                                                           # 100 k `100 Continue` responses, also made at run time
"""
import gzip
import os
import random
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT, SERVER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
MSS = 1448
T0 = 1_704_067_200  # 2024-01-01T00:00:00Z

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


# MARK: pcap and frames

def pcap_header(linktype=1, snaplen=65535):
    return struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)


def record(frame, time, caplen=None, length=None):
    seconds, micros = int(time), int(round((time - int(time)) * 1e6))
    caplen = len(frame) if caplen is None else caplen
    return struct.pack("<IIII", seconds, micros, caplen, len(frame) if length is None else length) + frame


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(src, dst, payload, proto=6, ihl=5, ident=0):
    header = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(payload), ident, 0x4000, 64, proto, 0, src, dst)
    return header[:10] + struct.pack("!H", checksum(header)) + header[12:] + payload


def tcp(src, dst, sport, dport, seq, ack, flags, payload=b"", data_offset=5):
    header = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                         data_offset << 4, flags, 65535, 0, 0)
    pseudo = struct.pack("!4s4sBBH", src, dst, 0, 6, len(header) + len(payload))
    csum = checksum(pseudo + header + payload)
    return header[:16] + struct.pack("!H", csum) + header[18:] + payload


def ethernet(ip_packet):
    return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ip_packet


def frame(src, dst, sport, dport, seq, ack, flags, payload=b""):
    return ethernet(ipv4(src, dst, tcp(src, dst, sport, dport, seq, ack, flags, payload)))


class Connection:
    """Writes the frames of one TCP connection: handshake, data segmented at the MSS, teardown."""

    def __init__(self, sport=40000, dport=80, time=T0):
        self.sport, self.dport, self.time = sport, dport, time
        self.cseq, self.sseq = 1000, 5000
        self.records = []

    def emit(self, to_server, flags, payload=b"", seq=None):
        self.time += 0.001
        if to_server:
            f = frame(CLIENT, SERVER, self.sport, self.dport, self.cseq if seq is None else seq, self.sseq, flags, payload)
        else:
            f = frame(SERVER, CLIENT, self.dport, self.sport, self.sseq if seq is None else seq, self.cseq, flags, payload)
        self.records.append(record(f, self.time))

    def handshake(self):
        self.emit(True, SYN)
        self.cseq += 1
        self.emit(False, SYN | ACK)
        self.sseq += 1
        self.emit(True, ACK)
        return self

    def send(self, to_server, data, segment=MSS):
        for i in range(0, len(data), segment):
            piece = data[i:i + segment]
            self.emit(to_server, PSH | ACK, piece)
            if to_server:
                self.cseq += len(piece)
            else:
                self.sseq += len(piece)
        return self

    def close(self):
        self.emit(True, FIN | ACK)
        self.cseq += 1
        self.emit(False, FIN | ACK)
        self.sseq += 1
        self.emit(True, ACK)
        return self

    def exchange(self, request, response, segment=MSS):
        return self.send(True, request, segment).send(False, response, segment)


def http_get(path=b"/", extra=b""):
    return b"GET " + path + b" HTTP/1.1\r\nHost: example.test\r\n" + extra + b"\r\n"


def http_ok(body, extra=b""):
    return (b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body)


def good_connection(sport=40000, time=T0):
    """Two complete exchanges: the still-valid part that every damaged capture must keep reporting."""
    c = Connection(sport=sport, time=time).handshake()
    c.exchange(http_get(b"/ok/1"), http_ok(b"a" * 100)).exchange(http_get(b"/ok/2"), http_ok(b"b" * 3000))
    return c.close()


def write(name, data):
    path = os.path.join(HERE, name)
    if name.endswith(".gz"):
        # mtime 0 and no name: the same bytes on every run.
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


def capture(records, linktype=1, snaplen=65535):
    return pcap_header(linktype, snaplen) + b"".join(records)


# MARK: files

def files():
    write("empty.pcap", b"")
    write("random-bytes.pcap", random.Random(8).randbytes(4096))
    write("header-only.pcap", pcap_header())
    # A record of 4054 captured bytes in a file whose snaplen is 2000: libpcap reads the first 2000, skips
    # the rest, and must find the next record (a second good connection) right after it.
    big = record(frame(CLIENT, SERVER, 40001, 80, 1, 0, PSH | ACK, b"x" * 4000), T0 + 1)
    after = good_connection(sport=40002, time=T0 + 2).records
    write("caplen-over-snaplen.pcap", capture(good_connection().records + [big] + after, snaplen=2000))
    # The last record's header claims 1500 bytes; the file ends 10 bytes into them.
    good = good_connection().records
    write("record-past-eof.pcap", capture(good) + struct.pack("<IIII", T0 + 2, 0, 1500, 1500) + b"\0" * 10)
    # A record length no capture can have (above libpcap's 256 KiB maximum): reading must stop there.
    write("record-huge-caplen.pcap", capture(good) + struct.pack("<IIII", T0 + 2, 0, 0x7FFFFFF0, 0x7FFFFFF0) + b"\0" * 64)
    # 802.11 with radiotap headers (DLT 127): not a link type traffic decodes.
    write("linktype-radiotap.pcap", capture([record(b"\0\0\x08\0\0\0\0\0" + b"\x80\0" + b"\0" * 30, T0)], linktype=127))


# MARK: headers

def headers():
    c = good_connection()
    bad = []
    for ihl in (0, 1, 4):
        # Version 4 with a header length of ihl*4 < 20 bytes.
        ip = ipv4(CLIENT, SERVER, tcp(CLIENT, SERVER, 40002, 80, 1, 0, ACK))
        bad.append(record(ethernet(bytes([0x40 | ihl]) + ip[1:]), c.time + 0.1 + ihl))
    write("ipv4-ihl-below-20.pcap", capture(c.records + bad))
    # Data offset 15 (60 bytes) in a 20-byte TCP header with no payload: past the end of the packet.
    c = good_connection()
    bad = [record(ethernet(ipv4(CLIENT, SERVER, tcp(CLIENT, SERVER, 40003, 80, 1, 0, ACK, data_offset=15))), c.time + 1),
           record(ethernet(ipv4(CLIENT, SERVER, tcp(CLIENT, SERVER, 40003, 80, 1, 0, PSH | ACK, b"GET / HTTP/1.1\r\n",
                                                    data_offset=15))), c.time + 2)]
    write("tcp-offset-past-end.pcap", capture(c.records + bad))


# MARK: reassembly

def overlap():
    """Conflicting copies of the same stream bytes: the first copy seen is the one delivered."""
    c = Connection().handshake()
    request = http_get(b"/first")          # "GET /first HTTP/1.1..."
    conflict = http_get(b"/evil!")         # same length, different bytes in the path
    base = c.cseq
    # Out of order: bytes 4..10 ("/first") arrive first, then a conflicting copy ("/evil!"), then 0..4, then the rest.
    c.emit(True, PSH | ACK, request[4:10], seq=base + 4)
    c.emit(True, PSH | ACK, conflict[4:10], seq=base + 4)
    c.emit(True, PSH | ACK, request[0:4], seq=base)
    c.emit(True, PSH | ACK, request[10:], seq=base + 10)
    c.cseq += len(request)
    # In order, then a retransmission of the same range with other bytes: it must be ignored.
    response = http_ok(b"first copy wins")
    c.send(False, response)
    c.emit(False, PSH | ACK, http_ok(b"SECOND COPY XXX"), seq=c.sseq - len(response))
    write("overlap-conflict.pcap", capture(c.close().records))


def syn_flood(path, count=1_000_000):
    """`count` SYNs, each opening a new connection (distinct source address/port), none ever answered."""
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0, filename="") as out:
        out.write(pcap_header())
        template = frame(CLIENT, SERVER, 1, 80, 0, 0, SYN)
        for n in range(count):
            src = bytes([10, 1 + (n >> 16), (n >> 8) & 0xFF, n & 0xFF])
            sport = 1024 + n % 60000
            # Patch source address and port into the template: building each frame would take minutes.
            f = bytearray(template)
            f[26:30] = src
            f[34:36] = struct.pack("!H", sport)
            f[38:42] = struct.pack("!I", n * 7919 & 0xFFFFFFFF)
            out.write(struct.pack("<IIII", T0 + n // 100_000, (n % 100_000) * 10, len(f), len(f)))
            out.write(f)


def tiny_segments(path, count=200_000):
    """One connection whose client sends `count` 1-byte segments, each beyond a 1-byte hole, none ever filled:
    every one must be held out of order until the reassembler's caps give holes up."""
    c = Connection().handshake()
    base = c.cseq
    with open(path, "wb") as out:
        out.write(pcap_header() + b"".join(c.records))
        for n in range(count):
            f = frame(CLIENT, SERVER, c.sport, c.dport, base + 2 * n + 1, c.sseq, PSH | ACK, b"x")
            out.write(record(f, c.time + n * 1e-5))


def fragment_flood(path, count=1_000_000):
    """`count` IPv4 first fragments (MF set, offset 0) that carry no bytes, each its own datagram
    (distinct source and identification), none ever completed: each costs a table entry, never a byte."""
    with open(path, "wb") as out:
        out.write(pcap_header())
        for n in range(count):
            src = bytes([10, 2 + (n >> 24 & 0x3F), (n >> 16) & 0xFF, (n >> 8) & 0xFF])
            header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20, n & 0xFFFF, 0x2000, 64, 6, 0, src, SERVER)
            out.write(record(ethernet(header), T0 + n * 1e-6))


def interim_flood(path, count=100_000):
    """One request answered by `count` `100 Continue` interim responses, then a 200."""
    c = Connection().handshake()
    c.exchange(http_get(b"/upload"), b"HTTP/1.1 100 Continue\r\n\r\n" * count + http_ok(b"done"))
    with open(path, "wb") as out:
        out.write(capture(c.close().records))


# MARK: HTTP framing

def framing():
    def response_case(name, head_extra, body, request=http_get(b"/framed")):
        c = good_connection()
        d = Connection(sport=40010, time=c.time).handshake()
        d.exchange(request, b"HTTP/1.1 200 OK\r\n" + head_extra + b"\r\n" + body)
        write(name, capture(c.records + d.close().records))

    response_case("content-length-2e64.pcap", b"Content-Length: 18446744073709551616\r\n", b"body after a bad length")
    response_case("content-length-negative.pcap", b"Content-Length: -1\r\n", b"body after a bad length")
    response_case("chunk-size-overflow.pcap", b"Transfer-Encoding: chunked\r\n",
                  b"10000000000000000\r\n" + b"x" * 64 + b"\r\n0\r\n\r\n")
    # A request with one 1 MiB header line, then a normal request on the same connection.
    c = good_connection()
    d = Connection(sport=40011, time=c.time).handshake()
    d.exchange(http_get(b"/long-line", b"X-Long: " + b"a" * (1 << 20) + b"\r\n"), http_ok(b"ok"))
    d.exchange(http_get(b"/after-long-line"), http_ok(b"ok"))
    write("header-line-1mib.pcap.gz", capture(c.records + d.close().records))
    # A request with 100 000 header fields.
    c = good_connection()
    d = Connection(sport=40012, time=c.time).handshake()
    fields = b"".join(b"X-F%d: v\r\n" % n for n in range(100_000))
    d.exchange(http_get(b"/many-fields", fields), http_ok(b"ok"))
    d.exchange(http_get(b"/after-many-fields"), http_ok(b"ok"))
    write("header-fields-100k.pcap.gz", capture(c.records + d.close().records))


# MARK: decoding

def decoding():
    def coded_response(name, coding, body):
        c = good_connection()
        d = Connection(sport=40020, time=c.time).handshake()
        d.exchange(http_get(b"/coded"), http_ok(body, b"Content-Encoding: " + coding + b"\r\n"))
        write(name, capture(c.records + d.close().records))

    # 1 GiB + 1 MiB of zeros gzipped (about 1 MiB): past the default 1 GiB cap. The pcap is committed
    # gzipped again, which shrinks the repetitive deflate stream to a few KiB.
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    bomb = b"".join(deflater.compress(chunk) for _ in range(1025)) + deflater.flush()
    coded_response("gzip-bomb.pcap.gz", b"gzip", bomb)
    whole = gzip.compress(b"hello, truncated world " * 200, mtime=0)
    coded_response("gzip-truncated.pcap", b"gzip", whole[:len(whole) // 2])
    coded_response("br-bogus.pcap", b"br", random.Random(9).randbytes(512))


# MARK: timestamps

def timestamps():
    # Two files joined with `mergecap -a`, the later one first: the clock steps back 100 s at the join.
    write("timestamps-backwards.pcap", capture(
        good_connection(sport=40000, time=T0 + 100).records + good_connection(sport=40001, time=T0).records))
    # Every timestamp zero (some capture tools write none).
    zero = good_connection().records
    write("timestamps-zero.pcap", capture([struct.pack("<II", 0, 0) + r[8:] for r in zero]))
    # The largest second count a pcap record holds (2106-02-07): the last packets stand at 0xFFFFFFFF s.
    write("timestamps-max.pcap", capture(good_connection(time=0xFFFFFFFF - 0.006).records))
    # The clock steps back 1000 s inside a connection, after its handshake.
    c = Connection(time=T0 + 1000).handshake()
    c.time = T0
    c.exchange(http_get(b"/ok/1"), http_ok(b"a" * 100)).exchange(http_get(b"/ok/2"), http_ok(b"b" * 3000))
    write("timestamps-jump-back.pcap", capture(c.close().records))
    # Zero, then the largest second count, inside one connection: a jump past every idle timeout.
    c = Connection(time=0).handshake()
    c.time = 0xFFFFFFFF - 0.02
    c.exchange(http_get(b"/ok/1"), http_ok(b"a" * 100)).exchange(http_get(b"/ok/2"), http_ok(b"b" * 3000))
    write("timestamps-jump-forward.pcap", capture(c.close().records))


# MARK: scope (traffic seen but not analysed)

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty SETTINGS frame (RFC 9113 §6.5)
H2_SETTINGS_ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"


def scope():
    # Cleartext HTTP/2 with prior knowledge (RFC 9113 §3.3): the client opens with the preface.
    c = Connection(dport=8080).handshake().send(True, H2_PREFACE + H2_SETTINGS).send(False, H2_SETTINGS)
    # The same after an h2c upgrade (RFC 7540 §3.2): a GET with `Upgrade: h2c`, `101`, then the preface.
    d = Connection(sport=40001, time=T0 + 1).handshake()
    d.send(True, http_get(b"/upgrade", b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"))
    d.send(False, b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n" + H2_SETTINGS)
    d.send(True, H2_PREFACE + H2_SETTINGS)
    write("h2c-two-connections.pcap", capture(c.close().records + d.close().records))


def h2_frame(ftype, flags, stream, payload=b""):
    """An HTTP/2 frame (RFC 9113 §4.1): 24-bit length, type, flags, 31-bit stream id, payload."""
    return struct.pack("!I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack("!I", stream) + payload


def h2_lit(name, value):
    """HPACK literal without indexing, new name, no Huffman (RFC 7541 §6.2.2); lengths below 127."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def h2_int(prefix_bits, first, value):
    """An HPACK integer (§5.1) with `first` holding the pattern bits above the prefix."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


# :method GET, :scheme http, :path / (static indices 2, 6, 4) and a literal :authority: 3 + 3 + 10 + 7 = 23 bytes.
H2_GET = b"\x82\x86\x84" + h2_lit(b":authority", b"h2.test")
H2_OK = b"\x88"  # :status 200


def h2_connection(sport, time):
    """An h2c connection (prior knowledge) whose stream 1 is a good GET → 200 with a 5-byte body."""
    c = Connection(sport=sport, dport=8080, time=time).handshake()
    c.send(True, H2_PREFACE + H2_SETTINGS + h2_frame(1, 0x5, 1, H2_GET))
    c.send(False, H2_SETTINGS + H2_SETTINGS_ACK + h2_frame(1, 0x4, 1, H2_OK) + h2_frame(0, 0x1, 1, b"hello"))
    c.send(True, H2_SETTINGS_ACK)
    return c


def http2():
    """Hostile HTTP/2 (issue 22): each file holds good_connection() and an h2c connection whose stream 1 is good."""
    # A frame length of 1 MiB, above the default SETTINGS_MAX_FRAME_SIZE (2^14): a connection error for a peer.
    c = h2_connection(40010, T0 + 1)
    c.send(False, struct.pack("!I", 1 << 20)[1:] + b"\x00\x00" + struct.pack("!I", 1) + b"z" * 300)
    write("h2-frame-too-long.pcap", capture(good_connection().records + c.close().records))

    # A CONTINUATION flood: 1 100 frames of 1 000 bytes after a HEADERS without END_HEADERS (1.1 MB > the 1 MiB
    # block limit), then stream 3 with static-table fields only.
    c = h2_connection(40011, T0 + 1)
    flood = h2_frame(1, 0x1, 3, b"\x82\x86\x84") + b"".join(h2_frame(9, 0, 3, b"A" * 1000) for _ in range(1100))
    c.send(True, flood + h2_frame(9, 0x4, 3, b""))
    c.send(True, h2_frame(1, 0x5, 5, b"\x82\x86\x84"))
    c.send(False, h2_frame(1, 0x5, 3, H2_OK) + h2_frame(1, 0x5, 5, H2_OK))
    write("h2-continuation-flood.pcap.gz", capture(good_connection().records + c.close().records))

    # An HPACK integer that overflows (§5.1): an indexed field whose index takes 7 continuation bytes.
    c = h2_connection(40012, T0 + 1)
    c.send(True, h2_frame(1, 0x5, 3, b"\xff" + b"\xff" * 6 + b"\x7f"))
    c.send(False, h2_frame(1, 0x5, 3, H2_OK))
    write("h2-hpack-integer-overflow.pcap", capture(good_connection().records + c.close().records))

    # Table-size abuse: the server allows a 4 GiB table, the client acknowledges and raises its table to
    # 2^31 - 1, then inserts entries of 60 000 bytes, 15 per block (900 KB, under the 1 MiB block limit, each
    # block in HEADERS + CONTINUATION frames of 16 384 bytes): the second block takes the table past the 1 MiB
    # we store, so the decoder goes blind; stream 7 refers to the newest entry.
    c = h2_connection(40013, T0 + 1)
    c.send(False, h2_frame(4, 0, 0, struct.pack("!HI", 1, 0xFFFFFFFF)))
    c.send(True, h2_frame(4, 0x1, 0))
    value = b"v" * 60000
    entries = b"".join(b"\x40\x01x" + h2_int(7, 0, len(value)) + value for _ in range(15))

    def block_frames(stream, block):
        pieces = [block[i:i + 16384] for i in range(0, len(block), 16384)]
        frames = h2_frame(1, 0x1 | (0x4 if len(pieces) == 1 else 0), stream, pieces[0])
        for i, piece in enumerate(pieces[1:], 1):
            frames += h2_frame(9, 0x4 if i == len(pieces) - 1 else 0, stream, piece)
        return frames

    c.send(True, block_frames(3, h2_int(5, 0x20, (1 << 31) - 1) + b"\x82\x86\x84" + entries))
    c.send(True, block_frames(5, b"\x82\x86\x84" + entries))
    c.send(True, h2_frame(1, 0x5, 7, b"\x82\x86\x84\xbe"))
    c.send(False, h2_frame(1, 0x5, 3, H2_OK) + h2_frame(1, 0x5, 5, H2_OK) + h2_frame(1, 0x5, 7, H2_OK))
    write("h2-hpack-table-abuse.pcap.gz", capture(good_connection().records + c.close().records))

    # A block that decodes to megabytes: one 4 000-byte entry, then 60 000 one-byte references to it (§6.1):
    # 240 MB of decoded fields from 60 KB on the wire.
    c = h2_connection(40014, T0 + 1)
    entry = b"\x40\x01x" + h2_int(7, 0, 4000) + b"w" * 4000
    c.send(True, h2_frame(1, 0x5, 3, b"\x82\x86\x84" + entry))
    c.send(True, h2_frame(1, 0x5, 5, b"\x82\x86\x84" + b"\xbe" * 15000)
           + h2_frame(1, 0x5, 7, b"\x82\x86\x84" + b"\xbe" * 15000)
           + h2_frame(1, 0x5, 9, b"\x82\x86\x84" + b"\xbe" * 15000)
           + h2_frame(1, 0x5, 11, b"\x82\x86\x84" + b"\xbe" * 15000))
    c.send(False, b"".join(h2_frame(1, 0x5, s, H2_OK) for s in (3, 5, 7, 9, 11)))
    write("h2-megabyte-block.pcap", capture(good_connection().records + c.close().records))

    # Random bytes after the preface: no trap, the good stream still read.
    c = h2_connection(40015, T0 + 1)
    c.send(True, bytes(random.Random(22).randrange(256) for _ in range(3000)))
    write("h2-random-frames.pcap", capture(good_connection().records + c.close().records))


def main(argv):
    if len(argv) >= 3 and argv[1] == "--syn-flood":
        syn_flood(argv[2], int(argv[3]) if len(argv) > 3 else 1_000_000)
        return 0
    if len(argv) >= 3 and argv[1] == "--fragment-flood":
        fragment_flood(argv[2], int(argv[3]) if len(argv) > 3 else 1_000_000)
        return 0
    if len(argv) >= 3 and argv[1] == "--interim-flood":
        interim_flood(argv[2], int(argv[3]) if len(argv) > 3 else 100_000)
        return 0
    if len(argv) >= 3 and argv[1] == "--tiny-segments":
        tiny_segments(argv[2], int(argv[3]) if len(argv) > 3 else 200_000)
        return 0
    files()
    headers()
    overlap()
    framing()
    decoding()
    timestamps()
    scope()
    http2()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
