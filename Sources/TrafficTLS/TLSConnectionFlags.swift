import TrafficSessions

/// Notable facts and anomalies of a TLS connection, reported by their snake_case names.
struct TLSConnectionFlags: OptionSet {
    let rawValue: UInt16

    /// The ClientHello carries encrypted_client_hello: the SNI seen is the public (outer) name.
    static let ech = TLSConnectionFlags(rawValue: 1 << 0)
    /// The server answered with a HelloRetryRequest (RFC 8446 §4.1.4).
    static let helloRetryRequest = TLSConnectionFlags(rawValue: 1 << 1)
    /// Bytes were missing from a stream.
    static let gap = TLSConnectionFlags(rawValue: 1 << 2)
    /// An implausible record header where one was due: the bytes are counted as non-TLS.
    static let recordDesync = TLSConnectionFlags(rawValue: 1 << 3)
    /// A plausible record header was found again after a gap or a desync.
    static let resynchronized = TLSConnectionFlags(rawValue: 1 << 4)
    /// A stream ended inside a record.
    static let truncatedRecord = TLSConnectionFlags(rawValue: 1 << 5)
    /// A hello was larger than `TLSParserLimits.maximumHandshakeMessageBytes` and was not parsed.
    static let handshakeMessageTooLarge = TLSConnectionFlags(rawValue: 1 << 6)
    static let malformedClientHello = TLSConnectionFlags(rawValue: 1 << 7)
    static let malformedServerHello = TLSConnectionFlags(rawValue: 1 << 8)
    /// A gap or desync cut a handshake message being reassembled: later hellos in that direction are not parsed.
    static let handshakeLost = TLSConnectionFlags(rawValue: 1 << 9)
    /// The session was resumed (see `TLSConnectionSummary.resumed`).
    static let resumed = TLSConnectionFlags(rawValue: 1 << 10)

    /// Names in a fixed (sorted) order, so that reports are deterministic.
    static let names: [(TLSConnectionFlags, RecordAnomaly)] = [
        (.ech, .ech), (.gap, .gap), (.handshakeLost, .handshakeLost),
        (.handshakeMessageTooLarge, .handshakeMessageTooLarge), (.helloRetryRequest, .helloRetryRequest),
        (.malformedClientHello, .malformedClientHello), (.malformedServerHello, .malformedServerHello),
        (.recordDesync, .recordDesync), (.resumed, .resumed), (.resynchronized, .resynchronized),
        (.truncatedRecord, .truncatedRecord),
    ]

    var anomalies: [RecordAnomaly] { Self.names.compactMap { contains($0.0) ? $0.1 : nil } }
}
