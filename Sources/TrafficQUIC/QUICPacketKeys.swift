import Crypto
import TrafficTLS
import _CryptoExtras

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The keys that protect one direction's packets in one epoch (RFC 9001 §5): AEAD key and IV, and the header
/// protection key, derived from a TLS secret with the version's labels. Public for tests and the benchmark
/// generator, which protect packets with `protect`.
public struct QUICPacketKeys: Sendable {
    public enum Cipher: Sendable { case aes128GCM, aes256GCM, chacha20 }

    let cipher: Cipher
    let hash: TLSHashAlgorithm
    let secret: [UInt8]
    let key: SymmetricKey
    let iv: [UInt8]
    let headerKey: SymmetricKey
    let version: QUICVersion

    static let tagLength = 16

    /// nil for a suite QUIC does not use (RFC 9001 §5.3: the TLS 1.3 AEADs; CCM is not read here).
    public init?(secret: [UInt8], suite: TLSCipherSuite, version: QUICVersion) {
        self.init(secret: secret, suite: suite, version: version, headerKey: nil)
    }

    init?(secret: [UInt8], suite: TLSCipherSuite, version: QUICVersion, headerKey: SymmetricKey?) {
        let cipher: Cipher, hash: TLSHashAlgorithm
        switch suite.rawValue {
        case 0x1301: (cipher, hash) = (.aes128GCM, .sha256)
        case 0x1302: (cipher, hash) = (.aes256GCM, .sha384)
        case 0x1303: (cipher, hash) = (.chacha20, .sha256)
        default: return nil
        }
        let keyLength = cipher == .aes128GCM ? 16 : 32
        let prefix = version.labelPrefix == "quic " ? LabelPrefix.v1 : LabelPrefix.v2
        self.cipher = cipher
        self.hash = hash
        self.secret = secret
        self.version = version
        // The three labels from one keyed HMAC (HKDF-Expand's first block, RFC 5869 §2.3): the secret is hashed
        // into the key once, not three times (a connection's Initial keys were a third of a keyless run).
        let symmetric = SymmetricKey(data: secret)
        let keyed256 = hash == .sha256 ? HMAC<SHA256>(key: symmetric) : nil
        let keyed384 = hash == .sha384 ? HMAC<SHA384>(key: symmetric) : nil
        // The HkdfLabel bytes of the three labels are the same for every connection of a version and key length.
        let infos = Self.labelInfos(prefix: prefix, keyLength: keyLength)
        func expand(_ info: [UInt8], _ length: Int) -> [UInt8] {
            if let keyed256 { return Self.firstBlock(keyed256, info, length) }
            return Self.firstBlock(keyed384!, info, length)
        }
        key = SymmetricKey(data: expand(infos.key, keyLength))
        iv = expand(infos.iv, 12)
        // RFC 9001 §6.1: a key update changes the packet keys, never the header protection key.
        self.headerKey = headerKey ?? SymmetricKey(data: expand(infos.hp, keyLength))
        guard iv.count == 12 else { return nil }
    }

    enum LabelPrefix { case v1, v2 }

    private struct LabelInfos {
        let key: [UInt8], iv: [UInt8], hp: [UInt8]
        init(_ prefix: String, keyLength: Int) {
            key = QUICPacketKeys.labelInfo(prefix + "key", length: keyLength)
            iv = QUICPacketKeys.labelInfo(prefix + "iv", length: 12)
            hp = QUICPacketKeys.labelInfo(prefix + "hp", length: keyLength)
        }
    }

    private static let v1Infos16 = LabelInfos("quic ", keyLength: 16)
    private static let v1Infos32 = LabelInfos("quic ", keyLength: 32)
    private static let v2Infos16 = LabelInfos("quicv2 ", keyLength: 16)
    private static let v2Infos32 = LabelInfos("quicv2 ", keyLength: 32)

    private static func labelInfos(prefix: LabelPrefix, keyLength: Int) -> LabelInfos {
        switch (prefix, keyLength) {
        case (.v1, 16): v1Infos16
        case (.v1, _): v1Infos32
        case (.v2, 16): v2Infos16
        case (.v2, _): v2Infos32
        }
    }

    /// HkdfLabel with an empty context (RFC 8446 §7.1).
    static func labelInfo(_ name: String, length: Int) -> [UInt8] {
        let full = Array("tls13 ".utf8) + Array(name.utf8)
        return [UInt8(length >> 8), UInt8(length & 0xff), UInt8(full.count)] + full + [0]
    }

    /// T(1) of HKDF-Expand: HMAC(PRK, info ‖ 0x01), cut to `length` (at most one hash: every QUIC label fits).
    static func firstBlock<H: HashFunction>(_ keyed: HMAC<H>, _ info: [UInt8], _ length: Int) -> [UInt8] {
        var mac = keyed
        mac.update(data: info)
        mac.update(data: [1])
        return Array(mac.finalize().prefix(length))
    }

