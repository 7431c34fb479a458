import TrafficAggregation
import TrafficAnalysis
import TrafficCapture
import TrafficHTTP

extension AnalyzeReport {
    private func bytes(_ value: Int) -> String { exactBytes ? String(value) : humanBytes(value) }


    /// The table's rows in memory; nil when they are read in the report's order as the table is made (a report
    /// too large for memory keeps its groups in a temporary file; `--sort` other than total reads them all in).
    func tableGroups() -> [ReportGroup]? {
        if sort == .total {
            if let top { return Array(report.groups.prefix(top)) }
            return report.groups.inMemory
        }
        var groups = report.groups.inMemory ?? Array(report.groups)
        switch sort {
        case .total: break  // the report's own order
        case .requests: groups.sort { $0.totals.requests > $1.totals.requests }
        case .request: groups.sort { $0.totals.request.bytes > $1.totals.request.bytes }
        case .response: groups.sort { $0.totals.response.bytes > $1.totals.response.bytes }
        case .cookies:
            groups.sort { $0.totals.request.cookieBytes + $0.totals.response.cookieBytes
                > $1.totals.request.cookieBytes + $1.totals.response.cookieBytes }
        case .headers:
            groups.sort { Self.head($0.totals) > Self.head($1.totals) }
        case .decoded:
            groups.sort { $0.totals.request.decodedBodyBytes + $0.totals.response.decodedBodyBytes
                > $1.totals.request.decodedBodyBytes + $1.totals.response.decodedBodyBytes }
        case .name: groups.sort { $0.keys.lexicographicallyPrecedes($1.keys) }
        }
        if let top { groups = Array(groups.prefix(top)) }
        return groups
    }

    /// Start lines and headers of both sides: the bytes in-app monitors leave out.
    private static func head(_ t: GroupTotals) -> Int {
        t.request.lineBytes + t.request.headerBytes + t.response.lineBytes + t.response.headerBytes
    }

    /// The numeric columns of the groups table, in order: title, what the legend says of it, and the
    /// order in which it is dropped when the table is too wide (higher first; 0 never).
    static let numericColumns: [(title: String, legend: String, dropOrder: Int)] = [
        ("reqs", "reqs: requests", 2),
        ("sent", "sent: request bytes as sent, start lines and headers included", 0),
        ("received", "received: response bytes as sent, start lines and headers included", 0),
        ("resp/req", "resp/req: received per response", 7),
        ("head", "head: start lines + headers", 3),
        ("cookies", "cookies: Cookie and Set-Cookie lines", 4),
        ("decoded", "decoded: bodies after transfer and content decoding", 6),
        ("saved", "saved: what content coding saved", 5),
        ("total", "total: sent + received", 0),
        ("wire", "wire: total with the connection overhead chosen by --overhead", 0),
    ]

    /// `--timings`: after the numeric columns; asked for, so dropped last when the table is narrow (p95 first).
    static let timingColumns: [(title: String, legend: String, dropOrder: Int)] = [
        ("wait p50", "wait p50: median time from a request's last byte to its response's first (≈ within 6.25 %)", 1),
        ("wait p95", "wait p95: its 95th percentile", 2),
    ]

    /// A wait in milliseconds, exact to the nanosecond; `–` when the group has none.
    static func waitText(_ nanoseconds: Int?) -> String {
        nanoseconds.map { HARTimings.milliseconds(Int64($0)) + " ms" } ?? "–"
    }

    /// The column a `--sort` key orders by; it is never dropped.
    static func sortColumn(_ key: SortKey) -> String? {
        switch key {
        case .total: return "total"
        case .requests: return "reqs"
        case .request: return "sent"
        case .response: return "received"
        case .cookies: return "cookies"
        case .headers: return "head"
        case .decoded: return "decoded"
        case .name: return nil
        }
    }

