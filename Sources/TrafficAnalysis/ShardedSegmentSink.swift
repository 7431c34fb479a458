import TrafficAggregation
import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Spreads connections over threads by a hash of their endpoints (`--jobs`): shard 0 runs on the
/// reading thread itself, on the packet as read; the reading thread copies every other shard's segments
/// into that shard's batch for its worker thread. Each shard has its own reassembler and HTTP stages on
/// whole connections, so no state is shared between threads.
///
/// The reading thread also reads and decodes every packet and copies the other shards' segments, so its
/// own shard gets fewer connections than a worker's: with two jobs 20 % of them, with three or more none;
/// more when the options make every connection costlier to analyse (decrypting TLS: 45 % with two jobs;
/// `localShare`, `readingCost`).
///
/// Memory stays bounded: every worker has a fixed number of batches that circulate between the
/// reader and the worker. Each worker's clock is the capture time of the packets it sees, so idle
/// connections expire as they would in one reassembler, up to a batch's worth of time.
final class ShardedSegmentSink: SegmentSink {
    private static let buckets: UInt64 = 1024
    private let local: TCPReassembler
    private let workers: [ShardWorker]
    /// The batch each worker's segments go into, owned here (retained when taken from the worker's free
    /// list, handed over with that reference): a strong reference read from an array is retained and
    /// released around every use, an atomic pair per packet.
    private var filling: [Unmanaged<SegmentBatch>]
    /// Hash buckets (of `buckets`) whose connections stay on the reading thread.
    private let localBuckets: UInt64

    /// `makeReassembler(shard)` builds a shard's reassembler, called for shards 0, 1, … in order; shard 0's
    /// is used on the calling thread, every other one only on its worker's thread.
    /// With a record stream: where each shard's progress goes (`ShardRecordNumbering.advance`), and how many
    /// segments until every worker is handed its batch, full or not, so that no shard's progress lags far.
    private let progress: ((_ shard: Int, _ position: Int) -> Void)?
    private static let progressInterval = 4096
    private var untilProgress = ShardedSegmentSink.progressInterval

    /// `readingCost`: what reading a connection's packets costs the reading thread, per unit of what analysing it
    /// costs a shard (`localShare`'s r, `readingCost(options:decrypting:)`).
    init(
        shards: Int, readingCost: Double = defaultReadingCost,
        progress: ((_ shard: Int, _ position: Int) -> Void)? = nil,
        makeReassembler: (Int) -> TCPReassembler
    ) {
        precondition(shards >= 2, "one shard is LocalSegmentSink")
        self.progress = progress
        local = makeReassembler(0)
        workers = (1..<shards).map { shard in
            ShardWorker(reassembler: makeReassembler(shard), batchDone: progress.map { report in { report(shard, $0) } })
        }
        localBuckets = Self.localShare(shards: shards, readingCost: readingCost)
        filling = workers.map { Unmanaged.passRetained($0.freeBatches.pop()!) }
        for worker in workers { worker.start() }
    }

