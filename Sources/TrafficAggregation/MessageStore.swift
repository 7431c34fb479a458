

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

    /// `directory`: where the temporary file goes (nil: `$TMPDIR`, else `/tmp`).
    package init(runLength: Int, directory: String? = nil) {
        self.runLength = max(1, runLength)
        self.directory = directory
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
            self = MessageStore(runLength: runLength, directory: directory)
            self.warning = warning
        }
        if runs.isEmpty {
            Self.sort(&pending)
            return MessageList(storage: .memory(pending), count: count)
        }
        // Without a spool file, `spill` keeps the last run in memory.
        if !pending.isEmpty { spill() }
        return MessageList(storage: .runs(runs), count: count)
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
