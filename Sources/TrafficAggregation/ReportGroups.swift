import TrafficConcurrency

/// The report's groups in report order (total bytes descending, then keys). A report with more groups
/// than `ReportOptions.groupsInMemory` keeps them in sorted runs in a temporary file and merges the runs as
/// it is read, so that reading holds one group per run; read it as often as needed.
public struct ReportGroups: Sequence, ExpressibleByArrayLiteral, Sendable {
    public typealias Element = ReportGroup

    package enum Storage: Sendable {
        case memory([ReportGroup])
        /// In memory with their keys as bytes (a builder's table, sorted): `ReportGroup`s are made as read.
        case keyed(KeyedGroups)
        case runs([GroupRun])

        /// As runs to merge.
        var runs: [GroupRun] {
            switch self {
            case .memory(let groups):
                if groups.isEmpty { return [] }
                var bytes: [UInt8] = []
                for group in groups { SpooledGroup.append(hash: 0, group, to: &bytes) }
                return [.memory(SpoolBytes(bytes))]
            case .keyed(let groups):
                if groups.count == 0 { return [] }
                var bytes: [UInt8] = []
                for i in 0..<groups.count {
                    groups.withGroup(i) { key, totals in SpooledGroup.append(hash: 0, keyBytes: key, totals: totals, to: &bytes) }
                }
                return [.memory(SpoolBytes(bytes))]
            case .runs(let runs): return runs
            }
        }
    }

    package let storage: Storage
    public let count: Int
    /// Set when reading the temporary file back failed (a short read or a damaged entry of our own file): the
    /// reading that met it stopped early.
    public var readFailure: String? { status.failure.withLock { $0 } }
    package let status: SpoolReadStatus

    /// `status`: shared with whatever read the runs before (a failure there is this list's failure too).
    package init(storage: Storage, count: Int, status: SpoolReadStatus = SpoolReadStatus()) {
        self.storage = storage
        self.count = count
        self.status = status
    }

    public init(_ groups: [ReportGroup]) { self.init(storage: .memory(groups), count: groups.count) }

    public init(arrayLiteral elements: ReportGroup...) { self.init(elements) }

    /// Every group, when they are all in memory (nil when they are read from a temporary file).
    public var inMemory: [ReportGroup]? {
        switch storage {
        case .memory(let groups): return groups
        case .keyed(let groups): return (0..<groups.count).map(groups.group)
        case .runs: return nil
        }
    }

    /// The groups with their keys as bytes, when they are kept so (a table can copy the keys' bytes into
    /// its cells without making `String`s).
    package var keyed: KeyedGroups? {
        if case .keyed(let groups) = storage { return groups }
        return nil
    }

    public func makeIterator() -> Iterator { makeIterator(from: 0) }

    /// Reads from the `start`th group on (so that two threads can each make half of a large table: the
    /// groups before `start` are merged and skipped on the reading thread).
    public func makeIterator(from start: Int) -> Iterator {
        switch storage {
        case .memory(let groups): Iterator(groups: groups, position: Swift.min(Swift.max(0, start), groups.count))
        case .keyed(let groups): Iterator(keyed: groups, position: Swift.min(Swift.max(0, start), groups.count))
        case .runs(let runs): Iterator(reading: GroupPrefetch(runs, status: status, skipping: start))
        }
    }

    /// The groups in about `count` parts, to be read side by side in no particular order: each run is read
    /// as it is, not merged with the others. For passes that only look at every group once (measuring a
    /// table's columns), without the merge's comparisons or a thread to read ahead.
    public func unorderedParts(_ count: Int) -> [UnorderedPart] {
        let count = Swift.max(1, count)
        switch storage {
        case .memory(let groups):
            return (0..<count).map { part in
                UnorderedPart(groups: groups[(groups.count * part / count)..<(groups.count * (part + 1) / count)], runs: [], status: status)
            }
        case .keyed(let groups):
            return (0..<count).map { part in
                UnorderedPart(keyed: groups, range: (groups.count * part / count)..<(groups.count * (part + 1) / count), status: status)
            }
        case .runs(let runs):
            // The largest runs first, each to the part with the fewest bytes so far.
            var parts = (0..<count).map { _ in (bytes: 0, runs: [GroupRun]()) }
            for run in runs.sorted(by: { $0.byteCount > $1.byteCount }) {
                let smallest = parts.indices.min { parts[$0].bytes < parts[$1].bytes }!
                parts[smallest].bytes += run.byteCount
                parts[smallest].runs.append(run)
            }
            return parts.map { UnorderedPart(groups: [], runs: $0.runs, status: status) }
        }
    }

