import Testing
import TrafficTLS

/// The suite table: sizes from the RFCs that define each suite.
@Suite struct TLSCipherParametersTests {
    typealias P = TLSCipherParameters

    @Test(arguments: [
        // suite, version, cipher, mac, hash, key, mac key, fixed IV, record IV, tag/MAC
        (0x1301, TLSVersion.tls13, P.Cipher.aes128GCM, P.MAC.aead, TLSHashAlgorithm.sha256, 16, 0, 12, 0, 16),
        (0x1302, .tls13, .aes256GCM, .aead, .sha384, 32, 0, 12, 0, 16),
        (0x1303, .tls13, .chacha20Poly1305, .aead, .sha256, 32, 0, 12, 0, 16),
        // RFC 5288 §3: 4-byte salt + 8-byte explicit nonce.
        (0xc02f, .tls12, .aes128GCM, .aead, .sha256, 16, 0, 4, 8, 16),
        (0xc02b, .tls12, .aes128GCM, .aead, .sha256, 16, 0, 4, 8, 16),
        (0x009c, .tls12, .aes128GCM, .aead, .sha256, 16, 0, 4, 8, 16),
        (0xc030, .tls12, .aes256GCM, .aead, .sha384, 32, 0, 4, 8, 16),
        (0x009f, .tls12, .aes256GCM, .aead, .sha384, 32, 0, 4, 8, 16),
        (0x00a9, .tls12, .aes256GCM, .aead, .sha384, 32, 0, 4, 8, 16),
        // RFC 7905 §2: 12-byte IV from the key block, no explicit nonce.
        (0xcca8, .tls12, .chacha20Poly1305, .aead, .sha256, 32, 0, 12, 0, 16),
        (0xccae, .tls12, .chacha20Poly1305, .aead, .sha256, 32, 0, 12, 0, 16),
        // RFC 5246 §6.2.3.2 / §A.6: CBC has a 16-byte record IV, the MAC key as long as the MAC.
        (0xc013, .tls12, .aes128CBC, .hmacSHA1, .sha256, 16, 20, 0, 16, 20),
        (0x0035, .tls12, .aes256CBC, .hmacSHA1, .sha256, 32, 20, 0, 16, 20),
        (0x002f, .tls11, .aes128CBC, .hmacSHA1, .sha256, 16, 20, 0, 16, 20),
        (0x003c, .tls12, .aes128CBC, .hmacSHA256, .sha256, 16, 32, 0, 16, 32),
        (0x006b, .tls12, .aes256CBC, .hmacSHA256, .sha256, 32, 32, 0, 16, 32),
        (0xc028, .tls12, .aes256CBC, .hmacSHA384, .sha384, 32, 48, 0, 16, 48),
        (0x00af, .tls12, .aes256CBC, .hmacSHA384, .sha384, 32, 48, 0, 16, 48),
    ])
    func sizes(
        _ suite: Int, _ version: TLSVersion, _ cipher: P.Cipher, _ mac: P.MAC, _ hash: TLSHashAlgorithm,
        _ key: Int, _ macKey: Int, _ fixedIV: Int, _ recordIV: Int, _ tag: Int
    ) throws {
        let p = try #require(P(suite: TLSCipherSuite(rawValue: UInt16(suite)), version: version))
        #expect(p.cipher == cipher && p.mac == mac && p.hash == hash)
        #expect(
            [p.keyLength, p.macKeyLength, p.fixedIVLength, p.recordIVLength, p.tagOrMACLength]
                == [key, macKey, fixedIV, recordIV, tag])
    }

    /// Suites outside the table, and suites under a version they don't belong to.
    @Test(arguments: [
        (0x1304, TLSVersion.tls13),  // AES-128-CCM: not in swift-crypto
        (0x1301, .tls12), (0xc02f, .tls13), (0xc02f, .tls11),
        (0xcca8, .tls11), (0x003c, .tls11),  // AEAD and SHA-256 MACs are TLS 1.2 only
        (0x002f, .tls10), (0x002f, .ssl3),  // TLS 1.0 CBC chains its IV: out of scope
        (0x000a, .tls12),  // 3DES
        (0x0005, .tls12),  // RC4
        (0xc0ac, .tls12),  // AES-CCM
        (0x0000, .tls12), (0xffff, .tls12),
    ])
    func unsupported(_ suite: Int, _ version: TLSVersion) {
        #expect(P(suite: TLSCipherSuite(rawValue: UInt16(suite)), version: version) == nil)
    }

    /// Every TLS 1.2 suite that is named in TLSCipherSuite+Names with GCM, CHACHA20 or AES_xxx_CBC is in the table.
    @Test func namedSuitesAreCovered() {
        for raw in UInt16.min...UInt16.max {
            let suite = TLSCipherSuite(rawValue: raw)
            guard let name = suite.knownName, !name.hasPrefix("TLS_AES_"), !name.hasPrefix("TLS_CHACHA20") else {
                continue
            }
            let decryptable = ["AES_128_GCM", "AES_256_GCM", "CHACHA20_POLY1305", "AES_128_CBC", "AES_256_CBC"]
                .contains { name.contains($0) }
            #expect((P(suite: suite, version: .tls12) != nil) == decryptable, "\(name)")
        }
    }
}
