import TrafficCapture
import TrafficReassembly

/// The application stage over a decrypted QUIC connection (HTTP/3): it gets each stream's bytes in order per
/// direction and never learns they came in encrypted packets.
public protocol QUICStreamConsumer: AnyObject {
    func receive(stream: UInt64, direction: Direction, bytes: UnsafeRawBufferPointer, time: CaptureTime)
    /// The stream's FIN: every byte up to its final size was delivered.
    func end(stream: UInt64, direction: Direction, time: CaptureTime)
    /// Bytes of the stream that will never be delivered (never captured, or in packets that did not decrypt).
    func skip(stream: UInt64, direction: Direction, byteCount: Int, time: CaptureTime)
    /// RESET_STREAM for the stream in that direction.
    func reset(stream: UInt64, direction: Direction, time: CaptureTime)
    /// QUIC's cost of carrying the stream's next bytes in that direction, told before those bytes.
    func addOverhead(stream: UInt64, direction: Direction, bytes: Int)
    func finish(time: CaptureTime)
}

/// Per direction of a QUIC connection: what the wire carried and what QUIC's framing cost.
public struct QUICDirectionStats: Sendable, Equatable {
    public var datagrams = 0
    /// Σ(UDP length − 8).
    public var udpPayloadBytes = 0
    /// Σ frame length (pcap `len`) of those datagrams.
    public var frameBytes = 0
    /// QUIC packets, each coalesced packet counted (Version Negotiation and Retry one each).
    public var packets = 0
    /// Datagram bytes after the last packet (zeros, or packets for another connection ID).
    public var paddingBytes = 0
    /// With keys: packets whose protection was removed, and those that could not be (no keys, failed tag).
    public var decryptedPackets = 0
    public var undecryptedPackets = 0
    /// With keys: STREAM payload bytes of request (bidirectional) streams and of unidirectional streams,
    /// delivered once (retransmissions not counted).
    public var requestStreamBytes = 0
    public var unidirectionalStreamBytes = 0
    /// With keys: packets (and datagram padding) that carried no request-stream bytes, minus the
    /// unidirectional stream bytes they carried: `quic_connection_bytes`.
    public var connectionBytes = 0
    /// With keys: the QUIC overhead handed to the streams' messages (`quic_overhead_bytes`).
    public var streamOverheadBytes = 0

    public init() {}
}
