import TrafficCapture

/// Where bytes handed to a `StreamAnalyzer` came from on the wire: when they arrived, and the packet
/// overhead that travels with them.
///
/// Overhead follows the bytes instead of being looked up by sequence number later: the analyzer that turns
/// bytes into messages shares `overheadBytes` among the messages of this delivery in proportion to their
/// bytes. A transforming analyzer (TLS decryption, a tunnel's framing) hands its child spans of its own,
/// made from the spans of the units that carried the child's bytes, so the child never knows what the
/// wire looked like and its messages still carry the cost of the packets that carried them.
public struct WireSpan: Sendable, Equatable {
    /// Capture time of the packet that completed these bytes.
    public var time: CaptureTime
    /// Link, IP and TCP header bytes (or, below a transforming analyzer, their share) that this delivery
    /// carries for packet-overhead attribution; 0 for pieces whose packet was counted already.
    public var overheadBytes: Int
    /// Below a decrypting stage: the TLS record-layer bytes beyond the plaintext (headers, nonces, tags or
    /// MACs, padding) of the records that carried these bytes, shared like `overheadBytes` into the messages'
    /// `tlsOverheadBytes`; 0 for cleartext.
    public var framingBytes: Int

    /// For server bytes straight off TCP: the client stream offset the segment acknowledged
    /// (`TCPSegmentContext.acknowledged`); -1 when unknown, and below a transforming stage (TLS, HTTP/2).
    public var acknowledged: Int64

    public init(time: CaptureTime, overheadBytes: Int = 0, framingBytes: Int = 0, acknowledged: Int64 = -1) {
        self.time = time
        self.overheadBytes = overheadBytes
        self.framingBytes = framingBytes
        self.acknowledged = acknowledged
    }
}
