import TrafficAggregation
import TrafficAnalysis
import TrafficCapture
import TrafficHTTP
import TrafficSessions

/// Renders `traffic analyze`: groups (or every record) as a table, CSV or JSON.
public struct AnalyzeReport {
    public static let schema = "traffic.report/1"

    public var report: TrafficReport
    /// `--messages`: every record instead of groups (JSON carries both).
    public var listMessages: Bool
    public var exactBytes = false
    /// Threads a large groups table may be made on (`--jobs`); the output is the same.
    public var rowThreads = 1
    public var color = false
    public var top: Int?
    public var sort: SortKey = .total
    /// `--timings`: the groups table shows the median and p95 of each group's wait.
    public var timings = false
    /// `--format har` with `--overhead`: entries carry `_wire_bytes`.
    public var harOverhead = false
    /// `--har-bodies`.
    public var harBodies = false

    /// Table orderings for `--sort`.
    public enum SortKey: String, CaseIterable, Sendable {
        case total, requests, request, response, cookies, headers, decoded, name
    }

    public init(report: TrafficReport, listMessages: Bool) {
        self.report = report
        self.listMessages = listMessages
    }

    /// The numeric columns of a group, in contract order: counts, side totals, total, then additions.
    public static func groupFields(_ t: GroupTotals) -> [(name: String, value: Int)] {
        groupColumns.map { ($0.name, $0.value(t)) }
    }

    /// `groupFields` as names and accessors, so that rendering thousands of groups neither rebuilds
    /// the names nor allocates a list per group.
    static let groupColumns: [(name: String, value: @Sendable (GroupTotals) -> Int)] = [
        ("requests", { $0.requests }), ("responses", { $0.responses }),
        ("request_bytes", { $0.request.bytes }), ("response_bytes", { $0.response.bytes }),
        ("request_line_bytes", { $0.request.lineBytes }), ("request_header_bytes", { $0.request.headerBytes }),
        ("request_cookie_bytes", { $0.request.cookieBytes }), ("request_body_bytes", { $0.request.bodyBytes }),
        ("request_decoded_body_bytes", { $0.request.decodedBodyBytes }),
        ("response_line_bytes", { $0.response.lineBytes }), ("response_header_bytes", { $0.response.headerBytes }),
        ("response_cookie_bytes", { $0.response.cookieBytes }), ("response_body_bytes", { $0.response.bodyBytes }),
        ("response_decoded_body_bytes", { $0.response.decodedBodyBytes }),
        ("total_bytes", { $0.totalBytes }),
        // Additions after the contract's columns.
        ("compression_saving_bytes", { $0.request.compressionSavingBytes + $0.response.compressionSavingBytes }),
        ("tunnel_bytes", { $0.request.tunnelBytes + $0.response.tunnelBytes }),
        ("incomplete_messages", { $0.incomplete }),
        // Connection overhead (issue 6), at the end; zero unless chosen with --overhead.
        ("handshake_bytes", { $0.request.handshakeBytes + $0.response.handshakeBytes }),
        ("teardown_bytes", { $0.request.teardownBytes + $0.response.teardownBytes }),
        ("packet_overhead_bytes", { $0.request.packetOverheadBytes + $0.response.packetOverheadBytes }),
        ("retransmitted_bytes", { $0.request.retransmittedBytes + $0.response.retransmittedBytes }),
        ("wire_bytes", { $0.request.wireBytes + $0.response.wireBytes }),
        // Decrypted HTTPS (issue 21), after the overhead columns.
        ("tls_overhead_bytes", { $0.request.tlsOverheadBytes + $0.response.tlsOverheadBytes }),
        ("tls_handshake_bytes", { $0.request.tlsHandshakeBytes + $0.response.tlsHandshakeBytes }),
    ]

    /// Time columns after the byte columns (issue 29): the median and p95 of the responses' `wait` (request's
    /// last byte to response's first), in decimal seconds; empty (null) for a group without a paired response.
    /// Approximate (`SizeHistogram`: within 6.25 %).
    static let waitColumns: [(name: String, quantile: Double)] = [("wait_median_seconds", 0.5), ("wait_p95_seconds", 0.95)]

    /// HTTP/2 columns after the time columns (issue 22): each side's header blocks after HPACK decoding
    /// (`request_header_bytes`/`response_header_bytes` are as sent), null/empty when no record of that side had
    /// a decoded size (HTTP/1 groups); and the HTTP/2 control frames attributed with `--overhead` (0 otherwise).
    static let http2Columns: [(name: String, value: @Sendable (GroupTotals) -> Int?)] = [
        ("request_header_decoded_bytes", { $0.request.headerDecodedBytes }),
        ("response_header_decoded_bytes", { $0.response.headerDecodedBytes }),
        ("h2_control_bytes", { $0.request.h2ControlBytes &+ $0.response.h2ControlBytes }),
        // HTTP/3 (issue 23): QUIC's cost of carrying the messages (always counted), and with `--overhead` the
        // connections' control and QPACK streams and packets without request-stream bytes.
        ("quic_overhead_bytes", { $0.request.quicOverheadBytes &+ $0.response.quicOverheadBytes }),
        ("h3_control_bytes", { $0.request.h3ControlBytes &+ $0.response.h3ControlBytes }),
        ("quic_connection_bytes", { $0.request.quicConnectionBytes &+ $0.response.quicConnectionBytes }),
    ]

