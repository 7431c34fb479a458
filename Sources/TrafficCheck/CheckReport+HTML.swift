import TrafficOutput

extension CheckReport {
    /// One self-contained page for a CI artifact: the verdict on top, the failures in red (and marked
    /// `FAIL` in text, so they read without colour), then per endpoint each changed field with a before and an
    /// after bar, and the budgets. Built from the outcome alone, like the other formats.
    func html() -> String {
        var html = HTMLBuffer()
        HTMLPage.begin(title: verdict ? "traffic check: \(outcome.currentName)" : "traffic diff", into: &html)
        html.raw("<header>\n<h1>")
        html.text(verdict ? "traffic check" : "traffic diff")
        html.raw("</h1>\n<p class=\"muted\">")
        html.text(heading)
        html.raw("</p>\n")
        if verdict {
            html.raw(outcome.passed ? "<p class=\"verdict pass\" id=\"verdict\">&#10004; " : "<p class=\"verdict fail\" id=\"verdict\">&#10008; ")
            html.text(outcome.verdict)
        } else {
            html.raw("<p class=\"verdict info\" id=\"verdict\">")
            html.text(outcome.changeSummary)
        }
        html.raw("</p>\n</header>\n")
        let notes = runNotes
        html.notes(notes)
        if verdict && !outcome.passed { failures(into: &html) }
        if outcome.baselineName != nil { changes(into: &html) }
        if !outcome.budgets.isEmpty { budgets(into: &html) }
        HTMLPage.end(into: &html)
        return String(decoding: html.bytes, as: UTF8.self)
    }

    private func failures(into html: inout HTMLBuffer) {
        html.raw("<section aria-labelledby=\"h-fail\">\n<h2 id=\"h-fail\" class=\"bad\">Failures</h2>\n<ul id=\"failures\">\n")
        var messages = outcome.runFailureMessages.map { (keys: "", message: $0) }
        for keys in outcome.endpoints {
            for message in outcome.failureMessages(for: keys) { messages.append((keys.joined(separator: " "), message)) }
        }
        for item in messages {
            html.raw("<li class=\"fail-text\">FAIL ")
            if !item.keys.isEmpty {
                html.raw("<code>")
                html.text(item.keys)
                html.raw("</code>: ")
            }
            html.text(item.message)
            html.raw("</li>\n")
        }
        html.raw("</ul>\n</section>\n")
    }

    /// Every endpoint that changed: a row per changed field, new or missing endpoint.
    private func changes(into html: inout HTMLBuffer) {
        let changed = outcome.groups.filter(\.changed)
        html.raw("<section aria-labelledby=\"h-changes\">\n<h2 id=\"h-changes\">Endpoints</h2>\n<p class=\"note\">")
        html.int(changed.count)
        html.raw(" of ")
        html.int(outcome.groups.count)
        html.raw(" endpoints changed (")
        html.text(outcome.rules.metric.phrase)
        html.raw("); bars: <span class=\"sw s-req\"></span> before, <span class=\"sw s-resp\"></span> after ")
        html.raw("(<span class=\"sw s-overhead\"></span> when it fails), ")
        html.raw("to the same scale per row.</p>\n")
        guard !changed.isEmpty else {
            html.raw("<p>No changes.</p>\n</section>\n")
            return
        }
        html.raw("<div class=\"table-wrap\"><table id=\"changes\" class=\"sortable\">\n<thead><tr>")
        let titles = (verdict ? ["status"] : []) + keyTitles + ["field"]
        for title in titles {
            html.raw("<th scope=\"col\"><button type=\"button\">")
            html.text(title)
            html.raw("</button></th>")
        }
        for title in ["before", "after", "Δ", "Δ %"] {
            html.raw("<th scope=\"col\" class=\"num\"><button type=\"button\">")
            html.text(title)
            html.raw("</button></th>")
        }
        html.raw("<th scope=\"col\">before / after</th></tr></thead>\n<tbody>\n")
        var rank = 0
        for group in changed {
            switch group.presence {
            case .both where group.incomplete:
                presenceRow(group, status: verdict ? "n/c" : "", field: "(cut short: not compared)", rank: &rank, into: &html)
            case .both:
                for change in group.changes {
                    let status = change.failed ? "FAIL" : change.tolerance == nil ? "" : "ok"
                    html.raw(change.failed ? "<tr class=\"fail\"" : "<tr")
                    html.raw(" data-rank=\"")
                    html.int(rank)
                    html.raw("\">")
                    rank += 1
                    if verdict { statusCell(status, into: &html) }
                    for key in group.keys { cell(key, into: &html) }
                    cell(change.field.rawValue, into: &html)
                    amountCell(change.baseline, into: &html)
                    amountCell(change.current, into: &html)
                    amountCell(change.delta, signed: true, into: &html)
                    html.raw("<td class=\"num\">")
                    html.text(change.current.percentChange(from: change.baseline) ?? "n/a")
                    html.raw("</td><td>")
                    beforeAfter(change, into: &html)
                    html.raw("</td></tr>\n")
                }
            case .new:
                presenceRow(group, status: group.presenceFailed ? "FAIL" : "new", field: "(new endpoint)", rank: &rank, into: &html)
            case .missing:
                presenceRow(
                    group, status: group.presenceFailed ? "FAIL" : "missing", field: "(missing endpoint)", rank: &rank, into: &html)
            }
        }
        html.raw("</tbody>\n</table></div>\n</section>\n")
    }

