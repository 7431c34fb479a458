/// What record protection a cipher suite uses: cipher, MAC, PRF/HKDF hash and the key-block sizes
/// (RFC 5246 §6.1 SecurityParameters; RFC 8446 §B.4).
///
/// Only bulk ciphers swift-crypto provides are here: AES-GCM, ChaCha20-Poly1305 and AES-CBC. CCM, CAMELLIA,
/// ARIA, 3DES, RC4 and NULL suites give nil, and so does TLS 1.0/SSL 3.0 CBC, whose IV chains from the
/// previous record (RFC 2246 §6.2.3.2), and every suite under a version it does not belong to.
public struct TLSCipherParameters: Sendable, Equatable {
    public enum Cipher: Sendable, Hashable { case aes128GCM, aes256GCM, chacha20Poly1305, aes128CBC, aes256CBC }
    public enum MAC: Sendable, Hashable { case aead, hmacSHA1, hmacSHA256, hmacSHA384 }

    public var cipher: Cipher
    public var mac: MAC
    /// The PRF hash (TLS 1.2) or HKDF hash (TLS 1.3). TLS 1.1 does not use it: its PRF is P_MD5 ⊕ P_SHA1
    /// (RFC 4346 §5), whatever the suite.
    public var hash: TLSHashAlgorithm
    /// Bulk cipher key (`enc_key_length`).
    public var keyLength: Int
    /// HMAC key (`mac_key_length`); 0 for AEAD.
    public var macKeyLength: Int
    /// The IV part that comes from the key schedule (`fixed_iv_length`): the 4-byte GCM salt (RFC 5288 §3),
    /// ChaCha20's 12-byte IV (RFC 7905 §2), TLS 1.3's 12-byte iv (RFC 8446 §5.3); 0 for CBC.
    public var fixedIVLength: Int
    /// The per-record IV sent in front of the ciphertext (`record_iv_length`): GCM's 8-byte explicit nonce,
    /// CBC's 16-byte IV (RFC 5246 §6.2.3.2); 0 for ChaCha20 and TLS 1.3.
    public var recordIVLength: Int
    /// The AEAD tag (16) or the HMAC output (20, 32, 48) that each record carries.
    public var tagOrMACLength: Int

    /// Whether records are CBC with an HMAC (as opposed to an AEAD).
    public var isCBC: Bool { mac != .aead }

    /// nil = a suite we cannot decrypt (the caller flags `unsupported_cipher`).
    public init?(suite: TLSCipherSuite, version: TLSVersion) {
        let table = version == .tls13 ? Self.tls13Suites : Self.tls12Suites
        guard let family = table[suite.rawValue], family.isAllowed(in: version) else { return nil }
        self = family.parameters(version: version)
    }

    init(
        cipher: Cipher, mac: MAC, hash: TLSHashAlgorithm, keyLength: Int, macKeyLength: Int, fixedIVLength: Int,
        recordIVLength: Int, tagOrMACLength: Int
    ) {
        self.cipher = cipher
        self.mac = mac
        self.hash = hash
        self.keyLength = keyLength
        self.macKeyLength = macKeyLength
        self.fixedIVLength = fixedIVLength
        self.recordIVLength = recordIVLength
        self.tagOrMACLength = tagOrMACLength
    }

    /// The suites that share one record protection.
    enum Family: Sendable, CaseIterable {
        case aes128GCMSHA256, aes256GCMSHA384, chacha20Poly1305SHA256
        case aes128CBCSHA1, aes256CBCSHA1, aes128CBCSHA256, aes256CBCSHA256, aes256CBCSHA384

        /// TLS 1.3 has AEAD only (RFC 8446 §5.2). TLS 1.1 has CBC with an explicit IV, like 1.2 (RFC 4346
        /// §6.2.3.2); AEAD and the SHA-256/384 MACs came with 1.2 (RFC 5246 §A.5: they "MUST NOT be negotiated"
        /// by older versions). TLS 1.0 and SSL 3.0 chain the CBC IV from the previous record: not supported.
        func isAllowed(in version: TLSVersion) -> Bool {
            switch version {
            case .tls13: self == .aes128GCMSHA256 || self == .aes256GCMSHA384 || self == .chacha20Poly1305SHA256
            case .tls12: true
            case .tls11: self == .aes128CBCSHA1 || self == .aes256CBCSHA1
            default: false
            }
        }

        func parameters(version: TLSVersion) -> TLSCipherParameters {
            let tls13 = version == .tls13
            switch self {
            case .aes128GCMSHA256:
                return .aead(.aes128GCM, .sha256, key: 16, fixedIV: tls13 ? 12 : 4, recordIV: tls13 ? 0 : 8)
            case .aes256GCMSHA384:
                return .aead(.aes256GCM, .sha384, key: 32, fixedIV: tls13 ? 12 : 4, recordIV: tls13 ? 0 : 8)
            case .chacha20Poly1305SHA256:
                return .aead(.chacha20Poly1305, .sha256, key: 32, fixedIV: 12, recordIV: 0)
            // RFC 5246 §5: TLS 1.2 suites that name no PRF hash use SHA-256, the SHA-1 CBC ones included.
            case .aes128CBCSHA1: return .cbc(.aes128CBC, key: 16, .hmacSHA1, macLength: 20, prf: .sha256)
            case .aes256CBCSHA1: return .cbc(.aes256CBC, key: 32, .hmacSHA1, macLength: 20, prf: .sha256)
            case .aes128CBCSHA256: return .cbc(.aes128CBC, key: 16, .hmacSHA256, macLength: 32, prf: .sha256)
            case .aes256CBCSHA256: return .cbc(.aes256CBC, key: 32, .hmacSHA256, macLength: 32, prf: .sha256)
            case .aes256CBCSHA384: return .cbc(.aes256CBC, key: 32, .hmacSHA384, macLength: 48, prf: .sha384)
            }
        }
    }

