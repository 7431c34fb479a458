import TrafficAggregation
import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Spreads connections over threads (`--jobs`): shard 0 runs on the reading thread itself, on the packet as
/// read; the reading thread copies every other shard's segments into that shard's batch for its worker thread.
/// Each shard has its own reassembler and HTTP stages on whole connections, so no state is shared between
/// threads.
///
/// A connection is placed when its first segment is read, on the shard that is least behind
/// (`ConnectionPlacement.byLoad`): a worker while it has less than `behind` batches waiting, else the reading
/// thread. The reading thread also reads and decodes every packet and copies the workers' segments, so how much
/// analysis it can take besides depends on the machine, the capture and the options (decrypting TLS, inflating
/// every body, listing records); placed by load, both threads end together without a share worked out for each.
/// `ConnectionRoutes` keeps each open connection's shard, so that all of its segments follow the first.
///
/// Memory stays bounded: every worker has a fixed number of batches that circulate between the
/// reader and the worker. Each worker's clock is the capture time of the packets it sees, so idle
/// connections expire as they would in one reassembler, up to a batch's worth of time.
final class ShardedSegmentSink: SegmentSink {
    private let local: TCPReassembler
    private let workers: [ShardWorker]
    /// The batch each worker's segments go into, owned here (retained when taken from the worker's free
    /// list, handed over with that reference): a strong reference read from an array is retained and
    /// released around every use, an atomic pair per packet.
    private var filling: [Unmanaged<SegmentBatch>]
    private let routes: ConnectionRoutes
    private let placement: ConnectionPlacement
    /// Each shard's reassembler's `maxConnections`: a new connection goes to a shard with fewer routes than that
    /// (routes outlive their connections a little, so a shard is never placed past its cap).
    private let connectionCaps: [Int]
    /// Segments routed to each shard so far (the n of `ConnectionRoutes.Slot.last`); raw memory, as an array's
    /// store checked its uniqueness per packet.
    private let routed: UnsafeMutablePointer<Int>
    /// Batches handed to each worker so far (against its `completed`).
    private let handed: UnsafeMutablePointer<Int>
    private let localNotices = ConnectionEndNotices()
    /// The last packet's connection and its slot in `routes` (−1: none).
    private var recentKey = RouteKey(Endpoint(address: IPAddress(ipv4: 0), port: 0), Endpoint(address: IPAddress(ipv4: 0), port: 0))
    private var recentSlot = -1
    /// The shard `ConnectionPlacement.inTurn` gives the next connection.
    private var turn = 0
    /// A worker with this many batches handed and not done is behind: new connections stay on the reading
    /// thread. One batch is ~0.25 ms of a worker's work on small packets; of its six, one is being filled. Two
    /// jobs on 2 cores (AMD EPYC VM), medians of 5–7 interleaved runs: at 1 the reading thread was 93 % busy and
    /// the worker 45 %; at 2 the 1 GiB API bench took 1.064 s, bulk 0.911 s, 256 MiB HTTPS with keys 0.968 s; at 3
    /// 1.142, 0.890 and 1.015 s (the hash share before: 1.211, 1.019 and 1.173 s).
    static let behind = 2

    /// `makeReassembler(shard, connectionEnded)` builds a shard's reassembler, called for shards 0, 1, … in order;
    /// shard 0's is used on the calling thread, every other one only on its worker's thread. Its reassembler must
    /// call `connectionEnded` with every connection it lets go of (the routes of ended connections go).
    /// With a record stream: where each shard's progress goes (`ShardRecordNumbering.advance`), and how many
    /// segments until every worker is handed its batch, full or not, so that no shard's progress lags far.
    private let progress: ((_ shard: Int, _ position: Int) -> Void)?
    private static let progressInterval = 4096
    private var untilProgress = ShardedSegmentSink.progressInterval

    init(
        shards: Int, placement: ConnectionPlacement = .byLoad, connectionCaps: [Int]? = nil,
        progress: ((_ shard: Int, _ position: Int) -> Void)? = nil,
        makeReassembler: (_ shard: Int, _ connectionEnded: @escaping (TCPConnectionInfo) -> Void) -> TCPReassembler
    ) {
        precondition(shards >= 2, "one shard is LocalSegmentSink")
        self.progress = progress
        self.placement = placement
        self.connectionCaps = connectionCaps ?? [Int](repeating: .max, count: shards)
        precondition(self.connectionCaps.count == shards, "a cap for every shard")
        routes = ConnectionRoutes(shards: shards)
        let localNotices = localNotices
        local = makeReassembler(0) { localNotices.connectionEnded($0) }
        workers = (1..<shards).map { shard in
            let notices = ConnectionEndNotices()
            return ShardWorker(
                reassembler: makeReassembler(shard) { notices.connectionEnded($0) }, notices: notices,
                batchDone: progress.map { report in { report(shard, $0) } })
        }
        routed = .allocate(capacity: shards)
        routed.initialize(repeating: 0, count: shards)
        handed = .allocate(capacity: shards - 1)
        handed.initialize(repeating: 0, count: shards - 1)
        filling = workers.map { Unmanaged.passRetained($0.freeBatches.pop()!) }
        for worker in workers { worker.start() }
    }