    /// Microseconds (`GroupTotals.waits`' unit) as exact decimal seconds.
    static func seconds(_ microseconds: Int?) -> String? {
        microseconds.map { CaptureTime(nanoseconds: Int64($0) * 1000).decimalString }
    }

    public func render(_ format: OutputFormat, width: Int = 80) -> String {
        var text = ""
        write(format, width: width) { text += $0 }
        return text
    }

    /// Renders in pieces of about `chunkBytes`, so that tens of thousands of groups or records are never
    /// held as one string next to the report.
    public func write(_ format: OutputFormat, width: Int = 80, chunkBytes: Int = 1 << 20, to write: (String) -> Void) {
        self.write(format, width: width, chunkBytes: chunkBytes, toBytes: { write(String(decoding: $0, as: UTF8.self)) })
    }

    /// `write(_:width:chunkBytes:to:)` with the pieces as bytes.
    public func write(_ format: OutputFormat, width: Int = 80, chunkBytes: Int = 1 << 20, toBytes write: ByteSink) {
        switch format {
        case .json: json(chunkBytes: chunkBytes, to: write)
        case .html: HTMLReport(report: report, top: top).write(chunkBytes: chunkBytes, to: write)
        case .ndjson:
            // Records were streamed while the captures were read (`NDJSONRecordWriter`); a report left to render
            // in this format lists them again, as NDJSON would have.
            withoutActuallyEscaping(write) { write in
                let writer = NDJSONRecordWriter(capturePaths: report.captures.map(\.path), write: write)
                var lines = StreamedLines()
                for (capture, record) in report.messages ?? [] {
                    lines.append(record, capture: capture, stream: writer)
                    if lines.tails.count >= chunkBytes {
                        writer.write(lines)
                        lines.removeAll()
                    }
                }
                if !lines.isEmpty { writer.write(lines) }
            }
        case .har:
            var document = HARDocument(report: report, creatorVersion: TrafficVersion.current)
            document.overhead = harOverhead
            document.bodies = harBodies
            document.write(chunkBytes: chunkBytes, to: write)
        case .csv:
            if listMessages { messagesCSV(chunkBytes: chunkBytes, to: write) } else { groupsCSV(chunkBytes: chunkBytes, to: write) }
        case .table:
            if listMessages {
                messagesTable(width: width, chunkBytes: chunkBytes, to: write)
            } else {
                groupsTable(width: width, chunkBytes: chunkBytes, to: write)
            }
        }
    }

    private var multipleCaptures: Bool { report.captures.count > 1 }

    // MARK: CSV

    func groupsCSV(chunkBytes: Int, to write: ByteSink) {
        var w = CSVWriter()
        w.row(report.groupBy.map(\.columnName) + Self.groupColumns.map(\.name) + Self.waitColumns.map(\.name)
            + Self.http2Columns.map(\.name))
        let row = GroupCSVRow()
        report.groups.forEachInOrder { key, totals in
            row.write(key: key, totals: totals, to: &w)
            w.flush(over: chunkBytes, to: write)
        }
        w.flush(over: 0, to: write)
    }

