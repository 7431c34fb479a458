import TrafficCapture
import TrafficWire

/// What one capture file held, beyond its TCP connections.
public struct CaptureSummary: Sendable {
    public var path: String
    public var linkType: String
    public var packets = 0
    /// pcap `len` of every frame.
    public var frameBytes = 0
    /// The earliest and the latest timestamp (not the first and last packet: clocks step back, and files
    /// joined with `mergecap -a` run backwards at the join).
    public var firstPacket: CaptureTime?
    public var lastPacket: CaptureTime?
    /// Packets timestamped earlier than the packet before them.
    public var backwardTimestamps = 0
    /// Frames that are not TCP over IP (ARP, UDP, ICMP, …): counted, not analysed.
    public var nonTCPPackets = 0
    public var nonTCPFrameBytes = 0
    /// UDP datagrams that a QUIC connection took (issue 23), and their frame bytes: not in `nonTCPPackets`.
    public var quicDatagrams = 0
    public var quicFrameBytes = 0
    /// Frames too damaged to decode, and IP fragments still held when the capture ended.
    public var undecodedPackets = 0
    public var undecodedFrameBytes = 0
    /// Frames decoded through each encapsulation kind, by its stable name (`vxlan`, `vlan`, …); only non-zero
    /// ones. A frame counts once per kind, for TCP and non-TCP inner packets alike.
    public var encapsulatedPackets: [String: Int] = [:]
    /// Damage that stopped reading early; packets before it were analysed.
    public var damage: CaptureDamage?

    public init(path: String, linkType: String) {
        self.path = path
        self.linkType = linkType
    }

    /// The capture span: from the earliest to the latest timestamp, never negative.
    public var duration: CaptureTime {
        guard let firstPacket, let lastPacket else { return .zero }
        return firstPacket.duration(to: lastPacket)
    }
}
