

/// The records `--messages` keeps. Records arrive as connections end, not in the order they are listed
/// (capture, connection, exchange), so they are sorted in runs of `runLength`: each full run is written to a
/// temporary file and the finished list merges the runs as it is read. Memory holds one run, not the capture.
package struct MessageStore {
    package typealias Entry = SpooledRecord.Entry

    private let runLength: Int
    private var pending: [Entry] = []
    private var runs: [MessageRun] = []
    private var spool: RecordSpool?
    private var spoolFailed = false
    package private(set) var count = 0
    /// About how much memory `pending` holds: a run is also written once it reaches `runBytes`. HAR keeps each
    /// message's head (and with `--har-bodies` request bodies): 16 384 records with their heads were 20 MiB a
    /// store, and a run of shards holds one store per shard and one more. 6 MiB put `--format har` on the 1 GiB
    /// API-dense bench capture at 66 MiB peak RSS; 4 MiB gives 60 MiB (more, shorter runs: the merge reads them
    /// as one stream either way).
    private var pendingBytes = 0
    private static let runBytes = 4 << 20
    /// Set when records could not be written to a temporary file and stay in memory instead.
    package private(set) var warning: String?

    private let directory: String?

    /// Runs read at once: reading a run holds a 64 KiB buffer and a decoded record, so a list of more runs has
    /// some merged into longer runs first (`finish`), 8 MiB of buffers at most. Without it, memory grew with the
    /// capture: `--messages --format csv` on an 8 GiB API-dense capture (≈ 560 runs) peaked at 70.6 MiB, 56 MiB on
    /// 1 GiB. (128, not 64: with 64, `--format har` on the 1 GiB API bench, 135 runs, rewrote every run, +15 %.)
    private let fanIn: Int

    /// `directory`: where the temporary file goes (nil: `$TMPDIR`, else `/tmp`). `fanIn`: see `fanIn` (at least 2).
    package init(runLength: Int, directory: String? = nil, fanIn: Int = 128) {
        self.runLength = max(1, runLength)
        self.directory = directory
        self.fanIn = max(2, fanIn)
    }

    package mutating func append(_ entry: Entry) {
        pending.append(entry)
        count += 1
        pendingBytes &+= MemoryLayout<Entry>.stride &+ entry.record.head.count &+ entry.record.body.count
        if pending.count >= runLength || pendingBytes >= Self.runBytes, !spoolFailed { spill() }
    }

    /// Sorts the pending records and writes them out as one run (or keeps them as a run in memory when the
    /// temporary file cannot be made or written).
    private mutating func spill() {
        pendingBytes = 0
        if spool == nil, !spoolFailed {
            spool = RecordSpool(directory: directory)
            if spool == nil { fail("cannot create a temporary file in \(directory ?? RecordSpool.defaultDirectory)") }
        }
        if let spool {
            // Written in order through sorted indices: records are never moved (a move copies a record
            // and retains and releases each of its strings; sorting the records themselves took a third
            // of a `--messages` run).
            // A local, not kept for the next run: a run of HAR records (heads kept) is megabytes, held per shard
            // between runs; one allocation a run of thousands of records costs nothing measurable.
            var bytes: [UInt8] = []
            pending.withUnsafeBufferPointer { entries in
                for i in Self.sortedIndices(entries) { SpooledRecord.append(entries[i], to: &bytes) }
            }
            if let range = spool.append(bytes) {
                runs.append(.spilled(spool, range, renumber: nil))
                pending.removeAll(keepingCapacity: true)
                return
            }
            fail("cannot write a temporary file in \(spool.directory)")
        }
        Self.sort(&pending)
        runs.append(.memory(pending))
        pending = []
    }

    /// The order of `entries` by their sort keys; stable (an interim response and its final response can
    /// share every key field).
    private static func sortedIndices(_ entries: UnsafeBufferPointer<Entry>) -> [Int] {
        var keys = entries.indices.map { (key: MessageList.SortKey(entries[$0]), at: $0) }
        keys.sort { $0.key != $1.key ? $0.key < $1.key : $0.at < $1.at }
        return keys.map(\.at)
    }

    /// Sorts `entries` through a permutation of indices: each record moves once.
    private static func sort(_ entries: inout [Entry]) {
        let order = entries.withUnsafeBufferPointer(sortedIndices)
        Permutation.apply(&entries, by: order)
    }

    private mutating func fail(_ reason: String) {
        spoolFailed = true
        spool = nil
        warning = "\(reason); records are kept in memory"
    }

    /// Takes over `shard`'s records, their connection numbers mapped through `renumber` (for records of
    /// `capture`). The mapping keeps the order of a shard's connections, so its sorted runs stay sorted.
    package mutating func adopt(_ shard: inout MessageStore, capture: Int, renumber: [Int]) {
        for run in shard.runs { runs.append(run.renumbered(capture: capture, renumber)) }
        count += shard.count - shard.pending.count
        shard.runs = []
        if let warning = shard.warning { self.warning = warning }
        let pending = shard.pending
        shard.pending = []
        shard.pendingBytes = 0
        shard.count = 0
        for entry in pending { append(MessageRun.renumber(entry, capture: capture, renumber)) }
    }

    /// Every record in order. With no run written it is sorted in memory; otherwise the remaining records are
    /// written as the last run and the list merges the runs.
    /// The store is left empty (its `warning` stays).
    package mutating func finish() -> MessageList {
        defer {
            let warning = warning
            self = MessageStore(runLength: runLength, directory: directory, fanIn: fanIn)
            self.warning = warning
        }
        if runs.isEmpty {
            Self.sort(&pending)
            return MessageList(storage: .memory(pending), count: count)
        }
        // Without a spool file, `spill` keeps the last run in memory.
        if !pending.isEmpty { spill() }
        let status = MessageList.ReadStatus()
        while runs.count > fanIn, !spoolFailed, status.failure.withLock({ $0 }) == nil {
            guard mergeRuns(status: status) else { break }
        }
        let list = MessageList(storage: .runs(runs), count: count)
        if let failure = status.failure.withLock({ $0 }) { list.status.fail(failure) }
        return list
    }

    /// One step of `finish`'s merging: the consecutive runs whose bytes are fewest, as many as bring the list
    /// to `fanIn` runs (at most `fanIn` of them), become one run written after the others in this store's
    /// temporary file, in their place. Consecutive, so that equal keys stay in run order, as one merge of all
    /// the runs would keep them; only as many as needed, so that a list just past the fan-in rewrites a few
    /// runs, not all of them. Records are renumbered as they are read: the new run needs no mapping. False
    /// (the runs left as they were) when the file cannot be written.
    private mutating func mergeRuns(status: MessageList.ReadStatus) -> Bool {
        if spool == nil { spool = RecordSpool(directory: directory) }
        guard let spool else { return false }
        let width = min(fanIn, runs.count - fanIn + 1)
        func size(_ run: MessageRun) -> Int64 {
            switch run {
            case .memory(let entries): Int64(entries.count) &* Int64(MemoryLayout<Entry>.stride)
            case .spilled(_, let range, _): Int64(range.count)
            }
        }
        var best = 0, bestSize = Int64.max, windowSize: Int64 = 0
        for i in runs.indices {
            windowSize += size(runs[i])
            if i >= width { windowSize -= size(runs[i - width]) }
            if i >= width - 1, windowSize < bestSize {
                bestSize = windowSize
                best = i - width + 1
            }
        }
        var iterator = MessageList.Iterator(runs: Array(runs[best..<(best + width)]), status: status)
        var bytes: [UInt8] = []
        var range: Range<Int64>?
        func write() -> Bool {
            guard let written = spool.append(bytes) else { return false }
            bytes.removeAll(keepingCapacity: true)
            // One range: nothing else writes this file meanwhile, so each write follows the last.
            guard let previous = range else {
                range = written
                return true
            }
            guard previous.upperBound == written.lowerBound else { return false }
            range = previous.lowerBound..<written.upperBound
            return true
        }
        while let entry = iterator.next() {
            SpooledRecord.append(entry, to: &bytes)
            if bytes.count >= Self.runBytes, !write() { return false }
        }
        if !bytes.isEmpty, !write() { return false }
        runs.replaceSubrange(best..<(best + width), with: range.map { [.spilled(spool, $0, renumber: nil)] } ?? [])
        return true
    }
}

/// One sorted run of records: in memory, or a range of a spool file.
package enum MessageRun: Sendable {
    case memory([SpooledRecord.Entry])
    /// `renumber`: connection numbers of a shard, mapped to the capture's when the run is read.
    case spilled(RecordSpool, Range<Int64>, renumber: (capture: Int, table: [Int])?)

    /// `entry` with its connection number mapped through `table`, when it belongs to `capture`.
    package static func renumber(_ entry: SpooledRecord.Entry, capture: Int, _ table: [Int]) -> SpooledRecord.Entry {
        let connection = entry.record.connection
        guard entry.capture == capture, connection >= 0, connection < table.count else { return entry }
        var record = entry.record
        record.connection = table[connection]
        return (entry.capture, record)
    }

    package func renumbered(capture: Int, _ table: [Int]) -> MessageRun {
        switch self {
        case .memory(let entries): .memory(entries.map { Self.renumber($0, capture: capture, table) })
        case .spilled(let spool, let range, _): .spilled(spool, range, renumber: (capture, table))
        }
    }
}
