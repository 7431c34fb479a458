import TrafficAggregation
import TrafficCapture
import TrafficOutput

/// One JSON report of `traffic analyze`, read back into the values it was written from: each group's exact
/// state (`merge_state`), the summary's counts and the captures. Derived fields (percentiles, notes, the
/// named group columns) are not read: the merged report derives them again, as one run would.
public struct ReportPart: Sendable {
    public var settings: ReportSettings
    public var captures: [CaptureSummary]
    public var summary: ReportSummary
    public var anomalies: [String: Int]
    /// Keys in `settings.groupBy`'s order, and totals.
    public var groups: [(keys: [String], totals: GroupTotals)]
    /// Whether the report listed records (`--messages`), which a merge does not carry over.
    public var listsMessages: Bool

    /// The summary's integer fields by JSON name, as `AnalyzeReport` writes them.
    nonisolated(unsafe) static let summaryFields: [(String, WritableKeyPath<ReportSummary, Int>)] = [
        ("captures", \.captures), ("packets", \.packets), ("bytes", \.bytes), ("connections", \.connections),
        ("http_connections", \.httpConnections), ("tls_connections", \.tlsConnections), ("tls_decrypted", \.tlsDecrypted),
        ("requests", \.requests), ("responses", \.responses), ("unpaired_requests", \.unpairedRequests),
        ("unpaired_responses", \.unpairedResponses), ("non_http_bytes", \.nonHTTPBytes), ("tunnel_bytes", \.tunnelBytes),
        ("missing_bytes", \.missingBytes), ("decode_errors", \.decodeErrors), ("incomplete_messages", \.incompleteMessages),
        ("non_tcp_packets", \.nonTCPPackets), ("capture_frame_bytes", \.captureFrameBytes),
        ("non_http_frame_bytes", \.nonHTTPFrameBytes), ("non_tcp_frame_bytes", \.nonTCPFrameBytes),
        ("unattributed_frame_bytes", \.unattributedFrameBytes), ("tls_http2_connections", \.tlsHTTP2Connections),
        ("http2_connections", \.http2Connections), ("other_protocol_connections", \.otherProtocolConnections),
        ("tls_no_key", \.tlsNoKey), ("tls_decrypt_failed", \.tlsDecryptFailed),
        ("tls_unsupported_cipher", \.tlsUnsupportedCipher), ("tls_failed_records", \.tlsFailedRecords),
        ("tls_undecrypted_bytes", \.tlsUndecryptedBytes), ("h2_control_bytes", \.h2ControlBytes),
        ("http2_streams", \.http2Streams), ("quic_connections", \.quicConnections), ("quic_decrypted", \.quicDecrypted),
        ("http3_streams", \.http3Streams), ("other_protocol_packets", \.otherProtocolPackets),
    ]

    /// Reads the report at `path`.
    public static func read(path: String) throws(ReportMergeError) -> ReportPart {
        let bytes: [UInt8]
        switch InputFile.read(path) {
        case let .success(read): bytes = read
        case let .failure(failure): throw .unreadable(path: path, reason: failure.reason)
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw .notAReport(path: path, reason: "not valid JSON (\(error))")
        }
        do {
            return try ReportPart(root)
        } catch {
            throw .notAReport(path: path, reason: error.reason)
        }
    }

    struct ShapeError: Error {
        var reason: String
    }

    init(_ root: JSONValue) throws(ShapeError) {
        guard root["schema"]?.string == AnalyzeReport.schema else {
            throw ShapeError(reason: "no \"schema\": \"\(AnalyzeReport.schema)\"")
        }
        guard let layout = root["merge_layout"]?.array?.compactMap(\.string), let grouping = root["grouping"] else {
            throw ShapeError(reason: "no \"grouping\" and \"merge_layout\" (written by an older traffic? analyze the capture again)")
        }
        guard layout == GroupTotals.sumNames else {
            throw ShapeError(reason: "its \"merge_layout\" is not this version's (written by another version of traffic)")
        }
        settings = try Self.settings(grouping)
        captures = try (root["captures"]?.array ?? []).map { (value: JSONValue) throws(ShapeError) in try Self.capture(value) }
        guard let summaryObject = root["summary"] else { throw ShapeError(reason: "no \"summary\"") }
        var summary = ReportSummary()
        for (name, path) in Self.summaryFields {
            guard let value = summaryObject[name]?.int else { throw ShapeError(reason: "summary.\(name) is not an integer") }
            summary[keyPath: path] = value
        }
        guard let duration = summaryObject["duration"].flatMap(Self.nanoseconds) else {
            throw ShapeError(reason: "summary.duration is not a decimal number of seconds")
        }
        summary.durationNanoseconds = duration
        self.summary = summary
        anomalies = try Self.counts(summaryObject["anomalies"], "summary.anomalies")
        guard let groupValues = root["groups"]?.array else { throw ShapeError(reason: "no \"groups\" list") }
        let columns = settings.groupBy.map(\.columnName)
        groups = []
        groups.reserveCapacity(groupValues.count)
        for (index, group) in groupValues.enumerated() {
            var keys: [String] = []
            for column in columns {
                guard let key = group[column]?.string else { throw ShapeError(reason: "group \(index + 1) has no \"\(column)\" string") }
                keys.append(key)
            }
            guard let state = group["merge_state"], let sums = state["sums"]?.array?.compactMap(\.int),
                  let waitPairs = state["waits"]?.array, let waitMax = state["wait_max_us"]?.int
            else { throw ShapeError(reason: "group \(index + 1) has no valid \"merge_state\"") }
            var pairs: [(bucket: Int, count: Int)] = []
            for pair in waitPairs {
                guard let two = pair.array, two.count == 2, let bucket = two[0].int, let count = two[1].int else {
                    throw ShapeError(reason: "group \(index + 1)'s waits are not [bucket, count] pairs")
                }
                pairs.append((bucket, count))
            }
            guard let waits = SizeHistogram(pairs: pairs, max: waitMax),
                  let totals = GroupTotals(sums: sums, waits: waits)
            else { throw ShapeError(reason: "group \(index + 1)'s \"merge_state\" does not fit this version's layout") }
            groups.append((keys, totals))
        }
        listsMessages = root["messages"] != nil
    }

