import TrafficTestSupport
import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Records what a reassembler hands on, per direction.
final class StreamRecorder: TCPStreamHandler {
    var bytes: [[UInt8]] = [[], []]
    /// Receives and skips in order: a positive number is received bytes, a negative one a skip.
    var events: [[Int]] = [[], []]
    var finishCount = 0

    func receive(_ data: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        precondition(finishCount == 0, "receive after finish")
        bytes[direction.rawValue] += data
        events[direction.rawValue].append(data.count)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        precondition(finishCount == 0, "skip after finish")
        events[direction.rawValue].append(-byteCount)
    }

    func finish(time: CaptureTime) { finishCount += 1 }

    var skips: [[Int]] { events.map { $0.filter { $0 < 0 }.map { -$0 } } }
}

/// Builds segments of one connection between 10.0.0.1:40000 (client) and 10.0.0.2:80.
struct SegmentFactory {
    static let client = Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 40000)
    static let server = Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 80)
    /// Ethernet + IPv4 + TCP without options.
    static let headerBytes = 54

    var client = SegmentFactory.client
    var server = SegmentFactory.server

    /// Feeds one segment; `payload` is copied by the reassembler if it must be held.
    func send(_ reassembler: TCPReassembler, fromClient: Bool, seq: UInt32, ack: UInt32 = 0,
              flags: TCPSegment.Flags = [.ack], payload: [UInt8] = [], claimed: Int? = nil, time: Int64 = 0) {
        payload.withUnsafeBytes { bytes in
            let length = claimed ?? payload.count
            let segment = TCPSegment(
                source: fromClient ? client : server, destination: fromClient ? server : client,
                sequenceNumber: seq, acknowledgmentNumber: ack, flags: flags, payloadLength: length, payload: bytes,
                frameBytes: Self.headerBytes + length)
            reassembler.process(segment, time: CaptureTime(nanoseconds: time))
        }
    }
}

