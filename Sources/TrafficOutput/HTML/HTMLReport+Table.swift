import TrafficAggregation
import TrafficAnalysis

extension HTMLReport {
    /// A numeric column of the endpoint table: its title, what it means (the header's tooltip), and its value
    /// (nil: not applicable, shown as a dash and sorted last).
    struct Column: Sendable {
        var title: String
        var help: String
        var value: @Sendable (GroupTotals) -> Int?
    }

    static let columns: [Column] = [
        Column(title: "requests", help: "requests", value: { $0.requests }),
        Column(title: "responses", help: "responses", value: { $0.responses }),
        Column(title: "request bytes", help: "request_bytes: start lines, headers and bodies as sent", value: { $0.request.bytes }),
        Column(title: "response bytes", help: "response_bytes", value: { $0.response.bytes }),
        Column(title: "per request", help: "request_bytes / requests (rounded down)", value: {
            $0.requests > 0 ? $0.request.bytes / $0.requests : nil
        }),
        Column(title: "per response", help: "response_bytes / responses (rounded down)", value: {
            $0.responses > 0 ? $0.response.bytes / $0.responses : nil
        }),
        Column(
            title: "p50 resp ≈",
            help: "median response size: approximate, within 6.25 % (a histogram of fixed buckets), exact below 16 bytes",
            value: { $0.responseSizes.quantile(0.5) }),
        Column(title: "p95 resp ≈", help: "95th percentile of response size: approximate, within 6.25 %", value: {
            $0.responseSizes.quantile(0.95)
        }),
        Column(title: "max resp", help: "largest response (exact)", value: { $0.responses > 0 ? $0.responseSizes.max : nil }),
        Column(title: "body on wire", help: "request_body_bytes + response_body_bytes: bodies as sent", value: {
            $0.request.bodyBytes &+ $0.response.bodyBytes
        }),
        Column(
            title: "body decoded",
            help: "request_decoded_body_bytes + response_decoded_body_bytes: after transfer and content decoding",
            value: { $0.request.decodedBodyBytes &+ $0.response.decodedBodyBytes }),
        Column(title: "saved", help: "compression_saving_bytes: decoded minus encoded, over compressed bodies", value: {
            $0.request.compressionSavingBytes &+ $0.response.compressionSavingBytes
        }),
        Column(title: "total", help: "total_bytes = request_bytes + response_bytes", value: { $0.totalBytes }),
    ]

    /// Columns whose value is a count, not bytes.
    static let countColumns: Set<String> = ["requests", "responses"]

    /// The endpoint table: every shown group and the "other" row, sortable by any column and filterable by key.
    func table(_ rows: Rows, into html: inout HTMLBuffer, chunkBytes: Int, write: ByteSink) {
        html.raw("<section aria-labelledby=\"h-table\">\n<h2 id=\"h-table\">Endpoints</h2>\n")
        html.raw("<div class=\"controls\"><label for=\"filter\">Filter</label>")
        html.raw("<input type=\"search\" id=\"filter\" aria-controls=\"endpoints\" placeholder=\"host or path contains…\">")
        html.raw("<span><span id=\"shown\">")
        html.int(rows.shown.count)
        html.raw("</span> of ")
        html.int(report.groups.count)
        html.raw(" groups shown")
        if rows.otherCount > 0 {
            html.raw("; the smallest ")
            html.int(rows.otherCount)
            html.raw(" are summed in the last row (<code>--top</code>)")
        }
        html.raw("</span></div>\n")
        html.raw("<div class=\"table-wrap\"><table id=\"endpoints\" class=\"sortable\">\n")
        html.raw("<caption class=\"sr-only\">Bytes per endpoint; column headers sort</caption>\n<thead><tr>")
        for field in report.groupBy {
            html.raw("<th scope=\"col\" data-col=\"")
            html.text(field.columnName)
            html.raw("\"><button type=\"button\">")
            html.text(field.columnName)
            html.raw("</button></th>")
        }
        for column in Self.columns {
            html.raw("<th scope=\"col\" class=\"num\" title=\"")
            html.text(column.help)
            html.raw("\" data-col=\"")
            html.text(column.title)
            html.raw("\"")
            if column.title == "total" { html.raw(" aria-sort=\"descending\"") }
            html.raw("><button type=\"button\">")
            html.text(column.title)
            html.raw("</button></th>")
            if column.title == "max resp" {
                html.raw("<th scope=\"col\">line / header / cookie / body</th>")
            }
        }
        html.raw("</tr></thead>\n<tbody>\n")
        for (rank, group) in rows.shown.enumerated() {
            row(keys: group.keys, totals: group.totals, rank: rank, cssClass: nil, into: &html)
            html.flush(over: chunkBytes, to: write)
        }
        if rows.otherCount > 0 {
            var keys = Array(repeating: "", count: report.groupBy.count)
            if !keys.isEmpty { keys[0] = "(other: \(rows.otherCount) groups)" }
            row(keys: keys, totals: rows.other, rank: rows.shown.count, cssClass: "other", into: &html)
        }
        html.raw("</tbody>\n</table></div>\n")
        html.raw("<p class=\"note\">Sizes are exact (tooltips give bytes); <em>p50/p95 ≈</em> come from a fixed-bucket ")
        html.raw("histogram of each group's response sizes and are within 6.25 %; <em>max</em> is exact. The bar splits ")
        html.raw("each group's bytes into start lines, headers, cookie lines and bodies as sent (TLS records grey).</p>\n")
        html.raw("</section>\n")
    }

    private func row(keys: [String], totals: GroupTotals, rank: Int, cssClass: String?, into html: inout HTMLBuffer) {
        html.raw("<tr")
        if let cssClass { html.raw(" class=\"\(cssClass)\"") }
        html.raw(" data-rank=\"")
        html.int(rank)
        html.raw("\" data-key=\"")
        html.text(keys.joined(separator: " ").lowercased())
        html.raw("\">")
        for key in keys {
            html.raw("<td class=\"key\">")
            html.text(key)
            html.raw("</td>")
        }
        for column in Self.columns {
            let value = column.value(totals)
            html.raw("<td class=\"num\" data-v=\"")
            html.int(value ?? -1)
            html.raw("\">")
            if let value {
                if Self.countColumns.contains(column.title) { html.int(value) } else { html.bytesLabel(value) }
            } else {
                html.raw("<span title=\"no responses\">—</span>")
            }
            html.raw("</td>")
            if column.title == "max resp" {
                html.raw("<td>")
                StackedBar(Self.rowParts(totals)).svg(
                    width: 140, height: 12, cssClass: "rowbar", label: "Split of \(keys.joined(separator: " "))", into: &html)
                html.raw("</td>")
            }
        }
        html.raw("</tr>\n")
    }
}
