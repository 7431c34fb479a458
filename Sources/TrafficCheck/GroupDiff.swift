/// One group of a comparison: present in both runs (with its field changes), new, or missing.
public struct GroupDiff: Sendable, Equatable {
    /// Where the group was found.
    public enum Presence: String, Sendable {
        case both, new, missing
    }

    public var keys: [String]
    public var presence: Presence
    /// Every shown field, changed or not; empty unless `presence == .both`.
    public var fields: [FieldChange]
    /// New under `--fail-on-new`, or missing under `--fail-on-missing`.
    public var presenceFailed: Bool
    /// In both runs, but a message of it was cut short in one of them: its sums are not whole, so its
    /// fields are not compared (`fields` is empty).
    public var incomplete: Bool

    public init(
        keys: [String], presence: Presence, fields: [FieldChange] = [], presenceFailed: Bool = false,
        incomplete: Bool = false
    ) {
        self.keys = keys
        self.presence = presence
        self.fields = fields
        self.presenceFailed = presenceFailed
        self.incomplete = incomplete
    }

    /// Present in both runs and compared field by field.
    public var compared: Bool { presence == .both && !incomplete }

    /// The fields whose value differs.
    public var changes: [FieldChange] { fields.filter(\.changed) }
    public var changed: Bool { presence != .both || incomplete || !changes.isEmpty }
    public var failed: Bool { presenceFailed || fields.contains(where: \.failed) }

    /// One sentence per failure of this group (budgets excluded).
    public func failureMessages(metric: Metric) -> [String] {
        switch presence {
        case .new: return presenceFailed ? ["new endpoint, not in the baseline (--fail-on-new)"] : []
        case .missing: return presenceFailed ? ["endpoint in the baseline is missing from the capture (--fail-on-missing)"] : []
        case .both: return fields.filter(\.failed).map { $0.message(metric: metric) }
        }
    }
}
