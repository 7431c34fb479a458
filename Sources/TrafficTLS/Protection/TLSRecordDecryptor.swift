import Crypto

// swift-crypto hands plaintext back as `Data`; this file reads it and copies it out into the caller's buffer.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Record protection of one direction of one connection, in one key epoch; a value type.
///
/// Made by `TLS12KeySchedule.decryptors` or `TLS13KeySchedule.decryptor` (or `init?` from raw keys), then fed
/// that direction's records in order with `open`. A TLS 1.3 key change (handshake → application, KeyUpdate)
/// is a new decryptor; TLS 1.2 has one epoch after ChangeCipherSpec.
public struct TLSRecordDecryptor: Sendable {
    public let parameters: TLSCipherParameters
    /// .tls13, .tls12 or .tls11: decides nonce, additional data and the inner content type.
    public let version: TLSVersion
    /// The next record's sequence number (RFC 5246 §6.1 / RFC 8446 §5.3); `open` increments it on success AND
    /// on failure (the sender's counter moved either way).
    public var sequenceNumber: UInt64
    /// RFC 7366 encrypt_then_mac, as negotiated; only CBC records change.
    public let encryptThenMAC: Bool

    let key: SymmetricKey
    /// The HMAC key of CBC suites (an empty key for AEAD, never used).
    let macKey: SymmetricKey
    /// The AEAD IV part from the key schedule: 4-byte GCM salt (TLS 1.2) or 12-byte IV; empty for CBC.
    let fixedIV: [UInt8]

    /// A decryptor from raw keys, or nil when `parameters` is not a table row for `version`
    /// (`TLSCipherParameters(suite:version:)`) or a length does not match it.
    public init?(
        parameters: TLSCipherParameters, version: TLSVersion, key: [UInt8], iv: [UInt8], macKey: [UInt8] = [],
        encryptThenMAC: Bool = false, sequenceNumber: UInt64 = 0
    ) {
        guard Self.isValid(parameters, version), key.count == parameters.keyLength,
            iv.count == parameters.fixedIVLength, macKey.count == parameters.macKeyLength
        else { return nil }
        self.init(
            checked: parameters, version: version, key: key, iv: iv, macKey: macKey, encryptThenMAC: encryptThenMAC)
        self.sequenceNumber = sequenceNumber
    }

    /// The key schedules' initializer: they cut the keys to the parameters' lengths themselves.
    init(
        checked parameters: TLSCipherParameters, version: TLSVersion, key: [UInt8], iv: [UInt8], macKey: [UInt8],
        encryptThenMAC: Bool
    ) {
        precondition(
            Self.isValid(parameters, version) && key.count == parameters.keyLength
                && iv.count == parameters.fixedIVLength && macKey.count == parameters.macKeyLength,
            "record keys do not fit \(parameters) in \(version): key \(key.count), iv \(iv.count), mac \(macKey.count)")
        self.parameters = parameters
        self.version = version
        self.sequenceNumber = 0
        self.encryptThenMAC = encryptThenMAC
        self.key = SymmetricKey(data: key)
        self.macKey = SymmetricKey(data: macKey)
        self.fixedIV = iv
    }

    /// Whether `parameters` is what `TLSCipherParameters(suite:version:)` gives for some suite of `version`:
    /// the record code below relies on the table's lengths.
    static func isValid(_ parameters: TLSCipherParameters, _ version: TLSVersion) -> Bool {
        TLSCipherParameters.Family.allCases.contains {
            $0.isAllowed(in: version) && $0.parameters(version: version) == parameters
        }
    }

    /// Decrypts one record. `header` is the record's 5 header bytes as on the wire; `fragment` the bytes after
    /// it (borrowed for the call only).
    ///
    /// Appends the plaintext (TLS 1.3: the content without the inner type byte and zero padding) to `plaintext`,
    /// which the caller reuses; nothing is appended when it throws. Returns the real content type (TLS 1.3: the
    /// inner type; TLS 1.1/1.2: header byte 0). Record size limits are the caller's: any length is decrypted
    /// or rejected without trapping.
    public mutating func open(
        header: (UInt8, UInt8, UInt8, UInt8, UInt8), fragment: UnsafeRawBufferPointer,
        appendingTo plaintext: inout [UInt8]
    ) throws(TLSDecryptionError) -> UInt8 {
        let sequence = sequenceNumber
        // RFC 5246 §6.1: the counter wraps only after 2^64 records, which no capture holds; &+ just never traps.
        sequenceNumber &+= 1
        if version == .tls13 {
            return try openTLS13(header: header, fragment: fragment, sequence: sequence, appendingTo: &plaintext)
        }
        if parameters.isCBC {
            return try openCBC(header: header, fragment: fragment, sequence: sequence, appendingTo: &plaintext)
        }
        try openAEAD12(header: header, fragment: fragment, sequence: sequence, appendingTo: &plaintext)
        return header.0
    }