    /// Some of the groups, in no particular order (`unorderedParts`).
    public struct UnorderedPart: Sequence, Sendable {
        let groups: ArraySlice<ReportGroup>
        let runs: [GroupRun]
        let status: SpoolReadStatus
        /// Groups of a `KeyedGroups`: `keyedRange` of them.
        var keyed: KeyedGroups?
        var keyedRange = 0..<0

        init(groups: ArraySlice<ReportGroup>, runs: [GroupRun], status: SpoolReadStatus) {
            self.groups = groups
            self.runs = runs
            self.status = status
        }

        init(keyed: KeyedGroups, range: Range<Int>, status: SpoolReadStatus) {
            self.init(groups: [], runs: [], status: status)
            self.keyed = keyed
            keyedRange = range
        }

        public func makeIterator() -> Iterator { Iterator(part: self) }

        /// Calls `body` with every group of the part: its key as `GroupKeyBytes` and its totals, both valid only
        /// during the call. Groups read back from runs are passed where they were read, with no `String` or array
        /// made for them (a table measuring 96 000 groups spent most of its pass making their keys).
        package func forEachInPlace(_ body: (UnsafeRawBufferPointer, UnsafePointer<GroupTotals>) -> Void) {
            if let keyed {
                for i in keyedRange { keyed.withGroup(i, body) }
            }
            var key: [UInt8] = []
            for i in groups.indices {
                key.removeAll(keepingCapacity: true)
                GroupKeyBytes.append(groups[i].keys, to: &key)
                key.withUnsafeBytes { key in withUnsafePointer(to: groups[i].totals) { body(key, $0) } }
            }
            for run in runs {
                var reader = GroupRunReader(run, status: status, unordered: true)
                // Added into one variable from their bytes: `Head.totals` returned them through an optional,
                // a copy of the whole struct or two per group of a pass that only measures them.
                var totals = GroupTotals()
                while let head = reader.head {
                    // The key's bytes are the run's buffer's until the reader moves on.
                    totals = GroupTotals()
                    status.decode(head.totalsBytes, into: &totals)
                    withUnsafePointer(to: &totals) { body(head.keyBytes, $0) }
                    reader.advance()
                }
            }
        }

        public struct Iterator: IteratorProtocol {
            private let part: UnorderedPart
            private var position: Int
            private var keyedPosition: Int
            private var run = -1
            private var reader: GroupRunReader?

            init(part: UnorderedPart) {
                self.part = part
                position = part.groups.startIndex
                keyedPosition = part.keyedRange.lowerBound
            }

            public mutating func next() -> ReportGroup? {
                if let keyed = part.keyed, keyedPosition < part.keyedRange.upperBound {
                    defer { keyedPosition += 1 }
                    return keyed.group(keyedPosition)
                }
                if position < part.groups.endIndex {
                    defer { position += 1 }
                    return part.groups[position]
                }
                while true {
                    if let head = reader?.head {
                        // The key's bytes are the run's buffer's until the reader moves on.
                        let group = ReportGroup(keys: GroupKeyBytes.decode(head.keyBytes) ?? [], totals: head.totals(part.status))
                        reader?.advance()
                        return group
                    }
                    run += 1
                    guard run < part.runs.count else { return nil }
                    reader = nil  // one run's buffer at a time
                    reader = GroupRunReader(part.runs[run], status: part.status)
                }
            }
        }
    }

    public struct Iterator: IteratorProtocol {
        private var groups: [ReportGroup] = []
        private var position = 0
        private var reading: GroupPrefetch?
        private var keyed: KeyedGroups?

        init(groups: [ReportGroup], position: Int) {
            self.groups = groups
            self.position = position
        }
        init(keyed: KeyedGroups, position: Int) {
            self.keyed = keyed
            self.position = position
        }
        init(reading: GroupPrefetch) { self.reading = reading }

        public mutating func next() -> ReportGroup? {
            if let keyed {
                guard position < keyed.count else { return nil }
                defer { position += 1 }
                return keyed.group(position)
            }
            if position == groups.count {
                guard let reading, let batch = reading.batches.pop() else { return nil }
                groups = batch
                position = 0
            }
            defer { position += 1 }
            return groups[position]
        }
    }
}

