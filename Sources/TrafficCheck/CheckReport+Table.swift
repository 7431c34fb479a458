import TrafficOutput

extension CheckReport {
    /// The changes, the budget violations, one sentence per failure, and the verdict.
    func table(width: Int) -> String {
        var text = heading + "\n"
        let rows = self.rows
        if outcome.baselineName == nil {
            // Budgets only: there is nothing to compare with.
        } else if rows.isEmpty {
            text += "\nNo changes: \(outcome.groups.count) endpoints as before.\n"
        } else {
            text += "\n"
            var table = TextTable(columns: (verdict ? [TextTable.Column("", .left)] : [])
                + outcome.groupBy.map { TextTable.Column($0.columnName, .left, shrinkable: $0 == .path || $0 == .host) }
                + [TextTable.Column("field", .left), TextTable.Column("baseline"), TextTable.Column("now"),
                   TextTable.Column("Δ"), TextTable.Column("Δ%")])
            for row in rows {
                table.rows.append((verdict ? [row.status] : []) + row.keys
                    + [row.field, row.baseline, row.now, row.delta, row.percent])
            }
            text += table.render(width: width)
        }
        let overBudget = outcome.budgets.filter(\.failed)
        if !overBudget.isEmpty {
            text += "\nOver budget:\n"
            var table = TextTable(columns: [TextTable.Column("", .left)]
                + outcome.groupBy.map { TextTable.Column($0.columnName, .left, shrinkable: $0 == .path || $0 == .host) }
                + [TextTable.Column("limit", .left), TextTable.Column("max"), TextTable.Column("now")])
            for result in overBudget {
                table.rows.append(["FAIL"] + result.keys
                    + [result.limit.key, String(result.limit.maximum), result.actual.short])
            }
            text += table.render(width: width)
        } else if !outcome.budgets.isEmpty {
            text += "\nBudgets: all \(outcome.budgets.count) limits met.\n"
        }
        let notes = runNotes
        if !notes.isEmpty { text += "\n" + notes.joined(separator: "\n") + "\n" }
        guard verdict else { return text + "\n" + outcome.changeSummary + "\n" }
        let failures = outcome.runFailureMessages.map { "  \($0)" } + outcome.endpoints.flatMap { keys in
            outcome.failureMessages(for: keys).map { "  \(keys.joined(separator: " ")): \($0)" }
        }
        if !failures.isEmpty { text += "\nFailures:\n" + failures.joined(separator: "\n") + "\n" }
        return text + "\n" + outcome.verdict + "\n"
    }
}
