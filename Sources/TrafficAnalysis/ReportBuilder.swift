import TrafficHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Aggregates records into groups as they arrive; memory follows the number of groups, not of records
/// (unless every record is kept for `--messages`).
final class ReportBuilder {
    private let options: ReportOptions
    private var groups = GroupTable()
    var groupCount: Int { groups.count }
    /// The slot of the last record added and the inputs of its key: a response comes right after its
    /// request, and keep-alive connections repeat paths, so most records skip the key and the hash.
    private var lastSlot = -1
    private var last = KeyInputs()
    /// Reused for lookups, so that a known group costs no allocation.
    private var probe: [String]
    /// Whether to count the rows `--normalize-paths` would produce (when it is off).
    private let countNormalized: Bool
    private(set) var totals = GroupTotals()
    private var messages: MessageStore
    var summary = ReportSummary()
    let capturePaths: [String]

    /// Whether records need the exchange joiner: a response's method or a request's status is shown.
    var needsJoinedExchanges: Bool {
        options.keepMessages || options.groupBy.contains(.method) || options.groupBy.contains(.status)
    }

    init(options: ReportOptions, capturePaths: [String]) {
        self.options = options
        self.capturePaths = capturePaths
        countNormalized = options.paths.isIdentity && options.groupBy.contains(.path)
        probe = options.groupBy.map { _ in "" }
        messages = MessageStore(runLength: options.messageRunLength, directory: options.messageSpoolDirectory)
    }

    func matches(_ record: HTTPMessageRecord) -> Bool {
        if let glob = options.hostGlob, fnmatch(glob, record.host, 0) != 0 { return false }
        if let glob = options.pathGlob, fnmatch(glob, record.path, 0) != 0 { return false }
        return true
    }

    /// Returns the group the record was counted in (nil when a filter left it out).
    @discardableResult
    func add(_ record: HTTPMessageRecord, capture: Int) -> Int? {
        guard matches(record) else { return nil }
        let slot = slot(for: record, capture: capture)
        groups[slot].add(record)
        totals.add(record)
        switch record.kind {
        case .request:
            summary.requests += 1
            if !record.paired { summary.unpairedRequests += 1 }
        case .response:
            summary.responses += 1
            if !record.paired { summary.unpairedResponses += 1 }
        case .tls:
            break
        }
        if record.decodedBodyBytes == nil { summary.decodeErrors += 1 }
        if !record.complete { summary.incompleteMessages += 1 }
        if options.keepMessages { messages.append((capture, record)) }
        return slot
    }

    /// Whether a record must be final when it is added (records are listed): otherwise its connection
    /// overhead can follow with `addOverhead`.
    var keepsRecords: Bool { options.keepMessages }

