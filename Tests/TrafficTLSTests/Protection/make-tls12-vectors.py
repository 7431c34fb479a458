#!/usr/bin/env python3
"""Writes TLSProtectionVectors.swift: TLS 1.1/1.2 (and a few TLS 1.3) records sealed by an implementation
independent of TrafficTLS, for its record-protection tests.

The PRF is Python's hmac/hashlib (checked below against the published TLS 1.2 PRF test vectors before anything is
written); AES-GCM, ChaCha20-Poly1305, AES-CBC and HKDF-Expand come from the `cryptography` package (pip install
cryptography). Every input is derived from a fixed label, so the output is the same on every run:

    python3 Tests/TrafficTLSTests/Protection/make-tls12-vectors.py > Tests/TrafficTLSTests/Protection/TLSProtectionVectors.swift
"""
import hashlib
import hmac
import struct

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand


def det(label, n):
    """n deterministic bytes named by label (SHA-256 in counter mode)."""
    out = b""
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(f"{label}/{counter}".encode()).digest()
        counter += 1
    return out[:n]


# --- PRFs (RFC 5246 §5, RFC 4346 §5) -------------------------------------------------------------------------------

def p_hash(digest, secret, seed, n):
    out, a = b"", seed
    while len(out) < n:
        a = hmac.new(secret, a, digest).digest()
        out += hmac.new(secret, a + seed, digest).digest()
    return out[:n]


def prf12(digest, secret, label, seed, n):
    return p_hash(digest, secret, label + seed, n)


def prf10(secret, label, seed, n):
    half = (len(secret) + 1) // 2
    md5 = p_hash(hashlib.md5, secret[:half], label + seed, n)
    sha = p_hash(hashlib.sha1, secret[-half:], label + seed, n)
    return bytes(a ^ b for a, b in zip(md5, sha))


# The "TLS 1.2 PRF test vectors" posted to the IETF TLS WG list (SHA-256 and SHA-384), as reproduced in several
# independent test suites: the PRF above must reproduce them before it is trusted with anything else.
assert prf12(hashlib.sha256, bytes.fromhex("9bbe436ba940f017b17652849a71db35"), b"test label",
             bytes.fromhex("a0ba9f936cda311827a6f796ffd5198c"), 100).hex() == (
    "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e14baf9af0fa022f707"
    "7def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff70187347b66")
assert prf12(hashlib.sha384, bytes.fromhex("b80b733d6ceefcdc71566ea48e5567df"), b"test label",
             bytes.fromhex("cd665cf6a8447dd6ff8b27555edb7465"), 148).hex() == (
    "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cde9ca0faa60be9fe34f82b1233c9146a0e534cb400fed"
    "2700884f9dc236f80edd8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d9184259b5bf8cd4d90fa0d31e2dec4"
    "79e4f1a26066f2eea9a69236a3e52655c9e9aee691c8f3a26854308d5eaa3be85e0990703d73e56f")


# --- TLS 1.1/1.2 record protection ---------------------------------------------------------------------------------

# suite: (name, cipher, key length, fixed IV, MAC hash or None, PRF hash)
SUITES = {
    0xC02F: ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "gcm", 16, 4, None, hashlib.sha256),
    0xC030: ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "gcm", 32, 4, None, hashlib.sha384),
    0xCCA8: ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "chacha", 32, 12, None, hashlib.sha256),
    0xC013: ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "cbc", 16, 0, hashlib.sha1, hashlib.sha256),
    0x002F: ("TLS_RSA_WITH_AES_128_CBC_SHA", "cbc", 16, 0, hashlib.sha1, hashlib.sha256),
    0x003D: ("TLS_RSA_WITH_AES_256_CBC_SHA256", "cbc", 32, 0, hashlib.sha256, hashlib.sha256),
    0xC028: ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "cbc", 32, 0, hashlib.sha384, hashlib.sha384),
}


