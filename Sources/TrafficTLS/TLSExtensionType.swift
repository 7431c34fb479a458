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
    /// RFC 7366: MAC the ciphertext of CBC records instead of the plaintext.
    static let encryptThenMAC: UInt16 = 22
    /// RFC 7627: the master secret covers the handshake transcript (nothing changes for a key log's secret).
    static let extendedMasterSecret: UInt16 = 23
    /// RFC 5077: a TLS ≤ 1.2 session ticket offered for resumption (empty: the client asks for one).
    static let sessionTicket: UInt16 = 35
    /// RFC 8446 §4.2.10: 0-RTT data follows the ClientHello.
    static let earlyData: UInt16 = 42
    /// draft-ietf-tls-esni (ECH), the code point browsers ship: 0xfe0d.
    static let encryptedClientHello: UInt16 = 0xfe0d
}
