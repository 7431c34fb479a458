import TrafficAggregation
import TrafficAnalysis

/// How captures are grouped for baselines and checks; stored in the baseline so `check` groups alike.
public struct GroupingSettings: Sendable, Equatable {
    public var groupBy: [GroupField] = [.host, .path]
    /// Collapse identifier path segments to `{id}`; on by default, unlike `analyze`, so that
    /// `/users/42` and `/users/97` are one endpoint with one budget.
    public var normalizePaths = true
    public var pathTemplates: [String] = []
    /// The BPF filter the captures were read with.
    public var filter: String?
    /// TLS key logs (`--keylog`) for the captures of this run: never written into a baseline (a secret's
    /// location is the user's, and the next run's captures have other secrets).
    public var keyLogPaths: [String] = []

    public init() {}

    /// The analysis options that produce groups of this kind.
    public var reportOptions: ReportOptions {
        var options = ReportOptions()
        options.groupBy = groupBy
        options.paths = PathNormalizer(collapseIdentifiers: normalizePaths, templates: pathTemplates)
        options.analysis.filter = filter
        options.analysis.keyLogPaths = keyLogPaths
        return options
    }

    /// Analyses captures into a snapshot of their groups.
    public func snapshot(of captures: [String]) throws(CheckInputError) -> Snapshot {
        let report: TrafficReport
        do {
            report = try TrafficAnalyzer.analyze(paths: captures, options: reportOptions)
        } catch {
            throw .capture(error)
        }
        let snapshot = Snapshot(report: report)
        if let failure = report.groups.readFailure { throw .temporaryFile(reason: failure) }
        return snapshot
    }
}
