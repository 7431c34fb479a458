import TrafficAnalysis

/// The findings of `check` or `diff`: every compared group, every budget result, and the verdict.
/// Findings are values; only the command turns a failed outcome into an exit status.
public struct CheckOutcome: Sendable {
    public var groupBy: [GroupField]
    public var rules: CheckRules
    /// The baseline (or left side of a diff) and the current run, as named on the command line.
    public var baselineName: String?
    public var currentName: String
    /// The budget file, when one was checked.
    public var budgetName: String?
    /// Every group of either run, sorted by keys; empty without a baseline.
    public var groups: [GroupDiff]
    public var budgets: [BudgetResult]
    /// The keys of every endpoint of either run, sorted: the test cases of a JUnit report.
    public var endpoints: [[String]]

    public init(
        groupBy: [GroupField], rules: CheckRules, baselineName: String?, currentName: String, groups: [GroupDiff],
        budgets: [BudgetResult], endpoints: [[String]], budgetName: String? = nil
    ) {
        self.groupBy = groupBy
        self.rules = rules
        self.baselineName = baselineName
        self.currentName = currentName
        self.groups = groups
        self.budgets = budgets
        self.endpoints = endpoints
        self.budgetName = budgetName
    }

    /// Every failure sentence for one endpoint: regressions, presence, then budgets.
    public func failureMessages(for keys: [String]) -> [String] {
        let group = groups.first { $0.keys == keys }
        return (group?.failureMessages(metric: rules.metric) ?? [])
            + budgets.filter { $0.keys == keys && $0.failed }.map(\.message)
    }

    public var regressionCount: Int { groups.reduce(0) { $0 + $1.fields.filter(\.failed).count } }
    public var newFailureCount: Int { groups.filter { $0.presence == .new && $0.presenceFailed }.count }
    public var missingFailureCount: Int { groups.filter { $0.presence == .missing && $0.presenceFailed }.count }
    public var budgetFailureCount: Int { budgets.filter(\.failed).count }
    public var failureCount: Int { regressionCount + newFailureCount + missingFailureCount + budgetFailureCount }
    public var passed: Bool { failureCount == 0 }

    /// `1 regression, 1 new endpoint` — the non-zero failure kinds.
    public var failureBreakdown: String {
        func plural(_ count: Int, _ noun: String) -> String? {
            count == 0 ? nil : "\(count) \(noun)\(count == 1 ? "" : "s")"
        }
        return [
            plural(regressionCount, "regression"), plural(newFailureCount, "new endpoint"),
            plural(missingFailureCount, "missing endpoint"), plural(budgetFailureCount, "budget violation"),
        ].compactMap { $0 }.joined(separator: ", ")
    }

    /// `PASSED: 6 endpoints within budget` or `FAILED: 2 failures (1 regression, 1 new endpoint) in 6 endpoints`.
    public var verdict: String {
        let endpointsText = "\(endpoints.count) endpoint\(endpoints.count == 1 ? "" : "s")"
        guard !passed else { return "PASSED: \(endpointsText) within budget" }
        return "FAILED: \(failureCount) failure\(failureCount == 1 ? "" : "s") (\(failureBreakdown)) in \(endpointsText)"
    }

    /// `2 of 6 endpoints changed` for `diff`.
    public var changeSummary: String {
        let changed = groups.filter(\.changed).count
        return "\(changed) of \(groups.count) endpoint\(groups.count == 1 ? "" : "s") changed (\(rules.metric.phrase))"
    }
}