    func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
        let hash = Self.hash(segment.source, segment.destination)
        if hash % Self.buckets < localBuckets {
            local.process(segment, time: time, packetIndex: packetIndex)
        } else {
            // One worker (two jobs, the default on two cores) needs no division: a 64-bit `div` per packet was an
            // eighth of this loop's own time on the reading thread (perf, 1 GiB API bench).
            let shard = workers.count == 1 ? 0 : Int((hash / Self.buckets) % UInt64(workers.count))
            let full = filling[shard]._withUnsafeGuaranteedRef { batch in
                batch.append(segment, time: time, packetIndex: packetIndex)
                return batch.isFull
            }
            if full { hand(shard, time: time, position: packetIndex + 1) }
        }
        if let progress {
            untilProgress -= 1
            if untilProgress == 0 {
                untilProgress = Self.progressInterval
                // Batches handed early carry no clock (`latest` zero): a worker's idle expiry stays as without a
                // stream, driven by its own packets and full batches.
                for shard in workers.indices { hand(shard, time: .zero, position: packetIndex + 1) }
                progress(0, packetIndex + 1)
            }
        }
    }

    private func hand(_ shard: Int, time: CaptureTime, position: Int) {
        let batch = filling[shard].takeRetainedValue()
        batch.latest = time
        batch.position = position
        workers[shard].inbox.push(batch)
        filling[shard] = Unmanaged.passRetained(workers[shard].freeBatches.pop()!)
    }

    /// Whether `finish` handed the filling batches over (their references went with them).
    private var handedOver = false

    deinit {
        if !handedOver { for batch in filling { batch.release() } }
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

    /// Hash buckets (of `buckets`) whose connections the reading thread analyses itself. Reading, decoding
    /// and copying every packet costs it r (`readingCost`) times what all connections' analysis costs, so the
    /// threads finish together when the reading thread takes the share `s` with `r + s = (1 − s) / (shards − 1)`:
    /// s = (1 − r (shards − 1)) / shards, a fifth with two jobs and r = 0.6, none with more.
    /// r was 0.45 when the analysis cost more (fifth pass of issue 25). Measured with the time each thread
    /// waited for the other (1 GiB API bench, two jobs, 27.5 % local, four batches): the worker waited
    /// 50–160 ms for batches and the reading thread 35–80 ms for free ones, the worker being idle longer, so
    /// the reading thread was the one to relieve. At 20 % with six to eight batches both waits fell to ~40 ms and
    /// the reading took 0.43–0.48 s instead of 0.46–0.50 (best and mean of five, interleaved); 17.5 % and
    /// 22.5 % were between the two.
    static func localShare(shards: Int, readingCost r: Double = defaultReadingCost) -> UInt64 {
        let share = (1 - r * Double(shards - 1)) / Double(shards)
        guard share > 0 else { return 0 }
        return UInt64((Double(buckets) * share).rounded(.down))
    }

    /// r for cleartext with default options (a fifth of the connections stay with two jobs).
    static let defaultReadingCost = 0.6

    /// r for a run with these options: options that make each connection costlier to analyse (and leave the
    /// reading as it is) divide it. Each factor is the share that was fastest with two jobs (medians of three to
    /// nine interleaved runs, 2 cores), r = 1 − 2s:
    /// - TLS secrets given (decrypting), 1/6: 256 MiB TLS bench with its key log, 20 % 0.663 s, 35 % 0.527 s,
    ///   40 % 0.464–0.498 s, 45 % 0.435–0.488 s, 50 % 0.460 s, 55 % 0.492 s. Without secrets TLS connections are
    ///   only counted (0.12 s at 20 % and 35 % alike).
    /// - `--verify-decoding` (every gzip body inflated), 1/6: 1 GiB bulk 1.822 s at 20 %, 1.576 s at 30 %, 1.395 s
    ///   at 40 %, 1.390 s at 45 %; 1 GiB API 1.937 → 1.673 → 1.430 → 1.377 s.
    /// - records made for a stream or kept (`--format ndjson`, `--messages`, HAR), 2/3: NDJSON on 1 GiB bulk
    ///   0.832 s at 20 %, 0.707 s at 30 %, 0.778 s at 40 %; on 1 GiB API 1.110 → 0.962 → 0.996 s; `--messages
    ///   --format csv` on API 2.468 → 2.323 → 2.348 s.
    /// Cleartext with default options keeps 0.6: the 1 GiB bulk bench took 3–8 % longer at 25–30 % (0.376 →
    /// 0.387–0.411 s), and the API-dense one moved within its noise (−5 % to +2 % at 25 %).
    static func readingCost(options: ReportOptions, decrypting: Bool) -> Double {
        var r = defaultReadingCost
        if decrypting { r /= 6 }
        if options.verifyDecoding { r /= 6 }
        if options.keepMessages || options.recordStream != nil { r = r * 2 / 3 }
        return r
    }

    /// The same hash for both directions: the endpoints' hashes are combined symmetrically.
    static func hash(_ a: Endpoint, _ b: Endpoint) -> UInt64 {
        func mix(_ e: Endpoint) -> UInt64 {
            var x = e.address.high &* 0x9E37_79B9_7F4A_7C15 ^ e.address.low &* 0xC2B2_AE3D_27D4_EB4F
            x ^= UInt64(e.port) &* 0x1656_67B1_9E37_79F9
            x ^= x >> 29
            return x &* 0xBF58_476D_1CE4_E5B9
        }
        let h = mix(a) ^ mix(b)
        return h ^ (h >> 32)
    }
}
