import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Segments copied out of packets for a worker: headers in an array, payloads in one byte buffer.
final class SegmentBatch: @unchecked Sendable {
    struct Entry {
        var source: Endpoint
        var destination: Endpoint
        var sequenceNumber: UInt32
        var acknowledgmentNumber: UInt32
        var flags: TCPSegment.Flags
        var payloadLength: Int
        var payloadStart: Int
        var payloadCount: Int
        var frameBytes: Int
        var frameCount: Int
        var encapsulation: Encapsulation
        var time: CaptureTime
        var packetIndex: Int
    }

    static let maxEntries = 512
    static let maxBytes = 1 << 19

    var entries: [Entry] = []
    var bytes: [UInt8] = []
    var latest = CaptureTime.zero
    /// The reading thread's position when it handed the batch over: every packet of this shard below it is in
    /// this batch or an earlier one (`ShardRecordNumbering`).
    var position = 0

    init() {
        entries.reserveCapacity(Self.maxEntries)
        bytes.reserveCapacity(Self.maxBytes + 65_536)
    }

    var isFull: Bool { entries.count >= Self.maxEntries || bytes.count >= Self.maxBytes }

    func append(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
        let start = bytes.count
        bytes.append(contentsOf: segment.payload)
        entries.append(Entry(
            source: segment.source, destination: segment.destination, sequenceNumber: segment.sequenceNumber,
            acknowledgmentNumber: segment.acknowledgmentNumber, flags: segment.flags,
            payloadLength: segment.payloadLength, payloadStart: start, payloadCount: segment.payload.count,
            frameBytes: segment.frameBytes, frameCount: segment.frameCount,
            encapsulation: segment.encapsulation, time: time, packetIndex: packetIndex))
    }

    func reset() {
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}
