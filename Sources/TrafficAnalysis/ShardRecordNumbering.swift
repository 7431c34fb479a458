import TrafficAggregation
import TrafficConcurrency
import TrafficSessions

/// Gives the records of a sharded capture (`--jobs` ≥ 2) their capture-wide connection numbers while the capture
/// is still being read, for a record stream (`--format ndjson`).
///
/// A connection's number is its rank by first packet over all shards (tshark's `tcp.stream`), which
/// `TrafficAnalyzer` otherwise computes once every shard is done. A record whose connection began at packet P can
/// be numbered as soon as every shard has processed every packet before P: then every connection that began
/// earlier exists, and the number is how many did, summed over the shards. Each shard reports how far it is
/// (`advance`); records wait here, already encoded, until then, so memory holds the records of the few batches in
/// flight, not the capture's.
final class ShardRecordNumbering: Sendable {
    /// A record waiting for its number: where its encoding is, and what decides the number.
    private struct Pending {
        var firstPacket: Int
        var shard: Int
        var local: Int
        var chunk: Int
        var line: Int
    }

    private struct State {
        /// Per shard, the first packet of each connection by the shard's own number (ascending: a shard reads its
        /// packets in order).
        var firstPackets: [[Int]]
        /// Per shard: every packet below this index that belongs to the shard has been processed.
        var progress: [Int]
        var pending: [Pending] = []
        /// The encoded records of `pending`, by chunk id, with how many of each are still waiting.
        var chunks: [Int: (lines: StreamedLines, waiting: Int)] = [:]
        var nextChunk = 0
        /// Emptied lines kept with their room, for the next batch of a shard or of lines written: a batch made
        /// anew each time (its bytes past glibc's mmap threshold) page-faulted its way up and was unmapped
        /// after, a fifth of the worker's time with `--format ndjson` on the API bench.
        var spare: [StreamedLines] = []

        /// Keeps `lines`' room (emptied in place: the caller holds the only reference, so no copy is made).
        mutating func recycle(_ lines: inout StreamedLines) {
            guard spare.count < ShardRecordNumbering.spareLimit else { return }
            lines.removeAll()
            spare.append(lines)
        }
    }

    /// Spare lines kept: a few per shard is what is in flight.
    static let spareLimit = 8

    /// Guarded by `lock`: a pthread mutex (`ThreadCondition`), which ThreadSanitizer follows (it does not see the
    /// futex of `Synchronization.Mutex`, and reported every access under it as a race).
    nonisolated(unsafe) private var state: State
    private let lock = ThreadCondition()
    private let stream: any RecordStream

    init(shards: Int, stream: any RecordStream) {
        self.stream = stream
        state = State(firstPackets: Array(repeating: [], count: shards), progress: Array(repeating: 0, count: shards))
    }

    private func withState<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// A shard's connection `local` began at `firstPacket` (called as the shard makes it, numbers in order).
    func connectionStarted(shard: Int, local: Int, firstPacket: Int) {
        withState { state in
            // Numbers come in order from one reassembler; a gap would leave a connection uncounted.
            precondition(local == state.firstPackets[shard].count, "connections numbered in order")
            state.firstPackets[shard].append(firstPacket)
        }
    }

    /// Emptied lines with room in them, when there are any (for a shard's next batch).
    func spareLines() -> StreamedLines? { withState { $0.spare.popLast() } }

    /// Writes `ready` and keeps its room for later lines.
    private func write(_ ready: inout StreamedLines) {
        guard !ready.isEmpty else { return }
        stream.write(ready)
        withState { $0.recycle(&ready) }
    }

    /// A shard's encoded records, with the shard's connection numbers.
    func records(_ lines: StreamedLines, shard: Int) {
        var ready = withState { state -> StreamedLines in
            let chunk = state.nextChunk
            state.nextChunk += 1
            state.chunks[chunk] = (lines, lines.count)
            for line in 0..<lines.count {
                let local = lines.connections[line]
                state.pending.append(Pending(
                    firstPacket: state.firstPackets[shard][local], shard: shard, local: local, chunk: chunk, line: line))
            }
            return Self.release(&state, all: false)
        }
        write(&ready)
    }

    /// Shard `shard` has processed every one of its packets below `position`.
    func advance(shard: Int, to position: Int) {
        var ready = withState { state -> StreamedLines in
            guard position > state.progress[shard] else { return StreamedLines() }
            state.progress[shard] = position
            return state.pending.isEmpty ? StreamedLines() : Self.release(&state, all: false)
        }
        write(&ready)
    }

    /// Every shard is done: the rest are numbered and written.
    func finish() {
        var ready = withState { state in Self.release(&state, all: true) }
        write(&ready)
    }

    /// Numbers and removes the pending records whose connections' predecessors are all known.
    private static func release(_ state: inout State, all: Bool) -> StreamedLines {
        let limit = all ? Int.max : state.progress.min() ?? 0
        var ready = state.spare.popLast() ?? StreamedLines()
        var kept = 0
        var finished: [StreamedLines] = []
        for i in state.pending.indices {
            let pending = state.pending[i]
            guard pending.firstPacket <= limit else {
                state.pending[kept] = pending
                kept += 1
                continue
            }
            var number = 0
            for (shard, firsts) in state.firstPackets.enumerated() {
                number += shard == pending.shard ? pending.local : Self.count(firsts, below: pending.firstPacket)
            }
            let chunk = state.chunks[pending.chunk]!
            ready.append(chunk.lines, line: pending.line, connection: number)
            if chunk.waiting == 1 {
                state.chunks[pending.chunk] = nil
                finished.append(chunk.lines)
            } else {
                state.chunks[pending.chunk]!.waiting -= 1
            }
        }
        // Recycled once the loop's copies are gone: each is then the only reference to its lines.
        while var lines = finished.popLast() { state.recycle(&lines) }
        state.pending.removeLast(state.pending.count - kept)
        return ready
    }

    /// How many of `ascending` are below `value`.
    private static func count(_ ascending: [Int], below value: Int) -> Int {
        var low = 0, high = ascending.count
        while low < high {
            let middle = (low + high) / 2
            if ascending[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