    func groupsTable(width: Int, chunkBytes: Int, to write: ByteSink) {
        var columns = report.groupBy.map { TextTable.Column($0.rawValue, .left, shrinkable: $0 == .path || $0 == .host) }
        // With --overhead the wire cost differs from HTTP bytes: show it too.
        let showWire = report.totals.request.wireBytes + report.totals.response.wireBytes != report.totals.totalBytes
        let sorted = Self.sortColumn(sort)
        for column in Self.numericColumns where column.title != "wire" || showWire {
            columns.append(.init(column.title, dropOrder: column.title == sorted ? 0 : column.dropOrder))
        }
        let showTimings = timings
        if showTimings { for column in Self.timingColumns { columns.append(.init(column.title, dropOrder: column.dropOrder)) } }
        /// `--timings`: the wait's median and p95 of a group, as text (`–` without a paired response).
        func forEachWait(_ totals: UnsafePointer<GroupTotals>, _ body: (String) -> Void) {
            guard showTimings else { return }
            let waits = totals.pointer(to: \.waits)!
            for column in Self.waitColumns { body(Self.waitText(waits.pointee.quantile(column.quantile).map { $0 * 1000 })) }
        }
        let keyCount = report.groupBy.count
        var table = TextTable(columns: columns)
        // Closures over the rows capture these, not `self`: a report copied for every row cost more than the row.
        let exactBytes = exactBytes
        // The numeric cells of a group in column order, the first a count and the others byte amounts: one
        // list for the measuring pass (widths computed, nothing formatted) and the writing pass (cells made).
        // Totals are read in place: a copy per row retains and releases their arrays.
        let numberCount = showWire ? 10 : 9
        func numbers(_ totals: UnsafePointer<GroupTotals>, into values: UnsafeMutablePointer<Int>) {
            let request = totals.pointer(to: \.request)!, response = totals.pointer(to: \.response)!
            values[0] = totals.pointee.requests
            values[1] = request.pointee.bytes
            values[2] = response.pointee.bytes
            // Per response (rounded down), so an unanswered request does not make responses look smaller.
            values[3] = response.pointee.bytes / max(1, totals.pointee.responses)
            values[4] = Self.head(totals.pointee)
            values[5] = request.pointee.cookieBytes &+ response.pointee.cookieBytes
            values[6] = request.pointee.decodedBodyBytes &+ response.pointee.decodedBodyBytes
            values[7] = request.pointee.compressionSavingBytes &+ response.pointee.compressionSavingBytes
            values[8] = request.pointee.bytes &+ response.pointee.bytes  // totalBytes
            if showWire { values[9] = request.pointee.wireBytes &+ response.pointee.wireBytes }
        }
        /// Calls `body` with `numbers` of `totals` on the stack: rows are made tens of thousands of times, and
        /// a closure called per number cost more than formatting it.
        func withNumbers<R>(_ totals: UnsafePointer<GroupTotals>, _ body: (UnsafeBufferPointer<Int>) -> R) -> R {
            var storage: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            return withUnsafeMutableBytes(of: &storage) { raw in
                let values = raw.bindMemory(to: Int.self)
                numbers(totals, into: values.baseAddress!)
                return body(UnsafeBufferPointer(rebasing: values[..<numberCount]))
            }
        }
        func forEachNumber(_ totals: UnsafePointer<GroupTotals>, _ body: (_ value: Int, _ isCount: Bool) -> Void) {
            withNumbers(totals) { values in for i in values.indices { body(values[i], i == 0) } }
        }
        func row(_ group: UnsafePointer<ReportGroup>, shown: [Bool], into cells: inout TextTable.Cells) {
            for key in group.pointee.keys { cells.append(key) }
            numberCells(group.pointer(to: \.totals)!, shown: shown, into: &cells)
        }
        /// A row read back from a temporary file: its key's fields copied from their bytes (written from
        /// `String`s: the same bytes as the keys' own), no `String` made.
        func row(keyBytes: UnsafeRawBufferPointer, _ totals: UnsafePointer<GroupTotals>, shown: [Bool], into cells: inout TextTable.Cells) {
            cells.append(keyFields: keyBytes)
            numberCells(totals, shown: shown, into: &cells)
        }
        func numberCells(_ totals: UnsafePointer<GroupTotals>, shown: [Bool], into cells: inout TextTable.Cells) {
            withNumbers(totals) { values in cells.append(numbers: values, decimalCount: 1, exact: exactBytes, shown: shown) }
            forEachWait(totals) { text in
                if shown[cells.count] { cells.append(text) } else { cells.appendEmpty() }
            }
        }
        func widen(_ group: UnsafePointer<ReportGroup>, _ widths: inout [Int]) {
            var column = 0
            for key in group.pointee.keys {
                widths[column] = max(widths[column], TextTable.displayWidth(key))
                column += 1
            }
            widenNumbers(group.pointer(to: \.totals)!, from: column, &widths)
        }
        /// The numeric and wait cells of a row, from column `column` on.
        func widenNumbers(_ totals: UnsafePointer<GroupTotals>, from column: Int, _ widths: inout [Int]) {
            precondition(column + numberCount <= widths.count, "a width for every numeric column")
            withNumbers(totals) { values in
                widths.withUnsafeMutableBufferPointer { widths in
                    for i in values.indices {
                        let width = i == 0 || exactBytes ? decimalWidth(values[i]) : humanBytesWidth(values[i])
                        widths[column + i] = max(widths[column + i], width)
                    }
                }
            }
            var column = column + numberCount
            forEachWait(totals) { text in
                widths[column] = max(widths[column], TextTable.displayWidth(text))
                column += 1
            }
        }
        /// A row measured from its key's bytes: a field's display width is that of its UTF-8 bytes (written
        /// from a `String`, so valid UTF-8 and the same bytes a decoded key would have).
        func widen(keyBytes key: UnsafeRawBufferPointer, _ totals: UnsafePointer<GroupTotals>, _ widths: inout [Int]) {
            var column = 0
            // Through a pointer: the closure per field would otherwise make `widths` unique each time.
            _ = widths.withUnsafeMutableBufferPointer { widths in
                GroupKeyBytes.forEachField(key) { field in
                    // (A damaged entry's extra fields are not measured: its reading fails the report.)
                    if column < keyCount, column < widths.count {
                        widths[column] = max(widths[column], TextTable.displayWidth(field.assumingMemoryBound(to: UInt8.self)))
                    }
                    column += 1
                }
            }
            widenNumbers(totals, from: keyCount, &widths)
        }
        if sort == .total, top == nil, let keyed = report.groups.keyed {
            // In memory with the keys as bytes: they are copied into the cells as they are, with no `String`
            // made per key. Both closures only read `keyed`: a large table is made on two threads when asked.
            table.rowSource = (keyed.count, { i, shown, cells in
                keyed.withGroup(i) { key, totals in row(keyBytes: key, totals, shown: shown, into: &cells) }
            })
            table.rowsOnTwoThreads = rowThreads > 1
            table.rowWidths = { i, widths in
                keyed.withGroup(i) { key, totals in widen(keyBytes: key, totals, &widths) }
            }
        } else if let groups = tableGroups() {
            table.rowSource = (groups.count, { i, shown, cells in
                groups.withUnsafeBufferPointer { row($0.baseAddress! + i, shown: shown, into: &cells) }
            })
            // Both closures only read `groups`: a large table is made on two threads when asked.
            table.rowsOnTwoThreads = rowThreads > 1
            table.rowWidths = { i, widths in
                groups.withUnsafeBufferPointer { widen($0.baseAddress! + i, &widths) }
            }
        } else {
            // Read from the report's temporary file as the table is made: measured run by run (unmerged, the
            // parts side by side), then merged in order to be written. The rows are written on one thread
            // (the merge reads ahead on another): a second half made alongside would be held until the first
            // is out, and a table of many groups is what this path is for.
            let groups = report.groups
            var reader: ReportGroups.KeyBytesIterator?
            table.rowSource = (groups.count, { i, shown, cells in
                if i == 0 {
                    reader = nil
                    // The totals decoded here, not ahead: a row costs less than merging a group, so the merge
                    // thread was the one the rows waited for.
                    reader = groups.makeKeyBytesIterator(decodingAhead: false)
                }
                _ = reader?.next { key, totals in row(keyBytes: key, totals, shown: shown, into: &cells) }
            })
            // Measured from the groups' bytes as read.
            table.rowWidthParts = groups.unorderedParts(rowThreads).map { part in
                { widths in part.forEachInPlace { key, totals in widen(keyBytes: key, totals, &widths) } }
            }
        }
        var totalKeys = report.groupBy.map { _ in "" }
        if !totalKeys.isEmpty { totalKeys[0] = "total" }
        var footer = [String](totalKeys)
        withUnsafePointer(to: report.totals) { totals in
            forEachNumber(totals) { value, isCount in footer.append(isCount ? String(value) : bytes(value)) }
            forEachWait(totals) { footer.append($0) }
        }
        table.footer = [footer]
        var first = true
        let color = color
        let visible = table.render(width: width, chunkBytes: chunkBytes, toBytes: { text in
            if first, color, let newline = text.firstIndex(of: 0x0A) {
                // The title line in bold.
                emit("\u{1B}[1m", to: write)
                write(UnsafeRawBufferPointer(rebasing: text[..<newline]))
                emit("\u{1B}[0m", to: write)
                write(UnsafeRawBufferPointer(rebasing: text[newline...]))
            } else {
                write(text)
            }
            first = false
        })
        let shown = visible.filter { $0 >= keyCount }.map { columns[$0].title }
        let legend = (Self.numericColumns + (showTimings ? Self.timingColumns : [])).filter { shown.contains($0.title) }
            .map(\.legend)
        emit(summaryLines(width: width, legend: legend, http2Note: Self.http2GroupsNote), to: write)
    }

