import TrafficCapture
import TrafficWire

/// Identity of a TCP connection, fixed when its first packet is seen.
public struct TCPConnectionInfo: Sendable {
    /// tshark's `tcp.stream`: connections numbered 0, 1, 2, … in the order of their first packet.
    public var id: Int
    public var client: Endpoint
    public var server: Endpoint
    public var start: CaptureTime

    public init(id: Int, client: Endpoint, server: Endpoint, start: CaptureTime) {
        self.id = id
        self.client = client
        self.server = server
        self.start = start
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

    public init(time: CaptureTime, frameBytes: Int, headerBytes: Int) {
        self.time = time
        self.frameBytes = frameBytes
        self.headerBytes = headerBytes
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
}