class Connection:
    def __init__(self, name, suite, version, etm=False):
        self.name, self.suite, self.version, self.etm = name, suite, version, etm
        _, self.cipher, key_len, iv_len, mac, prf_hash = SUITES[suite]
        self.mac = mac
        mac_len = mac().digest_size if mac else 0
        self.master = det(name + "/master", 48)
        self.client_random = det(name + "/client_random", 32)
        self.server_random = det(name + "/server_random", 32)
        n = 2 * (mac_len + key_len + iv_len)
        seed = self.server_random + self.client_random
        if version == 0x0302:
            self.key_block = prf10(self.master, b"key expansion", seed, n)
        else:
            self.key_block = prf12(prf_hash, self.master, b"key expansion", seed, n)
        kb, o = self.key_block, 0
        parts = []
        for length in (mac_len, mac_len, key_len, key_len, iv_len, iv_len):
            parts.append(kb[o:o + length])
            o += length
        self.keys = {
            True: dict(mac=parts[0], key=parts[2], iv=parts[4]),
            False: dict(mac=parts[1], key=parts[3], iv=parts[5]),
        }
        self.records = []

    def seal(self, from_client, seq, ctype, plaintext, explicit=None, extra_padding=0, break_padding=False):
        k = self.keys[from_client]
        ver = struct.pack(">H", self.version)
        def pseudo(length):
            return struct.pack(">Q", seq) + bytes([ctype]) + ver + struct.pack(">H", length)
        if self.cipher == "gcm":
            explicit = explicit or det(f"{self.name}/nonce/{seq}", 8)
            nonce = k["iv"] + explicit
            body = explicit + AESGCM(k["key"]).encrypt(nonce, plaintext, pseudo(len(plaintext)))
        elif self.cipher == "chacha":
            nonce = bytes(a ^ b for a, b in zip(k["iv"], b"\0\0\0\0" + struct.pack(">Q", seq)))
            body = ChaCha20Poly1305(k["key"]).encrypt(nonce, plaintext, pseudo(len(plaintext)))
        else:
            iv = explicit or det(f"{self.name}/iv/{seq}", 16)
            def pad(data):
                n = (16 - (len(data) + 1) % 16) % 16 + 16 * extra_padding
                padding = bytes([n]) * (n + 1)
                if break_padding:
                    # A padding byte that differs from the length byte, one before the last.
                    padding = padding[:-2] + bytes([n ^ 0x01]) + padding[-1:]
                    assert n >= 1
                return data + padding
            def encrypt(data):
                e = Cipher(algorithms.AES(k["key"]), modes.CBC(iv)).encryptor()
                return e.update(data) + e.finalize()
            if self.etm:
                sent = iv + encrypt(pad(plaintext))
                body = sent + hmac.new(k["mac"], pseudo(len(sent)) + sent, self.mac).digest()
            else:
                mac = hmac.new(k["mac"], pseudo(len(plaintext)) + plaintext, self.mac).digest()
                body = iv + encrypt(pad(plaintext + mac))
        record = bytes([ctype]) + ver + struct.pack(">H", len(body)) + body
        self.records.append((from_client, seq, ctype, plaintext, record, "badPadding" if break_padding else None))
        return self


REQUEST = b"GET /api/items?page=2 HTTP/1.1\r\nHost: example.com\r\nCookie: id=42\r\n\r\n"
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
FINISHED = bytes([20, 0, 0, 12]) + det("finished", 12)  # a handshake record: type 22
ALERT = bytes([1, 0])  # close_notify: type 21

tls12 = [
    Connection("aes128gcm", 0xC02F, 0x0303)
        .seal(True, 0, 22, FINISHED).seal(True, 1, 23, REQUEST).seal(False, 1, 23, RESPONSE),
    Connection("aes256gcm-sha384", 0xC030, 0x0303)
        .seal(True, 0, 22, FINISHED).seal(False, 7, 23, RESPONSE).seal(False, 8, 23, b""),
    Connection("chacha20", 0xCCA8, 0x0303)
        .seal(True, 0, 22, FINISHED).seal(True, 1, 23, REQUEST).seal(False, 300, 23, RESPONSE * 40),
    Connection("aes128cbc-sha-mte", 0xC013, 0x0303)
        .seal(True, 0, 22, FINISHED).seal(True, 1, 23, REQUEST).seal(False, 1, 23, RESPONSE, extra_padding=3)
        .seal(False, 2, 21, ALERT).seal(True, 2, 23, b"")
        .seal(False, 3, 23, REQUEST, extra_padding=1, break_padding=True),
    Connection("aes128cbc-sha-etm", 0xC013, 0x0303, etm=True)
        .seal(True, 0, 22, FINISHED).seal(True, 1, 23, REQUEST).seal(False, 1, 23, RESPONSE, extra_padding=15)
        .seal(False, 2, 23, REQUEST, extra_padding=1, break_padding=True),
    Connection("aes256cbc-sha256", 0x003D, 0x0303)
        .seal(True, 0, 22, FINISHED).seal(False, 1, 23, RESPONSE),
    Connection("aes256cbc-sha384", 0xC028, 0x0303)
        .seal(True, 0, 22, FINISHED).seal(True, 1, 23, REQUEST).seal(False, 1, 23, RESPONSE),
    Connection("tls11-aes128cbc-sha", 0x002F, 0x0302)
        .seal(True, 0, 22, FINISHED).seal(False, 1, 23, RESPONSE),
]


# --- TLS 1.3 records beyond RFC 8448's AES-128-GCM (RFC 8446 §5.2, §7.1-7.3) --------------------------------------

def expand_label(algorithm, secret, label, context, length):
    full = b"tls13 " + label
    info = struct.pack(">H", length) + bytes([len(full)]) + full + bytes([len(context)]) + context
    return HKDFExpand(algorithm=algorithm, length=length, info=info).derive(secret)


