import Crypto

/// TLS 1.3 (RFC 8446 §7.1, §7.2, §7.3): record keys from the traffic secrets a key log gives.
public enum TLS13KeySchedule {
    /// HKDF-Expand-Label(secret, label, context, length) (RFC 8446 §7.1) — the "tls13 " prefix is added here.
    ///
    /// HkdfLabel = length(2) ‖ len("tls13 " + label)(1) ‖ "tls13 " + label ‖ len(context)(1) ‖ context.
    /// Returns [] when the request cannot be encoded or expanded: `length` outside 1…255·Hash.length
    /// (RFC 5869 §2.3), a prefixed label over 255 bytes, a context over 255 bytes.
    public static func expandLabel(
        _ hash: TLSHashAlgorithm, secret: [UInt8], label: String, context: [UInt8], length: Int
    ) -> [UInt8] {
        let fullLabel = Array("tls13 ".utf8) + Array(label.utf8)
        guard length > 0, length <= 255 * hash.length, fullLabel.count <= 255, context.count <= 255 else {
            return []
        }
        var info: [UInt8] = [UInt8(length >> 8), UInt8(length & 0xff), UInt8(fullLabel.count)]
        info += fullLabel
        info.append(UInt8(context.count))
        info += context
        // One block (every label a decryptor needs): HKDF-Expand's T(1) = HMAC(PRK, info ‖ 0x01) (RFC 5869 §2.3),
        // computed with swift-crypto's HMAC keyed once; the generic HKDF costs ~40 000 instructions a call, and a
        // connection needs eight (measured on the HTTPS bench capture).
        if length <= hash.length {
            switch hash {
            case .sha256: return firstBlock(HMAC<SHA256>(key: SymmetricKey(data: secret)), info: info, length: length)
            case .sha384: return firstBlock(HMAC<SHA384>(key: SymmetricKey(data: secret)), info: info, length: length)
            }
        }
        let key: SymmetricKey
        switch hash {
        case .sha256: key = HKDF<SHA256>.expand(pseudoRandomKey: secret, info: info, outputByteCount: length)
        case .sha384: key = HKDF<SHA384>.expand(pseudoRandomKey: secret, info: info, outputByteCount: length)
        }
        return key.withUnsafeBytes { Array($0) }
    }

    /// T(1) of HKDF-Expand from an HMAC already keyed with the PRK (a copy of it is used, so the key is hashed once).
    static func firstBlock<H: HashFunction>(_ keyed: HMAC<H>, info: [UInt8], length: Int) -> [UInt8] {
        var mac = keyed
        mac.update(data: info)
        mac.update(data: [1])
        return Array(mac.finalize().prefix(length))
    }

    /// HkdfLabel with an empty context (RFC 8446 §7.1).
    static func label(_ name: String, length: Int) -> [UInt8] {
        let full = Array("tls13 ".utf8) + Array(name.utf8)
        return [UInt8(length >> 8), UInt8(length & 0xff), UInt8(full.count)] + full + [0]
    }

    /// A decryptor for one direction from a traffic secret (RFC 8446 §7.3: key = "key", iv = "iv", empty
    /// context), at sequence number 0. The secret is used as given, whatever its length: a key log line with a
    /// secret of the wrong size gives keys that fail to authenticate, not a trap. `parameters` must be
    /// `TLSCipherParameters(suite:version: .tls13)` (a precondition).
    public static func decryptor(parameters: TLSCipherParameters, trafficSecret: [UInt8]) -> TLSRecordDecryptor {
        // Both labels from one keyed HMAC: the secret is hashed into it once.
        let key: [UInt8], iv: [UInt8]
        let keyInfo = label("key", length: parameters.keyLength), ivInfo = label("iv", length: parameters.fixedIVLength)
        switch parameters.hash {
        case .sha256:
            let keyed = HMAC<SHA256>(key: SymmetricKey(data: trafficSecret))
            key = firstBlock(keyed, info: keyInfo, length: parameters.keyLength)
            iv = firstBlock(keyed, info: ivInfo, length: parameters.fixedIVLength)
        case .sha384:
            let keyed = HMAC<SHA384>(key: SymmetricKey(data: trafficSecret))
            key = firstBlock(keyed, info: keyInfo, length: parameters.keyLength)
            iv = firstBlock(keyed, info: ivInfo, length: parameters.fixedIVLength)
        }
        return TLSRecordDecryptor(
            checked: parameters, version: .tls13, key: key, iv: iv, macKey: [], encryptThenMAC: false)
    }

    /// application_traffic_secret_N+1 after a KeyUpdate (RFC 8446 §7.2: HKDF-Expand-Label(secret_N,
    /// "traffic upd", "", Hash.length)).
    public static func nextTrafficSecret(_ hash: TLSHashAlgorithm, _ secret: [UInt8]) -> [UInt8] {
        expandLabel(hash, secret: secret, label: "traffic upd", context: [], length: hash.length)
    }
}
