import TrafficOutput

extension CheckReport {
    public static let checkSchema = "traffic.check/1"
    public static let diffSchema = "traffic.diff/1"

    /// Every group (changed or not) with every shown field, and every budget result.
    func json() -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("schema", verdict ? Self.checkSchema : Self.diffSchema)
        w.field("baseline", outcome.baselineName)
        w.field("captures", outcome.currentName)
        w.field("metric", outcome.rules.metric.rawValue)
        w.field("group_by", keyTitles)
        if verdict {
            w.field("passed", outcome.passed)
            w.field("failures", outcome.failureCount)
            w.field("compared", outcome.comparedCount)
            w.field("new", outcome.newCount)
            w.field("missing", outcome.missingCount)
            w.field("not_compared", outcome.incompleteCount)
            w.field("nothing_compared", outcome.nothingCompared)
            w.field("damage", outcome.damageMessages)
            w.field("not_analysed", outcome.integrity.notAnalysed)
            w.field("run_failures", outcome.runFailureMessages)
        }
        w.beginArray("groups")
        for group in outcome.groups {
            w.beginObject()
            writeKeys(group.keys, to: &w)
            w.field("presence", group.presence.rawValue)
            w.field("changed", group.changed)
            w.field("compared", group.compared)
            if verdict { w.field("failed", group.failed) }
            w.beginArray("fields")
            for change in group.fields {
                w.beginObject()
                w.field("field", change.field.rawValue)
                w.field("baseline", raw: change.baseline.exact)
                w.field("now", raw: change.current.exact)
                w.field("delta", raw: change.delta.exact)
                w.field("delta_percent", raw: change.current.percentChange(from: change.baseline).map {
                    String($0.dropLast().drop { $0 == "+" })
                } ?? "null")
                if verdict {
                    w.field("checked", change.tolerance != nil)
                    w.field("allowed_increase", raw: change.allowance?.exact ?? "null")
                    w.field("failed", change.failed)
                }
                w.endObject()
            }
            w.endArray()
            if verdict { w.field("messages", group.failureMessages(metric: outcome.rules.metric)) }
            w.endObject()
        }
        w.endArray()
        if verdict {
            w.beginArray("budgets")
            for result in outcome.budgets {
                w.beginObject()
                writeKeys(result.keys, to: &w)
                w.field("rule", result.rule + 1)
                w.field("limit", result.limit.key)
                w.field("maximum", result.limit.maximum)
                w.field("now", raw: result.actual.exact)
                w.field("failed", result.failed)
                w.field("message", result.message)
                w.endObject()
            }
            w.endArray()
            w.beginArray("unmatched_budget_rules")
            for rule in outcome.unmatchedBudgetRules {
                w.beginObject()
                w.field("rule", rule.rule + 1)
                w.field("failed", outcome.rules.strictBudget)
                w.field("message", rule.message)
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        return w.output + "\n"
    }

    private func writeKeys(_ keys: [String], to w: inout JSONWriter) {
        for (field, key) in zip(outcome.groupBy, keys) { w.field(field.columnName, key) }
    }
}
