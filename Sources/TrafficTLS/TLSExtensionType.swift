/// The hello extension code points the parser reads (IANA "TLS ExtensionType Values").
enum TLSExtensionType {
    /// RFC 6066 §3.
    static let serverName: UInt16 = 0
    /// RFC 7301 §3.1.
    static let applicationLayerProtocolNegotiation: UInt16 = 16
    /// RFC 8446 §4.2.1.
    static let supportedVersions: UInt16 = 43
    /// RFC 8446 §4.2.11: in a ServerHello, the server accepted a PSK (a resumed session).
    static let preSharedKey: UInt16 = 41
    /// draft-ietf-tls-esni (ECH), the code point browsers ship: 0xfe0d.
    static let encryptedClientHello: UInt16 = 0xfe0d
}
