extension RegressionCheck {
    /// `traffic check`: reads the baseline and budget (if given), analyses the captures grouped as
    /// the baseline was (else as `grouping` says; `grouping.filter`, when set, always wins), and
    /// compares. Throws for unreadable or invalid input before any capture is analysed.
    public static func run(
        captures: [String], baseline baselinePath: String?, budget budgetPath: String?, grouping: GroupingSettings,
        rules: CheckRules
    ) throws(CheckInputError) -> CheckOutcome {
        let baseline = try baselinePath.map { path throws(CheckInputError) in try Baseline.load(path: path) }
        let budget = try budgetPath.map { path throws(CheckInputError) in try Budget.load(path: path) }
        var settings = baseline?.settings ?? grouping
        if let filter = grouping.filter { settings.filter = filter }
        settings.keyLogPaths = grouping.keyLogPaths
        let current = try settings.snapshot(of: captures)
        let groups = baseline.map { compare(baseline: $0.snapshot, current: current, rules: rules) } ?? []
        let endpoints = Set(current.groups.map(\.keys) + (baseline?.snapshot.groups.map(\.keys) ?? []))
        var outcome = CheckOutcome(
            groupBy: current.groupBy, rules: rules, baselineName: baselinePath,
            currentName: captures.joined(separator: " "), groups: groups, budgets: budget?.evaluate(current) ?? [],
            endpoints: endpoints.sorted { $0.lexicographicallyPrecedes($1) }, budgetName: budgetPath)
        outcome.integrity = current.integrity
        if let budget {
            outcome.unmatchedBudgetRules = budget.unmatchedRules(current).map { index in
                CheckOutcome.UnmatchedRule(rule: index, globs: budget.rules[index].globs)
            }
        }
        return outcome
    }
}