    /// RFC 9001 §6.1: the next key phase's keys ("quic ku").
    public func updated() -> QUICPacketKeys? {
        let next = TLS13KeySchedule.expandLabel(
            hash, secret: secret, label: version.labelPrefix + "ku", context: [], length: hash.length)
        let suite: UInt16 = cipher == .aes128GCM ? 0x1301 : cipher == .aes256GCM ? 0x1302 : 0x1303
        return QUICPacketKeys(secret: next, suite: TLSCipherSuite(rawValue: suite), version: version, headerKey: headerKey)
    }

    /// Initial keys of both directions from the client's first Destination Connection ID (RFC 9001 §5.2);
    /// nil for a version whose salt we do not know.
    public static func initial(dcid: UnsafeRawBufferPointer, version: QUICVersion) -> (client: QUICPacketKeys, server: QUICPacketKeys)? {
        guard let secret = initialSecret(dcid: dcid, version: version),
            let client = initialKeys(secret, label: "client in", version: version),
            let server = initialKeys(secret, label: "server in", version: version)
        else { return nil }
        return (client, server)
    }

    /// The client's Initial keys alone: all that reading a ClientHello without a key log needs.
    static func clientInitial(dcid: UnsafeRawBufferPointer, version: QUICVersion) -> QUICPacketKeys? {
        initialSecret(dcid: dcid, version: version).flatMap { initialKeys($0, label: "client in", version: version) }
    }

    /// The server's Initial keys (its ServerHello names the cipher suite for the key log's secrets).
    static func serverInitial(dcid: UnsafeRawBufferPointer, version: QUICVersion) -> QUICPacketKeys? {
        initialSecret(dcid: dcid, version: version).flatMap { initialKeys($0, label: "server in", version: version) }
    }

    /// HKDF-Extract(salt, DCID) = HMAC(salt, DCID) (RFC 5869 §2.2): the HMAC keyed with a version's salt is made
    /// once, and copied for every connection.
    private static func initialSecret(dcid: UnsafeRawBufferPointer, version: QUICVersion) -> [UInt8]? {
        let keyed: HMAC<SHA256>
        switch version {
        case .v1: keyed = v1Extract
        case .v2: keyed = v2Extract
        default:
            guard version.isDraft else { return nil }
            keyed = draftExtract
        }
        var mac = keyed
        mac.update(data: dcid)
        return Array(mac.finalize())
    }

    private static let v1Extract = HMAC<SHA256>(key: SymmetricKey(data: QUICVersion.v1.initialSalt!))
    private static let v2Extract = HMAC<SHA256>(key: SymmetricKey(data: QUICVersion.v2.initialSalt!))
    private static let draftExtract = HMAC<SHA256>(
        key: SymmetricKey(data: QUICVersion(rawValue: 0xff00_001d).initialSalt!))
    private static let clientInInfo = labelInfo("client in", length: 32)
    private static let serverInInfo = labelInfo("server in", length: 32)

    private static func initialKeys(_ initialSecret: [UInt8], label: String, version: QUICVersion) -> QUICPacketKeys? {
        let info = label == "client in" ? clientInInfo : serverInInfo
        let secret = firstBlock(HMAC<SHA256>(key: SymmetricKey(data: initialSecret)), info, 32)
        return QUICPacketKeys(secret: secret, suite: TLSCipherSuite(rawValue: 0x1301), version: version)
    }

    /// The 5-byte header protection mask from the 16-byte sample (RFC 9001 §5.4.3, §5.4.4).
    func mask(sample: UnsafeRawBufferPointer) -> (UInt8, UInt8, UInt8, UInt8, UInt8)? {
        guard sample.count >= 16 else { return nil }
        switch cipher {
        case .aes128GCM, .aes256GCM:
            var block = (0..<16).map { sample[$0] }
            guard (try? AES.permute(&block, key: headerKey)) != nil else { return nil }
            return (block[0], block[1], block[2], block[3], block[4])
        case .chacha20:
            // counter = sample[0..<4] little-endian, nonce = sample[4..<16]; the mask encrypts five zero bytes.
            var counterValue: UInt32 = 0
            for i in 0..<4 { counterValue |= UInt32(sample[i]) << (8 * i) }
            guard let counter = try? Insecure.ChaCha20CTR.Counter(offset: counterValue),
                let nonce = try? Insecure.ChaCha20CTR.Nonce(data: UnsafeRawBufferPointer(rebasing: sample[4..<16])),
                let out = try? Insecure.ChaCha20CTR.encrypt([0, 0, 0, 0, 0] as [UInt8], using: headerKey, counter: counter, nonce: nonce),
                out.count == 5
            else { return nil }
            let o = Array(out)
            return (o[0], o[1], o[2], o[3], o[4])
        }
    }