    func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
        let key = RouteKey(segment.source, segment.destination)
        // About half the packets of the API bench follow one of the same connection: its slot is used again
        // without the hash and the probe (until an entry moves: `routesEnded`, or a new one grows the table).
        let reused = recentSlot >= 0 && key == recentKey
        var slot = recentSlot, found = reused
        if !reused {
            (slot, found) = routes.find(key)
            recentKey = key
        }
        let shard = found ? routes.shard(at: slot) : place()
        let n = routed[shard] &+ 1
        routed[shard] = n
        if found {
            routes.setLast(2 &* n, at: slot)
            recentSlot = slot
        } else {
            recentSlot = routes.insert(key, shard: shard, last: 2 &* n, at: slot)
        }
        if shard == 0 {
            localNotices.position = 2 &* n
            local.process(segment, time: time, packetIndex: packetIndex)
            if !localNotices.ended.isEmpty { routesEnded(&localNotices.ended, shard: 0) }
        } else {
            let worker = shard - 1
            let full = filling[worker]._withUnsafeGuaranteedRef { batch in
                batch.append(segment, time: time, packetIndex: packetIndex)
                return batch.isFull
            }
            if full { hand(worker, time: time, position: packetIndex + 1) }
        }
        if let progress {
            untilProgress -= 1
            if untilProgress == 0 {
                untilProgress = Self.progressInterval
                // Batches handed early carry no clock (`latest` zero): a worker's idle expiry stays as without a
                // stream, driven by its own packets and full batches.
                for worker in workers.indices { hand(worker, time: .zero, position: packetIndex + 1) }
                progress(0, packetIndex + 1)
            }
        }
    }

    /// The shard for a new connection: one below its connection cap.
    private func place() -> Int {
        switch placement {
        case .inTurn:
            // The next shard in turn that has room.
            for step in 0...workers.count {
                let shard = (turn + step) % (workers.count + 1)
                if hasRoom(shard) {
                    turn = (shard + 1) % (workers.count + 1)
                    return shard
                }
            }
            return leastOver()
        case .byLoad:
            // The worker with the fewest batches outstanding, unless even it is behind.
            var best = -1, fewest = Int.max
            for worker in workers.indices where hasRoom(worker + 1) {
                let outstanding = handed[worker] - workers[worker].completed.load(ordering: .relaxed)
                if outstanding < fewest {
                    best = worker
                    fewest = outstanding
                }
            }
            if best >= 0 && (fewest < Self.behind || !hasRoom(0)) { return best + 1 }
            return hasRoom(0) ? 0 : leastOver()
        }
    }

    @inline(__always)
    private func hasRoom(_ shard: Int) -> Bool { routes.openCount(shard) < connectionCaps[shard] }

    /// Every shard at its cap (more connections open than one reassembler would hold): the one least over it,
    /// which evicts as one reassembler would have. In practice the reading thread's shard: its reassembler evicts at
    /// once, so it is never over, and ties go to the first (a worker's ends reach the routes only with its batches).
    private func leastOver() -> Int {
        (0...workers.count).min { routes.openCount($0) - connectionCaps[$0] < routes.openCount($1) - connectionCaps[$1] }!
    }

    private func routesEnded(_ ended: inout [EndedRoute], shard: Int) {
        recentSlot = -1
        for route in ended { routes.ended(route, shard: shard) }
        ended.removeAll(keepingCapacity: true)
    }

    private func hand(_ worker: Int, time: CaptureTime, position: Int) {
        let batch = filling[worker].takeRetainedValue()
        batch.latest = time
        batch.position = position
        handed[worker] += 1
        workers[worker].inbox.push(batch)
        let free = workers[worker].freeBatches.pop()!
        if !free.ended.isEmpty { routesEnded(&free.ended, shard: worker + 1) }
        filling[worker] = Unmanaged.passRetained(free)
    }

    /// Whether `finish` handed the filling batches over (their references went with them).
    private var handedOver = false

    deinit {
        if !handedOver { for batch in filling { batch.release() } }
        routed.deallocate()
        handed.deallocate()
    }

    func finish() {
        for (shard, worker) in workers.enumerated() {
            worker.inbox.push(filling[shard].takeRetainedValue())
            worker.inbox.close()
        }
        handedOver = true
        local.finish()
        for worker in workers { worker.join() }
    }

    var connectionCount: Int { workers.reduce(local.connectionCount) { $0 + $1.reassembler.connectionCount } }

    var anomalies: [Int] {
        ([local.anomalies] + workers.map(\.reassembler.anomalies)).reduce(into: [Int](repeating: 0, count: TCPAnomaly.allCases.count)) {
            for i in $0.indices { $0[i] += $1[i] }
        }
    }
}
