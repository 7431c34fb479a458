
/// The result of `traffic analyze`: per-group totals, optionally every record, and a summary.
public struct TrafficReport: Sendable {
    public var captures: [CaptureSummary]
    public var groupBy: [GroupField]
    /// Sorted by total bytes, descending, then by keys.
    public var groups: ReportGroups
    public var totals: GroupTotals
    public var summary: ReportSummary
    /// Every record in capture, connection and exchange order; nil unless `keepMessages`.
    public var messages: MessageList?
    /// How many rows `--normalize-paths` would leave, when it was not given.
    public var normalizedGroupCount: Int?
    /// Anomaly counts by name over all captures.
    public var anomalies: [String: Int]
    public var warnings: [AnalysisWarning]
    /// When the bytes crossed; nil unless `ReportOptions.collectTimeline` (the HTML report).
    public var timeline: ReportTimeline? = nil
    /// The grouping and counting settings, for `traffic merge` (nil for reports made by hand).
    public var settings: ReportSettings? = nil

    package init(
        captures: [CaptureSummary], groupBy: [GroupField], groups: ReportGroups, totals: GroupTotals,
        summary: ReportSummary, messages: MessageList?, normalizedGroupCount: Int?, anomalies: [String: Int],
        warnings: [AnalysisWarning]
    ) {
        self.captures = captures
        self.groupBy = groupBy
        self.groups = groups
        self.totals = totals
        self.summary = summary
        self.messages = messages
        self.normalizedGroupCount = normalizedGroupCount
        self.anomalies = anomalies
        self.warnings = warnings
    }
}
