import TrafficSessions

extension TLSConnectionParser {
    /// Whether a connection's first client bytes start a TLS ClientHello, on any port.
    ///
    /// Needs the first 6 bytes: a plausible record header of type handshake (22) with version 0x03xx
    /// (RFC 8446 §5.1; the record-layer version is 0x0301 or 0x0303 in practice), then handshake
    /// type client_hello (1, RFC 8446 §4). Fewer bytes, or anything else, gives false.
    public static func looksLikeTLS(_ firstBytes: UnsafeRawBufferPointer) -> Bool {
        guard firstBytes.count >= TLSRecordHeader.byteCount + 1,
            let header = TLSRecordHeader(firstBytes, at: 0),
            header.contentType == .handshake, header.length > 0
        else { return false }
        return firstBytes[TLSRecordHeader.byteCount] == TLSHandshakeAssembler.clientHello
    }
}

extension TLSConnectionParser {
    /// The session layer's detector for TLS: a ClientHello's record header, looked for in whichever
    /// direction's first bytes arrive first (a capture that missed the client's first segment still has
    /// the server's, which is then not TLS by this test: the fallback gets it).
    public static let detector = ProtocolDetector(name: "tls") { firstBytes, _ in looksLikeTLS(firstBytes) }
}
