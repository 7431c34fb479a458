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

    /// The headers, in raw memory for `maxEntries` like the payloads: `[Entry].append` checked the array's uniqueness
    /// and capacity and copied the 15-word entry through a temporary, per segment. Entries are plain values.
    private let entryStorage: UnsafeMutablePointer<Entry>
    private var entryCount = 0
    /// Valid until `reset`.
    var entries: UnsafeBufferPointer<Entry> { UnsafeBufferPointer(start: entryStorage, count: entryCount) }
    /// The payloads, back to back in raw memory: appending one is a single copy (`[UInt8].append(contentsOf:)` of
    /// a raw buffer cost some 90 instructions a segment besides the copy).
    private var storage: UnsafeMutableRawBufferPointer
    private var byteCount = 0
    var latest = CaptureTime.zero
    /// The reading thread's position when it handed the batch over: every packet of this shard below it is in
    /// this batch or an earlier one (`ShardRecordNumbering`).
    var position = 0
    /// Connections the worker's reassembler let go of while this batch was its own (`ConnectionRoutes.ended`):
    /// they travel back to the reading thread with the empty batch.
    var ended: [EndedRoute] = []

    init() {
        entryStorage = .allocate(capacity: Self.maxEntries)
        storage = .allocate(byteCount: Self.maxBytes + 65_536, alignment: 16)
    }

    deinit {
        entryStorage.deallocate()
        storage.deallocate()
    }

    /// The payload bytes of `entries` (`payloadStart` indexes them); valid until `reset`.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<byteCount]) }

    /// A batch is handed over as soon as it is full, so `append` never writes past `maxEntries`.
    var isFull: Bool { entryCount >= Self.maxEntries || byteCount >= Self.maxBytes }

    func append(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
        let start = byteCount
        let count = segment.payload.count
        // Below `maxBytes` before the append, so only a payload over 64 KiB (a snaplen of up to 256 KiB) grows it.
        if storage.count - start < count { grow(to: start + count) }
        if count > 0 { (storage.baseAddress! + start).copyMemory(from: segment.payload.baseAddress!, byteCount: count) }
        byteCount = start + count
        precondition(entryCount < Self.maxEntries, "a full batch is handed over before the next append")
        (entryStorage + entryCount).initialize(to: Entry(
            source: segment.source, destination: segment.destination, sequenceNumber: segment.sequenceNumber,
            acknowledgmentNumber: segment.acknowledgmentNumber, flags: segment.flags,
            payloadLength: segment.payloadLength, payloadStart: start, payloadCount: count,
            frameBytes: segment.frameBytes, frameCount: segment.frameCount,
            encapsulation: segment.encapsulation, time: time, packetIndex: packetIndex))
        entryCount += 1
    }

    func reset() {
        entryCount = 0
        byteCount = 0
    }

    private func grow(to minimum: Int) {
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(minimum, storage.count * 2), alignment: 16)
        if byteCount > 0 { larger.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: byteCount) }
        storage.deallocate()
        storage = larger
    }
}
