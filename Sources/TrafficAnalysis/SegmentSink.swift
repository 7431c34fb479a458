import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Where the capture reader sends decoded TCP segments: one reassembler, or shards of them.
protocol SegmentSink: AnyObject {
    /// `segment`'s payload is valid only during the call.
    func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int)
    /// The capture has ended: flush every connection.
    func finish()
    /// Connections seen, and the reassembly anomalies by index of `TCPAnomaly`.
    var connectionCount: Int { get }
    var anomalies: [Int] { get }
}

/// The single-threaded sink: one reassembler on the reading thread.
final class LocalSegmentSink: SegmentSink {
    let reassembler: TCPReassembler

    init(_ reassembler: TCPReassembler) { self.reassembler = reassembler }

    func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
        reassembler.process(segment, time: time, packetIndex: packetIndex)
    }

    func finish() { reassembler.finish() }
    var connectionCount: Int { reassembler.connectionCount }
    var anomalies: [Int] { reassembler.anomalies }
}
