import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TLSRecordDecryptor {
    /// The inverse of `open`, for tests and the benchmark generator: protects `plaintext` of `contentType` as a
    /// whole record (header included) with this direction's keys and the current sequence number, then
    /// increments it.
    ///
    /// - `padding`: TLS 1.3: that many zero bytes after the inner content type (RFC 8446 §5.4). CBC: that many
    ///   extra 16-byte blocks of padding beyond the minimum (RFC 5246 §6.2.3.2 allows up to 255 bytes). Ignored
    ///   by TLS 1.2 AEAD.
    /// - `recordIV`: the explicit per-record part, `parameters.recordIVLength` bytes: GCM's 8-byte explicit nonce,
    ///   CBC's 16-byte IV. nil derives it deterministically from the sequence number: GCM uses the sequence
    ///   number (as OpenSSL does); CBC uses 8 zero bytes ‖ the sequence number, big-endian. That IV is
    ///   predictable, which real CBC must not be (RFC 5246 §6.2.3.2) — fine for test data, not for traffic.
    ///
    /// Traps on a plaintext that does not fit a record (more than 2^14 bytes), a wrong `recordIV` length or
    /// padding past 255 bytes: these are programming errors of the test that calls it.
    public mutating func seal(
        contentType: UInt8, plaintext: [UInt8], padding: Int = 0, recordIV: [UInt8]? = nil
    ) -> [UInt8] {
        precondition(plaintext.count <= 16384, "seal: \(plaintext.count) bytes do not fit one record (RFC 8446 §5.1)")
        precondition(padding >= 0, "seal: negative padding \(padding)")
        precondition(
            recordIV == nil || recordIV?.count == parameters.recordIVLength,
            "seal: recordIV of \(recordIV?.count ?? 0) bytes, \(parameters.cipher) takes \(parameters.recordIVLength)")
        let sequence = sequenceNumber
        sequenceNumber &+= 1
        if version == .tls13 {
            return sealTLS13(contentType: contentType, plaintext: plaintext, padding: padding, sequence: sequence)
        }
        let explicit = recordIV ?? Self.defaultRecordIV(sequence: sequence, length: parameters.recordIVLength)
        let versionBytes = (UInt8(version.rawValue >> 8), UInt8(version.rawValue & 0xff))
        var body: [UInt8]
        if parameters.isCBC {
            body = sealCBC(
                contentType: contentType, plaintext: plaintext, extraBlocks: padding, iv: explicit, sequence: sequence,
                version: versionBytes)
        } else {
            var nonce = [UInt8](repeating: 0, count: 12)
            nonce.withUnsafeMutableBytes { nonce in
                if explicit.isEmpty {
                    writeNonce(sequence: sequence, into: nonce)
                } else {
                    for index in 0..<4 { nonce[index] = fixedIV[index] }
                    for index in 0..<8 { nonce[4 + index] = explicit[index] }
                }
            }
            var aad = [UInt8](repeating: 0, count: 13)
            aad.withUnsafeMutableBytes {
                Self.writePseudoHeader(
                    sequence: sequence, type: contentType, version: versionBytes, length: plaintext.count, into: $0)
            }
            body = explicit + aeadSeal(plaintext, nonce: nonce, aad: aad)
        }
        return [contentType, versionBytes.0, versionBytes.1] + Self.u16(body.count) + body
    }

    /// RFC 8446 §5.2: opaque_type application_data, legacy_record_version 0x0303, the header as additional data.
    private func sealTLS13(contentType: UInt8, plaintext: [UInt8], padding: Int, sequence: UInt64) -> [UInt8] {
        let inner = plaintext + [contentType] + [UInt8](repeating: 0, count: padding)
        let header: [UInt8] = [23, 3, 3] + Self.u16(inner.count + parameters.tagOrMACLength)
        var nonce = [UInt8](repeating: 0, count: 12)
        nonce.withUnsafeMutableBytes { writeNonce(sequence: sequence, into: $0) }
        return header + aeadSeal(inner, nonce: nonce, aad: header)
    }

    /// IV ‖ ciphertext (‖ MAC with encrypt_then_mac), RFC 5246 §6.2.3.2 and RFC 7366 §3.
    private func sealCBC(
        contentType: UInt8, plaintext: [UInt8], extraBlocks: Int, iv: [UInt8], sequence: UInt64,
        version: (UInt8, UInt8)
    ) -> [UInt8] {
        let block = Self.blockSize
        func padded(_ bytes: [UInt8]) -> [UInt8] {
            let paddingLength = (block - (bytes.count + 1) % block) % block + extraBlocks * block
            precondition(paddingLength <= 255, "seal: \(paddingLength) bytes of CBC padding, at most 255 fit")
            return bytes + [UInt8](repeating: UInt8(paddingLength), count: paddingLength + 1)
        }
        func encrypt(_ bytes: [UInt8]) -> [UInt8] {
            do {
                let ivValue = try AES._CBC.IV(ivBytes: iv)
                return Array(try AES._CBC.encrypt(bytes, using: key, iv: ivValue, noPadding: true))
            } catch {
                preconditionFailure("AES-CBC encryption of whole blocks failed: \(error)")
            }
        }
        if encryptThenMAC {
            let sent = iv + encrypt(padded(plaintext))
            let mac = sent.withUnsafeBytes {
                macBytes(sequence: sequence, type: contentType, version: version, length: sent.count, content: $0)
            }
            return sent + mac
        }
        let mac = plaintext.withUnsafeBytes {
            macBytes(sequence: sequence, type: contentType, version: version, length: plaintext.count, content: $0)
        }
        return iv + encrypt(padded(plaintext + mac))
    }

    /// ciphertext ‖ tag.
    private func aeadSeal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) -> [UInt8] {
        do {
            switch parameters.cipher {
            case .aes128GCM, .aes256GCM:
                let box = try AES.GCM.seal(
                    plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
                return Array(box.ciphertext) + Array(box.tag)
            case .chacha20Poly1305:
                let box = try ChaChaPoly.seal(
                    plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: aad)
                return Array(box.ciphertext) + Array(box.tag)
            case .aes128CBC, .aes256CBC:
                preconditionFailure("AEAD seal with CBC parameters \(parameters)")
            }
        } catch {
            preconditionFailure("AEAD seal with table-sized key and nonce failed: \(error)")
        }
    }

    static func defaultRecordIV(sequence: UInt64, length: Int) -> [UInt8] {
        guard length > 0 else { return [] }
        return [UInt8](repeating: 0, count: length - 8)
            + (0..<8).map { UInt8(truncatingIfNeeded: sequence >> (56 - 8 * $0)) }
    }

    static func u16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
