/// What `check` enforces: the metric, the tolerances, and what to do about new and missing groups.
public struct CheckRules: Sendable, Equatable {
    public var metric: Metric = .perRequest
    /// `--max-increase` and `--max-increase-bytes`, for every compared field without an override.
    public var tolerance = Tolerance()
    /// `--field-tolerance FIELD=…`: replaces `tolerance` for that field entirely.
    public var fieldTolerances: [CheckField: Tolerance] = [:]
    /// `--field-tolerance FIELD=off`: shown but never failed.
    public var ignoredFields: Set<CheckField> = []
    public var failOnNew = false
    public var failOnMissing = false
    /// `--allow-empty`: a check that compared nothing passes.
    public var allowEmpty = false
    /// `--allow-damaged`: capture damage and messages cut short do not fail the check (their endpoints are
    /// still not compared).
    public var allowDamaged = false
    /// `--strict-budget`: a budget rule that matches no endpoint fails.
    public var strictBudget = false
    /// False for `diff`: the same comparison with no verdict.
    public var enforce = true

    public init() {}

    /// Rules that only compare: what `diff` uses.
    public static func informational(metric: Metric) -> CheckRules {
        var rules = CheckRules()
        rules.metric = metric
        rules.enforce = false
        return rules
    }

    /// The fields a comparison shows: the compared ones plus any named by an override.
    public var shownFields: [CheckField] {
        Set(CheckField.compared).union(fieldTolerances.keys).union(ignoredFields).sorted()
    }

    /// The tolerance `field` is checked against, or nil when it is not checked.
    ///
    /// The request count is checked only under `--metric total` (per request, a varying number of
    /// polls is expected) and only by the percentage, since a byte allowance means nothing for a
    /// count; an override for `requests` checks it under either metric. Cookie fields and decoded header
    /// sizes are checked only when an override names them (cookie bytes already count in request and response
    /// bytes; decoded header sizes are another view of bytes counted there).
    public func tolerance(for field: CheckField) -> Tolerance? {
        guard enforce, !ignoredFields.contains(field) else { return nil }
        if let override = fieldTolerances[field] { return override }
        switch field {
        case .requests:
            return metric == .total ? Tolerance(partsPerMillion: tolerance.partsPerMillion) : nil
        case .requestCookieBytes, .responseCookieBytes, .requestHeaderDecodedBytes, .responseHeaderDecodedBytes:
            return nil
        default:
            return tolerance
        }
    }

    /// One line for reports: `per request; allowed increase +10% or +2048 B`.
    public var summary: String {
        var text = metric.phrase + (tolerance == Tolerance()
            ? "; no increase allowed" : "; allowed increase \(tolerance.describe(unit: "B"))")
        for (field, override) in fieldTolerances.sorted(by: { $0.key < $1.key }) {
            text += ", \(field.rawValue) \(override.describe(unit: field.unit))"
        }
        for field in ignoredFields.sorted() { text += ", \(field.rawValue) not checked" }
        return text
    }
}
