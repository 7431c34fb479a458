import Crypto
import _CryptoExtras

// swift-crypto's AES-CBC returns `Data`; this file reads it and copies the content out.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TLSRecordDecryptor {
    static let blockSize = 16

    /// TLS 1.1/1.2 CBC (RFC 5246 §6.2.3.2): fragment = IV(16) ‖ E(content ‖ MAC ‖ padding ‖ padding_length).
    /// With encrypt_then_mac (RFC 7366 §3): fragment = IV ‖ E(content ‖ padding ‖ padding_length) ‖ MAC, the
    /// MAC over seq ‖ type ‖ version ‖ length(IV + ciphertext) ‖ IV ‖ ciphertext, verified before decrypting.
    func openCBC(
        header: (UInt8, UInt8, UInt8, UInt8, UInt8), fragment: UnsafeRawBufferPointer, sequence: UInt64,
        appendingTo plaintext: inout [UInt8]
    ) throws(TLSDecryptionError) -> UInt8 {
        let block = Self.blockSize
        let macLength = parameters.tagOrMACLength
        let version = (header.1, header.2)
        if encryptThenMAC {
            guard fragment.count >= block + block + macLength else { throw .recordTooShort }
            let macStart = fragment.count - macLength
            let authenticated = UnsafeRawBufferPointer(rebasing: fragment[..<macStart])
            let received = UnsafeRawBufferPointer(rebasing: fragment[macStart...])
            guard
                macMatches(
                    received, sequence: sequence, type: header.0, version: version, length: macStart,
                    content: authenticated)
            else { throw .authenticationFailed }
            guard (macStart - block) % block == 0 else { throw .badPadding }
            let decrypted = try decryptBlocks(
                iv: UnsafeRawBufferPointer(rebasing: fragment[..<block]),
                ciphertext: UnsafeRawBufferPointer(rebasing: fragment[block..<macStart]))
            let ok: Bool = decrypted.withUnsafeBytes { bytes in
                guard let contentLength = Self.unpaddedLength(bytes, trailer: 0) else { return false }
                plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[..<contentLength]))
                return true
            }
            guard ok else { throw .badPadding }
            return header.0
        }

        // MAC-then-encrypt: the IV, then whole blocks that hold at least the MAC and the padding length byte.
        let minimum = block + (macLength + 1 + block - 1) / block * block
        guard fragment.count >= minimum else { throw .recordTooShort }
        guard (fragment.count - block) % block == 0 else { throw .badPadding }
        let decrypted = try decryptBlocks(
            iv: UnsafeRawBufferPointer(rebasing: fragment[..<block]),
            ciphertext: UnsafeRawBufferPointer(rebasing: fragment[block...]))
        // nil: bad padding; false: bad MAC. The padding is checked first, as §6.2.3.2 describes the record;
        // this is analysis, not a server, so the timing difference it leaks does not matter here.
        let verdict: Bool? = decrypted.withUnsafeBytes { bytes in
            guard let unpadded = Self.unpaddedLength(bytes, trailer: macLength) else { return nil }
            let contentLength = unpadded - macLength
            let content = UnsafeRawBufferPointer(rebasing: bytes[..<contentLength])
            guard
                macMatches(
                    UnsafeRawBufferPointer(rebasing: bytes[contentLength..<unpadded]), sequence: sequence,
                    type: header.0, version: version, length: contentLength, content: content)
            else { return false }
            plaintext.append(contentsOf: content)
            return true
        }
        switch verdict {
        case nil: throw .badPadding
        case false?: throw .authenticationFailed
        case true?: return header.0
        }
    }

    /// The length before the padding: the last byte is padding_length, and it and the padding_length bytes
    /// before it must all equal it (RFC 5246 §6.2.3.2). nil when they don't, or when padding would eat into
    /// the `trailer` (the MAC) that must precede it.
    static func unpaddedLength(_ bytes: UnsafeRawBufferPointer, trailer: Int) -> Int? {
        guard let last = bytes.last else { return nil }
        let paddingLength = Int(last)
        guard paddingLength + 1 + trailer <= bytes.count else { return nil }
        let start = bytes.count - paddingLength - 1
        for index in start..<bytes.count where bytes[index] != last { return nil }
        return start
    }

    /// AES-CBC decryption of whole blocks, no padding removed (the TLS padding is not PKCS#7).
    func decryptBlocks(iv: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer) throws(TLSDecryptionError)
        -> Data
    {
        // The callers checked that the ciphertext is whole blocks and the IV one block, and the key length
        // comes from the table, so swift-crypto has nothing to reject.
        do {
            return try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
        } catch {
            throw .badPadding
        }
    }

    /// Whether `received` is HMAC(mac key, seq ‖ type ‖ version ‖ length ‖ content) (RFC 5246 §6.2.3.1),
    /// compared by swift-crypto (in constant time, though nothing here needs it).
    func macMatches(
        _ received: UnsafeRawBufferPointer, sequence: UInt64, type: UInt8, version: (UInt8, UInt8), length: Int,
        content: UnsafeRawBufferPointer
    ) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: 13, alignment: 8) { pseudoHeader in
            Self.writePseudoHeader(sequence: sequence, type: type, version: version, length: length, into: pseudoHeader)
            let prefix = UnsafeRawBufferPointer(pseudoHeader)
            switch parameters.mac {
            case .hmacSHA1: return Self.hmac(Insecure.SHA1.self, key: macKey, prefix, content) == received
            case .hmacSHA256: return Self.hmac(SHA256.self, key: macKey, prefix, content) == received
            case .hmacSHA384: return Self.hmac(SHA384.self, key: macKey, prefix, content) == received
            case .aead: preconditionFailure("CBC MAC with AEAD parameters \(parameters)")
            }
        }
    }

    /// The record MAC as bytes, for `seal`.
    func macBytes(
        sequence: UInt64, type: UInt8, version: (UInt8, UInt8), length: Int, content: UnsafeRawBufferPointer
    ) -> [UInt8] {
        withUnsafeTemporaryAllocation(byteCount: 13, alignment: 8) { pseudoHeader in
            Self.writePseudoHeader(sequence: sequence, type: type, version: version, length: length, into: pseudoHeader)
            let prefix = UnsafeRawBufferPointer(pseudoHeader)
            switch parameters.mac {
            case .hmacSHA1: return Array(Self.hmac(Insecure.SHA1.self, key: macKey, prefix, content))
            case .hmacSHA256: return Array(Self.hmac(SHA256.self, key: macKey, prefix, content))
            case .hmacSHA384: return Array(Self.hmac(SHA384.self, key: macKey, prefix, content))
            case .aead: preconditionFailure("CBC MAC with AEAD parameters \(parameters)")
            }
        }
    }

    static func hmac<H: HashFunction>(
        _: H.Type, key: SymmetricKey, _ prefix: UnsafeRawBufferPointer, _ content: UnsafeRawBufferPointer
    ) -> HMAC<H>.MAC {
        var hmac = HMAC<H>(key: key)
        hmac.update(data: prefix)
        hmac.update(data: content)
        return hmac.finalize()
    }
}
