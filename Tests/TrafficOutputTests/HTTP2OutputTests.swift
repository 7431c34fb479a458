import Foundation
import Testing
import TrafficAggregation
import TrafficCapture
import TrafficSessions

@testable import TrafficOutput

/// The HTTP/2 fields of records (issue 22) through aggregation and every output, from hand-built records: the
/// parser fills them, these tests hold the plumbing to exact values — null is not 0, pushed streams have no
/// index, spilled records and groups come back the same.
@Suite struct HTTP2OutputTests {
    /// Stream 1 (GET /a), stream 3 (GET /a, its response's header block undecodable), a pushed stream 2
    /// (/style.css), on connection 0 of h2.example; one HTTP/1.1 exchange on connection 1.
    static func records(heads: Bool = false) -> [MessageRecord] {
        func record(_ connection: Int, _ index: Int, _ kind: MessageRecord.Kind, _ host: String, _ path: String, at ms: Int64)
            -> MessageRecord
        {
            MessageRecord(
                connection: connection, index: index, kind: kind, time: CaptureTime(nanoseconds: 1_700_000_000_000_000_000 + ms * 1_000_000),
                client: "10.0.0.1:50000", server: "10.0.0.2:80", host: host, path: path)
        }
        var request1 = record(0, 1, .request, "h2.example", "/a", at: 0)
        request1.method = "GET"
        request1.status = 200
        request1.version = "HTTP/2"
        request1.streamID = 1
        request1.query = "q=1"
        request1.headerBytes = 9 + 51
        request1.headerDecodedBytes = 120
        request1.cookieBytes = 10
        request1.cookieDecodedBytes = 30
        request1.decodedBodyBytes = 0
        request1.h2ControlBytes = 24 + 9 + 18  // preface, SETTINGS and its payload, on the connection's first exchange
        request1.lastByteTime = request1.time
        request1.paired = true
        var response1 = record(0, 1, .response, "h2.example", "/a", at: 10)
        response1.method = "GET"
        response1.status = 200
        response1.version = "HTTP/2"
        response1.streamID = 1
        response1.headerBytes = 40
        response1.headerDecodedBytes = 90
        response1.cookieBytes = 0
        response1.cookieDecodedBytes = 0
        response1.bodyBytes = 9 + 100
        response1.encodedBodyBytes = 100
        response1.decodedBodyBytes = 100
        response1.h2ControlBytes = 17
        response1.contentType = "text/html"
        response1.lastByteTime = response1.time
        response1.wait = CaptureTime(nanoseconds: 10_000_000)
        response1.paired = true
        var pushed = record(0, 1, .response, "h2.example", "/style.css", at: 11)
        pushed.method = "GET"
        pushed.status = 200
        pushed.version = "HTTP/2"
        pushed.streamID = 2
        pushed.headerBytes = 20
        pushed.headerDecodedBytes = 50
        pushed.cookieDecodedBytes = 0
        pushed.bodyBytes = 9 + 50
        pushed.encodedBodyBytes = 50
        pushed.decodedBodyBytes = 50
        pushed.lastByteTime = pushed.time
        pushed.flags = [.pushed]
        var request3 = record(0, 2, .request, "h2.example", "/a", at: 20)
        request3.method = "GET"
        request3.status = 200
        request3.version = "HTTP/2"
        request3.streamID = 3
        request3.headerBytes = 15
        request3.headerDecodedBytes = 120
        request3.cookieBytes = 1
        request3.cookieDecodedBytes = 30
        request3.decodedBodyBytes = 0
        request3.lastByteTime = request3.time
        request3.paired = true
        var response3 = record(0, 2, .response, "h2.example", "/a", at: 30)
        response3.method = "GET"
        response3.status = 200
        response3.version = "HTTP/2"
        response3.streamID = 3
        response3.headerBytes = 12
        response3.bodyBytes = 9
        response3.decodedBodyBytes = 0
        response3.lastByteTime = response3.time
        response3.wait = CaptureTime(nanoseconds: 10_000_000)
        response3.paired = true
        response3.flags = [.hpackError, .reset]
        response3.complete = false
        var request = record(1, 1, .request, "h1.example", "/b", at: 40)
        request.method = "GET"
        request.status = 204
        request.version = "HTTP/1.1"
        request.lineBytes = 16
        request.headerBytes = 40
        request.decodedBodyBytes = 0
        request.lastByteTime = request.time
        request.paired = true
        var response = record(1, 1, .response, "h1.example", "/b", at: 41)
        response.method = "GET"
        response.status = 204
        response.version = "HTTP/1.1"
        response.lineBytes = 17
        response.headerBytes = 50
        response.decodedBodyBytes = 0
        response.lastByteTime = response.time
        response.wait = CaptureTime(nanoseconds: 1_000_000)
        response.paired = true
        if heads {
            // As the parser keeps them for HAR (issue 22): the start line, then the regular fields.
            request1.head = Array("GET /a?q=1 HTTP/2\naccept: */*\ncookie: id=42; theme=dark\n".utf8)
            response1.head = Array("HTTP/2 200\ncontent-type: text/html\nset-cookie: s=1; Path=/; Secure\n".utf8)
            pushed.head = Array("HTTP/2 200\ncontent-type: text/css\n".utf8)
            request3.head = Array("GET /a HTTP/2\ncookie: id=42\n".utf8)
            response3.head = Array("HTTP/2 200\n".utf8)
            request.head = Array("GET /b HTTP/1.1\nHost: h1.example\n".utf8)
            response.head = Array("HTTP/1.1 204 No Content\n".utf8)
        }
        return [request1, response1, pushed, request3, response3, request, response]
    }

