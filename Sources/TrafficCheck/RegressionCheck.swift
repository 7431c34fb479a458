/// Compares a run with a baseline group by group: the heart of `traffic check` and `traffic diff`.
public enum RegressionCheck {
    /// Every group of either snapshot, sorted by keys, with its fields compared under `rules`.
    /// `current` must group by the same fields, in the same order, as `baseline`.
    public static func compare(baseline: Snapshot, current: Snapshot, rules: CheckRules) -> [GroupDiff] {
        precondition(baseline.groupBy == current.groupBy, "compare: \(baseline.groupBy) vs \(current.groupBy)")
        let before = Dictionary(baseline.groups.map { ($0.keys, $0.counts) }, uniquingKeysWith: { a, _ in a })
        let after = Dictionary(current.groups.map { ($0.keys, $0.counts) }, uniquingKeysWith: { a, _ in a })
        let keys = Set(before.keys).union(after.keys).sorted { $0.lexicographicallyPrecedes($1) }
        let fields = rules.shownFields
        return keys.map { key in
            switch (before[key], after[key]) {
            case let (old?, new?) where old.incomplete > 0 || new.incomplete > 0:
                // A message cut short makes the group's sums smaller than the traffic was: never compared
                // as if whole (a response cut by damage would read as a -99 % "ok").
                return GroupDiff(keys: key, presence: .both, incomplete: true)
            case let (old?, new?):
                // An optional field (HTTP/2's decoded header sizes) is compared only where both runs have it.
                let known = fields.filter { old.has($0) && new.has($0) }
                return GroupDiff(keys: key, presence: .both, fields: known.map { field in
                    FieldChange(
                        field: field, baseline: old.value(field, rules.metric), current: new.value(field, rules.metric),
                        tolerance: rules.tolerance(for: field))
                })
            case (nil, _?):
                return GroupDiff(keys: key, presence: .new, presenceFailed: rules.enforce && rules.failOnNew)
            default:
                return GroupDiff(keys: key, presence: .missing, presenceFailed: rules.enforce && rules.failOnMissing)
            }
        }
    }
}
