import Foundation
import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Spreads connections over worker threads by a hash of their endpoints (`--jobs`): the reading
/// thread decodes packets and copies each segment into its shard's batch; each worker runs its own
/// reassembler and HTTP stages on whole connections, so no state is shared between workers.
///
/// Memory stays bounded: every worker has a fixed number of batches that circulate between the
/// reader and the worker. Each worker's clock is the capture time of the packets it sees, so idle
/// connections expire as they would in one reassembler, up to a batch's worth of time.
final class ShardedSegmentSink: SegmentSink {
    private let workers: [ShardWorker]
    private var filling: [SegmentBatch]

    /// `makeReassembler(shard)` builds a worker's reassembler; it is used only on that worker's thread.
    init(shards: Int, makeReassembler: (Int) -> TCPReassembler) {
        workers = (0..<shards).map { ShardWorker(reassembler: makeReassembler($0)) }
        filling = workers.map { $0.freeBatches.pop()! }
        for worker in workers { worker.start() }
    }

    func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
        let shard = Self.shard(segment.source, segment.destination, count: workers.count)
        let batch = filling[shard]
        batch.append(segment, time: time, packetIndex: packetIndex)
        if batch.isFull { hand(shard, time: time) }
    }

    private func hand(_ shard: Int, time: CaptureTime) {
        let batch = filling[shard]
        batch.latest = time
        workers[shard].inbox.push(batch)
        filling[shard] = workers[shard].freeBatches.pop()!
    }

    func finish() {
        for (shard, worker) in workers.enumerated() {
            worker.inbox.push(filling[shard])
            worker.inbox.close()
        }
        for worker in workers { worker.join() }
    }

    var connectionCount: Int { workers.reduce(0) { $0 + $1.reassembler.connectionCount } }

    var anomalies: [Int] {
        workers.map(\.reassembler.anomalies).reduce(into: [Int](repeating: 0, count: TCPAnomaly.allCases.count)) {
            for i in $0.indices { $0[i] += $1[i] }
        }
    }

    /// The same shard for both directions: the endpoints' hashes are combined symmetrically.
    static func shard(_ a: Endpoint, _ b: Endpoint, count: Int) -> Int {
        func mix(_ e: Endpoint) -> UInt64 {
            var x = e.address.high &* 0x9E37_79B9_7F4A_7C15 ^ e.address.low &* 0xC2B2_AE3D_27D4_EB4F
            x ^= UInt64(e.port) &* 0x1656_67B1_9E37_79F9
            x ^= x >> 29
            return x &* 0xBF58_476D_1CE4_E5B9
        }
        var h = mix(a) ^ mix(b)
        h ^= h >> 32
        return Int(h % UInt64(count))
    }
}

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
        var time: CaptureTime
        var packetIndex: Int
    }

    static let maxEntries = 1024
    static let maxBytes = 1 << 20

    var entries: [Entry] = []
    var bytes: [UInt8] = []
    var latest = CaptureTime.zero

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
            frameBytes: segment.frameBytes, frameCount: segment.frameCount, time: time, packetIndex: packetIndex))
    }

    func reset() {
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}

/// One worker thread with its reassembler, the batches it receives, and the empty ones it returns.
final class ShardWorker: @unchecked Sendable {
    let reassembler: TCPReassembler
    let inbox = BlockingQueue<SegmentBatch>()
    let freeBatches = BlockingQueue<SegmentBatch>()
    private let done = NSCondition()
    private var finished = false

    /// Four batches per worker: enough to keep both threads busy, few enough to bound memory (~4 MiB each).
    init(reassembler: TCPReassembler) {
        self.reassembler = reassembler
        for _ in 0..<4 { freeBatches.push(SegmentBatch()) }
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func run() {
        while let batch = inbox.pop() {
            batch.bytes.withUnsafeBytes { bytes in
                for entry in batch.entries {
                    let segment = TCPSegment(
                        source: entry.source, destination: entry.destination, sequenceNumber: entry.sequenceNumber,
                        acknowledgmentNumber: entry.acknowledgmentNumber, flags: entry.flags,
                        payloadLength: entry.payloadLength,
                        payload: UnsafeRawBufferPointer(
                            rebasing: bytes[entry.payloadStart..<(entry.payloadStart + entry.payloadCount)]),
                        frameBytes: entry.frameBytes, frameCount: entry.frameCount)
                    reassembler.process(segment, time: entry.time, packetIndex: entry.packetIndex)
                }
            }
            if batch.latest > .zero { reassembler.advance(to: batch.latest) }
            batch.reset()
            freeBatches.push(batch)
        }
        reassembler.finish()
        done.lock()
        finished = true
        done.signal()
        done.unlock()
    }

    func join() {
        done.lock()
        while !finished { done.wait() }
        done.unlock()
    }
}

/// A FIFO between two threads; `pop` blocks until an item arrives or the queue is closed and empty.
final class BlockingQueue<Element>: @unchecked Sendable {
    private var items: [Element] = []
    private var head = 0
    private var closed = false
    private let condition = NSCondition()

    func push(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count {
            if closed { return nil }
            condition.wait()
        }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }
}
