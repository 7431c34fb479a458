extension CheckReport {
    /// GitHub-flavoured markdown: a verdict heading, the change table, budgets and failures.
    func markdown() -> String {
        var text: String
        if verdict {
            text = outcome.passed ? "### ✅ traffic check passed\n\n" : "### ❌ traffic check failed\n\n"
            text += "\(Self.escape(outcome.verdict)). "
        } else {
            text = "### traffic diff\n\n\(Self.escape(outcome.changeSummary)). "
        }
        if let baseline = outcome.baselineName {
            text += "`\(outcome.currentName)` against `\(baseline)`, "
                + Self.escape(verdict ? outcome.rules.summary : outcome.rules.metric.phrase)
        } else {
            text += "`\(outcome.currentName)`"
        }
        if let budget = outcome.budgetName { text += ", budget `\(budget)`" }
        text += ".\n\n"
        let rows = self.rows
        if outcome.baselineName != nil {
            if rows.isEmpty {
                text += "No changes.\n\n"
            } else {
                let titles = (verdict ? [""] : []) + keyTitles + ["field", "baseline", "now", "Δ", "Δ%"]
                let alignment = (verdict ? [":-"] : []) + keyTitles.map { _ in ":-" } + [":-", "-:", "-:", "-:", "-:"]
                text += Self.line(titles) + Self.line(alignment)
                for row in rows {
                    let status = row.failed ? "❌" : row.status == "ok" ? "✅" : row.status
                    text += Self.line((verdict ? [status] : []) + row.keys
                        + [row.field, row.baseline, row.now, row.delta, row.percent])
                }
                text += "\n"
            }
        }
        let overBudget = outcome.budgets.filter(\.failed)
        if !overBudget.isEmpty {
            text += "#### Over budget\n\n"
            text += Self.line([""] + keyTitles + ["limit", "max", "now"])
            text += Self.line([":-"] + keyTitles.map { _ in ":-" } + [":-", "-:", "-:"])
            for result in overBudget {
                text += Self.line(["❌"] + result.keys + [result.limit.key, String(result.limit.maximum), result.actual.short])
            }
            text += "\n"
        } else if !outcome.budgets.isEmpty {
            text += "Budgets: all \(outcome.budgets.count) limits met.\n\n"
        }
        let notes = runNotes
        if !notes.isEmpty { text += notes.map { "- " + Self.escape($0) + "\n" }.joined() + "\n" }
        if verdict && !outcome.passed {
            text += "<details><summary>Failures</summary>\n\n"
            for message in outcome.runFailureMessages { text += "- \(Self.escape(message))\n" }
            for keys in outcome.endpoints {
                for message in outcome.failureMessages(for: keys) {
                    text += "- `\(keys.joined(separator: " "))`: \(Self.escape(message))\n"
                }
            }
            text += "\n</details>\n"
        }
        return text
    }

    /// A table row; `|` in cells would end the cell.
    static func line(_ cells: [String]) -> String {
        "| " + cells.map { escape($0) }.joined(separator: " | ") + " |\n"
    }

    /// Escapes the characters that markdown would read as table or inline syntax.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            if "|\\`*_<>[]".contains(character) { out.append("\\") }
            out.append(character == "\n" ? " " : character)
        }
        return out
    }
}
