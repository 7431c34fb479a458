/// Bounds on what one QUIC connection and the table may hold: memory follows open connections, not the capture.
public struct QUICLimits: Sendable {
    /// Connections open at once; past it the one idle longest ends early.
    public var maxConnections = 100_000
    /// A connection with no datagram for this long (capture time) has ended: QUIC's idle timeout is what
    /// peers offer (RFC 9000 §10.1), commonly 30 s; without keys its CONNECTION_CLOSE is invisible.
    public var idleTimeoutNanoseconds: Int64 = 120_000_000_000
    /// After a decrypted CONNECTION_CLOSE the connection drains (RFC 9000 §10.2, three probe timeouts) and then
    /// ends; datagrams of its paths later than this are other UDP.
    public var drainNanoseconds: Int64 = 3_000_000_000
    /// CRYPTO bytes of the Initials kept while a ClientHello or ServerHello completes (a post-quantum
    /// ClientHello is 1.5–2 KB; certificates travel in Handshake packets, which are not kept).
    public var maxCryptoBytes = 64 * 1024
    /// Stream bytes held past a hole per stream direction before the hole is given up.
    public var maxHeldStreamBytes = 1 << 20
    public var maxOpenStreams = 10_000
    /// Closed streams remembered so that a late retransmission is not read as new data.
    public var maxClosedStreams = 100_000

    public init() {}
}
