import TrafficCapture

/// Packet and byte accounting for one direction of a connection.
///
/// Every frame falls into exactly one packet class (handshake, teardown, data, pure ACK,
/// retransmission), and its bytes are split so that
/// `frameBytes == handshakeBytes + teardownBytes + ackBytes + dataHeaderBytes + dataPayloadBytes + retransmissionFrameBytes`.
/// A FIN or RST frame with payload counts its non-payload bytes as teardown and its payload as data
/// (or as retransmission when the payload was seen before).
public struct TCPDirectionStats: Sendable, Equatable {
    public var packets = 0
    /// pcap `len` of every frame.
    public var frameBytes = 0
    /// TCP payload of every segment as the IP header states it, retransmissions included.
    public var payloadBytes = 0
    /// Stream bytes handed to the stream handler, each once.
    public var deliveredBytes = 0
    /// Stream bytes never captured: holes handed on as gaps.
    public var missingBytes = 0
    /// Payload bytes that repeated bytes already seen (retransmissions, overlaps, keep-alive probes).
    public var retransmittedBytes = 0

    /// SYN, SYN-ACK, and the ACK that completes the handshake.
    public var handshakePackets = 0
    public var handshakeBytes = 0
    /// FIN and RST frames (less any payload), and pure ACKs that acknowledge a FIN.
    public var teardownPackets = 0
    public var teardownBytes = 0
    /// Pure ACKs: no payload, no SYN/FIN/RST, not part of the handshake or teardown. Keep-alives count here.
    public var ackPackets = 0
    public var ackBytes = 0
    /// Segments carrying new payload.
    public var dataPackets = 0
    /// L2–L4 header bytes (and link padding) of data segments.
    public var dataHeaderBytes = 0
    /// Payload bytes of data segments (a partly overlapping segment counts whole here).
    public var dataPayloadBytes = 0
    /// Segments whose payload was entirely seen before, counted as whole frames.
    public var retransmissionPackets = 0
    public var retransmissionFrameBytes = 0
    /// New payload the snaplen cut off (counted in `dataPayloadBytes`, handed on as gaps).
    public var truncatedPayloadBytes = 0
    /// New payload that arrived after the connection's streams were finished, so was never delivered.
    public var undeliveredPayloadBytes = 0
    /// Header bytes of data segments none of whose payload was delivered (after close, or all cut by the
    /// snaplen); the rest of `dataHeaderBytes` travels with deliveries as `TCPSegmentContext.overheadBytes`.
    public var undeliveredHeaderBytes = 0

    public init() {}

    /// The class sums equal `frameBytes`; a violation is a bug in the classifier.
    public var isConserved: Bool {
        frameBytes == handshakeBytes + teardownBytes + ackBytes + dataHeaderBytes + dataPayloadBytes
            + retransmissionFrameBytes
    }
}

/// Everything known about a connection once the reassembler has let go of it.
public struct TCPConnectionSummary: Sendable {
    public var info: TCPConnectionInfo
    public var clientToServer = TCPDirectionStats()
    public var serverToClient = TCPDirectionStats()
    /// Capture time of the last packet.
    public var end: CaptureTime
    public var sawSYN = false
    public var sawFIN = false
    public var sawRST = false
    /// Dropped from the table before it closed: idle too long, or over the connection cap.
    public var evicted = false

    public subscript(direction: Direction) -> TCPDirectionStats {
        get { direction == .clientToServer ? clientToServer : serverToClient }
        set {
            if direction == .clientToServer { clientToServer = newValue } else { serverToClient = newValue }
        }
    }

    public var duration: CaptureTime { info.start.duration(to: end) }
}
