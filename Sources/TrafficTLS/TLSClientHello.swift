/// What a ClientHello says about the connection, readable without keys (RFC 8446 §4.1.2).
///
/// GREASE values (RFC 8701) are dropped from every list.
public struct TLSClientHello: Sendable, Equatable {
    /// `legacy_version`: 0x0303 for TLS 1.2 and 1.3 clients (RFC 8446 §4.1.2).
    public var legacyVersion: TLSVersion
    /// The first `host_name` of server_name (RFC 6066 §3). With ECH this is the outer, public name.
    public var serverName: String?
    /// Protocols offered in application_layer_protocol_negotiation (RFC 7301 §3.1), in order.
    public var alpnProtocols: [String] = []
    /// supported_versions (RFC 8446 §4.2.1), in the client's order of preference.
    public var supportedVersions: [TLSVersion] = []
    /// Offered cipher suites, in order.
    public var cipherSuites: [TLSCipherSuite] = []
    /// An encrypted_client_hello extension is present: the real SNI and ALPN are encrypted.
    public var hasEncryptedClientHello = false
    /// The 32-byte client random: what a key log's lines are keyed by (RFC 9850 §2).
    public var random: [UInt8] = []
    /// `legacy_session_id`: a TLS ≤ 1.2 session offered for resumption when not empty.
    public var sessionID: [UInt8] = []
    /// session_ticket's ticket (RFC 5077 §3.2), when one is offered.
    public var sessionTicket: [UInt8] = []
    /// early_data is offered: 0-RTT records follow (RFC 8446 §4.2.10).
    public var offersEarlyData = false

    public init(legacyVersion: TLSVersion) { self.legacyVersion = legacyVersion }

    /// Parses a ClientHello body (after the 4-byte handshake header); nil if it is malformed.
    public static func parse(_ body: UnsafeRawBufferPointer) -> TLSClientHello? {
        var reader = TLSByteReader(body)
        guard let version = reader.readUInt16(), let random = reader.readBytes(32),
            let sessionID = reader.readVector8(),  // legacy_session_id
            var suites = reader.readVector16(),
            reader.readVector8() != nil  // legacy_compression_methods
        else { return nil }
        var hello = TLSClientHello(legacyVersion: TLSVersion(rawValue: version))
        hello.random = Array(random)
        hello.sessionID = Array(sessionID.bytes)
        while let suite = suites.readUInt16() {
            if !TLSGrease.contains(suite) { hello.cipherSuites.append(TLSCipherSuite(rawValue: suite)) }
        }
        // RFC 5246 §7.4.1.2: a hello may end after the compression methods (no extensions).
        if reader.isAtEnd { return hello }
        guard var extensions = reader.readVector16() else { return nil }
        while !extensions.isAtEnd {
            guard let type = extensions.readUInt16(), var data = extensions.readVector16() else { return nil }
            switch type {
            case TLSExtensionType.serverName:
                guard hello.readServerName(&data) else { return nil }
            case TLSExtensionType.applicationLayerProtocolNegotiation:
                guard let protocols = TLSClientHello.readALPNList(&data) else { return nil }
                hello.alpnProtocols = protocols
            case TLSExtensionType.supportedVersions:
                // RFC 8446 §4.2.1: in a ClientHello, `ProtocolVersion versions<2..254>`.
                guard var list = data.readVector8() else { return nil }
                hello.supportedVersions = []
                while let value = list.readUInt16() {
                    if !TLSGrease.contains(value) { hello.supportedVersions.append(TLSVersion(rawValue: value)) }
                }
            case TLSExtensionType.encryptedClientHello:
                hello.hasEncryptedClientHello = true
            case TLSExtensionType.sessionTicket:
                hello.sessionTicket = Array(data.bytes)
            case TLSExtensionType.earlyData:
                hello.offersEarlyData = true
            default:
                break
            }
        }
        return hello
    }

    /// RFC 6066 §3: `ServerName server_name_list<1..2^16-1>`; each entry is a name_type and a
    /// `HostName<1..2^16-1>`. Keeps the first host_name (type 0); returns false when malformed.
    private mutating func readServerName(_ data: inout TLSByteReader) -> Bool {
        guard var list = data.readVector16() else { return false }
        while !list.isAtEnd {
            guard let nameType = list.readUInt8(), let name = list.readVector16() else { return false }
            if nameType == 0, serverName == nil {
                serverName = String(decoding: name.bytes, as: UTF8.self)
            }
        }
        return true
    }

    /// RFC 7301 §3.1: `ProtocolName protocol_name_list<2..2^16-1>`, each `opaque ProtocolName<1..2^8-1>`.
    static func readALPNList(_ data: inout TLSByteReader) -> [String]? {
        guard var list = data.readVector16() else { return nil }
        var protocols: [String] = []
        while !list.isAtEnd {
            guard let name = list.readVector8() else { return nil }
            if !TLSGrease.isGreaseALPN(name.bytes) {
                protocols.append(String(decoding: name.bytes, as: UTF8.self))
            }
        }
        return protocols
    }
}