    static func settings(_ grouping: JSONValue) throws(ShapeError) -> ReportSettings {
        guard let names = grouping["group_by"]?.array?.compactMap(\.string), !names.isEmpty else {
            throw ShapeError(reason: "grouping.group_by is not a list of field names")
        }
        var fields: [GroupField] = []
        for name in names {
            guard let field = GroupField.allCases.first(where: { $0.columnName == name }) else {
                throw ShapeError(reason: "grouping.group_by has the unknown field '\(name)'")
            }
            fields.append(field)
        }
        func optionalString(_ key: String) throws(ShapeError) -> String? {
            guard let value = grouping[key], !value.isNull else { return nil }
            guard let text = value.string else { throw ShapeError(reason: "grouping.\(key) is not a string or null") }
            return text
        }
        guard case let .bool(normalize)? = grouping["normalize_paths"] else {
            throw ShapeError(reason: "grouping.normalize_paths is not true or false")
        }
        return ReportSettings(
            groupBy: fields, normalizePaths: normalize,
            pathTemplates: grouping["path_templates"]?.array?.compactMap(\.string) ?? [],
            hostGlob: try optionalString("host"), pathGlob: try optionalString("path"), filter: try optionalString("filter"),
            overhead: grouping["overhead"]?.array?.compactMap(\.string) ?? [])
    }

    static func capture(_ value: JSONValue) throws(ShapeError) -> CaptureSummary {
        guard let path = value["path"]?.string, let linkType = value["link_type"]?.string else {
            throw ShapeError(reason: "a capture without \"path\" and \"link_type\"")
        }
        var capture = CaptureSummary(path: path, linkType: linkType)
        func int(_ key: String) throws(ShapeError) -> Int {
            guard let number = value[key]?.int else { throw ShapeError(reason: "capture \(path): \(key) is not an integer") }
            return number
        }
        func time(_ key: String) throws(ShapeError) -> CaptureTime? {
            guard let field = value[key], !field.isNull else { return nil }
            guard let nanoseconds = nanoseconds(field) else {
                throw ShapeError(reason: "capture \(path): \(key) is not a decimal number of seconds")
            }
            return CaptureTime(nanoseconds: nanoseconds)
        }
        capture.packets = try int("packets")
        capture.frameBytes = try int("frame_bytes")
        capture.firstPacket = try time("start")
        capture.lastPacket = try time("end")
        capture.backwardTimestamps = try int("backward_timestamps")
        capture.nonTCPPackets = try int("non_tcp_packets")
        capture.undecodedPackets = try int("undecoded_packets")
        capture.nonTCPFrameBytes = try int("non_tcp_frame_bytes")
        capture.undecodedFrameBytes = try int("undecoded_frame_bytes")
        capture.quicDatagrams = try int("quic_datagrams")
        capture.quicFrameBytes = try int("quic_frame_bytes")
        capture.encapsulatedPackets = try counts(value["encapsulated_packets"], "capture \(path): encapsulated_packets")
        if let damage = value["damage"], !damage.isNull {
            guard let offset = damage["offset"]?.int, let reason = damage["reason"]?.string else {
                throw ShapeError(reason: "capture \(path): damage is not {offset, reason}")
            }
            capture.damage = CaptureDamage(offset: Int64(offset), reason: reason)
        }
        return capture
    }

    /// An object of integer counts.
    static func counts(_ value: JSONValue?, _ what: String) throws(ShapeError) -> [String: Int] {
        guard case let .object(fields)? = value else { throw ShapeError(reason: "\(what) is not an object") }
        var counts: [String: Int] = [:]
        for (key, count) in fields {
            guard let number = count.int else { throw ShapeError(reason: "\(what).\(key) is not an integer") }
            counts[key, default: 0] += number
        }
        return counts
    }

    /// Decimal seconds as written by `CaptureTime.decimalString` (up to 9 fraction digits) in nanoseconds.
    static func nanoseconds(_ value: JSONValue) -> Int64? {
        guard case let .number(text) = value else { return nil }
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = Int64(parts[0]), whole >= 0 else { return nil }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let text = parts[1]
            guard text.count <= 9, let value = Int64(text) else { return nil }
            fraction = value
            for _ in text.count..<9 { fraction *= 10 }
        }
        let (scaled, overflow) = whole.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        let (total, overflow2) = scaled.addingReportingOverflow(fraction)
        guard !overflow2 else { return nil }
        return negative ? -total : total
    }
}
