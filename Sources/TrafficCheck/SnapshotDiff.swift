import TrafficMerge

/// `traffic diff`: the comparison of `check` between any two runs, with no verdict.
public enum SnapshotDiff {
    /// Compares `left` (the "baseline" side) with `right`. Each is a capture or a JSON report or
    /// baseline, told apart by content (JSON starts with `{`). Captures are grouped by `grouping`
    /// when given, else like a baseline on the other side, else by the defaults (host, path, normalized).
    public static func run(
        left: String, right: String, grouping: GroupingSettings?, metric: Metric, keyLogPaths: [String] = []
    ) throws(CheckInputError) -> CheckOutcome {
        let leftFile = try load(left)
        let rightFile = try load(right)
        var settings = grouping ?? GroupingSettings()
        if grouping == nil {
            if case let .baseline(baseline)? = leftFile {
                settings = baseline.settings
            } else if case let .baseline(baseline)? = rightFile {
                settings = baseline.settings
            }
        }
        settings.keyLogPaths = keyLogPaths
        let before = try snapshot(leftFile, path: left, settings: settings)
        let after = try snapshot(rightFile, path: right, settings: settings)
        guard let aligned = after.reordered(as: before.groupBy) else {
            throw .groupingMismatch(left: left, leftGroupBy: before.groupBy, right: right, rightGroupBy: after.groupBy)
        }
        let rules = CheckRules.informational(metric: metric)
        let groups = RegressionCheck.compare(baseline: before, current: aligned, rules: rules)
        var outcome = CheckOutcome(
            groupBy: before.groupBy, rules: rules, baselineName: left, currentName: right, groups: groups, budgets: [],
            endpoints: groups.map(\.keys))
        // Both runs' HTTP and damage: without it every diff said "the captures hold no HTTP".
        var integrity = aligned.integrity
        integrity.messages += before.integrity.messages
        integrity.damage = before.integrity.damage + integrity.damage
        integrity.incompleteMessages += before.integrity.incompleteMessages
        outcome.integrity = integrity
        return outcome
    }

    /// The JSON file's contents, or nil for a capture.
    static func load(_ path: String) throws(CheckInputError) -> SnapshotFile.Contents? {
        guard InputFile.looksLikeJSON(path) else { return nil }
        return try SnapshotFile.load(path: path, what: "report")
    }

    /// The snapshot of a JSON file, or of the capture at `path` grouped by `settings`.
    static func snapshot(
        _ file: SnapshotFile.Contents?, path: String, settings: GroupingSettings
    ) throws(CheckInputError) -> Snapshot {
        if let file { return file.snapshot }
        return try settings.snapshot(of: [path])
    }
}