    /// Header protection removed (RFC 9001 §5.4.1): the header through the packet number as sent unprotected, the
    /// first byte (its low bits and the key phase now readable), the truncated packet number and its length; nil
    /// when the packet is too short to sample.
    func unprotect(_ header: QUICPacketHeader, bytes: UnsafeRawBufferPointer)
        -> (header: [UInt8], first: UInt8, truncatedNumber: UInt64, numberLength: Int)?
    {
        let sampleStart = header.pnOffset + 4
        guard sampleStart + 16 <= header.end, header.end <= bytes.count,
            let mask = mask(sample: UnsafeRawBufferPointer(rebasing: bytes[sampleStart..<(sampleStart + 16)]))
        else { return nil }
        let first = bytes[header.start] ^ (mask.0 & (header.isLong ? 0x0f : 0x1f))
        let length = Int(first & 0x03) + 1
        var headerBytes = Array(UnsafeRawBufferPointer(rebasing: bytes[header.start..<(header.pnOffset + length)]))
        headerBytes[0] = first
        let maskBytes = (mask.1, mask.2, mask.3, mask.4)
        var truncated: UInt64 = 0
        for i in 0..<length {
            let b = headerBytes[header.pnOffset - header.start + i] ^ withUnsafeBytes(of: maskBytes) { $0[i] }
            headerBytes[header.pnOffset - header.start + i] = b
            truncated = truncated << 8 | UInt64(b)
        }
        return (headerBytes, first, truncated, length)
    }

    /// AEAD open of a packet payload (RFC 9001 §5.3): nonce = IV XOR the packet number, the header as AAD.
    func open(packetNumber: UInt64, header: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> Data? {
        guard payload.count >= Self.tagLength else { return nil }
        var nonceBytes = iv
        for i in 0..<8 { nonceBytes[4 + i] ^= UInt8(truncatingIfNeeded: packetNumber >> (56 - 8 * i)) }
        let ciphertext = UnsafeRawBufferPointer(rebasing: payload[..<(payload.count - Self.tagLength)])
        let tag = UnsafeRawBufferPointer(rebasing: payload[(payload.count - Self.tagLength)...])
        switch cipher {
        case .aes128GCM, .aes256GCM:
            guard let nonce = try? AES.GCM.Nonce(data: nonceBytes),
                let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
            else { return nil }
            return try? AES.GCM.open(box, using: key, authenticating: header)
        case .chacha20:
            guard let nonce = try? ChaChaPoly.Nonce(data: nonceBytes),
                let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
            else { return nil }
            return try? ChaChaPoly.open(box, using: key, authenticating: header)
        }
    }

    /// The inverse of `open` and of header protection, for tests and the benchmark generator: seals `payload`
    /// after `header` (whose last `pnLength` bytes are the packet number) and applies header protection.
    public func protect(header: [UInt8], pnLength: Int, packetNumber: UInt64, payload: [UInt8]) -> [UInt8]? {
        var nonceBytes = iv
        for i in 0..<8 { nonceBytes[4 + i] ^= UInt8(truncatingIfNeeded: packetNumber >> (56 - 8 * i)) }
        let sealed: [UInt8]
        switch cipher {
        case .aes128GCM, .aes256GCM:
            guard let nonce = try? AES.GCM.Nonce(data: nonceBytes),
                let box = try? AES.GCM.seal(payload, using: key, nonce: nonce, authenticating: header)
            else { return nil }
            sealed = Array(box.ciphertext) + Array(box.tag)
        case .chacha20:
            guard let nonce = try? ChaChaPoly.Nonce(data: nonceBytes),
                let box = try? ChaChaPoly.seal(payload, using: key, nonce: nonce, authenticating: header)
            else { return nil }
            sealed = Array(box.ciphertext) + Array(box.tag)
        }
        var packet = header + sealed
        let pnOffset = header.count - pnLength
        guard packet.count >= pnOffset + 4 + 16 else { return nil }
        let m = packet.withUnsafeBytes { mask(sample: UnsafeRawBufferPointer(rebasing: $0[(pnOffset + 4)..<(pnOffset + 20)])) }
        guard let m else { return nil }
        packet[0] ^= m.0 & (packet[0] & 0x80 != 0 ? 0x0f : 0x1f)
        let maskBytes = [m.1, m.2, m.3, m.4]
        for i in 0..<pnLength { packet[pnOffset + i] ^= maskBytes[i] }
        return packet
    }
}