    private func presenceRow(_ group: GroupDiff, status: String, field: String, rank: inout Int, into html: inout HTMLBuffer) {
        html.raw(status == "FAIL" ? "<tr class=\"fail\"" : "<tr")
        html.raw(" data-rank=\"")
        html.int(rank)
        html.raw("\">")
        rank += 1
        if verdict { statusCell(status, into: &html) }
        for key in group.keys { cell(key, into: &html) }
        cell(field, into: &html)
        html.raw("<td></td><td></td><td></td><td></td><td></td></tr>\n")
    }

    private func statusCell(_ status: String, into html: inout HTMLBuffer) {
        html.raw(status == "FAIL" ? "<td class=\"fail-text\">" : status == "ok" ? "<td class=\"good\">" : "<td>")
        html.text(status)
        html.raw("</td>")
    }

    private func cell(_ text: String, into html: inout HTMLBuffer) {
        html.raw("<td class=\"key\">")
        html.text(text)
        html.raw("</td>")
    }

    private func amountCell(_ amount: Amount, signed: Bool = false, into html: inout HTMLBuffer) {
        html.raw("<td class=\"num\" data-v=\"")
        html.int(amount.milli)
        html.raw("\" title=\"")
        html.text(amount.exact)
        html.raw("\">")
        html.text(signed ? amount.signed : amount.short)
        html.raw("</td>")
    }

    /// Two bars, before above after, scaled to the larger of the two.
    private func beforeAfter(_ change: FieldChange, into html: inout HTMLBuffer) {
        let scale = Double(max(change.baseline.milli, change.current.milli, 1))
        html.raw("<svg class=\"rowbar\" viewBox=\"0 0 140 12\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"")
        html.text("before \(change.baseline.short), after \(change.current.short)")
        html.raw("\">")
        for (row, amount, style) in [(0.0, change.baseline, "s-req"), (6.0, change.current, change.failed ? "s-overhead" : "s-resp")] {
            html.raw("<rect class=\"\(style)\" x=\"0\" y=\"")
            html.number(row)
            html.raw("\" height=\"5\" width=\"")
            html.number(max(0, Double(amount.milli)) / scale * 140)
            html.raw("\"><title>")
            html.text((row == 0 ? "before " : "after ") + amount.exact)
            html.raw("</title></rect>")
        }
        html.raw("</svg>")
    }

    private func budgets(into html: inout HTMLBuffer) {
        html.raw("<section aria-labelledby=\"h-budgets\">\n<h2 id=\"h-budgets\">Budgets</h2>\n")
        html.raw("<div class=\"table-wrap\"><table id=\"budgets\" class=\"sortable\">\n<thead><tr>")
        for title in ["status"] + keyTitles + ["limit", "max", "now"] {
            html.raw("<th scope=\"col\"><button type=\"button\">")
            html.text(title)
            html.raw("</button></th>")
        }
        html.raw("</tr></thead>\n<tbody>\n")
        for (rank, result) in outcome.budgets.enumerated() {
            html.raw(result.failed ? "<tr class=\"fail\"" : "<tr")
            html.raw(" data-rank=\"")
            html.int(rank)
            html.raw("\">")
            statusCell(result.failed ? "FAIL" : "ok", into: &html)
            for key in result.keys { cell(key, into: &html) }
            cell(result.limit.key, into: &html)
            amountCell(Amount(result.limit.maximum), into: &html)
            amountCell(result.actual, into: &html)
            html.raw("</tr>\n")
        }
        html.raw("</tbody>\n</table></div>\n</section>\n")
    }
}