    /// Under a table of a report with HTTP/2 messages: header byte columns are as sent, and where the decoded
    /// sizes are (issue 22).
    static let http2GroupsNote = "HTTP/2 header bytes are as sent (HPACK); decoded sizes: "
        + "request_header_decoded_bytes / response_header_decoded_bytes in CSV and JSON"
    static let http2MessagesNote = "HTTP/2 header bytes are as sent (HPACK); decoded size: header_decoded_bytes in "
        + "CSV and JSON"

    func messagesTable(width: Int, chunkBytes: Int, to write: ByteSink) {
        var table = TextTable(columns: [
            .init("conn", dropOrder: 3), .init("#", dropOrder: 2), .init("kind", .left), .init("method", .left),
            .init("status"), .init("host", .left, shrinkable: true, dropOrder: 1), .init("path", .left, shrinkable: true),
            .init("head"), .init("body", dropOrder: 4), .init("decoded", dropOrder: 5), .init("total"),
        ])
        // Rows are made as the list is read, once to measure and once to write: the records of a large
        // capture come from a temporary file and are never all in memory.
        let messages = report.messages ?? []
        var iterator = messages.makeIterator()
        table.rowSource = (messages.count, { i, _, cells in
            if i == 0 { iterator = messages.makeIterator() }
            guard let (_, r) = iterator.next() else { return }
            cells.append(decimal: r.connection)
            // A pushed stream has no client ordinal (`index` null in CSV and JSON).
            if r.flags.contains(.pushed) { cells.append("push") } else { cells.append(decimal: r.index) }
            cells.append(r.kind == .request ? "req" : r.kind == .response ? "resp" : (r.tls?.direction == "client_to_server" ? "tls→" : "tls←"))
            cells.append(r.method ?? "")
            cells.append(r.status.map(String.init) ?? "")
            cells.append(r.host)
            cells.append(r.path)
            cells.append(bytes(r.lineBytes + r.headerBytes))
            cells.append(bytes(r.bodyBytes))
            cells.append(r.decodedBodyBytes.map(bytes) ?? "?")
            cells.append(bytes(r.transferBytes) + (r.complete ? "" : "*"))
        })
        let visible = table.render(width: width, chunkBytes: chunkBytes, toBytes: write)
        let legend = [
            (3, "kind: req, resp, tls→ (client to server), tls← (server to client)"),
            (7, "head: start line + headers"), (8, "body: as sent, chunk framing included"),
            (9, "decoded: body after transfer and content decoding (? unknown)"),
            (10, "total: as sent; * cut by a gap or the capture's edge"),
        ].filter { visible.contains($0.0) }.map(\.1)
        emit(summaryLines(width: width, legend: legend, http2Note: Self.http2MessagesNote), to: write)
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

    /// `http2Note`: a line said when the report has HTTP/2 streams.
    func summaryLines(width: Int, legend: [String], http2Note: String? = nil) -> String {
        let s = report.summary
        var lines: [String] = []
        let span = CaptureTime(nanoseconds: s.durationNanoseconds)
        lines.append("\(plural(s.captures, "capture")), \(plural(s.packets, "packet")), \(bytes(s.bytes)); "
            + "capture span \(span.secondsText); "
            + "\(plural(s.connections, "TCP connection")), \(s.httpConnections) with HTTP"
            + (s.tlsConnections > 0 ? ", \(s.tlsConnections) TLS (\(s.tlsDecrypted) decrypted)" : "")
            + (s.quicConnections > 0 ? "; \(plural(s.quicConnections, "QUIC connection")) (\(s.quicDecrypted) decrypted)" : ""))
        lines.append("\(plural(report.groups.count, "group")); \(plural(s.requests, "request")), "
            + "\(plural(s.responses, "response")); unpaired: \(s.unpairedRequests) requests, "
            + "\(s.unpairedResponses) responses")
        var extra: [String] = []
        if s.nonHTTPBytes > 0 { extra.append("non-HTTP \(bytes(s.nonHTTPBytes))") }
        if s.h2ControlBytes > 0 { extra.append("HTTP/2 control frames \(bytes(s.h2ControlBytes))") }
        if s.tunnelBytes > 0 { extra.append("tunnelled \(bytes(s.tunnelBytes))") }
        if s.missingBytes > 0 { extra.append("missing \(bytes(s.missingBytes))") }
        if s.incompleteMessages > 0 { extra.append("\(s.incompleteMessages) incomplete messages (counted as seen)") }
        if s.decodeErrors > 0 { extra.append("\(s.decodeErrors) decode errors") }
        if !extra.isEmpty { lines.append(extra.joined(separator: "; ")) }
        let encapsulated = report.captures.reduce(into: [String: Int]()) {
            $0.merge($1.encapsulatedPackets, uniquingKeysWith: +)
        }
        if !encapsulated.isEmpty {
            lines.append("packets inside tunnels or tags: "
                + encapsulated.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        }
        if let merged = report.normalizedGroupCount, report.groups.count - merged >= 3 {
            lines.append("note: --normalize-paths would merge \(report.groups.count) rows into \(merged)")
        }
        // Explains the columns shown, and only those (dropped columns are not explained).
        var legendLine = ""
        for item in legend {
            if !legendLine.isEmpty, legendLine.count + 2 + item.count > min(width, 100) {
                lines.append(legendLine)
                legendLine = ""
            }
            legendLine += (legendLine.isEmpty ? "" : "; ") + item
        }
        if !legendLine.isEmpty { lines.append(legendLine) }
        if let http2Note, s.http2Streams > 0 { lines.append(http2Note) }
        if s.http3Streams > 0 {
            lines.append("HTTP/3 header bytes are as sent (QPACK); QUIC's packet overhead is quic_overhead_bytes, part of "
                + "wire bytes")
        }
        return lines.map { Self.wrap($0, width: max(40, width)) }.joined(separator: "\n") + "\n"
    }
}
