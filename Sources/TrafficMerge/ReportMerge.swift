import TrafficAggregation
import TrafficCapture

/// `traffic merge`: reports of disjoint captures added up into the report of one run over all of them. A group's
/// totals are sums and its wait percentiles come from a fixed-bucket histogram, so the merged groups, summary and
/// percentiles equal one `traffic analyze` over the same captures in the same order (tested byte for byte).
public enum ReportMerge {
    /// What a merge gives: the report, and notes for stderr on what a merged report cannot carry.
    public struct Result: Sendable {
        public var report: TrafficReport
        public var notes: [String]
    }

    /// Reads and merges the reports at `paths`, in order (the captures keep that order).
    public static func merge(paths: [String]) throws(ReportMergeError) -> Result {
        var parts: [ReportPart] = []
        for path in paths {
            let part = try ReportPart.read(path: path)
            if let first = parts.first, let reason = part.settings.difference(from: first.settings) {
                throw .incompatible(path: path, first: paths[0], reason: reason)
            }
            parts.append(part)
        }
        return merge(parts)
    }

    /// Merges parts already read and checked to have equal settings (the first one's are used).
    public static func merge(_ parts: [ReportPart]) -> Result {
        precondition(!parts.isEmpty, "at least one report")
        let settings = parts[0].settings
        var captures: [CaptureSummary] = []
        var summary = ReportSummary()
        var anomalies: [String: Int] = [:]
        var slots: [[String]: Int] = [:]
        var rows: [ReportGroup] = []
        var totals = GroupTotals()
        for part in parts {
            captures += part.captures
            // `ReportSummary.add` sums every count, the durations included, as one run over the captures does.
            summary.add(part.summary)
            anomalies.merge(part.anomalies, uniquingKeysWith: +)
            for group in part.groups {
                totals.add(group.totals)
                if let slot = slots[group.keys] {
                    rows[slot].totals.add(group.totals)
                } else {
                    slots[group.keys] = rows.count
                    rows.append(ReportGroup(keys: group.keys, totals: group.totals))
                }
            }
        }
        slots = [:]
        ReportOrderRuns.sort(&rows)
        // The table's hint of how many rows `--normalize-paths` would leave, from the merged keys as a run makes it.
        var normalizedCount: Int?
        if !settings.normalizePaths, settings.pathTemplates.isEmpty, let column = settings.groupBy.firstIndex(of: .path) {
            normalizedCount = ReportBuilder.normalizedKeyCount(rows.map(\.keys), pathColumn: column)
        }
        var report = TrafficReport(
            captures: captures, groupBy: settings.groupBy, groups: ReportGroups(rows), totals: totals, summary: summary,
            messages: nil, normalizedGroupCount: normalizedCount, anomalies: anomalies, warnings: [])
        report.settings = settings
        var notes: [String] = []
        if parts.contains(where: \.listsMessages) {
            notes.append("the reports' --messages listings are not merged: groups and summary are")
        }
        return Result(report: report, notes: notes)
    }
}