    /// Overhead of a request or response already counted in group `slot` (see `add`).
    func addOverhead(_ overhead: RecordOverhead, slot: Int, kind: HTTPMessageRecord.Kind) {
        groups[slot].add(overhead, kind: kind)
        totals.add(overhead, kind: kind)
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

    private func slot(for record: HTTPMessageRecord, capture: Int) -> Int {
        if lastSlot >= 0, sameKey(record, capture: capture) { return lastSlot }
        for (i, field) in options.groupBy.enumerated() {
            probe[i] = key(for: field, record: record, capture: capture, paths: options.paths)
        }
        lastSlot = groups.slot(for: probe)
        last = KeyInputs(
            host: record.host, path: record.path, method: record.method, status: record.status,
            contentType: record.contentType, connection: record.connection, capture: capture)
        return lastSlot
    }

    /// Whether `record` has the same key as the last record, from the raw fields (equal strings that
    /// share storage, as a response's host and path share its request's, compare without reading bytes).
    private func sameKey(_ record: HTTPMessageRecord, capture: Int) -> Bool {
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

    private func key(for field: GroupField, record: HTTPMessageRecord, capture: Int, paths: PathNormalizer) -> String {
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

    /// Reorders `rows` in place so that `rows[i]` becomes the old `rows[source[i]]` (following the
    /// permutation's cycles: one row moved at a time, no second array of rows). Rows are moved as bytes:
    /// assigning them would retain and release every key and total once per move.
    static func permute<Row>(_ rows: inout [Row], by source: [Int]) {
        precondition(source.count == rows.count, "a permutation of every row")
        var source = source
        rows.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for start in source.indices where source[start] != start {
                let first = (base + start).move()
                var i = start
                while source[i] != start {
                    let next = source[i]
                    (base + i).moveInitialize(from: base + next, count: 1)
                    source[i] = i
                    i = next
                }
                (base + i).initialize(to: first)
                source[i] = i
            }
        }
    }

    /// How many distinct keys remain when identifier segments of the path column are collapsed. Normalizing
    /// is a function of the path alone, so the groups' keys suffice: no per-record work.
    static func normalizedKeyCount(_ keys: [[String]], pathColumn column: Int) -> Int {
        // The normalized keys are hashed and compared as bytes, never made: tens of thousands of paths
        // collapse into a few dozen keys, and making each one (to look it up) cost most of the count.
        // Each distinct key is kept as bytes, fields separated by 0xFF (never in UTF-8). FNV rather than
        // a Set of byte arrays: the standard hasher takes a call per byte (1.6 times the instructions).
        var distinct: [UInt64: [[UInt8]]] = [:]
        var bytes: [UInt8] = []
        for key in keys {
            bytes.removeAll(keepingCapacity: true)
            for (i, field) in key.enumerated() {
                if i == column {
                    PathNormalizer.forEachCollapsedPiece(field) { bytes.append(contentsOf: $0) }
                } else {
                    bytes.append(contentsOf: field.utf8)
                }
                bytes.append(0xFF)
            }
            let hash = bytes.withUnsafeBufferPointer(GroupTable.hash)
            if let known = distinct[hash] {
                if !known.contains(bytes) { distinct[hash]!.append(bytes) }
            } else {
                distinct[hash] = [bytes]
            }
        }
        return distinct.values.reduce(0) { $0 + $1.count }
    }

    /// The result of a count made on another thread (read after joining it).
    private final class NormalizedCount: @unchecked Sendable {
        var value: Int?
    }

    /// Requests before responses; TLS client-to-server before server-to-client.
    static func order(_ record: HTTPMessageRecord) -> Int {
        switch record.kind {
        case .request: 0
        case .response: 1
        case .tls: record.tls?.direction == "client_to_server" ? 0 : 1
        }
    }

    /// `text/html; charset=utf-8` groups as `text/html`.
    static func mediaType(_ value: String) -> String {
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingSpaces().lowercased()
    }

    /// Takes in a shard's groups, summary and records; `renumber` maps the shard's connection numbers of
    /// `capture` to the capture's (tshark's order of first packets).
    func merge(_ shard: ReportBuilder, capture: Int, renumber: [Int]) {
        shard.lastSlot = -1
        if groups.count == 0 {
            // The first shard's table is taken over whole: no second copy of its groups.
            swap(&groups, &shard.groups)
        } else {
            // Stored hashes: the shard's keys are read only where a hash matches (groups in both shards).
            shard.groups.drain { keys, hash, totals in groups[groups.slot(for: keys, hash: hash)].add(totals) }
        }
        lastSlot = -1
        totals.add(shard.totals)
        summary.add(shard.summary)
        messages.adopt(&shard.messages, capture: capture, renumber: renumber)
    }

    func build(captures: [CaptureSummary], anomalies: [String: Int], warnings: [AnalysisWarning]) -> TrafficReport {
        let keys = groups.keys
        // Counting what `--normalize-paths` would leave reads only the keys: with more than one job it runs
        // on a second thread while the rows are sorted.
        let normalizedCount = NormalizedCount()
        var counting: WorkerThread?
        if countNormalized, let column = options.groupBy.firstIndex(of: .path) {
            let count = { normalizedCount.value = Self.normalizedKeyCount(keys, pathColumn: column) }
            if options.jobs > 1 {
                counting = WorkerThread(count)
                counting?.start()
            } else {
                count()
            }
        }
        // Sort small (total, slot) pairs, then move the rows into that order: totals are large to move around.
        var order = (0..<groups.count).map { (total: groups[$0].totalBytes, slot: $0) }
        order.sort { a, b in
            if a.total != b.total { return a.total > b.total }
            // Ties are common (ids in paths, same sizes): equal fields (often one shared string) are
            // skipped with one `==` where lexicographicallyPrecedes would compare them twice with `<`.
            let x = keys[a.slot], y = keys[b.slot]
            for i in x.indices where x[i] != y[i] { return x[i] < y[i] }
            return false
        }
        var rows = groups.drainRows()
        Self.permute(&rows, by: order.map(\.slot))
        var warnings = warnings
        var kept: MessageList?
        if options.keepMessages {
            kept = messages.finish()
            if let warning = messages.warning { warnings.append(AnalysisWarning(capture: "--messages", message: warning)) }
        }
        counting?.join()
        return TrafficReport(
            captures: captures, groupBy: options.groupBy, groups: rows, totals: totals, summary: summary,
            messages: kept, normalizedGroupCount: normalizedCount.value, anomalies: anomalies, warnings: warnings)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
