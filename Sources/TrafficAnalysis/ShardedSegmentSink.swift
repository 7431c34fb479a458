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
