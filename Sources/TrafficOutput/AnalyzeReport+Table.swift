import TrafficAnalysis
import TrafficCapture
import TrafficHTTP

extension AnalyzeReport {
    private func bytes(_ value: Int) -> String { exactBytes ? String(value) : humanBytes(value) }

    private func bold(_ text: String) -> String { color ? "\u{1B}[1m\(text)\u{1B}[0m" : text }

    func sortedGroups() -> [ReportGroup] {
        var groups = report.groups
        switch sort {
        case .total: break  // the report's own order
        case .requests: groups.sort { $0.totals.requests > $1.totals.requests }
        case .request: groups.sort { $0.totals.request.bytes > $1.totals.request.bytes }
        case .response: groups.sort { $0.totals.response.bytes > $1.totals.response.bytes }
        case .cookies:
            groups.sort { $0.totals.request.cookieBytes + $0.totals.response.cookieBytes
                > $1.totals.request.cookieBytes + $1.totals.response.cookieBytes }
        case .headers:
            groups.sort { head($0.totals) > head($1.totals) }
        case .decoded:
            groups.sort { $0.totals.request.decodedBodyBytes + $0.totals.response.decodedBodyBytes
                > $1.totals.request.decodedBodyBytes + $1.totals.response.decodedBodyBytes }
        case .name: groups.sort { $0.keys.lexicographicallyPrecedes($1.keys) }
        }
        if let top { groups = Array(groups.prefix(top)) }
        return groups
    }

    /// Start lines and headers of both sides: the bytes in-app monitors leave out.
    private func head(_ t: GroupTotals) -> Int {
        t.request.lineBytes + t.request.headerBytes + t.response.lineBytes + t.response.headerBytes
    }

    func groupsTable(width: Int, chunkBytes: Int, to write: (String) -> Void) {
        var columns = report.groupBy.map { TextTable.Column($0.rawValue, .left, shrinkable: $0 == .path || $0 == .host) }
        columns += [
            .init("reqs", dropOrder: 2), .init("sent"), .init("received"), .init("head", dropOrder: 3),
            .init("cookies", dropOrder: 4), .init("saved", dropOrder: 5), .init("total"),
        ]
        // With --overhead the wire cost differs from HTTP bytes: show it too.
        let showWire = report.totals.request.wireBytes + report.totals.response.wireBytes != report.totals.totalBytes
        if showWire { columns.append(.init("wire")) }
        var table = TextTable(columns: columns)
        // Made twice per group (measured, then written): one array per row, filled in place.
        func row(_ keys: [String], _ t: GroupTotals) -> [String] {
            var cells = keys
            cells.reserveCapacity(keys.count + 8)
            cells.append(String(t.requests))
            cells.append(bytes(t.request.bytes))
            cells.append(bytes(t.response.bytes))
            cells.append(bytes(head(t)))
            cells.append(bytes(t.request.cookieBytes + t.response.cookieBytes))
            cells.append(bytes(t.request.compressionSavingBytes + t.response.compressionSavingBytes))
            cells.append(bytes(t.totalBytes))
            if showWire { cells.append(bytes(t.request.wireBytes + t.response.wireBytes)) }
            return cells
        }
        let groups = sortedGroups()
        table.rowSource = (groups.count, { i in groups.withUnsafeBufferPointer { row($0[i].keys, $0[i].totals) } })
        var totalKeys = report.groupBy.map { _ in "" }
        if !totalKeys.isEmpty { totalKeys[0] = "total" }
        table.footer = [row(totalKeys, report.totals)]
        var first = true
        table.render(width: width, chunkBytes: chunkBytes) { text in
            if first, color, let newline = text.firstIndex(of: "\n") {
                write(bold(String(text[..<newline])) + String(text[newline...]))
            } else {
                write(text)
            }
            first = false
        }
        write(summaryLines(width: width))
    }

    func messagesTable(width: Int, chunkBytes: Int, to write: (String) -> Void) {
        var table = TextTable(columns: [
            .init("conn", dropOrder: 3), .init("#", dropOrder: 2), .init("kind", .left), .init("method", .left),
            .init("status"), .init("host", .left, shrinkable: true, dropOrder: 1), .init("path", .left, shrinkable: true),
            .init("head"), .init("body", dropOrder: 4), .init("decoded", dropOrder: 5), .init("total"),
        ])
        for (_, r) in report.messages ?? [] {
            table.rows.append([
                String(r.connection), String(r.index), r.kind == .request ? "req" : r.kind == .response ? "resp" : (r.tls?.direction == "client_to_server" ? "tls→" : "tls←"), r.method ?? "",
                r.status.map(String.init) ?? "", r.host, r.path, bytes(r.lineBytes + r.headerBytes), bytes(r.bodyBytes),
                r.decodedBodyBytes.map(bytes) ?? "?", bytes(r.transferBytes) + (r.complete ? "" : "*"),
            ])
        }
        table.render(width: width, chunkBytes: chunkBytes, to: write)
        write(summaryLines(width: width))
    }

    /// Breaks a summary line at `; ` or spaces so that it fits the terminal.
    static func wrap(_ line: String, width: Int) -> String {
        guard line.count > width else { return line }
        var result: [String] = []
        var current = ""
        for word in line.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty, current.count + 1 + word.count > width {
                result.append(current)
                current = "  " + word
            } else {
                current += current.isEmpty ? String(word) : " " + word
            }
        }
        result.append(current)
        return result.joined(separator: "\n")
    }

    func summaryLines(width: Int) -> String {
        let s = report.summary
        var lines: [String] = []
        let duration = CaptureTime(nanoseconds: s.durationNanoseconds)
        lines.append("\(s.captures) capture\(s.captures == 1 ? "" : "s"), \(s.packets) packets, \(bytes(s.bytes)) in "
            + "\(duration.secondsText); "
            + "\(s.connections) TCP connections, \(s.httpConnections) with HTTP"
            + (s.tlsConnections > 0 ? ", \(s.tlsConnections) TLS (\(s.tlsDecrypted) decrypted)" : ""))
        lines.append("\(report.groups.count) groups; \(s.requests) requests, \(s.responses) responses; unpaired: \(s.unpairedRequests) requests, "
            + "\(s.unpairedResponses) responses")
        var extra: [String] = []
        if s.nonHTTPBytes > 0 { extra.append("non-HTTP \(bytes(s.nonHTTPBytes))") }
        if s.tunnelBytes > 0 { extra.append("tunnelled \(bytes(s.tunnelBytes))") }
        if s.missingBytes > 0 { extra.append("missing \(bytes(s.missingBytes))") }
        if s.incompleteMessages > 0 { extra.append("\(s.incompleteMessages) incomplete messages (counted as seen)") }
        if s.decodeErrors > 0 { extra.append("\(s.decodeErrors) decode errors") }
        if !extra.isEmpty { lines.append(extra.joined(separator: "; ")) }
        if let merged = report.normalizedGroupCount, report.groups.count - merged >= 3 {
            lines.append("note: --normalize-paths would merge \(report.groups.count) rows into \(merged)")
        }
        if !listMessages {
            lines.append("sent, received: request and response bytes, start lines and headers included")
            lines.append("head: start lines + headers; saved: what content coding saved")
        } else {
            lines.append("head: start line + headers; total: as sent; * cut by a gap or the capture's edge")
        }
        return lines.map { Self.wrap($0, width: max(40, width)) }.joined(separator: "\n") + "\n"
    }
}
