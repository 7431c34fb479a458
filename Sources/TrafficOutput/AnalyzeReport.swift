import TrafficAnalysis
import TrafficCapture
import TrafficHTTP

/// Renders `traffic analyze`: groups (or every record) as a table, CSV or JSON.
public struct AnalyzeReport {
    public static let schema = "traffic.report/1"

    public var report: TrafficReport
    /// `--messages`: every record instead of groups (JSON carries both).
    public var listMessages: Bool
    public var exactBytes = false
    public var color = false
    public var top: Int?
    public var sort: SortKey = .total

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
        var fields: [(String, Int)] = [
            ("requests", t.requests), ("responses", t.responses),
            ("request_bytes", t.request.bytes), ("response_bytes", t.response.bytes),
        ]
        for (prefix, side) in [("request", t.request), ("response", t.response)] {
            fields += [
                ("\(prefix)_line_bytes", side.lineBytes), ("\(prefix)_header_bytes", side.headerBytes),
                ("\(prefix)_cookie_bytes", side.cookieBytes), ("\(prefix)_body_bytes", side.bodyBytes),
                ("\(prefix)_decoded_body_bytes", side.decodedBodyBytes),
            ]
        }
        fields.append(("total_bytes", t.totalBytes))
        // Additions after the contract's columns.
        fields += [
            ("compression_saving_bytes", t.request.compressionSavingBytes + t.response.compressionSavingBytes),
            ("tunnel_bytes", t.request.tunnelBytes + t.response.tunnelBytes),
            ("incomplete_messages", t.incomplete),
        ]
        // Connection overhead (issue 6), at the end; zero unless chosen with --overhead.
        fields += [
            ("handshake_bytes", t.request.handshakeBytes + t.response.handshakeBytes),
            ("teardown_bytes", t.request.teardownBytes + t.response.teardownBytes),
            ("packet_overhead_bytes", t.request.packetOverheadBytes + t.response.packetOverheadBytes),
            ("retransmitted_bytes", t.request.retransmittedBytes + t.response.retransmittedBytes),
            ("wire_bytes", t.request.wireBytes + t.response.wireBytes),
        ]
        return fields
    }

    public func render(_ format: OutputFormat, width: Int = 80) -> String {
        switch format {
        case .json: return json()
        case .csv: return listMessages ? messagesCSV() : groupsCSV()
        case .table: return listMessages ? messagesTable(width: width) : groupsTable(width: width)
        }
    }

    private var multipleCaptures: Bool { report.captures.count > 1 }

    // MARK: CSV

    func groupsCSV() -> String {
        var w = CSVWriter()
        w.row(report.groupBy.map(\.columnName) + Self.groupFields(GroupTotals()).map(\.name))
        for group in report.groups {
            w.row(group.keys + Self.groupFields(group.totals).map { String($0.value) })
        }

        return w.output
    }

    func messagesCSV() -> String {
        var w = CSVWriter()
        let names = MessageFields.fields(HTTPMessageRecord(
            connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")).map(\.0)
        w.row((multipleCaptures ? ["capture"] : []) + names)
        for (capture, record) in report.messages ?? [] {
            let cells = MessageFields.fields(record).map { MessageFields.csvCell($0.1) }
            w.row((multipleCaptures ? [report.captures[capture].path] : []) + cells)
        }
        return w.output
    }

    // MARK: JSON

    func json() -> String {
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
        w.beginObject("anomalies")
        for (name, count) in report.anomalies.sorted(by: { $0.key < $1.key }) { w.field(name, count) }
        w.endObject()
        w.endObject()
        w.beginArray("groups")
        for group in report.groups {
            w.beginObject()
            for (field, key) in zip(report.groupBy, group.keys) { w.field(field.columnName, key) }
            for (name, value) in Self.groupFields(group.totals) { w.field(name, value) }
            w.endObject()
        }
        w.endArray()
        if listMessages {
            w.beginArray("messages")
            for (capture, record) in report.messages ?? [] {
                w.beginObject()
                if multipleCaptures { w.field("capture", report.captures[capture].path) }
                for (key, value) in MessageFields.fields(record) { MessageFields.write(value, key: key, to: &w) }
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        return w.output + "\n"
    }
}
