#!/usr/bin/env python3
"""Writes the hostile QUIC captures of samples/malformed/ (see README.md there): client Initials protected as
RFC 9001 §5 says (with the `cryptography` package: HKDF, AES-GCM, AES-ECB for header protection), then damage.
Deterministic: re-running it rewrites identical files.

    python3 samples/malformed/make-quic-malformed.py
"""
import hashlib
import hmac
import os
import random
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT, SERVER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
T0 = 1_704_067_200
V1_SALT = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")


def pcap_header():
    return struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def record(frame, time, caplen=None):
    seconds, micros = int(time), int(round((time - int(time)) * 1e6))
    data = frame if caplen is None else frame[:caplen]
    return struct.pack("<IIII", seconds, micros, len(data), len(frame)) + data


def udp_frame(src, dst, sport, dport, payload):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, src, dst)
    return b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + ip + udp


def expand_label(secret, label, length):
    full = b"tls13 " + label
    info = struct.pack("!HB", length, len(full)) + full + b"\x00"
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(secret, block + info + bytes([i]), hashlib.sha256).digest()
        out += block
        i += 1
    return out[:length]


def client_initial_keys(dcid):
    initial = hmac.new(V1_SALT, dcid, hashlib.sha256).digest()
    secret = expand_label(initial, b"client in", 32)
    return expand_label(secret, b"quic key", 16), expand_label(secret, b"quic iv", 12), expand_label(secret, b"quic hp", 16)


def varint(v):
    if v < 1 << 6:
        return bytes([v])
    if v < 1 << 14:
        return struct.pack("!H", 0x4000 | v)
    if v < 1 << 30:
        return struct.pack("!I", 0x80000000 | v)
    return struct.pack("!Q", 0xC000000000000000 | v)


def client_initial(dcid, scid, frames, pn=0, size=1200):
    """A protected client Initial filling a `size`-byte datagram (PADDING frames at the end of the payload)."""
    key, iv, hp = client_initial_keys(dcid)
    pn_bytes = struct.pack("!I", pn)  # 4-byte packet number
    head_len = 1 + 4 + 1 + len(dcid) + 1 + len(scid) + 1 + 2 + 4
    payload = frames + b"\x00" * max(0, size - head_len - 16 - len(frames))
    length = len(pn_bytes) + len(payload) + 16
    header = bytes([0xC3]) + struct.pack("!I", 1) + bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid
    header += b"\x00" + struct.pack("!H", 0x4000 | length) + pn_bytes
    nonce = bytes(a ^ b for a, b in zip(iv, b"\x00" * 8 + pn_bytes))
    sealed = AESGCM(key).encrypt(nonce, payload, header)
    packet = bytearray(header + sealed)
    pn_offset = len(header) - 4
    sample = bytes(packet[pn_offset + 4:pn_offset + 20])
    encryptor = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = encryptor.update(sample) + encryptor.finalize()
    packet[0] ^= mask[0] & 0x0F
    for i in range(4):
        packet[pn_offset + i] ^= mask[1 + i]
    return bytes(packet)


def client_hello(sni):
    """A minimal TLS 1.3 ClientHello: SNI and ALPN h3 (RFC 8446 §4.1.2, RFC 6066 §3, RFC 7301 §3.1)."""
    name = sni.encode()
    sni_ext = struct.pack("!HHHBH", 0, len(name) + 5, len(name) + 3, 0, len(name)) + name
    alpn_ext = struct.pack("!HHHB", 16, 5, 3, 2) + b"h3"
    versions = struct.pack("!HHBH", 43, 3, 2, 0x0304)
    extensions = sni_ext + alpn_ext + versions
    body = struct.pack("!H", 0x0303) + bytes(32) + b"\x00" + struct.pack("!HH", 2, 0x1301) + b"\x01\x00"
    body += struct.pack("!H", len(extensions)) + extensions
    return b"\x01" + struct.pack("!I", len(body))[1:] + body


def crypto_frame(offset, data):
    return b"\x06" + varint(offset) + varint(len(data)) + data


def write(name, records):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(pcap_header())
        for r in records:
            f.write(r)


def main():
    rng = random.Random(23)
    dcid, scid = bytes(range(1, 9)), bytes(range(11, 19))
    c, s = (CLIENT, SERVER, 50000, 443), (SERVER, CLIENT, 443, 50000)

    # CRYPTO data far ahead of the ClientHello (offsets near 2^40 and 2^62 − 2^20), 300 datagrams of ~1 KB: held
    # only up to the connection's CRYPTO cap, never a trap; no ClientHello completes.
    records = []
    for i in range(300):
        offset = (1 << 40) + i * 1000 if i % 2 == 0 else (1 << 62) - (1 << 20) + i * 1000
        frames = crypto_frame(offset, bytes(rng.randrange(256) for _ in range(1000)))
        records.append(record(udp_frame(c[0], c[1], c[2], c[3], client_initial(dcid, scid, frames, pn=i)), T0 + i * 0.001))
    write("quic-crypto-far.pcap", records)

    # A real connection start, then damage on its path: a Length of 2^62 − 1, 8-byte varints everywhere, a datagram
    # cut by the snaplen, a 1-byte short header, an empty datagram, coalesced packets with another DCID.
    records = [record(udp_frame(*c[:2], c[2], c[3], client_initial(dcid, scid, crypto_frame(0, client_hello("bogus.test")))), T0)]
    t = T0 + 0.01
    server_long = bytes([0xC0]) + struct.pack("!I", 1) + bytes([8]) + scid + bytes([8]) + dcid + b"\x00"
    bad = [
        server_long + varint((1 << 62) - 1) + bytes(40),                                # Length past everything
        server_long + b"\xff" * 60,                                                     # varints of all ones
        bytes([0xE0]) + struct.pack("!I", 1) + bytes([255]) + bytes(30),               # DCID length 255
        bytes([0x40]),                                                                 # a 1-byte short header
        b"",                                                                           # empty UDP payload
        server_long + varint(30) + bytes(30) + bytes([0xC0]) + struct.pack("!I", 1) + bytes([8]) + bytes(8) + bytes(20),
        bytes([0x80]) + struct.pack("!I", 0) + bytes([8]) + dcid + bytes([8]) + scid,  # Version Negotiation, no versions
    ]
    for payload in bad:
        records.append(record(udp_frame(s[0], s[1], s[2], s[3], payload), t))
        t += 0.001
    big = server_long + varint(1100) + bytes(rng.randrange(256) for _ in range(1100))
    records.append(record(udp_frame(s[0], s[1], s[2], s[3], big), t, caplen=200))   # cut by the snaplen
    write("quic-bogus-lengths.pcap", records)

    # Datagrams that look like Initials but are not: random bytes under a v1 long header (their tag fails), and
    # long headers of unknown versions that no Version Negotiation answers: no QUIC connection, all other UDP.
    records = []
    for i in range(400):
        version = 1 if i % 2 == 0 else rng.randrange(2, 1 << 32)
        payload = bytes([0xC0 | rng.randrange(16)]) + struct.pack("!I", version) + bytes([8]) + bytes(rng.randrange(256) for _ in range(8))
        payload += bytes([0]) + bytes(rng.randrange(256) for _ in range(1200))
        records.append(record(udp_frame(CLIENT, SERVER, 40000 + i, 443, payload), T0 + i * 0.001))
    write("quic-fake-initials.pcap", records)


if __name__ == "__main__":
    main()
