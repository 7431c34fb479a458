import Crypto

/// TLS 1.2 (RFC 5246 §5, §6.3) key expansion from a master secret, as a key log's `CLIENT_RANDOM` line gives it;
/// TLS 1.1 (RFC 4346 §5, §6.3) the same way with its MD5 ⊕ SHA-1 PRF.
public enum TLS12KeySchedule {
    /// PRF(secret, label, seed) with the suite's hash: P_hash(secret, label ‖ seed) of RFC 5246 §5, cut to
    /// `count` bytes ([] when `count` ≤ 0).
    public static func prf(
        _ hash: TLSHashAlgorithm, secret: [UInt8], label: String, seed: [UInt8], count: Int
    ) -> [UInt8] {
        let labelAndSeed = Array(label.utf8) + seed
        switch hash {
        case .sha256: return pHash(SHA256.self, secret: secret[...], seed: labelAndSeed, count: count)
        case .sha384: return pHash(SHA384.self, secret: secret[...], seed: labelAndSeed, count: count)
        }
    }

    /// The TLS 1.0/1.1 PRF (RFC 4346 §5): P_MD5(S1, label ‖ seed) ⊕ P_SHA1(S2, label ‖ seed), where S1 and S2
    /// are the first and last ⌈n/2⌉ bytes of the secret (sharing the middle byte when n is odd).
    public static func legacyPRF(secret: [UInt8], label: String, seed: [UInt8], count: Int) -> [UInt8] {
        let labelAndSeed = Array(label.utf8) + seed
        let half = (secret.count + 1) / 2
        var output = pHash(Insecure.MD5.self, secret: secret.prefix(half), seed: labelAndSeed, count: count)
        let sha1 = pHash(Insecure.SHA1.self, secret: secret.suffix(half), seed: labelAndSeed, count: count)
        for index in output.indices { output[index] ^= sha1[index] }
        return output
    }

    /// The key block split for both directions (RFC 5246 §6.3): client MAC key, server MAC key, client key,
    /// server key, client IV, server IV, from PRF(master_secret, "key expansion", server_random ‖ client_random).
    /// `version` is .tls12 or .tls11 (the PRF differs); `encryptThenMAC` is the RFC 7366 extension as both
    /// hellos negotiated it (it changes CBC records only). Both decryptors start at sequence number 0.
    /// `parameters` must be `TLSCipherParameters(suite:version:)` of this same `version` (a precondition); the
    /// secrets may have any length — wrong ones give keys that fail to authenticate.
    public static func decryptors(
        parameters: TLSCipherParameters, version: TLSVersion, masterSecret: [UInt8],
        clientRandom: [UInt8], serverRandom: [UInt8], encryptThenMAC: Bool
    ) -> (client: TLSRecordDecryptor, server: TLSRecordDecryptor) {
        let p = parameters
        let count = 2 * (p.macKeyLength + p.keyLength + p.fixedIVLength)
        let seed = serverRandom + clientRandom
        let block =
            version == .tls11
            ? legacyPRF(secret: masterSecret, label: "key expansion", seed: seed, count: count)
            : prf(p.hash, secret: masterSecret, label: "key expansion", seed: seed, count: count)
        var offset = 0
        func take(_ length: Int) -> [UInt8] {
            defer { offset += length }
            return Array(block[offset..<offset + length])
        }
        let clientMAC = take(p.macKeyLength)
        let serverMAC = take(p.macKeyLength)
        let clientKey = take(p.keyLength)
        let serverKey = take(p.keyLength)
        let clientIV = take(p.fixedIVLength)
        let serverIV = take(p.fixedIVLength)
        return (
            TLSRecordDecryptor(
                checked: p, version: version, key: clientKey, iv: clientIV, macKey: clientMAC,
                encryptThenMAC: encryptThenMAC),
            TLSRecordDecryptor(
                checked: p, version: version, key: serverKey, iv: serverIV, macKey: serverMAC,
                encryptThenMAC: encryptThenMAC)
        )
    }

    /// P_hash(secret, seed) (RFC 5246 §5): HMAC(secret, A(i) ‖ seed) for A(1), A(2), … with A(0) = seed and
    /// A(i) = HMAC(secret, A(i-1)), concatenated and cut to `count` bytes.
    static func pHash<H: HashFunction>(
        _: H.Type, secret: ArraySlice<UInt8>, seed: [UInt8], count: Int
    ) -> [UInt8] {
        guard count > 0 else { return [] }
        // Keyed once and copied for each HMAC: keying hashes the padded secret, which every one of the ~5 HMACs
        // of a key block would otherwise repeat (measured: a third of a TLS 1.2 connection's set-up).
        let keyed = HMAC<H>(key: SymmetricKey(data: secret))
        func mac(_ first: [UInt8], _ second: [UInt8]? = nil) -> [UInt8] {
            var hmac = keyed
            hmac.update(data: first)
            if let second { hmac.update(data: second) }
            return Array(hmac.finalize())
        }
        var output: [UInt8] = []
        output.reserveCapacity(count + H.Digest.byteCount)
        var a = mac(seed)
        while output.count < count {
            output += mac(a, seed)
            if output.count < count { a = mac(a) }
        }
        output.removeLast(output.count - count)
        return output
    }
}
