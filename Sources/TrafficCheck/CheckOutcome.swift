import TrafficAggregation
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
    /// The current run's captures: whether they hold HTTP, and their damage.
    public var integrity = SnapshotIntegrity()
    /// Budget rules that matched no endpoint.
    public var unmatchedBudgetRules: [UnmatchedRule] = []

    /// A budget rule whose globs matched no endpoint of the captures.
    public struct UnmatchedRule: Sendable, Equatable {
        /// The rule's position in the budget file, from 0.
        public var rule: Int
        public var globs: String

        /// `budget rule 2 (host "*", path "/v2/*") matched nothing`.
        public var message: String { "budget rule \(rule + 1) (\(globs)) matched nothing" }
    }

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

    /// Endpoints in both runs and compared field by field.
    public var comparedCount: Int { groups.filter(\.compared).count }
    public var newCount: Int { groups.filter { $0.presence == .new }.count }
    public var missingCount: Int { groups.filter { $0.presence == .missing }.count }
    /// Endpoints in both runs that were not compared because a message of theirs was cut short.
    public var incompleteCount: Int { groups.filter(\.incomplete).count }

    /// Why the check compared nothing, or nil when it compared something: a check that compared
    /// nothing must not pass as "within budget".
    public var nothingCompared: String? {
        if integrity.messages == 0 {
            let notes = integrity.notAnalysed
            return "the captures hold no HTTP" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
        }
        if baselineName != nil, comparedCount == 0 {
            if incompleteCount > 0 {
                return "no endpoint of the baseline could be compared: each one found holds a message cut short"
            }
            return "no endpoint of the baseline was found in the captures"
        }
        if baselineName == nil, budgetName != nil, budgets.isEmpty { return "no endpoint matched any budget rule" }
        return nil
    }

    /// Capture damage and cut messages, as sentences.
    public var damageMessages: [String] { integrity.damageMessages }

    var emptyFailureCount: Int { rules.enforce && !rules.allowEmpty && nothingCompared != nil ? 1 : 0 }
    public var damageFailureCount: Int { rules.enforce && !rules.allowDamaged ? damageMessages.count : 0 }
    public var unmatchedRuleFailureCount: Int { rules.enforce && rules.strictBudget ? unmatchedBudgetRules.count : 0 }

    /// Failures of the run as a whole, not of one endpoint: nothing compared, damage, budget rules that
    /// matched nothing (under `--strict-budget`).
    public var runFailureMessages: [String] {
        var messages: [String] = []
        if emptyFailureCount > 0, let reason = nothingCompared { messages.append(reason + " (--allow-empty to pass)") }
        if damageFailureCount > 0 {
            messages += damageMessages.map { $0 + " (--allow-damaged to pass)" }
        }
        if unmatchedRuleFailureCount > 0 { messages += unmatchedBudgetRules.map { $0.message + " (--strict-budget)" } }
        return messages
    }

    /// `Compared 5 endpoints; 1 new, 0 missing, 1 not compared (a message cut short)`.
    public var comparisonLine: String {
        var text: String
        if baselineName != nil {
            text = "Compared \(plural(comparedCount, "endpoint")); \(newCount) new, \(missingCount) missing"
            if incompleteCount > 0 { text += ", \(incompleteCount) not compared (a message cut short)" }
        } else {
            text = "Checked \(plural(Set(budgets.map(\.keys)).count, "endpoint")) against the budget"
        }
        if !unmatchedBudgetRules.isEmpty {
            text += "; \(plural(unmatchedBudgetRules.count, "budget rule")) matched nothing"
        }
        return text
    }

    public var regressionCount: Int { groups.reduce(0) { $0 + $1.fields.filter(\.failed).count } }
    public var newFailureCount: Int { groups.filter { $0.presence == .new && $0.presenceFailed }.count }
    public var missingFailureCount: Int { groups.filter { $0.presence == .missing && $0.presenceFailed }.count }
    public var budgetFailureCount: Int { budgets.filter(\.failed).count }
    public var failureCount: Int {
        regressionCount + newFailureCount + missingFailureCount + budgetFailureCount + emptyFailureCount
            + damageFailureCount + unmatchedRuleFailureCount
    }
    public var passed: Bool { failureCount == 0 }

    /// `1 regression, 1 new endpoint` — the non-zero failure kinds.
    public var failureBreakdown: String {
        func some(_ count: Int, _ noun: String) -> String? { count == 0 ? nil : plural(count, noun) }
        return [
            emptyFailureCount > 0 ? "nothing compared" : nil,
            some(damageFailureCount, "damage finding"),
            some(regressionCount, "regression"), some(newFailureCount, "new endpoint"),
            some(missingFailureCount, "missing endpoint"), some(budgetFailureCount, "budget violation"),
            some(unmatchedRuleFailureCount, "budget rule that matched nothing"),
        ].compactMap { $0 }.joined(separator: ", ")
    }

    /// `PASSED: 6 endpoints within budget` or `FAILED: 2 failures (1 regression, 1 new endpoint) in 6 endpoints`.
    public var verdict: String {
        let endpointsText = plural(endpoints.count, "endpoint")
        if emptyFailureCount > 0, let reason = nothingCompared, failureCount == 1 { return "FAILED: \(reason)" }
        if passed, let reason = nothingCompared { return "PASSED (--allow-empty): \(reason)" }
        guard !passed else { return "PASSED: \(endpointsText) within budget" }
        return "FAILED: \(failureCount) failure\(failureCount == 1 ? "" : "s") (\(failureBreakdown)) in \(endpointsText)"
    }

    /// `2 of 6 endpoints changed` for `diff`.
    public var changeSummary: String {
        let changed = groups.filter(\.changed).count
        return "\(changed) of \(groups.count) endpoint\(groups.count == 1 ? "" : "s") changed (\(rules.metric.phrase))"
    }
}