    /// A report of `records`: in memory, or with every group and record through the temporary file.
    static func report(spill: Bool = false, heads: Bool = false, overhead: RecordOverhead? = nil) -> TrafficReport {
        var options = ReportOptions()
        options.keepMessages = true
        options.keepHeads = heads
        if spill {
            options.groupsInMemory = 1
            options.messageRunLength = 1
        }
        let builder = ReportBuilder(options: options, capturePaths: ["h2.pcap"])
        for record in records(heads: heads) { builder.add(record, capture: 0) }
        if let overhead {
            // Overhead found after the record was counted (`--overhead`): a stream's control frames.
            var late = records()[3]
            late.time = CaptureTime(nanoseconds: late.time.nanoseconds + 1)
            let pin = builder.addPinned(late, capture: 0)!
            builder.addOverhead(overhead, pin: pin, kind: .request)
        }
        builder.summary.h2ControlBytes = 24 + 9 + 18 + 17 + 13
        builder.summary.http2Streams = 3
        return builder.build(captures: [CaptureSummary(path: "h2.pcap", linkType: "EN10MB")], anomalies: [:], warnings: [])
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// JSON's null as nil, numbers as Int.
    static func number(_ value: Any?) -> Int?? {
        guard let value else { return .none }
        if value is NSNull { return .some(nil) }
        return (value as? Int).map { .some($0) } ?? .none
    }

    @Test func groupsSumDecodedHeadersPerSideAndNullWithout() throws {
        let report = Self.report()
        let groups = Dictionary(uniqueKeysWithValues: report.groups.map { ($0.keys.joined(separator: " "), $0.totals) })
        let a = try #require(groups["h2.example /a"])
        #expect(a.request.headerBytes == 60 + 15)
        #expect(a.request.headerDecodedBytes == 120 + 120 && a.request.headerDecodedRecords == 2)
        // Stream 3's response block could not be decoded: the sum is over the one record that has a size.
        #expect(a.response.headerDecodedBytes == 90 && a.response.headerDecodedRecords == 1)
        #expect(a.request.h2ControlBytes == 51 && a.response.h2ControlBytes == 17)
        #expect(a.request.wireBytes == a.request.bytes + 51 && a.response.wireBytes == a.response.bytes + 17)
        let pushed = try #require(groups["h2.example /style.css"])
        #expect(pushed.request.headerDecodedBytes == nil && pushed.response.headerDecodedBytes == 50)
        let http1 = try #require(groups["h1.example /b"])
        #expect(http1.request.headerDecodedBytes == nil && http1.response.headerDecodedBytes == nil)
        #expect(http1.request.h2ControlBytes == 0 && http1.response.h2ControlBytes == 0)
        #expect(report.totals.request.headerDecodedBytes == 240 && report.totals.response.headerDecodedBytes == 140)
    }

    @Test func groupColumnsInCSVAndJSON() throws {
        let output = AnalyzeReport(report: Self.report(), listMessages: false)
        let csv = output.render(.csv).csvRows
        let header = try #require(csv.first)
        // Appended after every existing column, the wait columns included; HTTP/3's three came after them (issue 23).
        #expect(Array(header.suffix(3)) == ["quic_overhead_bytes", "h3_control_bytes", "quic_connection_bytes"])
        #expect(Array(header.dropLast(3).suffix(5)) == [
            "wait_median_seconds", "wait_p95_seconds", "request_header_decoded_bytes", "response_header_decoded_bytes",
            "h2_control_bytes",
        ])
        let rows = Dictionary(uniqueKeysWithValues: csv.dropFirst().map { ($0[0] + " " + $0[1], Array($0.dropLast(3).suffix(3))) })
        #expect(rows["h2.example /a"] == ["240", "90", "68"])
        #expect(rows["h2.example /style.css"] == ["", "50", "0"])
        #expect(rows["h1.example /b"] == ["", "", "0"])