    /// RFC 8446 §5.2: fragment = AEAD(inner plaintext) ‖ tag, additional data = the record header;
    /// inner plaintext = content ‖ type ‖ zeros.
    private func openTLS13(
        header: (UInt8, UInt8, UInt8, UInt8, UInt8), fragment: UnsafeRawBufferPointer, sequence: UInt64,
        appendingTo plaintext: inout [UInt8]
    ) throws(TLSDecryptionError) -> UInt8 {
        let tagLength = parameters.tagOrMACLength
        guard fragment.count >= tagLength else { throw .recordTooShort }
        let opened: Data? = withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { scratch in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<12])
            writeNonce(sequence: sequence, into: nonce)
            let aad = UnsafeMutableRawBufferPointer(rebasing: scratch[16..<21])
            (aad[0], aad[1], aad[2], aad[3], aad[4]) = header
            return aeadOpen(
                nonce: UnsafeRawBufferPointer(nonce),
                ciphertext: UnsafeRawBufferPointer(rebasing: fragment[..<(fragment.count - tagLength)]),
                tag: UnsafeRawBufferPointer(rebasing: fragment[(fragment.count - tagLength)...]),
                aad: UnsafeRawBufferPointer(aad))
        }
        guard let opened else { throw .authenticationFailed }
        // §5.4: the type is the last non-zero byte; everything after it is padding.
        let type: UInt8? = opened.withUnsafeBytes { inner in
            guard let last = inner.lastIndex(where: { $0 != 0 }) else { return nil }
            plaintext.append(contentsOf: UnsafeRawBufferPointer(rebasing: inner[..<last]))
            return inner[last]
        }
        guard let type else { throw .noContentType }
        return type
    }

    /// TLS 1.2 AEAD. GCM (RFC 5288 §3): fragment = explicit nonce(8) ‖ ciphertext ‖ tag, nonce = salt(4) ‖
    /// explicit nonce. ChaCha20-Poly1305 (RFC 7905 §2): fragment = ciphertext ‖ tag, nonce = IV ⊕ seq.
    /// Additional data (RFC 5246 §6.2.3.3): seq ‖ type ‖ version ‖ plaintext length.
    private func openAEAD12(
        header: (UInt8, UInt8, UInt8, UInt8, UInt8), fragment: UnsafeRawBufferPointer, sequence: UInt64,
        appendingTo plaintext: inout [UInt8]
    ) throws(TLSDecryptionError) {
        let explicitLength = parameters.recordIVLength
        let tagLength = parameters.tagOrMACLength
        guard fragment.count >= explicitLength + tagLength else { throw .recordTooShort }
        let ciphertext = UnsafeRawBufferPointer(
            rebasing: fragment[explicitLength..<(fragment.count - tagLength)])
        let opened: Data? = withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { scratch in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<12])
            if explicitLength == 0 {
                writeNonce(sequence: sequence, into: nonce)
            } else {
                for index in 0..<4 { nonce[index] = fixedIV[index] }
                for index in 0..<8 { nonce[4 + index] = fragment[index] }
            }
            let aad = UnsafeMutableRawBufferPointer(rebasing: scratch[16..<29])
            Self.writePseudoHeader(
                sequence: sequence, type: header.0, version: (header.1, header.2), length: ciphertext.count, into: aad)
            return aeadOpen(
                nonce: UnsafeRawBufferPointer(nonce), ciphertext: ciphertext,
                tag: UnsafeRawBufferPointer(rebasing: fragment[(fragment.count - tagLength)...]),
                aad: UnsafeRawBufferPointer(aad))
        }
        guard let opened else { throw .authenticationFailed }
        plaintext.append(contentsOf: opened)
    }

    /// The per-record nonce of TLS 1.3 (RFC 8446 §5.3) and of ChaCha20 in TLS 1.2 (RFC 7905 §2): the 12-byte IV
    /// XOR the sequence number, big-endian, left-padded with zeros.
    func writeNonce(sequence: UInt64, into nonce: UnsafeMutableRawBufferPointer) {
        for index in 0..<12 { nonce[index] = fixedIV[index] }
        for index in 0..<8 { nonce[4 + index] ^= UInt8(truncatingIfNeeded: sequence >> (56 - 8 * index)) }
    }

    /// seq_num(8) ‖ type(1) ‖ version(2) ‖ length(2), big-endian (13 bytes): TLS 1.2's AEAD additional data
    /// (RFC 5246 §6.2.3.3) and the start of its HMAC input (§6.2.3.1). A length past 16 bits cannot come from a
    /// record header; it is truncated, and the record then fails to authenticate.
    static func writePseudoHeader(
        sequence: UInt64, type: UInt8, version: (UInt8, UInt8), length: Int, into bytes: UnsafeMutableRawBufferPointer
    ) {
        for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: sequence >> (56 - 8 * index)) }
        bytes[8] = type
        bytes[9] = version.0
        bytes[10] = version.1
        bytes[11] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[12] = UInt8(truncatingIfNeeded: length)
    }

    /// AES-GCM or ChaCha20-Poly1305 open; nil when the tag does not verify.
    private func aeadOpen(
        nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer
    ) -> Data? {
        // swift-crypto throws only for a failed tag here: the key, nonce and tag sizes come from the table.
        switch parameters.cipher {
        case .aes128GCM, .aes256GCM:
            guard let nonce = try? AES.GCM.Nonce(data: nonce),
                let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
            else { return nil }
            return try? AES.GCM.open(box, using: key, authenticating: aad)
        case .chacha20Poly1305:
            guard let nonce = try? ChaChaPoly.Nonce(data: nonce),
                let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
            else { return nil }
            return try? ChaChaPoly.open(box, using: key, authenticating: aad)
        case .aes128CBC, .aes256CBC:
            preconditionFailure("AEAD open with CBC parameters \(parameters)")
        }
    }
}
