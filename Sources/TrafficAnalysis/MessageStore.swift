import TrafficHTTP

/// The records `--messages` keeps. Records arrive as connections end, not in the order they are listed
/// (capture, connection, exchange), so they are sorted in runs of `runLength`: each full run is written to a
/// temporary file and the finished list merges the runs as it is read. Memory holds one run, not the capture.
struct MessageStore {
    typealias Entry = SpooledRecord.Entry

    private let runLength: Int
    private var pending: [Entry] = []
    private var runs: [MessageRun] = []
    private var spool: RecordSpool?
    private var spoolFailed = false
    /// Reused for every run written: the bytes of one run.
    private var spillBytes: [UInt8] = []
    private(set) var count = 0
    /// Set when records could not be written to a temporary file and stay in memory instead.
    private(set) var warning: String?

    init(runLength: Int) { self.runLength = max(1, runLength) }

    mutating func append(_ entry: Entry) {
        pending.append(entry)
        count += 1
        if pending.count >= runLength, !spoolFailed { spill() }
    }

    /// Sorts the pending records and writes them out as one run (or keeps them as a run in memory when the
    /// temporary file cannot be made or written).
    private mutating func spill() {
        pending.sort(by: MessageList.precedes)
        if spool == nil, !spoolFailed {
            spool = RecordSpool()
            if spool == nil { fail("cannot create a temporary file in \(Self.temporaryDirectory)") }
        }
        if let spool {
            spillBytes.removeAll(keepingCapacity: true)
            for entry in pending { SpooledRecord.append(entry, to: &spillBytes) }
            if let range = spool.append(spillBytes) {
                runs.append(.spilled(spool, range, count: pending.count, renumber: nil))
                pending.removeAll(keepingCapacity: true)
                return
            }
            fail("cannot write a temporary file in \(spool.directory)")
        }
        runs.append(.memory(pending))
        pending = []
    }

    private mutating func fail(_ reason: String) {
        spoolFailed = true
        spool = nil
        warning = "\(reason); records are kept in memory"
    }

    private static var temporaryDirectory: String { RecordSpool.defaultDirectory }

    /// Takes over `shard`'s records, their connection numbers mapped through `renumber` (for records of
    /// `capture`). The mapping keeps the order of a shard's connections, so its sorted runs stay sorted.
    mutating func adopt(_ shard: inout MessageStore, capture: Int, renumber: [Int]) {
        for run in shard.runs { runs.append(run.renumbered(capture: capture, renumber)) }
        count += shard.count - shard.pending.count
        shard.runs = []
        if let warning = shard.warning { self.warning = warning }
        let pending = shard.pending
        shard.pending = []
        shard.count = 0
        for entry in pending {
            var record = entry.record
            record.connection = MessageRun.renumber(record.connection, entry.capture, capture: capture, renumber)
            append((entry.capture, record))
        }
    }

    /// Every record in order. With no run written it is sorted in memory; otherwise the remaining records are
    /// written as the last run and the list merges the runs.
    /// The store is left empty (its `warning` stays).
    mutating func finish() -> MessageList {
        defer {
            let warning = warning
            self = MessageStore(runLength: runLength)
            self.warning = warning
        }
        if runs.isEmpty {
            // A stable sort: an interim response and its final response can share every key field.
            pending.sort(by: MessageList.precedes)
            return MessageList(storage: .memory(pending), count: count)
        }
        if !pending.isEmpty {
            if spoolFailed {
                pending.sort(by: MessageList.precedes)
                runs.append(.memory(pending))
                pending = []
            } else {
                spill()
            }
        }
        return MessageList(storage: .runs(runs), count: count)
    }
}

/// One sorted run of records: in memory, or a range of a spool file.
enum MessageRun: Sendable {
    case memory([SpooledRecord.Entry])
    /// `renumber`: connection numbers of a shard, mapped to the capture's when the run is read.
    case spilled(RecordSpool, Range<Int64>, count: Int, renumber: (capture: Int, table: [Int])?)

    static func renumber(_ connection: Int, _ recordCapture: Int, capture: Int, _ table: [Int]) -> Int {
        recordCapture == capture && connection >= 0 && connection < table.count ? table[connection] : connection
    }

    func renumbered(capture: Int, _ table: [Int]) -> MessageRun {
        switch self {
        case .memory(let entries):
            return .memory(entries.map { entry in
                var record = entry.record
                record.connection = Self.renumber(record.connection, entry.capture, capture: capture, table)
                return (entry.capture, record)
            })
        case .spilled(let spool, let range, let count, _):
            return .spilled(spool, range, count: count, renumber: (capture, table))
        }
    }
}