class Connection13:
    SUITES = {
        0x1301: ("aesgcm", 16, hashes.SHA256()),
        0x1302: ("aesgcm", 32, hashes.SHA384()),
        0x1303: ("chacha", 32, hashes.SHA256()),
    }

    def __init__(self, name, suite, key_updates=0):
        self.name, self.suite = name, suite
        self.aead, key_len, self.algorithm = self.SUITES[suite]
        self.secret = det(name + "/traffic_secret_0", self.algorithm.digest_size)
        self.updated = self.secret
        for _ in range(key_updates):
            self.updated = expand_label(self.algorithm, self.updated, b"traffic upd", b"",
                                        self.algorithm.digest_size)
        self.key_updates = key_updates
        self.key = expand_label(self.algorithm, self.updated, b"key", b"", key_len)
        self.iv = expand_label(self.algorithm, self.updated, b"iv", b"", 12)
        self.records = []

    def seal(self, seq, ctype, content, padding=0):
        inner = content + bytes([ctype]) + bytes(padding)
        header = bytes([23, 3, 3]) + struct.pack(">H", len(inner) + 16)
        nonce = bytes(a ^ b for a, b in zip(self.iv, b"\0\0\0\0" + struct.pack(">Q", seq)))
        aead = AESGCM(self.key) if self.aead == "aesgcm" else ChaCha20Poly1305(self.key)
        record = header + aead.encrypt(nonce, inner, header)
        self.records.append((seq, ctype, content, record))
        return self


tls13 = [
    Connection13("tls13-aes256gcm", 0x1302).seal(0, 22, FINISHED).seal(1, 23, RESPONSE, padding=100),
    Connection13("tls13-chacha20", 0x1303).seal(0, 23, REQUEST).seal(2**32 + 5, 21, ALERT, padding=3),
    Connection13("tls13-keyupdate", 0x1301, key_updates=2).seal(0, 23, REQUEST),
]


# --- Swift output --------------------------------------------------------------------------------------------------

def hx(data):
    return '"' + data.hex() + '"'


def wrap(data, indent):
    """A hex string literal, split into 64-digit pieces joined with +."""
    text = data.hex()
    if len(text) <= 64:
        return '"' + text + '"'
    pieces = [text[i:i + 64] for i in range(0, len(text), 64)]
    return ("\n" + " " * indent + "+ ").join('"' + p + '"' for p in pieces)


print("// Generated by make-tls12-vectors.py (Python hmac/hashlib + the `cryptography` package); do not edit.")
print("// Regenerate: python3 Tests/TrafficTLSTests/Protection/make-tls12-vectors.py > \\")
print("//     Tests/TrafficTLSTests/Protection/TLSProtectionVectors.swift")
print()
print("/// TLS 1.1/1.2 connections: the key-log inputs, the PRF key block, and records sealed from them.")
print("enum TLS12Vectors {")
print("    static let connections: [TLS12VectorConnection] = [")
for c in tls12:
    print("        TLS12VectorConnection(")
    print(f"            name: \"{c.name}\", suite: 0x{c.suite:04x}, version: 0x{c.version:04x}, "
          f"encryptThenMAC: {'true' if c.etm else 'false'},")
    print(f"            masterSecret: {wrap(c.master, 16)},")
    print(f"            clientRandom: {hx(c.client_random)},")
    print(f"            serverRandom: {hx(c.server_random)},")
    print(f"            keyBlock: {wrap(c.key_block, 16)},")
    print("            records: [")
    for from_client, seq, ctype, plaintext, record, error in c.records:
        err = f".{error}" if error else "nil"
        comma = "," if len(c.records) > 1 else ""  # as swift-format leaves a one-element list
        print(f"                TLSVectorRecord(")
        print(f"                    fromClient: {'true' if from_client else 'false'}, sequence: {seq:_}, "
              f"contentType: {ctype}, error: {err},")
        print(f"                    plaintext: {wrap(plaintext, 24)},")
        print(f"                    record: {wrap(record, 24)}){comma}")
    print("            ]),")
print("    ]")
print("}")
print()
print("/// TLS 1.3 connections in one direction: a traffic secret (after `keyUpdates` KeyUpdates, RFC 8446 §7.2),")
print("/// the key and iv HKDF derives from it, and records sealed with them.")
print("enum TLS13Vectors {")
print("    static let connections: [TLS13VectorConnection] = [")
for c in tls13:
    print("        TLS13VectorConnection(")
    print(f"            name: \"{c.name}\", suite: 0x{c.suite:04x}, keyUpdates: {c.key_updates},")
    print(f"            trafficSecret0: {wrap(c.secret, 16)},")
    print(f"            trafficSecret: {wrap(c.updated, 16)},")
    print(f"            key: {hx(c.key)}, iv: {hx(c.iv)},")
    print("            records: [")
    for seq, ctype, content, record in c.records:
        comma = "," if len(c.records) > 1 else ""
        print(f"                TLSVectorRecord(")
        print(f"                    fromClient: true, sequence: {seq:_}, contentType: {ctype}, error: nil,")
        print(f"                    plaintext: {wrap(content, 24)},")
        print(f"                    record: {wrap(record, 24)}){comma}")
    print("            ]),")
print("    ]")
print("}")
