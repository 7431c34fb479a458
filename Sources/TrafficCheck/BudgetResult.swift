/// One budget limit applied to one group.
public struct BudgetResult: Sendable, Equatable {
    public var keys: [String]
    /// The rule's position in the budget file, from 0.
    public var rule: Int
    public var limit: Budget.Limit
    /// The group's value of the limited field: per request or total, as the limit says.
    public var actual: Amount

    public init(keys: [String], rule: Int, limit: Budget.Limit, actual: Amount) {
        self.keys = keys
        self.rule = rule
        self.limit = limit
        self.actual = actual
    }

    /// Over the limit; exactly at the limit passes.
    public var failed: Bool { actual > Amount(limit.maximum) }

    /// `response_bytes per request is 3134 B, over the budget of 3000 B (max_response_bytes, rule 1)`.
    public var message: String {
        let unit = limit.field.valueSuffix
        let scope = limit.field.isCount ? "" : " \(limit.metric.phrase)"
        let relation = failed ? "over" : "within"
        return "\(limit.field.rawValue)\(scope) is \(actual.short)\(unit), \(relation) the budget of "
            + "\(limit.maximum)\(unit) (\(limit.key), budget rule \(rule + 1))"
    }
}
