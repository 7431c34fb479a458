import TrafficAnalysis

/// A committed record of a known-good run: its groups, their totals and per-request averages, and
/// the grouping that made them (`traffic baseline`, schema `traffic.baseline/1`).
public struct Baseline: Sendable, Equatable {
    public static let schema = "traffic.baseline/1"

    public var settings: GroupingSettings
    public var snapshot: Snapshot

    public init(settings: GroupingSettings, snapshot: Snapshot) {
        self.settings = settings
        self.snapshot = snapshot
    }

    /// Analyses `captures` with `settings` into a baseline.
    public static func record(captures: [String], settings: GroupingSettings) throws(CheckInputError) -> Baseline {
        Baseline(settings: settings, snapshot: try settings.snapshot(of: captures))
    }
}
