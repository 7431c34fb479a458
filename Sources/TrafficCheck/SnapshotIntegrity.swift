import TrafficAggregation
import TrafficAnalysis

/// What a run held beyond its groups that decides whether comparing it means anything: whether it holds
/// HTTP at all, and the damage that can make a group's numbers wrong.
public struct SnapshotIntegrity: Sendable, Equatable {
    /// Requests and responses, `(tls)` rows excluded.
    public var messages = 0
    /// One sentence per capture whose reading stopped early: `run.pcap: capture damaged at byte offset …`.
    public var damage: [String] = []
    /// Records cut by a gap or by the capture's edge.
    public var incompleteMessages = 0
    /// What the captures held and this version does not analyse (`ReportSummary.scopeNotes`).
    public var notAnalysed: [String] = []
    /// The analysis warnings, for the command to print.
    public var warnings: [AnalysisWarning] = []

    public init() {}

    /// The integrity of a report's captures.
    public init(report: TrafficReport) {
        messages = report.summary.requests + report.summary.responses
        damage = report.captures.compactMap { capture in capture.damage.map { "\(capture.path): \($0)" } }
        incompleteMessages = report.summary.incompleteMessages
        notAnalysed = report.summary.scopeNotes.map(\.message)
        warnings = report.warnings
    }

    /// Damage sentences: the captures' own, and the messages they cut short.
    public var damageMessages: [String] {
        damage + (incompleteMessages > 0
            ? ["\(plural(incompleteMessages, "message")) cut short by a gap or the capture's edge "
                + "(\(incompleteMessages == 1 ? "its endpoint is" : "their endpoints are") not compared)"]
            : [])
    }
}
