/// One compared field of a group present in both runs.
public struct FieldChange: Sendable, Equatable {
    public var field: CheckField
    public var baseline: Amount
    public var current: Amount
    /// The tolerance it was checked against; nil when the field is not checked.
    public var tolerance: Tolerance?
    public var failed: Bool

    public init(field: CheckField, baseline: Amount, current: Amount, tolerance: Tolerance?) {
        self.field = field
        self.baseline = baseline
        self.current = current
        self.tolerance = tolerance
        failed = tolerance?.isExceeded(base: baseline, now: current) ?? false
    }

    public var delta: Amount { current - baseline }
    public var changed: Bool { current != baseline }

    /// The largest increase that passes, when checked.
    public var allowance: Amount? { tolerance?.allowance(base: baseline) }

    /// `response_bytes per request rose from 2134 B to 3134 B (+1000 B, +46.9%); allowed +10% (+213.4 B)`.
    public func message(metric: Metric) -> String {
        let unit = field.valueSuffix
        let scope = field.isCount ? "" : " \(metric.phrase)"
        let verb = delta.milli > 0 ? "rose" : delta.milli < 0 ? "fell" : "stayed"
        var text = "\(field.rawValue)\(scope) \(verb) from \(baseline.short)\(unit) to \(current.short)\(unit)"
        text += " (\(delta.signed)\(unit)" + (current.percentChange(from: baseline).map { ", \($0)" } ?? "") + ")"
        if let tolerance, let allowance {
            if tolerance == Tolerance() { return text + "; no increase allowed" }
            text += "; allowed \(tolerance.describe(unit: field.unit))"
            if tolerance.partsPerMillion != nil { text += ", here +\(allowance.short)\(unit)" }
        }
        return text
    }
}