    func messagesCSV(chunkBytes: Int, to write: ByteSink) {
        var w = CSVWriter()
        let names = MessageFields.fields(MessageRecord(
            connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")).map(\.0)
        w.row((multipleCaptures ? ["capture"] : []) + names)
        for (capture, record) in report.messages ?? [] {
            if multipleCaptures { w.cell(report.captures[capture].path) }
            MessageFields.forEach(record) { MessageFields.writeCell($1, to: &w) }
            w.endRow()
            w.flush(over: chunkBytes, to: write)
        }
        w.flush(over: 0, to: write)
    }

    // MARK: JSON

    func json(chunkBytes: Int, to write: ByteSink) {
        var w = JSONWriter()
        w.beginObject()
        w.field("schema", Self.schema)
        w.beginArray("captures")
        for capture in report.captures {
            w.beginObject()
            w.field("path", capture.path)
            w.field("link_type", capture.linkType)
            w.field("packets", capture.packets)
            w.field("frame_bytes", capture.frameBytes)
            w.field("start", raw: capture.firstPacket?.decimalString ?? "null")
            w.field("duration", raw: capture.duration.decimalString)
            w.field("end", raw: capture.lastPacket?.decimalString ?? "null")
            w.field("backward_timestamps", capture.backwardTimestamps)
            w.field("non_tcp_packets", capture.nonTCPPackets)
            w.field("undecoded_packets", capture.undecodedPackets)
            if let damage = capture.damage {
                w.beginObject("damage")
                w.field("offset", Int(damage.offset))
                w.field("reason", damage.reason)
                w.endObject()
            } else {
                w.field("damage", raw: "null")
            }
            // Additions for `traffic merge` (issue 27): what the summary and the table read from captures.
            w.field("non_tcp_frame_bytes", capture.nonTCPFrameBytes)
            w.field("undecoded_frame_bytes", capture.undecodedFrameBytes)
            w.field("quic_datagrams", capture.quicDatagrams)
            w.field("quic_frame_bytes", capture.quicFrameBytes)
            w.beginObject("encapsulated_packets")
            for (name, count) in capture.encapsulatedPackets.sorted(by: { $0.key < $1.key }) { w.field(name, count) }
            w.endObject()
            w.endObject()
        }
        w.endArray()
        let s = report.summary
        w.beginObject("summary")
        w.field("captures", s.captures)
        w.field("packets", s.packets)
        w.field("bytes", s.bytes)
        w.field("duration", raw: CaptureTime(nanoseconds: s.durationNanoseconds).decimalString)
        w.field("connections", s.connections)
        w.field("http_connections", s.httpConnections)
        w.field("tls_connections", s.tlsConnections)
        w.field("tls_decrypted", s.tlsDecrypted)
        w.field("requests", s.requests)
        w.field("responses", s.responses)
        w.field("unpaired_requests", s.unpairedRequests)
        w.field("unpaired_responses", s.unpairedResponses)
        w.field("non_http_bytes", s.nonHTTPBytes)
        w.field("tunnel_bytes", s.tunnelBytes)
        w.field("missing_bytes", s.missingBytes)
        w.field("decode_errors", s.decodeErrors)
        w.field("incomplete_messages", s.incompleteMessages)
        w.field("non_tcp_packets", s.nonTCPPackets)
        w.field("capture_frame_bytes", s.captureFrameBytes)
        w.field("non_http_frame_bytes", s.nonHTTPFrameBytes)
        w.field("non_tcp_frame_bytes", s.nonTCPFrameBytes)
        w.field("unattributed_frame_bytes", s.unattributedFrameBytes)
        w.field("tls_http2_connections", s.tlsHTTP2Connections)
        w.field("http2_connections", s.http2Connections)
        w.field("other_protocol_connections", s.otherProtocolConnections)
        w.field("tls_no_key", s.tlsNoKey)
        w.field("tls_decrypt_failed", s.tlsDecryptFailed)
        w.field("tls_unsupported_cipher", s.tlsUnsupportedCipher)
        w.field("tls_failed_records", s.tlsFailedRecords)
        w.field("tls_undecrypted_bytes", s.tlsUndecryptedBytes)
        w.beginArray("not_analysed")
        for note in s.scopeNotes {
            w.beginObject()
            w.field("kind", note.kind)
            w.field(note.unit, note.count)
            w.field("message", note.message)
            w.endObject()
        }
        w.endArray()
        w.beginObject("anomalies")
        for (name, count) in report.anomalies.sorted(by: { $0.key < $1.key }) { w.field(name, count) }
        w.endObject()
        // Frames decoded through each tunnel or tag kind, summed over captures (issue 28).
        w.beginObject("encapsulated_packets")
        let encapsulated = report.captures.reduce(into: [String: Int]()) {
            $0.merge($1.encapsulatedPackets, uniquingKeysWith: +)
        }
        for (name, count) in encapsulated.sorted(by: { $0.key < $1.key }) { w.field(name, count) }
        w.endObject()
        // HTTP/2 (issue 22): control frames and the preface of every connection, both directions, attributed or
        // not; and the streams seen.
        w.field("h2_control_bytes", s.h2ControlBytes)
        w.field("http2_streams", s.http2Streams)
        w.field("quic_connections", s.quicConnections)
        w.field("quic_decrypted", s.quicDecrypted)
        w.field("http3_streams", s.http3Streams)
        w.field("other_protocol_packets", s.otherProtocolPackets)
        w.endObject()
        w.beginArray("groups")
        let members = GroupJSONMembers(groupBy: report.groupBy, writer: w)
        report.groups.forEachInOrder { key, totals in
            members.write(key: key, totals: totals, to: &w)
            w.flush(over: chunkBytes, to: write)
        }
        w.endArray()
        if listMessages {
            w.beginArray("messages")
            for (capture, record) in report.messages ?? [] {
                w.beginObject()
                if multipleCaptures { w.field("capture", report.captures[capture].path) }
                MessageFields.writeJSON(record, to: &w)
                w.endObject()
                w.flush(over: chunkBytes, to: write)
            }
            w.endArray()
        }
        if let settings = report.settings {
            w.beginObject("grouping")
            w.field("group_by", settings.groupBy.map(\.columnName))
            w.field("normalize_paths", settings.normalizePaths)
            w.field("path_templates", settings.pathTemplates)
            w.field("host", settings.hostGlob)
            w.field("path", settings.pathGlob)
            w.field("filter", settings.filter)
            w.field("overhead", settings.overhead)
            w.endObject()
        }
        w.field("merge_layout", GroupTotals.sumNames)
        w.endObject()
        w.flush(over: 0, to: write)
        emit("\n", to: write)
    }
}