        let json = try Self.json(output.render(.json))
        let groups = try #require(json["groups"] as? [[String: Any]])
        let byKey = Dictionary(uniqueKeysWithValues: groups.map { ("\($0["host"]!) \($0["path"]!)", $0) })
        func values(_ key: String) -> [Int??] {
            ["request_header_decoded_bytes", "response_header_decoded_bytes", "h2_control_bytes"].map {
                Self.number(byKey[key]?[$0])
            }
        }
        #expect(values("h2.example /a") == [240, 90, 68])
        #expect(values("h2.example /style.css") == [.some(nil), 50, 0])
        #expect(values("h1.example /b") == [.some(nil), .some(nil), 0])
        // wire_bytes includes the control bytes; the last three keys are the new ones, in order.
        let a = try #require(byKey["h2.example /a"])
        #expect(a["wire_bytes"] as? Int == (a["total_bytes"] as? Int ?? 0) + 68)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["h2_control_bytes"] as? Int == 81 && summary["http2_streams"] as? Int == 3)
    }

    @Test func messageFieldsAtTheEndExactly() throws {
        let output = AnalyzeReport(report: Self.report(), listMessages: true)
        let json = try Self.json(output.render(.json))
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.count == 7)
        func fields(_ m: [String: Any]) -> [Int??] {
            ["index", "stream_id", "header_decoded_bytes", "cookie_decoded_bytes", "h2_control_bytes"].map { Self.number(m[$0]) }
        }
        let byStream = messages.map { (Self.number($0["stream_id"]), $0["kind"] as? String, fields($0)) }
        // Listing order: connection, index, side, time (the pushed response is stream 2, listed with index 1's).
        #expect(byStream.map(\.2) == [
            [1, 1, 120, 30, 51],
            [1, 1, 90, 0, 17],
            [.some(nil), 2, 50, 0, 0],  // pushed: no index
            [2, 3, 120, 30, 0],
            [2, 3, .some(nil), .some(nil), 0],  // hpack_error: decoded sizes unknown
            [1, .some(nil), .some(nil), .some(nil), 0],  // HTTP/1
            [1, .some(nil), .some(nil), .some(nil), 0],
        ])
        let first = messages[0]
        #expect(first["wire_bytes"] as? Int == 60 + 51)
        #expect(messages[2]["flags"] as? [String] == ["pushed"])
        #expect(messages[4]["flags"] as? [String] == ["hpack_error", "reset"])

        let csv = output.render(.csv).csvRows
        let header = try #require(csv.first)
        // HTTP/3's five came after them (issue 23).
        #expect(Array(header.suffix(5)) == [
            "quic_version", "quic_packets", "quic_overhead_bytes", "h3_control_bytes", "quic_connection_bytes",
        ])
        #expect(Array(header.dropLast(5).suffix(6)) == [
            "first_byte_time", "last_byte_time", "stream_id", "header_decoded_bytes", "cookie_decoded_bytes", "h2_control_bytes",
        ])
        let index = try #require(header.firstIndex(of: "index"))
        #expect(csv.dropFirst().map { $0[index] } == ["1", "1", "", "2", "2", "1", "1"])
        #expect(csv.dropFirst().map { Array($0.dropLast(5).suffix(4)) } == [
            ["1", "120", "30", "51"], ["1", "90", "0", "17"], ["2", "50", "0", "0"], ["3", "120", "30", "0"],
            ["3", "", "", "0"], ["", "", "", "0"], ["", "", "", "0"],
        ])
    }

    /// Records and groups through the temporary file give the same output, byte for byte (nil stays nil, 0
    /// stays 0).
    @Test func spilledRecordsAndGroupsGiveTheSameOutput() throws {
        for listMessages in [false, true] {
            for format in [OutputFormat.csv, .json] {
                let memory = AnalyzeReport(report: Self.report(), listMessages: listMessages).render(format)
                let spilled = Self.report(spill: true)
                #expect(spilled.groups.inMemory == nil, "the groups went through the temporary file")
                let text = AnalyzeReport(report: spilled, listMessages: listMessages).render(format)
                #expect(text == memory, "\(format) messages \(listMessages)")
            }
        }
    }

    /// `--overhead`: control frames found after their record was counted join its group and `wire_bytes`.
    @Test func lateControlBytesJoinTheGroup() throws {
        var overhead = RecordOverhead()
        overhead.h2ControlBytes = 13
        for spill in [false, true] {
            let report = Self.report(spill: spill, overhead: overhead)
            let a = try #require(report.groups.first { $0.keys == ["h2.example", "/a"] })
            #expect(a.totals.request.h2ControlBytes == 51 + 13, "spill \(spill)")
            #expect(a.totals.requests == 3)
            #expect(report.totals.request.wireBytes == report.totals.request.bytes + 64)
        }
    }

    /// Summaries of shards add up.
    @Test func summariesMerge() {
        var a = ReportSummary(), b = ReportSummary()
        a.h2ControlBytes = 100
        a.http2Streams = 3
        b.h2ControlBytes = 23
        b.http2Streams = 4
        a.add(b)
        #expect(a.h2ControlBytes == 123 && a.http2Streams == 7)
        var options = ReportOptions()
        options.keepMessages = true
        let whole = ReportBuilder(options: options, capturePaths: ["h2.pcap"])
        let shard = ReportBuilder(options: options, capturePaths: ["h2.pcap"])
        whole.summary.h2ControlBytes = 5
        shard.summary.h2ControlBytes = 7
        shard.summary.http2Streams = 2
        whole.merge(shard, capture: 0, renumber: [])
        #expect(whole.summary.h2ControlBytes == 12 && whole.summary.http2Streams == 2)
    }

    /// The table says that HTTP/2 header bytes are as sent, and only when there are HTTP/2 streams.
    @Test func tableLegendNamesDecodedSizes() {
        let report = Self.report()
        for listMessages in [false, true] {
            let table = AnalyzeReport(report: report, listMessages: listMessages).render(.table, width: 200)
            let note = listMessages ? AnalyzeReport.http2MessagesNote : AnalyzeReport.http2GroupsNote
            #expect(table.contains("\n" + note + "\n"), "\(listMessages)")
            #expect(table.contains("HTTP/2 control frames 81 B"))
            var http1 = report
            http1.summary.http2Streams = 0
            http1.summary.h2ControlBytes = 0
            let plain = AnalyzeReport(report: http1, listMessages: listMessages).render(.table, width: 200)
            #expect(!plain.contains("HPACK") && !plain.contains("HTTP/2 control"))
        }
        // The pushed response has no index in the messages table either.
        let messages = AnalyzeReport(report: report, listMessages: true).render(.table, width: 200)
        #expect(messages.split(separator: "\n").contains { $0.contains("push") && $0.contains("/style.css") })
        // Narrow: wrapped, never wider than the terminal.
        let narrow = AnalyzeReport(report: report, listMessages: false).render(.table, width: 80)
        #expect(narrow.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(narrow.contains("HTTP/2 header bytes are as sent (HPACK)"))
    }

    /// HAR: version `HTTP/2`, `headersSize` the header block as sent, status lines without a reason phrase,
    /// and a pushed stream as an entry of its own, named by its PUSH_PROMISE.
    @Test func harEntriesOfHTTP2Records() throws {
        var document = HARDocument(report: Self.report(heads: true), creatorVersion: "test")
        document.overhead = true
        var text = ""
        document.write { text += String(decoding: $0, as: UTF8.self) }
        let log = try #require(try Self.json(text)["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 4)
        let urls = entries.map { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(urls == ["http://h2.example/a?q=1", "http://h2.example/style.css", "http://h2.example/a", "http://h1.example/b"])
        let first = entries[0]
        let request = try #require(first["request"] as? [String: Any])
        let response = try #require(first["response"] as? [String: Any])
        #expect(request["httpVersion"] as? String == "HTTP/2" && response["httpVersion"] as? String == "HTTP/2")
        #expect(request["headersSize"] as? Int == 60 && response["headersSize"] as? Int == 40)
        #expect(request["_wire_bytes"] as? Int == 111 && response["_wire_bytes"] as? Int == 40 + 109 + 17)
        #expect(response["status"] as? Int == 200 && response["statusText"] as? String == "")
        let headers = (request["headers"] as? [[String: String]])?.map { "\($0["name"]!): \($0["value"]!)" }
        #expect(headers == ["accept: */*", "cookie: id=42; theme=dark"])
        let cookies = (request["cookies"] as? [[String: Any]])?.map { "\($0["name"]!)=\($0["value"]!)" }
        #expect(cookies == ["id=42", "theme=dark"])
        let setCookies = try #require(response["cookies"] as? [[String: Any]])
        #expect(setCookies.count == 1 && setCookies[0]["name"] as? String == "s" && setCookies[0]["secure"] as? Bool == true)
        #expect(first["_pushed"] == nil && first["_unknown_request"] == nil)
        let push = entries[1]
        #expect(push["_pushed"] as? Bool == true && push["_unknown_request"] == nil)
        let pushRequest = try #require(push["request"] as? [String: Any])
        #expect(pushRequest["method"] as? String == "GET" && pushRequest["headersSize"] as? Int == -1)
        let pushResponse = try #require(push["response"] as? [String: Any])
        #expect(pushResponse["headersSize"] as? Int == 20 && pushResponse["bodySize"] as? Int == 59)
        #expect((pushResponse["content"] as? [String: Any])?["mimeType"] as? String == "")
        // The HTTP/1 exchange is as it was.
        let http1 = try #require(entries[3]["response"] as? [String: Any])
        #expect(http1["httpVersion"] as? String == "HTTP/1.1" && http1["statusText"] as? String == "No Content")
        #expect(http1["headersSize"] as? Int == 67)
    }

    /// The HTML timeline draws a pushed stream as a bar of its own, not as the response of the exchange it
    /// came with.
    @Test func timelineKeepsPushedStreamsApart() throws {
        var options = ReportOptions()
        options.collectTimeline = true
        let builder = ReportBuilder(options: options, capturePaths: ["h2.pcap"])
        for record in Self.records() { builder.add(record, capture: 0) }
        builder.summary.h2ControlBytes = 81
        let report = builder.build(captures: [CaptureSummary(path: "h2.pcap", linkType: "EN10MB")], anomalies: [:], warnings: [])
        let events = try #require(report.timeline?.events)
        #expect(events.map(\.index) == [1, 1, -3, 2, 2, 1, 1])
        var html = ""
        AnalyzeReport(report: report, listMessages: false).write(.html) { html += $0 }
        // "Where the bytes go" has the control frames.
        #expect(html.contains("HTTP/2 control frames: 81 bytes"))
    }

    /// Pushed streams are entries by stream, in the order of their first records, whatever index they sort by:
    /// one listed before the exchanges (index 0), two while an exchange is open (one with an interim response).
    @Test func harKeepsPushedStreamsApart() throws {
        let base = Self.records()
        func push(_ stream: Int, index: Int, at offset: Int64, status: Int = 200, path: String) -> MessageRecord {
            var record = base[2]
            record.streamID = stream
            record.index = index
            record.status = status
            record.path = path
            record.time = CaptureTime(nanoseconds: base[0].time.nanoseconds + offset)
            return record
        }
        var options = ReportOptions()
        options.keepMessages = true
        let builder = ReportBuilder(options: options, capturePaths: ["h2.pcap"])
        let records = [
            push(2, index: 0, at: 1, path: "/early.js"), base[0], base[1],
            push(4, index: 1, at: 20_000_000, status: 103, path: "/late.css"),
            push(6, index: 1, at: 20_000_001, path: "/other.css"),
            push(4, index: 1, at: 20_000_002, path: "/late.css"),
            base[3], base[4],
        ]
        for record in records { builder.add(record, capture: 0) }
        let report = builder.build(captures: [CaptureSummary(path: "h2.pcap", linkType: "EN10MB")], anomalies: [:], warnings: [])
        var text = ""
        HARDocument(report: report, creatorVersion: "test").write { text += String(decoding: $0, as: UTF8.self) }
        let log = try #require(try Self.json(text)["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        let urls = entries.map { ($0["request"] as? [String: Any])?["url"] as? String ?? "" }
        #expect(urls == [
            "http://h2.example/early.js", "http://h2.example/a?q=1", "http://h2.example/late.css",
            "http://h2.example/other.css", "http://h2.example/a",
        ])
        #expect(entries.map { $0["_pushed"] as? Bool ?? false } == [true, false, true, true, false])
        // Stream 4's 103 is an interim response of its entry.
        #expect(entries[2]["_interim_responses"] as? Int == 1)
        #expect((entries[2]["response"] as? [String: Any])?["status"] as? Int == 200)
    }
}

extension String {
    /// Cells of CSV without quoted cells (CRLF lines: one `Character` each).
    fileprivate var csvRows: [[String]] {
        split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }
}
