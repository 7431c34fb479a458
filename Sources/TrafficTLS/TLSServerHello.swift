/// What a ServerHello (or HelloRetryRequest) says about the connection (RFC 8446 §4.1.3, §4.1.4).
public struct TLSServerHello: Sendable, Equatable {
    /// `legacy_version`: the negotiated version up to TLS 1.2, frozen at 0x0303 by TLS 1.3.
    public var legacyVersion: TLSVersion
    /// supported_versions' `selected_version` (RFC 8446 §4.2.1): present exactly when TLS 1.3 is chosen.
    public var selectedVersion: TLSVersion?
    public var cipherSuite: TLSCipherSuite
    /// The protocol the server picked from the client's ALPN list (RFC 7301 §3.1).
    public var alpnProtocol: String?
    /// The message is a HelloRetryRequest: a ServerHello whose random is the special value of RFC 8446 §4.1.3.
    public var isHelloRetryRequest = false
    /// pre_shared_key is present: a TLS 1.3 server resumed a session (RFC 8446 §4.2.11).
    public var acceptsPreSharedKey = false
    /// The 32-byte server random (RFC 5246 §7.4.1.3): half of TLS ≤ 1.2's key expansion seed.
    public var random: [UInt8] = []
    /// `session_id` (TLS ≤ 1.2; TLS 1.3 echoes the client's): equal to the client's when a session is resumed.
    public var sessionID: [UInt8] = []
    /// encrypt_then_mac was accepted (RFC 7366 §3): CBC records carry a MAC of the ciphertext.
    public var encryptThenMAC = false
    /// extended_master_secret was accepted (RFC 7627).
    public var extendedMasterSecret = false

    public init(legacyVersion: TLSVersion, cipherSuite: TLSCipherSuite) {
        self.legacyVersion = legacyVersion
        self.cipherSuite = cipherSuite
    }

    /// The version in use: `selectedVersion` when present, else `legacyVersion` (RFC 8446 §4.2.1).
    public var negotiatedVersion: TLSVersion { selectedVersion ?? legacyVersion }

    /// RFC 8446 §4.1.3: a HelloRetryRequest carries SHA-256("HelloRetryRequest") as its random.
    static let helloRetryRequestRandom: [UInt8] = [
        0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
        0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
    ]

    /// Parses a ServerHello body (after the 4-byte handshake header); nil if it is malformed.
    public static func parse(_ body: UnsafeRawBufferPointer) -> TLSServerHello? {
        var reader = TLSByteReader(body)
        guard let version = reader.readUInt16(), let random = reader.readBytes(32),
            let sessionID = reader.readVector8(),  // legacy_session_id_echo
            let suite = reader.readUInt16(),
            reader.readUInt8() != nil  // legacy_compression_method
        else { return nil }
        var hello = TLSServerHello(
            legacyVersion: TLSVersion(rawValue: version), cipherSuite: TLSCipherSuite(rawValue: suite))
        hello.isHelloRetryRequest = random.elementsEqual(helloRetryRequestRandom)
        hello.random = Array(random)
        hello.sessionID = Array(sessionID.bytes)
        if reader.isAtEnd { return hello }
        guard var extensions = reader.readVector16() else { return nil }
        while !extensions.isAtEnd {
            guard let type = extensions.readUInt16(), var data = extensions.readVector16() else { return nil }
            switch type {
            case TLSExtensionType.supportedVersions:
                // RFC 8446 §4.2.1: in a ServerHello, a single `ProtocolVersion selected_version`.
                guard let selected = data.readUInt16() else { return nil }
                hello.selectedVersion = TLSVersion(rawValue: selected)
            case TLSExtensionType.preSharedKey:
                hello.acceptsPreSharedKey = true
            case TLSExtensionType.encryptThenMAC:
                hello.encryptThenMAC = true
            case TLSExtensionType.extendedMasterSecret:
                hello.extendedMasterSecret = true
            case TLSExtensionType.applicationLayerProtocolNegotiation:
                // RFC 7301 §3.1: the server's list holds exactly one name. TLS 1.3 moves it into the
                // encrypted EncryptedExtensions (RFC 8446 §4.3.1), so only TLS ≤ 1.2 shows it here.
                guard let protocols = TLSClientHello.readALPNList(&data) else { return nil }
                hello.alpnProtocol = protocols.first
            default:
                break
            }
        }
        return hello
    }
}
