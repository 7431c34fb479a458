/// A decoded TCP segment with its addresses: what the reassembler consumes.
///
/// `payload` points into the packet (or into the IP fragment reassembler's buffer) and is valid
/// only until the next packet is decoded.
public struct TCPSegment {
    /// TCP header flags (RFC 9293 §3.1).
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let fin = Flags(rawValue: 0x01)
        public static let syn = Flags(rawValue: 0x02)
        public static let rst = Flags(rawValue: 0x04)
        public static let psh = Flags(rawValue: 0x08)
        public static let ack = Flags(rawValue: 0x10)
    }

    public var source: Endpoint
    public var destination: Endpoint
    public var sequenceNumber: UInt32
    public var acknowledgmentNumber: UInt32
    public var flags: Flags
    /// The TCP payload length that the IP header claims.
    public var payloadLength: Int
    /// The captured payload bytes: shorter than `payloadLength` when the snaplen cut the packet.
    public var payload: UnsafeRawBufferPointer
    /// Frame bytes on the wire (pcap `len`), summed over all fragments of a fragmented datagram.
    public var frameBytes: Int
    /// Frames that carried this segment: 1, or the number of IP fragments.
    public var frameCount: Int
    /// The tunnels and tags around the IP packet, outermost first; empty for a plain frame.
    public var encapsulation: Encapsulation

    /// Link, tunnel, IP and TCP header bytes (and link padding): everything in the frames but the payload.
    public var headerBytes: Int { max(0, frameBytes - payloadLength) }

    public init(
        source: Endpoint, destination: Endpoint, sequenceNumber: UInt32, acknowledgmentNumber: UInt32,
        flags: Flags, payloadLength: Int, payload: UnsafeRawBufferPointer, frameBytes: Int, frameCount: Int = 1,
        encapsulation: Encapsulation = Encapsulation()
    ) {
        self.source = source
        self.destination = destination
        self.sequenceNumber = sequenceNumber
        self.acknowledgmentNumber = acknowledgmentNumber
        self.flags = flags
        self.payloadLength = payloadLength
        self.payload = payload
        self.frameBytes = frameBytes
        self.frameCount = frameCount
        self.encapsulation = encapsulation
    }
}
