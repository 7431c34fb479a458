import TrafficSessions
import TrafficConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Aggregates records into groups as they arrive; memory follows the number of groups, not of records
/// (unless every record is kept for `--messages`), and is bounded by `groupsInMemory`: beyond it the groups
/// go to a temporary file in sorted runs, merged when the report is made.
package final class ReportBuilder {
    private let options: ReportOptions
    private var groups = GroupTable()
    package var groupCount: Int { groups.count }
    /// Groups written out (`spillGroups`), each run sorted by key hash and keys; the same key can be in
    /// several runs, and in the table. Runs are split by the top bit of the hash, so that the two halves can
    /// be merged on two threads: `groupRuns[half]`.
    private var groupRuns: [[GroupRun]] = [[], []]
    private var hasGroupRuns: Bool { !groupRuns[0].isEmpty || !groupRuns[1].isEmpty }
    private var groupSpool: RecordSpool?
    /// Set when the groups' temporary file could not be made or written: they stay in memory.
    private var groupWarning: String?
    /// Reused for every run written.
    private var spillBytes: [UInt8] = []
    /// A table's groups encoded in slot order while it is spilled (`GroupTable.encodeForSpill`).
    private var spillEncoded: [UInt8] = []
    /// The most `spillEncoded` keeps between spills.
    private static let keptSpillBytes = 1 << 20
    /// Whether a spilled table is emptied in place, keeping its memory for the groups that come next: a new
    /// table took its megabyte chunks of totals from the system again, page by page (~11 000 minor faults,
    /// ~2.5 % of the default run on the 1 GiB API bench). Not when records are kept (`--messages`, HAR): their
    /// store needs that room between spills (8 GiB API bench, HAR: 63.5 → 67.7 MB peak RSS with it).
    private let keepsTableMemory: Bool
    /// The table is written out when it reaches this many groups.
    private var spillAt: Int
    /// Records whose connection overhead comes later (`addPinned`): the slot of their group, by pin (-1: a
    /// free pin). Their groups stay in the table when it is written out, and the pins follow them.
    private var pinSlots: [Int32] = []
    private var freePins: [Int32] = []
    /// The slot of the last record added and the inputs of its key: a response comes right after its
    /// request, and keep-alive connections repeat paths, so most records skip the key and the hash.
    private var lastSlot = -1
    private var last = KeyInputs()
    /// Grouped by host and path as sent (the default): keys are looked up from the records' bytes.
    private let hostPathKeys: Bool
    /// Reused for lookups, so that a known group costs no allocation.
    private var probe: [String]
    /// Whether to count the rows `--normalize-paths` would produce (when it is off).
    private let countNormalized: Bool
    /// Every record counted. With groups (`ReportOptions.countGroups`) it is the sum of the groups, made when the
    /// report is (`build`): `spilledTotals` plus the table's, one addition per group instead of one per record
    /// (2 % of the instructions on the 100 MiB API bench). Without groups it is counted record by record.
    package private(set) var totals = GroupTotals()
    /// The sum of the groups written out by `spillGroups` (this builder's and its merged shards').
    private var spilledTotals = GroupTotals()
    private var messages: MessageStore
    /// When the bytes crossed (`ReportOptions.collectTimeline`): bounded, for the HTML report.
    private var timeline: ReportTimeline?
    package var summary = ReportSummary()
    package let capturePaths: [String]

    /// Whether records need the exchange joiner: a response's method or a request's status is shown.
    package var needsJoinedExchanges: Bool {
        options.keepMessages || options.recordStream != nil || options.groupBy.contains(.method)
            || options.groupBy.contains(.status)
    }

    /// Where this builder's records are streamed (`ReportOptions.recordStream`, or a shard's numbering stage set
    /// by the analysis), in batches of `streamBatch` (`flushStreamedRecords` hands over the rest).
    package var recordStream: (any RecordStream)?
    /// Where this builder's encoded records go: the stream itself, or a shard's numbering.
    package var streamedLinesSink: ((StreamedLines) -> Void)?
    /// Emptied lines with their room, from the sink, for the next batch (nil: none to give).
    package var spareStreamedLines: (() -> StreamedLines?)?
    private var streamed = StreamedLines()
    private static let streamBatch = 256

    /// Hands the records still held for the stream over.
    package func flushStreamedRecords() {
        guard !streamed.isEmpty, let recordStream else { return }
        if let streamedLinesSink {
            // The sink keeps the batch: the next one starts in spare room, not in lines made and grown anew.
            let batch = streamed
            streamed = spareStreamedLines?() ?? StreamedLines()
            streamedLinesSink(batch)
        } else {
            recordStream.write(streamed)
            streamed.removeAll()
        }
    }

    package init(options: ReportOptions, capturePaths: [String]) {
        self.options = options
        self.capturePaths = capturePaths
        countNormalized = options.countNormalizedRows && options.paths.isIdentity && options.groupBy.contains(.path)
        recordStream = options.recordStream
        probe = options.groupBy.map { _ in "" }
        hostPathKeys = options.groupBy == [.host, .path] && options.paths.isIdentity
        spillAt = max(1, options.groupsInMemory)
        keepsTableMemory = !options.keepMessages
        messages = MessageStore(runLength: options.messageRunLength, directory: options.messageSpoolDirectory)
        if options.collectTimeline { timeline = ReportTimeline(eventLimit: options.timelineEventLimit) }
    }

    package func matches(_ record: MessageRecord) -> Bool {
        if let glob = options.hostGlob, fnmatch(glob, record.host, 0) != 0 { return false }
        if let glob = options.pathGlob, fnmatch(glob, record.path, 0) != 0 { return false }
        return true
    }

    /// Counts `record` in its group (unless a filter leaves it out).
    package func add(_ record: MessageRecord, capture: Int) {
        guard count(record, capture: capture) != nil else { return }
        if groups.count >= spillAt { spillGroups() }
    }

    /// `add` of a record its maker holds `inout` (`RecordSink`).
    package func add(_ record: inout MessageRecord, capture: Int) {
        guard count(record, capture: capture) != nil else { return }
        if groups.count >= spillAt { spillGroups() }
    }

    /// `add`, for a record whose connection overhead follows (`addOverhead`): returns a pin of its group
    /// (nil when a filter left it out).
    package func addPinned(_ record: MessageRecord, capture: Int) -> Int? {
        guard let slot = count(record, capture: capture), slot >= 0 else { return nil }
        let pin: Int
        if let free = freePins.popLast() {
            pin = Int(free)
            pinSlots[pin] = Int32(truncatingIfNeeded: slot)
        } else {
            pin = pinSlots.count
            pinSlots.append(Int32(truncatingIfNeeded: slot))
        }
        if groups.count >= spillAt { spillGroups() }
        return pin
    }

    /// Returns the group the record was counted in (nil when a filter left it out).
    private func count(_ record: MessageRecord, capture: Int) -> Int? {
        guard matches(record) else { return nil }
        // A record stream without groups (`--format ndjson`) keeps no group: memory stays flat however many
        // endpoints the capture has. Its records are held whole (`keepsRecords`), so no pin needs a slot.
        var slot = -1
        if options.countGroups {
            slot = self.slot(for: record, capture: capture)
            groups[slot].add(record, sizes: options.collectResponseSizes, waits: options.collectWaits)
        } else {
            totals.add(record, sizes: options.collectResponseSizes, waits: options.collectWaits)
        }
        switch record.kind {
        case .request:
            summary.requests += 1
            if !record.paired { summary.unpairedRequests += 1 }
        case .response:
            summary.responses += 1
            if !record.paired { summary.unpairedResponses += 1 }
        case .tls, .quic:
            break
        }
        // A partial first message (`mid_message_start`) has an unknown coding, not a failed decoding.
        if record.decodedBodyBytes == nil, !record.flags.contains(.midMessageStart) { summary.decodeErrors += 1 }
        if !record.complete { summary.incompleteMessages += 1 }
        if options.keepMessages { messages.append((capture, record)) }
        if let recordStream {
            streamed.append(record, capture: capture, stream: recordStream)
            if streamed.count >= Self.streamBatch { flushStreamedRecords() }
        }
        timeline?.add(record, capture: capture)
        return slot
    }

    /// Whether a record must be final when it is added (records are listed): otherwise its connection
    /// overhead can follow with `addOverhead`.
    package var keepsRecords: Bool { options.keepMessages || options.recordStream != nil }

    /// Overhead of a request or response counted with `addPinned`, which returned `pin`; the pin is released.
    package func addOverhead(_ overhead: RecordOverhead, pin: Int, kind: MessageRecord.Kind) {
        let slot = Int(pinSlots[pin])
        pinSlots[pin] = -1
        freePins.append(Int32(truncatingIfNeeded: pin))
        if overhead.isZero { return }
        groups[slot].add(overhead, kind: kind)
    }

    /// Writes the table's groups to the temporary file as one run sorted by key hash and keys, except the
    /// groups of pinned records, which stay (under new slots). Without a temporary file the groups stay in
    /// memory and a warning says so.
    private func spillGroups() {
        lastSlot = -1
        if groupSpool == nil, groupWarning == nil {
            groupSpool = RecordSpool(directory: options.messageSpoolDirectory)
            if groupSpool == nil { failGroups("cannot create a temporary file in \(options.messageSpoolDirectory ?? RecordSpool.defaultDirectory)") }
        }
        guard let spool = groupSpool else { return }
        var pinned = Set<Int32>()
        for slot in pinSlots where slot >= 0 { pinned.insert(slot) }
        var written = GroupTotals()
        // Written a slice of groups at a time: the file's appends follow one another, so the run is one range
        // of it, and the buffer stays small. The groups are encoded in slot order first (`encodeForSpill`) and
        // copied out in spill order.
        spillEncoded.removeAll(keepingCapacity: true)
        let order = groups.encodeForSpill(
            skip: { slot, _ in !pinned.isEmpty && pinned.contains(Int32(truncatingIfNeeded: slot)) },
            to: &spillEncoded, sum: &written)
        var start: Int64?, middle: Int64?, end: Int64 = 0
        var at = 0
        repeat {
            spillBytes.removeAll(keepingCapacity: true)
            let upper = GroupTable.appendEntries(
                order[at..<min(at + Self.spillSlice, order.count)], from: spillEncoded, to: &spillBytes,
                split: Self.secondHalf)
            guard let range = spool.append(spillBytes) else {
                // Groups already written are not counted there: no run names them, and the table keeps them.
                return failGroups("cannot write a temporary file in \(spool.directory)")
            }
            if start == nil { start = range.lowerBound }
            if middle == nil, let upper { middle = range.lowerBound + Int64(upper) }
            end = range.upperBound
            at += Self.spillSlice
        } while at < order.count
        // The first spill's table may be four times the later ones' (`spilledTableLimit`): its bytes are not kept.
        if spillEncoded.capacity > Self.keptSpillBytes { spillEncoded = [] }
        spilledTotals.add(written)
        let lower = start ?? end
        groupRuns[0].append(.spilled(spool, lower..<(middle ?? end)))
        groupRuns[1].append(.spilled(spool, (middle ?? end)..<end))
        // Pinned groups stay: copied out, the table emptied, and put back in.
        var pinnedGroups: [(old: Int32, key: [UInt8], hash: UInt64, totals: GroupTotals)] = []
        var copied = Set<Int32>()
        for slot in pinSlots where slot >= 0 && copied.insert(slot).inserted {
            let key = groups.withKey(ofSlot: Int(slot)) { [UInt8]($0) }
            pinnedGroups.append((slot, key, groups.hash(ofSlot: Int(slot)), groups[Int(slot)]))
        }
        // After the first spill the table holds at most `spilledTableLimit` groups: a new, smaller one.
        let first = !hasSpilled
        hasSpilled = true
        if keepsTableMemory && !(first && Self.spilledTableLimit < options.groupsInMemory) {
            groups.removeAllKeepingCapacity()
        } else {
            groups = GroupTable()
        }
        var moved: [Int32: Int32] = [:]
        for group in pinnedGroups {
            let new = group.key.withUnsafeBytes { groups.slot(forKeyBytes: $0, hash: group.hash) }
            groups[new] = group.totals
            moved[group.old] = Int32(truncatingIfNeeded: new)
        }
        for pin in pinSlots.indices where pinSlots[pin] >= 0 {
            pinSlots[pin] = moved[pinSlots[pin]]!
        }
        // Pinned groups that cannot go yet do not make every new group write the table again.
        spillAt = max(max(1, min(options.groupsInMemory, tableLimitAfterSpill)), 2 * groups.count)
    }

    /// Whether the table was spilled before.
    private var hasSpilled = false
    /// The most groups the table holds once it has been spilled (unless `groupsInMemory` is lower). A capture
    /// that spills has more endpoints than fit: its records meet their groups in no particular order, and each
    /// count in a table larger than the second-level cache (~300 bytes a group: 16 384 groups are ~5 MB) waited
    /// for a miss or two. A quarter of the table spills four times as often, but each spill is cheaper per group
    /// too (its table is in the cache). 1 GiB API bench, interleaved medians: default options 0.470 → 0.455 s
    /// with the slot-order spill below, `--jobs 1` 0.746 → 0.723 s; 2 048 and 8 192 were no better. A capture
    /// that never spills (up to 16 384 endpoints) keeps the whole table, and pays for no spill at all.
    private static let spilledTableLimit = 4096
    /// The most groups a table holds after a spill: `spilledTableLimit` when a spilled table is emptied in place
    /// (`keepsTableMemory`). When records are kept, every spill makes a new table, and four times as many of them
    /// took their pages from the system again (`--messages --format csv` on the 1 GiB bulk bench: +6 %): the whole
    /// table then, as before.
    private var tableLimitAfterSpill: Int { keepsTableMemory ? Self.spilledTableLimit : options.groupsInMemory }

    /// Groups written to the temporary file per append when the table is spilled.
    private static let spillSlice = 256

    private func failGroups(_ reason: String) {
        groupSpool = nil
        groupWarning = "\(reason); groups are kept in memory"
        spillAt = .max
    }

    /// What a record's group key is computed from (only the fields grouped by are compared).
    private struct KeyInputs {
        var host = ""
        var path = ""
        var method: String?
        var status: Int?
        var contentType: String?
        var connection = 0
        var capture = 0
    }

    private func slot(for record: MessageRecord, capture: Int) -> Int {
        if hostPathKeys {
            // The default grouping: hashed and compared from the record's own bytes, no key strings made or
            // kept (a retain and a release per field and record), and the last group's key read from the table.
            let found = record.host.utf8.withContiguousStorageIfAvailable { host in
                record.path.utf8.withContiguousStorageIfAvailable { path in
                    hostPathSlot(UnsafeRawBufferPointer(host), UnsafeRawBufferPointer(path))
                }
            }
            if let found, let found { return found }
            lastSlot = -1  // `last` was not kept on the way above
        }
        if lastSlot >= 0, sameKey(record, capture: capture) { return lastSlot }
        for (i, field) in options.groupBy.enumerated() {
            probe[i] = key(for: field, record: record, capture: capture, paths: options.paths)
        }
        lastSlot = groups.slot(for: probe)
        // Only the fields grouped by are compared, so only they are kept: each other string kept was a retain
        // and a release per new key.
        for field in options.groupBy {
            switch field {
            case .host: last.host = record.host
            case .path: last.path = record.path
            case .method: last.method = record.method
            case .status: last.status = record.status
            case .contentType: last.contentType = record.contentType
            case .connection: last.connection = record.connection
            case .capture: last.capture = capture
            }
        }
        return lastSlot
    }

    private func hostPathSlot(_ host: UnsafeRawBufferPointer, _ path: UnsafeRawBufferPointer) -> Int {
        lastSlot = groups.slot(forPair: host, path, hint: lastSlot)
        return lastSlot
    }

    /// Whether `record` has the same key as the last record, from the raw fields (equal strings that
    /// share storage, as a response's host and path share its request's, compare without reading bytes).
    private func sameKey(_ record: MessageRecord, capture: Int) -> Bool {
        for field in options.groupBy {
            switch field {
            case .host: if record.host != last.host { return false }
            case .path: if record.path != last.path { return false }
            case .method: if record.method != last.method { return false }
            case .status: if record.status != last.status { return false }
            case .contentType: if record.contentType != last.contentType { return false }
            case .connection: if record.connection != last.connection { return false }
            case .capture: if capture != last.capture { return false }
            }
        }
        return true
    }

    /// Template results by raw path: the same paths come back again and again (bounded; cleared when full).
    private var normalizedPaths: [String: String] = [:]

    private func normalizedPath(_ path: String, _ paths: PathNormalizer) -> String {
        if paths.isIdentity { return path }
        // Collapsing identifiers is one pass over the bytes, cheaper than a lookup here; templates split the
        // path and try each one: those results are remembered.
        if paths.templates.isEmpty { return paths.normalize(path) }
        if let known = normalizedPaths[path] { return known }
        if normalizedPaths.count >= 4096 { normalizedPaths.removeAll(keepingCapacity: true) }
        let normalized = paths.normalize(path)
        normalizedPaths[path] = normalized
        return normalized
    }

    private func key(for field: GroupField, record: MessageRecord, capture: Int, paths: PathNormalizer) -> String {
        switch field {
        case .host: return record.host
        case .path: return normalizedPath(record.path, paths)
        case .method: return record.method ?? "(none)"
        case .status: return record.status.map(String.init) ?? "(none)"
        case .contentType: return record.contentType.map(Self.mediaType) ?? "(none)"
        case .connection: return String(record.connection)
        case .capture: return capturePaths[capture]
        }
    }

    /// How many distinct keys remain when identifier segments of the path column are collapsed. Normalizing
    /// is a function of the path alone, so the groups' keys suffice: no per-record work.
    package static func normalizedKeyCount(_ keys: [[String]], pathColumn column: Int) -> Int {
        var counter = NormalizedKeyCounter(pathColumn: column)
        for key in keys { counter.add(key) }
        return counter.count
    }

    /// `normalizedKeyCount` of keys as `GroupKeyBytes`, one after the other (`GroupTable.keys`).
    package static func normalizedKeyCount(keyBytes: [UInt8], ends: [Int], pathColumn column: Int) -> Int {
        var counter = NormalizedKeyCounter(pathColumn: column)
        keyBytes.withUnsafeBytes { bytes in
            var start = 0
            for end in ends {
                counter.add(keyBytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
        }
        return counter.count
    }

    /// The result of a count made on another thread (read after joining it).
    private final class NormalizedCount: @unchecked Sendable {
        var value: Int?
    }

    /// `text/html; charset=utf-8` groups as `text/html`.
    package static func mediaType(_ value: String) -> String {
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingSpaces().lowercased()
    }

    /// Takes in a shard's groups, summary and records; `renumber` maps the shard's connection numbers of
    /// `capture` to the capture's (tshark's order of first packets).
    package func merge(_ shard: ReportBuilder, capture: Int, renumber: [Int]) {
        shard.lastSlot = -1
        assert(shard.pinSlots.allSatisfy { $0 < 0 }, "every connection of the shard has ended")
        for half in 0..<2 { groupRuns[half] += shard.groupRuns[half] }
        shard.groupRuns = [[], []]
        if let warning = shard.groupWarning, groupWarning == nil { groupWarning = warning }
        if groups.count == 0 {
            // The first shard's table is taken over whole: no second copy of its groups.
            swap(&groups, &shard.groups)
        } else {
            // Stored hashes: the shard's keys are read only where a hash matches (groups in both shards).
            shard.groups.drain { key, hash, totals in
                groups[groups.slot(forKeyBytes: key, hash: hash)].add(totals)
                if groups.count >= spillAt { spillGroups() }
            }
        }
        lastSlot = -1
        totals.add(shard.totals)
        spilledTotals.add(shard.spilledTotals)
        summary.add(shard.summary)
        messages.adopt(&shard.messages, capture: capture, renumber: renumber)
        if let other = shard.timeline {
            timeline?.merge(other, capture: capture, renumber: renumber)
            shard.timeline = nil
        }
    }

    package func build(captures: [CaptureSummary], anomalies: [String: Int], warnings: [AnalysisWarning]) -> TrafficReport {
        flushStreamedRecords()
        if options.countGroups {
            totals = spilledTotals
            groups.addTotals(to: &totals)
        }
        var warnings = warnings
        let groups = hasGroupRuns ? buildGroupsFromRuns() : buildGroupsInMemory()
        if let groupWarning { warnings.append(AnalysisWarning(capture: "groups", message: groupWarning)) }
        var kept: MessageList?
        if options.keepMessages {
            kept = messages.finish()
            if let warning = messages.warning { warnings.append(AnalysisWarning(capture: "--messages", message: warning)) }
        }
        var report = TrafficReport(
            captures: captures, groupBy: options.groupBy, groups: groups.rows, totals: totals, summary: summary,
            messages: kept, normalizedGroupCount: groups.normalizedCount, anomalies: anomalies, warnings: warnings)
        timeline?.finish()
        report.timeline = timeline
        report.settings = options.settings
        timeline = nil
        return report
    }

    /// The column whose paths `--normalize-paths` would collapse, when the rows it would leave are counted.
    private var normalizedColumn: Int? { countNormalized ? options.groupBy.firstIndex(of: .path) : nil }

    /// Every group in the table, sorted in memory.
    private func buildGroupsInMemory() -> (rows: ReportGroups, normalizedCount: Int?) {
        // Counting what `--normalize-paths` would leave reads only the keys' bytes (no `String` made): with
        // more than one job it runs on a second thread while the rows are sorted and made.
        let normalizedCount = NormalizedCount()
        var counting: WorkerThread?
        if let column = normalizedColumn {
            let keys = groups.keys
            let count = { normalizedCount.value = Self.normalizedKeyCount(keyBytes: keys.bytes, ends: keys.ends, pathColumn: column) }
            if options.jobs > 1 {
                counting = WorkerThread(count)
                counting?.start()
            } else {
                count()
            }
        }
        // Sorted on the keys' bytes; the keys stay bytes (`KeyedGroups`): rows with `String`s are made only
        // where they are read (a table copies the bytes into its cells).
        let order = groups.slotsInReportOrder()
        let keyed = groups.drainKeyed(order: order)
        counting?.join()
        return (ReportGroups(storage: .keyed(keyed), count: keyed.count), normalizedCount.value)
    }

    /// Keys whose hash is at least this are in the second half of the runs.
    private static let secondHalf: UInt64 = 1 << 63

    /// The groups of the written runs and of the table: runs merged in key order, so that each key's totals
    /// from every run meet and are added up, then sorted into report order in runs of 2 × `groupsInMemory`
    /// (written to the temporary file again when there is more than one), which the report merges as it is
    /// read. Memory holds a run, not the groups. The two halves of the hashes are merged on two threads when
    /// there is more than one job.
    private func buildGroupsFromRuns() -> (rows: ReportGroups, normalizedCount: Int?) {
        var halves = groupRuns
        groupRuns = [[], []]
        // The table's groups become one more run per half (`encodeHalves`). The table is emptied before the
        // halves' bytes are copied into runs, and those bytes end with the loop: none of them is held through
        // the merge.
        let encoded = Self.encodeHalves(groups, onTwoThreads: options.jobs > 1)
        groups.removeAll()
        for (half, bytes) in encoded.enumerated() where !bytes.isEmpty {
            halves[half].append(.memory(SpoolBytes(bytes)))
        }
        let status = SpoolReadStatus()
        let results = (0..<2).map { _ in HalfResult() }
        let runLength = max(1, options.groupsInMemory)
        // Report-order runs hold groups as bytes (about 170 a group with the sorting's notes), a third of what
        // a group takes in the table, which is empty by now: runs twice as long, half as many for the report to
        // merge (the merge's comparisons cost 1 400 instructions a group with six runs on the 1 GiB bench). Not
        // three times: the two halves sort their runs at once, and peak RSS on the 1 GiB API bench went 44 → 49
        // MiB (default options) and 59 → 60.5 MiB with `--overhead all`, too close to the 64 MiB goal.
        let (longer, overflow) = runLength.multipliedReportingOverflow(by: 2)
        let orderRunLength = overflow ? runLength : longer
        let column = normalizedColumn
        let directory = options.messageSpoolDirectory
        let first = groupSpool
        func merge(_ half: Int) {
            // Each half writes its own file: a spool is written by one thread.
            let spool = half == 0 ? first : RecordSpool(directory: directory)
            results[half].value = Self.aggregate(
                halves[half], status: status, runLength: orderRunLength, spool: spool, normalizedColumn: column)
        }
        if options.jobs > 1 {
            let second = WorkerThread { merge(1) }
            second.start()
            merge(0)
            second.join()
        } else {
            merge(0)
            merge(1)
        }
        let a = results[0].value!, b = results[1].value!
        if let failure = a.failure ?? b.failure, groupWarning == nil { groupWarning = "\(failure); groups are kept in memory" }
        var counter = a.counter
        if let other = b.counter { counter?.add(other) }
        var storage: ReportGroups.Storage = .runs(a.sorted.runs + b.sorted.runs)
        if a.count + b.count <= runLength, case .memory(let x, _) = a.sorted, case .memory(let y, _) = b.sorted {
            // Few groups after all (keys repeated across runs): sorted in memory like a small report.
            if var rows = ReportOrderRuns.decode(x), let more = ReportOrderRuns.decode(y) {
                rows += more
                ReportOrderRuns.sort(&rows)
                storage = .memory(rows)
            } else {
                status.fail("a damaged group in memory")
            }
        }
        return (ReportGroups(storage: storage, count: a.count + b.count, status: status), counter?.count)
    }

    /// Tables smaller than this are written on one thread (a thread costs more than the halves save).
    private static let encodeOnTwoThreads = 2048

    private final class EncodedHalf: @unchecked Sendable {
        var bytes: [UInt8] = []
    }

    /// The groups of `table` as two runs in spill order, the lower half of the hashes and the upper one. With more
    /// than one job each half is sorted and written on a thread of its own: done on the main thread alone, this was
    /// ~8 ms of the 1 GiB API bench's serial tail (both threads are free by now: the reading is over).
    private static func encodeHalves(_ table: GroupTable, onTwoThreads: Bool) -> [[UInt8]] {
        guard onTwoThreads, table.count >= encodeOnTwoThreads else {
            return [encode(table, upper: false), encode(table, upper: true)]
        }
        let upper = EncodedHalf()
        let helper = WorkerThread { upper.bytes = encode(table, upper: true) }
        helper.start()
        let lower = encode(table, upper: false)
        helper.join()
        return [lower, upper.bytes]
    }

    /// The groups of one half of `table` (`upper`: hashes from `secondHalf` on) as a run in spill order.
    private static func encode(_ table: GroupTable, upper: Bool) -> [UInt8] {
        var encoded: [UInt8] = []
        let order = table.encodeForSpill(skip: { _, hash in (hash >= secondHalf) != upper }, to: &encoded, sum: nil)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        _ = GroupTable.appendEntries(order[...], from: encoded, to: &bytes, split: secondHalf)
        return bytes
    }

    private final class HalfResult: @unchecked Sendable {
        var value: (sorted: ReportOrderRuns.Sorted, count: Int, counter: NormalizedKeyCounter?, failure: String?)?
    }

    /// Merges `runs` (sorted by hash and keys) adding up equal keys, and sorts the groups into report order.
    private static func aggregate(
        _ runs: [GroupRun], status: SpoolReadStatus, runLength: Int, spool: RecordSpool?, normalizedColumn: Int?
    ) -> (sorted: ReportOrderRuns.Sorted, count: Int, counter: NormalizedKeyCounter?, failure: String?) {
        var merging = GroupRunMerge(runs, order: .aggregation, status: status)
        var counter = normalizedColumn.map { NormalizedKeyCounter(pathColumn: $0) }
        var sorted = ReportOrderRuns(runLength: runLength, spool: spool)
        var count = 0
        var key: [UInt8] = []
        var stored: [UInt8] = []
        while let head = merging.top {
            if !merging.topRepeats {
                // A key in one run only (most of them) goes on with its totals as they are stored, from where
                // the run holds them.
                counter?.add(keyBytes: head.keyBytes)
                sorted.add(keyBytes: head.keyBytes, totalsBytes: head.totalsBytes, totalBytes: head.totalBytes)
                merging.advance()
                count += 1
                continue
            }
            // The head's bytes are the run's until it advances: its key and totals are copied to compare the
            // next ones.
            key.removeAll(keepingCapacity: true)
            key.append(contentsOf: head.keyBytes)
            stored.removeAll(keepingCapacity: true)
            stored.append(contentsOf: head.totalsBytes)
            let hash = head.hash, totalBytes = head.totalBytes
            merging.advance()
            key.withUnsafeBytes { key in
                counter?.add(keyBytes: key)
                guard let next = merging.top, next.hash == hash, GroupKeyBytes.equal(next.keyBytes, key) else {
                    stored.withUnsafeBytes { sorted.add(keyBytes: key, totalsBytes: $0, totalBytes: totalBytes) }
                    return
                }
                // Added from their bytes in place, with no `GroupTotals` made per entry. The heads' totals were
                // not checked whole (`SpooledGroup.parseHead`): they are here, as they are added. (A key in one
                // run only goes on unchecked: its totals are checked when the report reads them.)
                var totals = GroupTotals()
                var intact = stored.withUnsafeBytes { SpooledGroup.add($0, to: &totals) }
                while let next = merging.top, next.hash == hash, GroupKeyBytes.equal(next.keyBytes, key) {
                    intact = SpooledGroup.add(next.totalsBytes, to: &totals) && intact
                    merging.advance()
                }
                if !intact { status.fail(GroupRunReader.damaged) }
                withUnsafePointer(to: totals) { sorted.add(keyBytes: key, totals: $0) }
            }
            count += 1
        }
        return (sorted.finish(), count, counter, sorted.failure)
    }
}

extension String {
    package func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