/// Groups in memory with their keys as `GroupKeyBytes`, one after the other (`keyEnds` says where each ends),
/// and their totals: what a builder's table leaves once sorted. A table copies the keys' bytes into its
/// cells; a `ReportGroup` (with `String`s) is made only where one is read: making every key's strings
/// and arrays when the table was drained cost as much as sorting it.
package struct KeyedGroups: Sendable {
    package let keyBytes: [UInt8]
    package let keyEnds: [Int]
    package let totals: [GroupTotals]

    package init(keyBytes: [UInt8], keyEnds: [Int], totals: [GroupTotals]) {
        precondition(keyEnds.count == totals.count && (keyEnds.last ?? 0) <= keyBytes.count, "a key for every group")
        self.keyBytes = keyBytes
        self.keyEnds = keyEnds
        self.totals = totals
    }

    package var count: Int { totals.count }

    /// Calls `body` with group `i`'s key bytes and totals, both valid only during the call. (Not generic: a
    /// table calls it for every row from another module, where a generic one was not specialized.)
    package func withGroup(_ i: Int, _ body: (UnsafeRawBufferPointer, UnsafePointer<GroupTotals>) -> Void) {
        let start = i == 0 ? 0 : keyEnds[i - 1], end = keyEnds[i]
        keyBytes.withUnsafeBytes { keys in
            totals.withUnsafeBufferPointer { totals in body(UnsafeRawBufferPointer(rebasing: keys[start..<end]), totals.baseAddress! + i) }
        }
    }

    /// Group `i` as a report row.
    package func group(_ i: Int) -> ReportGroup {
        let start = i == 0 ? 0 : keyEnds[i - 1], end = keyEnds[i]
        let keys = keyBytes.withUnsafeBytes { GroupKeyBytes.decode(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
        return ReportGroup(keys: keys ?? [], totals: totals[i])
    }
}

extension ReportGroups {
    /// Reads the groups in report order with their keys as bytes (`GroupKeyBytes`), never as `String`s: for
    /// a writer that only copies a key's bytes out (a table's cells). The runs are merged a few batches ahead
    /// on a thread of its own, as `makeIterator` does.
    ///
    /// `decodingAhead`: the read-ahead thread decodes each group's totals too. A writer that costs less per group
    /// than the merge (the table's rows) passes false: the totals are then decoded as they are read, on its
    /// thread, and the merge ahead goes faster (on the 1 GiB API bench it was the slower of the two threads).
    package func makeKeyBytesIterator(decodingAhead: Bool = true) -> KeyBytesIterator {
        KeyBytesIterator(reading: KeyBytesPrefetch(storage.runs, status: status, decodingTotals: decodingAhead), status: status)
    }

    /// Calls `body` with every group in report order: its key as `GroupKeyBytes` and its totals, both valid only
    /// during the call. For writers that copy the keys' bytes out (JSON and CSV groups): no `ReportGroup`
    /// made per group (a `[String]` of keys and a copy of the totals, retained and released), whichever way
    /// the groups are kept.
    package func forEachInOrder(_ body: (UnsafeRawBufferPointer, UnsafePointer<GroupTotals>) -> Void) {
        switch storage {
        case .keyed(let groups):
            for i in 0..<groups.count { groups.withGroup(i, body) }
        case .memory(let groups):
            var key: [UInt8] = []
            groups.withUnsafeBufferPointer { groups in
                for i in groups.indices {
                    key.removeAll(keepingCapacity: true)
                    GroupKeyBytes.append(groups[i].keys, to: &key)
                    key.withUnsafeBytes { key in body(key, (groups.baseAddress! + i).pointer(to: \.totals)!) }
                }
            }
        case .runs:
            var reader = makeKeyBytesIterator()
            while reader.next(body) {}
        }
    }

    package struct KeyBytesIterator {
        private var batch = KeyBytesBatch()
        private var position = 0
        private let reading: KeyBytesPrefetch
        private let status: SpoolReadStatus
        /// The group's totals when they are decoded here (`decodingAhead` false).
        private var decoded = GroupTotals()

        init(reading: KeyBytesPrefetch, status: SpoolReadStatus) {
            self.reading = reading
            self.status = status
        }

        /// Calls `body` with the next group's key bytes and totals, both valid only during the call; false
        /// (and no call) at the end.
        package mutating func next(_ body: (UnsafeRawBufferPointer, UnsafePointer<GroupTotals>) -> Void) -> Bool {
            if position == batch.keyEnds.count {
                guard let next = reading.batches.pop() else { return false }
                batch = next
                position = 0
            }
            defer { position += 1 }
            let start = position == 0 ? 0 : batch.keyEnds[position - 1]
            let end = batch.keyEnds[position]
            if batch.totals.isEmpty {
                let totalsStart = position == 0 ? 0 : batch.totalsEnds[position - 1]
                let totalsEnd = batch.totalsEnds[position]
                decoded = GroupTotals()
                batch.totalsBytes.withUnsafeBytes { bytes in
                    status.decode(UnsafeRawBufferPointer(rebasing: bytes[totalsStart..<totalsEnd]), into: &decoded)
                }
                batch.keyBytes.withUnsafeBytes { keys in
                    withUnsafePointer(to: &decoded) { body(UnsafeRawBufferPointer(rebasing: keys[start..<end]), $0) }
                }
                return true
            }
            batch.keyBytes.withUnsafeBytes { keys in
                batch.totals.withUnsafeBufferPointer { totals in
                    body(UnsafeRawBufferPointer(rebasing: keys[start..<end]), totals.baseAddress! + position)
                }
            }
            return true
        }
    }
}

/// Groups of `KeyBytesPrefetch`: the keys' bytes one after the other (`keyEnds` says where each ends), and the
/// totals, made on the read-ahead thread; or, when the reader decodes them, the totals' bytes as stored one after
/// the other (`totalsEnds`), `totals` left empty.
package struct KeyBytesBatch: Sendable {
    var keyBytes: [UInt8] = []
    var keyEnds: [Int] = []
    var totals: [GroupTotals] = []
    var totalsBytes: [UInt8] = []
    var totalsEnds: [Int] = []

    init() {}

    /// Room for `count` groups made at once (grown by doubling, a batch's arrays were copied nine times).
    init(reserving count: Int, decodingTotals: Bool) {
        keyBytes.reserveCapacity(64 * count)
        keyEnds.reserveCapacity(count)
        if decodingTotals {
            totals.reserveCapacity(count)
        } else {
            totalsBytes.reserveCapacity(48 * count)
            totalsEnds.reserveCapacity(count)
        }
    }
}

/// `GroupPrefetch` with the keys kept as bytes (`ReportGroups.makeKeyBytesIterator`): decoding every key into
/// `String`s to copy their bytes into a table cell cost 0.6 G instructions on the 1 GiB bench's 96 000 groups.
package final class KeyBytesPrefetch: Sendable {
    package let batches = BlockingQueue<KeyBytesBatch>(capacity: 4)
    private let thread: WorkerThread
    private static let batchSize = 512

    package init(_ runs: [GroupRun], status: SpoolReadStatus, decodingTotals: Bool = true) {
        let batches = self.batches
        thread = WorkerThread {
            var merging = GroupRunMerge(runs, order: .report, status: status)
            var batch = KeyBytesBatch(reserving: Self.batchSize, decodingTotals: decodingTotals)
            while let head = merging.top {
                // Both copied before the run moves on: its bytes are the run's buffer's until then.
                batch.keyBytes.append(contentsOf: head.keyBytes)
                batch.keyEnds.append(batch.keyBytes.count)
                if decodingTotals {
                    // Added in place into the batch's new element: `Head.totals` returned them through an
                    // optional, a copy of the whole struct or two per group written.
                    batch.totals.append(GroupTotals())
                    batch.totals.withUnsafeMutableBufferPointer { totals in
                        status.decode(head.totalsBytes, into: &totals[totals.count - 1])
                    }
                } else {
                    batch.totalsBytes.append(contentsOf: head.totalsBytes)
                    batch.totalsEnds.append(batch.totalsBytes.count)
                }
                merging.advance()
                if batch.keyEnds.count == Self.batchSize {
                    guard batches.push(batch) else { return }
                    batch = KeyBytesBatch(reserving: Self.batchSize, decodingTotals: decodingTotals)
                }
            }
            if !batch.keyEnds.isEmpty { batches.push(batch) }
            batches.close()
        }
        thread.start()
    }

    /// A reader that stops early lets the thread end.
    deinit {
        batches.cancel()
        thread.join()
    }
}

/// Merges runs on a thread of its own, a few batches ahead of the reader: reading and decoding the
/// temporary file overlaps with whatever the reader makes of the groups (table cells, CSV, JSON).
package final class GroupPrefetch: Sendable {
    package let batches = BlockingQueue<[ReportGroup]>(capacity: 4)
    private let thread: WorkerThread
    private static let batchSize = 512

    package init(_ runs: [GroupRun], status: SpoolReadStatus, skipping: Int) {
        let batches = self.batches
        thread = WorkerThread {
            var merging = GroupRunMerge(runs, order: .report, status: status)
            for _ in 0..<max(0, skipping) {
                guard merging.top != nil else { break }
                merging.advance()
            }
            var batch: [ReportGroup] = []
            batch.reserveCapacity(Self.batchSize)
            while let next = merging.next() {
                batch.append(next)
                if batch.count == Self.batchSize {
                    guard batches.push(batch) else { return }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { batches.push(batch) }
            batches.close()
        }
        thread.start()
    }

    /// A reader that stops early (`--top`) lets the thread end.
    deinit {
        batches.cancel()
        thread.join()
    }
}

extension ReportGroup {
    /// The report's order: total bytes descending, then keys. Ties are common (ids in paths, same sizes):
    /// equal fields (often one shared string) are skipped with one `==` where lexicographicallyPrecedes
    /// would compare them twice with `<`.
    package static func precedes(_ aTotal: Int, _ a: [String], _ bTotal: Int, _ b: [String]) -> Bool {
        if aTotal != bTotal { return aTotal > bTotal }
        for i in a.indices where a[i] != b[i] { return a[i] < b[i] }
        return false
    }
}

/// One sorted run of groups (`SpooledGroup` entries): in memory, or a range of a spool file.
package enum GroupRun: Sendable {
    case memory(SpoolBytes)
    case spilled(RecordSpool, Range<Int64>)

    package var byteCount: Int {
        switch self {
        case .memory(let entries): entries.bytes.count
        case .spilled(_, let range): Int(range.count)
        }
    }
}

/// Groups put into report order in runs of `runLength`: each full run is sorted and written to the
/// temporary file (kept in memory when it cannot be written), the last one stays in memory. Groups are
/// kept as their bytes and sorted as such: no strings are made for them here.
package struct ReportOrderRuns {
    private let runLength: Int
    private let spool: RecordSpool?
    /// The run being gathered: its entries one after the other, and where each one is.
    private var pending: [UInt8] = []
    private var entries: [Entry] = []
    /// The entries' keys as `GroupKeyBytes.joinASCII` writes them, one after the other (no longer than the keys):
    /// the first `joinedCount` bytes; the array only grows (an append and a removal per entry cost more
    /// than the joining).
    private var joined: [UInt8] = []
    private var joinedUsed = 0
    private var runs: [GroupRun] = []
    /// Set when a run could not be written.
    package private(set) var failure: String?

    /// The report order of `entries` while a run is sorted (kept for its capacity).
    private var order: [OrderPair] = []

    private struct OrderPair {
        var total: Int
        /// The entry's `joinedStart` and `joinedCount`, and the entry.
        var joinedStart: Int
        var joinedCount: Int32
        var at: Int32
    }

    private struct Entry {
        var total: Int
        var start: Int
        var length: Int
        var keyLength: Int
        /// Where the key's joined fields are in `joined`, and how many bytes (-1: not joined).
        var joinedStart: Int
        var joinedCount: Int
    }

    package init(runLength: Int, spool: RecordSpool?) {
        self.runLength = runLength
        self.spool = spool
    }

    package mutating func add(keyBytes: UnsafeRawBufferPointer, totals: UnsafePointer<GroupTotals>) {
        let start = pending.count
        SpooledGroup.append(hash: 0, keyBytes: keyBytes, totals: totals, to: &pending)
        addEntry(total: totals.pointee.totalBytes, start: start, keyBytes: keyBytes)
    }

    /// A group whose totals are still as stored (`GroupRunMerge.Head.totalsBytes`), copied on as they are:
    /// the entry is written with one copy per piece into room made at once (appending the pieces one by one
    /// checked capacity and uniqueness for each).
    package mutating func add(keyBytes: UnsafeRawBufferPointer, totalsBytes: UnsafeRawBufferPointer, totalBytes: Int) {
        let start = pending.count
        let length = 12 + keyBytes.count + totalsBytes.count
        pending.append(contentsOf: repeatElement(0, count: length))
        pending.withUnsafeMutableBytes { out in
            let entry = out.baseAddress! + start
            // The length, then the hash: not read in report order, 0 as `SpooledGroup.append(hash: 0, …)` writes it.
            entry.storeBytes(of: UInt32(truncatingIfNeeded: length - 4).littleEndian, as: UInt32.self)
            if !keyBytes.isEmpty { (entry + 12).copyMemory(from: keyBytes.baseAddress!, byteCount: keyBytes.count) }
            if !totalsBytes.isEmpty {
                (entry + 12 + keyBytes.count).copyMemory(from: totalsBytes.baseAddress!, byteCount: totalsBytes.count)
            }
        }
        addEntry(total: totalBytes, start: start, keyBytes: keyBytes)
    }

    /// Notes the entry written at `start`, with its key joined for sorting.
    private mutating func addEntry(total: Int, start: Int, keyBytes: UnsafeRawBufferPointer) {
        let joinedStart = joinedUsed
        if joined.count - joinedStart < keyBytes.count {
            joined.append(contentsOf: repeatElement(0, count: max(keyBytes.count, joined.count)))
        }
        let joinedCount = joined.withUnsafeMutableBytes { out in
            GroupKeyBytes.joinASCII(keyBytes, into: out.baseAddress! + joinedStart) ?? -1
        }
        joinedUsed += max(0, joinedCount)
        entries.append(Entry(
            total: total, start: start, length: pending.count - start, keyLength: keyBytes.count,
            joinedStart: joinedStart, joinedCount: joinedCount))
        if entries.count >= runLength { writeRun() }
    }

    private mutating func writeRun() {
        let sorted = sortedEntries()
        if let spool, failure == nil {
            if let range = spool.append(raw: sorted.bytes) {
                runs.append(.spilled(spool, range))
                return
            }
            failure = "cannot write a temporary file in \(spool.directory)"
        }
        runs.append(.memory(sorted))
    }

    /// The gathered entries in report order (`ReportGroup.precedes`, on their bytes); the run is emptied.
    /// Keys of ASCII fields (nearly all) compare by one `memcmp` of their joined fields, as the table's sort
    /// does in memory (`GroupKeyBytes.compareJoined`).
    private mutating func sortedEntries() -> SpoolBytes {
        let sorted = pending.withUnsafeBytes { bytes in
            joined.withUnsafeBytes { joined in
                let base = joined.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                func key(_ e: Entry) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[(e.start + 12)..<(e.start + 12 + e.keyLength)])
                }
                // Small pairs are sorted, not the entries (moving 48-byte entries was most of the sort): first by
                // total alone, with integer comparisons only, then each run of equal totals by its keys. Nine groups
                // in ten share their total with another one on the 1 GiB API bench (ids in paths, same sizes): in one
                // sort of all 32 768 pairs with the keys as tie-breaks, the keys compared were spread over the whole
                // run (~2.7 MB of entries and joined keys) and most tie-breaks missed the cache twice a side; a run
                // of equal totals is a few dozen keys, which stay in the cache while they are sorted. The pairs
                // carry where the joined key is, so that a tie-break does not read the entry first.
                order.removeAll(keepingCapacity: true)
                order.reserveCapacity(entries.count)
                for (at, e) in entries.enumerated() {
                    order.append(OrderPair(
                        total: e.total, joinedStart: e.joinedStart, joinedCount: Int32(truncatingIfNeeded: e.joinedCount),
                        at: Int32(truncatingIfNeeded: at)))
                }
                order.sort { $0.total > $1.total }
                entries.withUnsafeBufferPointer { entries in
                    order.withUnsafeMutableBufferPointer { order in
                        var low = 0
                        while low < order.count {
                            let total = order[low].total
                            var high = low + 1
                            while high < order.count, order[high].total == total { high += 1 }
                            if high - low > 1 {
                                var ties = UnsafeMutableBufferPointer(rebasing: order[low..<high])
                                ties.sort { a, b in
                                    GroupKeyBytes.compareJoined(
                                        base + a.joinedStart, Int(a.joinedCount), base + b.joinedStart, Int(b.joinedCount)
                                    ) { (key(entries[Int(a.at)]), key(entries[Int(b.at)])) } < 0
                                }
                            }
                            low = high
                        }
                    }
                }
            }
            // Written where the run stays when it is not written to the file.
            return SpoolBytes(count: bytes.count) { out in
                var at = 0
                entries.withUnsafeBufferPointer { entries in
                    for pair in order {
                        let e = entries[Int(pair.at)]
                        (out.baseAddress! + at).copyMemory(from: bytes.baseAddress! + e.start, byteCount: e.length)
                        at += e.length
                    }
                }
            }
        }
        pending.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        joinedUsed = 0
        return sorted
    }

    /// The groups in report order, still as bytes: one sorted run in memory when they fit in one, else the
    /// runs to merge. The caller decides whether the run becomes rows (`decode`): when the other half of the
    /// hashes also has groups, decoding here and encoding again to merge cost 10 % of the bench report.
    package mutating func finish() -> Sorted {
        if runs.isEmpty {
            let count = entries.count
            return .memory(sortedEntries(), count: count)
        }
        if !entries.isEmpty { runs.append(.memory(sortedEntries())) }
        return .runs(runs)
    }

    /// What `finish` leaves.
    package enum Sorted {
        /// One sorted run of `count` groups, in memory.
        case memory(SpoolBytes, count: Int)
        /// Sorted runs to merge.
        case runs([GroupRun])

        /// As runs to merge.
        package var runs: [GroupRun] {
            switch self {
            case .memory(let run, let count): count == 0 ? [] : [.memory(run)]
            case .runs(let runs): runs
            }
        }
    }

    /// The groups of one run in memory, in its order; nil when an entry is damaged.
    package static func decode(_ run: SpoolBytes) -> [ReportGroup]? {
        var groups: [ReportGroup] = []
        let bytes = run.bytes
        var at = 0
        while at < bytes.count {
            guard let length = SpoolReader.entryLength(UnsafeRawBufferPointer(rebasing: bytes[at...])),
                length <= bytes.count - at,
                let group = SpooledGroup.decode(UnsafeRawBufferPointer(rebasing: bytes[at..<(at + length)]))
            else { return nil }
            groups.append(group.group)
            at += length
        }
        return groups
    }

    /// Sorts small (total, index) pairs, then moves the groups into that order.
    package static func sort(_ groups: inout [ReportGroup]) {
        let order = groups.withUnsafeBufferPointer { groups in
            var order = groups.indices.map { (total: groups[$0].totals.totalBytes, at: $0) }
            order.sort { a, b in ReportGroup.precedes(a.total, groups[a.at].keys, b.total, groups[b.at].keys) }
            return order.map(\.at)
        }
        Permutation.apply(&groups, by: order)
    }
}

/// Merges sorted runs of groups into one sorted sequence. The head of each run is read where it is (its
/// key's bytes are not made into strings): `top` is valid until `advance`.
package struct GroupRunMerge {
    package enum Order {
        /// By key hash, then key bytes: how a builder's spilled runs are sorted, so that equal keys meet.
        case aggregation
        /// `ReportGroup.precedes`.
        case report
    }

    /// A run's current group: its key's bytes point into the run's buffer.
    package struct Head {
        var hash: UInt64
        var keyBytes: UnsafeRawBufferPointer
        /// The totals as stored (`SpooledGroup.totals`), checked whole when the entry was read.
        var totalsBytes: UnsafeRawBufferPointer
        /// `totals.totalBytes`, what the report is ordered by.
        var totalBytes: Int

        /// The totals, made from their bytes (`SpooledGroup.parseHead` left them unchecked: damaged ones fail
        /// `status` and count as empty).
        func totals(_ status: SpoolReadStatus) -> GroupTotals {
            if let totals = SpooledGroup.totals(totalsBytes) { return totals }
            status.fail(GroupRunReader.damaged)
            return GroupTotals()
        }
    }

    private var readers: [GroupRunReader]
    private var heap: KeyedMergeHeap<OrderKey>
    private let status: SpoolReadStatus

    /// What the heads are ordered by: a few words, not a copy of each head's totals.
    private struct OrderKey {
        var hash: UInt64
        var total: Int
        var keyBytes: UnsafeRawBufferPointer

        init?(_ head: Head?) {
            guard let head else { return nil }
            hash = head.hash
            total = head.totalBytes
            keyBytes = head.keyBytes
        }
    }

    /// What the read buffers of one merge's spilled runs take together, at most (unless each is at its
    /// smallest): a merge of hundreds of runs (a capture of many gigabytes with ids in paths) read each through
    /// 64 KiB, and peak RSS grew with the capture.
    private static let readBudget = 2 << 20
    /// The smallest read per run: one page of the file, a few dozen groups.
    private static let smallestRead = 4 << 10

    /// What each of `spilledRuns` runs of one merge reads at a time: 64 KiB for up to 32 runs, then the budget
    /// shared, down to a page.
    package static func readSize(spilledRuns: Int) -> Int {
        min(SpoolCursor.defaultBufferSize, max(smallestRead, readBudget / max(1, spilledRuns)))
    }

    package init(_ runs: [GroupRun], order: Order, status: SpoolReadStatus) {
        self.status = status
        let spilled = runs.reduce(0) { count, run in
            if case .spilled = run { count + 1 } else { count }
        }
        let read = Self.readSize(spilledRuns: spilled)
        readers = runs.map { GroupRunReader($0, status: status, bufferSize: read) }
        heap = KeyedMergeHeap(readers.map { OrderKey($0.head) }) { x, y in
            switch order {
            case .aggregation:
                if x.hash != y.hash { return x.hash < y.hash ? -1 : 1 }
                if GroupKeyBytes.equal(x.keyBytes, y.keyBytes) { return 0 }
                return GroupKeyBytes.bytesPrecede(x.keyBytes, y.keyBytes) ? -1 : 1
            case .report:
                if x.total != y.total { return x.total > y.total ? -1 : 1 }
                return GroupKeyBytes.compare(x.keyBytes, y.keyBytes)
            }
        }
    }

    /// The group that comes next (until `advance`).
    package var top: Head? { heap.top.map { readers[$0].head! } }

    /// Whether another run's head has `top`'s hash and key (`Order.aggregation`). A run holds a key once,
    /// so when none of the heads that can come next has it, `top` is the only group of its key.
    package var topRepeats: Bool {
        guard let top = heap.top, let head = readers[top].head else { return false }
        return heap.topChildMatches { $0.hash == head.hash && GroupKeyBytes.equal($0.keyBytes, head.keyBytes) }
    }

    /// Moves past `top`.
    package mutating func advance() {
        guard let top = heap.top else { return }
        readers[top].advance()
        heap.topAdvanced(to: OrderKey(readers[top].head))
    }

    /// The next group, made into a report row.
    package mutating func next() -> ReportGroup? {
        guard let head = top else { return nil }
        // Both made before the run moves on: its bytes are the run's buffer's until then.
        let group = ReportGroup(keys: GroupKeyBytes.decode(head.keyBytes) ?? [], totals: head.totals(status))
        advance()
        return group
    }
}

/// Reads one run of groups in order, a buffer of the spool file at a time.
package struct GroupRunReader {
    /// Why a reading failed when a group's totals were damaged.
    package static let damaged = "cannot read back the temporary file: a damaged group"
    private let run: GroupRun
    private let status: SpoolReadStatus
    private var position = 0
    private var cursor: SpoolCursor?
    /// Heads without `totalBytes` (`SpooledGroup.parseKey`): for readings in no order, which read every
    /// head's totals whole anyway.
    private let unordered: Bool
    package private(set) var head: GroupRunMerge.Head?

    /// `unordered`: the heads' `totalBytes` is left 0 (nothing is merged by it), and their totals are checked
    /// only when read (`Head.totals`), as a merge's are.
    /// `bufferSize`: what a spilled run reads at a time.
    package init(
        _ run: GroupRun, status: SpoolReadStatus, unordered: Bool = false,
        bufferSize: Int = SpoolCursor.defaultBufferSize
    ) {
        self.run = run
        self.status = status
        self.unordered = unordered
        if case .spilled(let spool, let range) = run { cursor = SpoolCursor(spool, range, bufferSize: bufferSize) }
        advance()
    }

    private func parse(_ bytes: UnsafeRawBufferPointer) -> GroupRunMerge.Head? {
        unordered ? SpooledGroup.parseKey(bytes) : SpooledGroup.parseHead(bytes)
    }

    package mutating func advance() {
        switch run {
        case .memory(let entries):
            let bytes = entries.bytes
            head = nil
            guard position < bytes.count else { return }
            guard let length = SpoolReader.entryLength(UnsafeRawBufferPointer(rebasing: bytes[position...])),
                length <= bytes.count - position,
                let entry = parse(UnsafeRawBufferPointer(rebasing: bytes[position..<(position + length)]))
            else { return status.fail("a damaged group in memory") }
            position += length
            head = entry
        case .spilled:
            head = unordered ? cursor?.next(SpooledGroup.parseKey) : cursor?.next(SpooledGroup.parseHead)
            // A damaged or short read ends the run (our own file: an I/O error), reported through
            // `status`; the normal end of the run is no failure.
            if head == nil, let failure = cursor?.failure { status.fail(failure) }
        }
    }
}

extension SpoolReadStatus {
    /// Adds the stored totals `bytes` (`GroupRunMerge.Head.totalsBytes`) to `totals`, which the caller made empty
    /// where they are read (an optional returned, as `Head.totals` does, copies the whole struct once or twice a
    /// group). Damaged totals fail the reading and leave `totals` empty, as there.
    @inline(__always)
    func decode(_ bytes: UnsafeRawBufferPointer, into totals: inout GroupTotals) {
        if !SpooledGroup.add(bytes, to: &totals) {
            fail(GroupRunReader.damaged)
            totals = GroupTotals()
        }
    }
}
