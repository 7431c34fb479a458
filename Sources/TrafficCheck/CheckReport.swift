import TrafficAnalysis

/// Renders a `CheckOutcome` as a table, markdown, JSON or JUnit XML.
public struct CheckReport: Sendable {
    public var outcome: CheckOutcome
    /// True for `check` (status column, verdict); false for `diff` (the changes only).
    public var verdict: Bool

    public init(outcome: CheckOutcome, verdict: Bool) {
        self.outcome = outcome
        self.verdict = verdict
    }

    public func render(_ format: CheckFormat, width: Int = 120) -> String {
        switch format {
        case .table: return table(width: width)
        case .markdown: return markdown()
        case .json: return json()
        case .junit: return junit()
        case .html: return html()
        }
    }

    /// One line of the change table, before formatting.
    struct Row {
        /// `FAIL`, `ok` (checked, within budget), `new`, `missing`, or empty (not checked).
        var status: String
        var keys: [String]
        var field: String
        var baseline = ""
        var now = ""
        var delta = ""
        var percent = ""
        var failed = false
    }

    /// The changed fields of changed groups, then new and missing groups, in key order.
    var rows: [Row] {
        var rows: [Row] = []
        for group in outcome.groups where group.changed {
            switch group.presence {
            case .both where group.incomplete:
                rows.append(Row(status: verdict ? "n/c" : "", keys: group.keys, field: "(cut short: not compared)"))
            case .both:
                for change in group.changes {
                    let status = change.failed ? "FAIL" : change.tolerance == nil ? "" : "ok"
                    rows.append(Row(
                        status: status, keys: group.keys, field: change.field.rawValue, baseline: change.baseline.short,
                        now: change.current.short, delta: change.delta.signed,
                        percent: change.current.percentChange(from: change.baseline) ?? "n/a", failed: change.failed))
                }
            case .new:
                rows.append(Row(
                    status: group.presenceFailed ? "FAIL" : "new", keys: group.keys, field: "(new endpoint)",
                    failed: group.presenceFailed))
            case .missing:
                rows.append(Row(
                    status: group.presenceFailed ? "FAIL" : "missing", keys: group.keys, field: "(missing endpoint)",
                    failed: group.presenceFailed))
            }
        }
        return rows
    }

    /// The header line: what was compared with what, and how.
    var heading: String {
        guard verdict else {
            return "traffic diff: \(outcome.baselineName ?? "") → \(outcome.currentName) (\(outcome.rules.metric.phrase))"
        }
        var text = "traffic check: \(outcome.currentName)"
        if let baseline = outcome.baselineName { text += " against \(baseline) (\(outcome.rules.summary))" }
        if let budget = outcome.budgetName { text += (outcome.baselineName == nil ? " against" : " and") + " budget \(budget)" }
        return text
    }

    /// Lines about the run as a whole, for every format: what was compared, what the captures held that
    /// was not analysed, their damage, and budget rules that matched nothing.
    var runNotes: [String] {
        var notes: [String] = []
        if verdict { notes.append(outcome.comparisonLine) }
        if let reason = outcome.nothingCompared { notes.append("Nothing compared: \(reason)") }
        for damage in outcome.damageMessages { notes.append("Damage: \(damage)") }
        for rule in outcome.unmatchedBudgetRules { notes.append("Budget: \(rule.message)") }
        for note in outcome.integrity.notAnalysed where outcome.integrity.messages > 0 { notes.append("Not analysed: \(note)") }
        return notes
    }

    /// The group-by column titles.
    var keyTitles: [String] { outcome.groupBy.map(\.columnName) }
}
