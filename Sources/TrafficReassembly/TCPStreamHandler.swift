import TrafficCapture
import TrafficWire

/// Identity of a TCP connection, fixed when its first packet is seen.
public struct TCPConnectionInfo: Sendable {
    /// tshark's `tcp.stream`: connections numbered 0, 1, 2, … in the order of their first packet.
    public var id: Int
    public var client: Endpoint
    public var server: Endpoint
    public var start: CaptureTime
    /// Position of the connection's first packet in the capture; orders connections found by
    /// parallel reassemblers into tshark's numbering.
    public var firstPacket: Int
    /// The tunnels and tags around the first packet's IP header, outermost first (e.g. VXLAN, then VLAN).
    /// Client and server are the inner addresses: the flow is analysed as if captured inside the tunnel.
    public var encapsulation = Encapsulation()

    public init(id: Int, client: Endpoint, server: Endpoint, start: CaptureTime, firstPacket: Int = 0) {
        self.id = id
        self.client = client
        self.server = server
        self.start = start
        self.firstPacket = firstPacket
    }
}

/// The packet that carried bytes handed to a `TCPStreamHandler`.
public struct TCPSegmentContext: Sendable {
    /// Capture time of the packet.
    public var time: CaptureTime
    /// The packet's frame length on the wire (pcap `len`).
    public var frameBytes: Int
    /// Link, IP and TCP header bytes of the packet: `frameBytes` minus TCP payload.
    public var headerBytes: Int
    /// The header bytes that this delivery carries for packet-overhead attribution: `headerBytes` on the
    /// first delivery of a data segment's bytes, 0 on later pieces of it and for SYN/FIN/RST frames (whose
    /// headers are handshake or teardown bytes). Summed over deliveries it equals `dataHeaderBytes`.
    public var overheadBytes: Int
    /// For a server's data segment: the client stream offset its ACK field acknowledges (how many client bytes the
    /// server had when it sent this), to pair responses across requests lost in a capture hole; -1 when unknown
    /// (no ACK flag, the client's stream not started, or a client segment, for which nothing needs it).
    public var acknowledged: Int64

    public init(time: CaptureTime, frameBytes: Int, headerBytes: Int, overheadBytes: Int? = nil, acknowledged: Int64 = -1) {
        self.time = time
        self.frameBytes = frameBytes
        self.headerBytes = headerBytes
        self.overheadBytes = overheadBytes ?? headerBytes
        self.acknowledged = acknowledged
    }
}

/// A frame that carries no new stream bytes, for attributing its cost to a message.
public struct TCPPacketEvent: Sendable {
    public enum Kind: Sendable {
        /// A pure ACK (or keep-alive); `streamOffset` is the acknowledged position in the *other* direction.
        case ack
        /// A segment whose payload was all seen before; `streamOffset` is where its payload starts in this direction.
        case retransmission
    }

    public var kind: Kind
    /// The direction the frame travelled.
    public var direction: Direction
    public var frameBytes: Int
    public var streamOffset: Int64
    public var time: CaptureTime

    public init(kind: Kind, direction: Direction, frameBytes: Int, streamOffset: Int64, time: CaptureTime) {
        self.kind = kind
        self.direction = direction
        self.frameBytes = frameBytes
        self.streamOffset = streamOffset
        self.time = time
    }
}

/// Receives the reassembled byte streams of one connection (both directions).
///
/// Call order, per direction: any mix of `receive` and `skip` in sequence order, each stream byte
/// exactly once; then `finish` once for the connection, after which nothing else is called.
public protocol TCPStreamHandler: AnyObject {
    /// In-order bytes of `direction`. `bytes` is valid only during the call: copy what must outlive it.
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext)
    /// `byteCount` bytes of `direction` were never captured (lost, cut by the snaplen, or dropped over a memory cap).
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime)
    /// Both directions have ended: closed by FIN/RST, idle past the timeout, evicted, or at the end of the capture.
    func finish(time: CaptureTime)
    /// A pure ACK or a retransmission was seen (also after `finish`, until `connectionEnded`).
    func packet(_ event: TCPPacketEvent)
    /// The reassembler lets go of the connection: its final accounting. Called once, after `finish`.
    func connectionEnded(_ summary: TCPConnectionSummary)
    /// The client's ACK of the SYN-ACK completed the three-way handshake that the client's SYN at `syn`
    /// began (HAR's `connect`). Called at most once, before any byte, and only when both were captured.
    func handshakeCompleted(syn: CaptureTime, ack: CaptureTime)
}

extension TCPStreamHandler {
    public func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {}
    public func packet(_ event: TCPPacketEvent) {}
    public func connectionEnded(_ summary: TCPConnectionSummary) {}
}