    private static func aead(
        _ cipher: Cipher, _ hash: TLSHashAlgorithm, key: Int, fixedIV: Int, recordIV: Int
    ) -> TLSCipherParameters {
        TLSCipherParameters(
            cipher: cipher, mac: .aead, hash: hash, keyLength: key, macKeyLength: 0, fixedIVLength: fixedIV,
            recordIVLength: recordIV, tagOrMACLength: 16)
    }

    private static func cbc(
        _ cipher: Cipher, key: Int, _ mac: MAC, macLength: Int, prf: TLSHashAlgorithm
    ) -> TLSCipherParameters {
        // RFC 5246 §6.3: "IVs are only generated for implicit nonce techniques", so CBC has no fixed IV; the
        // MAC key is as long as the MAC (RFC 5246 §A.6, mac_key_length).
        TLSCipherParameters(
            cipher: cipher, mac: mac, hash: prf, keyLength: key, macKeyLength: macLength, fixedIVLength: 0,
            recordIVLength: 16, tagOrMACLength: macLength)
    }

    /// RFC 8446 §B.4. CCM (0x1304, 0x1305) is not in swift-crypto.
    static let tls13Suites: [UInt16: Family] = [
        0x1301: .aes128GCMSHA256, 0x1302: .aes256GCMSHA384, 0x1303: .chacha20Poly1305SHA256,
    ]

    /// TLS 1.2 code points by family, from the IANA registry; key exchange does not matter to record
    /// protection, so every ECDHE/ECDH/DHE/DH/RSA/PSK variant of a cipher is one row.
    static let tls12Suites: [UInt16: Family] = {
        let families: [(Family, [UInt16])] = [
            // RFC 5288 (RSA, DHE/DH with RSA/DSS, DH_anon), RFC 5487 (PSK, DHE_PSK, RSA_PSK),
            // RFC 5289 (ECDHE/ECDH with ECDSA/RSA), RFC 8442 (ECDHE_PSK).
            (
                .aes128GCMSHA256,
                [
                    0x009c, 0x009e, 0x00a0, 0x00a2, 0x00a4, 0x00a6, 0x00a8, 0x00aa, 0x00ac,
                    0xc02b, 0xc02d, 0xc02f, 0xc031, 0xd001,
                ]
            ),
            (
                .aes256GCMSHA384,
                [
                    0x009d, 0x009f, 0x00a1, 0x00a3, 0x00a5, 0x00a7, 0x00a9, 0x00ab, 0x00ad,
                    0xc02c, 0xc02e, 0xc030, 0xc032, 0xd002,
                ]
            ),
            // RFC 7905 §2: ECDHE_RSA, ECDHE_ECDSA, DHE_RSA, PSK, ECDHE_PSK, DHE_PSK, RSA_PSK.
            (.chacha20Poly1305SHA256, [0xcca8, 0xcca9, 0xccaa, 0xccab, 0xccac, 0xccad, 0xccae]),
            // RFC 3268/5246 (RSA, DH/DHE with DSS/RSA, DH_anon), RFC 4279 (PSK, DHE_PSK, RSA_PSK),
            // RFC 4492 (ECDH/ECDHE with ECDSA/RSA, ECDH_anon), RFC 5489 (ECDHE_PSK).
            (
                .aes128CBCSHA1,
                [
                    0x002f, 0x0030, 0x0031, 0x0032, 0x0033, 0x0034, 0x008c, 0x0090, 0x0094,
                    0xc004, 0xc009, 0xc00e, 0xc013, 0xc018, 0xc035,
                ]
            ),
            (
                .aes256CBCSHA1,
                [
                    0x0035, 0x0036, 0x0037, 0x0038, 0x0039, 0x003a, 0x008d, 0x0091, 0x0095,
                    0xc005, 0xc00a, 0xc00f, 0xc014, 0xc019, 0xc036,
                ]
            ),
            // RFC 5246 §A.5, RFC 5487, RFC 5289, RFC 5489.
            (
                .aes128CBCSHA256,
                [
                    0x003c, 0x003e, 0x003f, 0x0040, 0x0067, 0x006c, 0x00ae, 0x00b2, 0x00b6,
                    0xc023, 0xc025, 0xc027, 0xc029, 0xc037,
                ]
            ),
            (.aes256CBCSHA256, [0x003d, 0x0068, 0x0069, 0x006a, 0x006b, 0x006d]),
            (.aes256CBCSHA384, [0x00af, 0x00b3, 0x00b7, 0xc024, 0xc026, 0xc028, 0xc02a, 0xc038]),
        ]
        var table: [UInt16: Family] = [:]
        for (family, codePoints) in families {
            for codePoint in codePoints {
                precondition(table.updateValue(family, forKey: codePoint) == nil, "cipher suite \(codePoint) twice")
            }
        }
        return table
    }()
}
