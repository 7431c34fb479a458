import TrafficMerge
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
        options.countNormalizedRows = false  // a check prints no table
        return options
    }

    /// Analyses captures into a snapshot of their groups; JSON reports of `traffic analyze` (merged ones
    /// included) are merged instead, when they were made with these settings.
    public func snapshot(of captures: [String]) throws(CheckInputError) -> Snapshot {
        if let merged = try Self.mergedReports(captures) {
            if let reason = difference(from: merged.settings) {
                throw .reportGrouping(path: merged.path, reason: reason)
            }
            return Snapshot(report: merged.report)
        }
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

extension GroupingSettings {
    /// The settings of a report made with `settings`, for a baseline recorded from reports.
    public init(report settings: ReportSettings) {
        self.init()
        groupBy = settings.groupBy
        normalizePaths = settings.normalizePaths
        pathTemplates = settings.pathTemplates
        filter = settings.filter
    }

    /// How a report's settings differ from these in what a baseline compares (nil: they agree). A filter set here
    /// must be the report's; host/path globs and `--overhead` change which records and bytes are counted.
    func difference(from report: ReportSettings) -> String? {
        var mine = report
        mine.groupBy = groupBy
        mine.normalizePaths = normalizePaths
        mine.pathTemplates = pathTemplates
        if let filter { mine.filter = filter }
        mine.hostGlob = nil
        mine.pathGlob = nil
        mine.overhead = []
        return mine.difference(from: report)
    }

    /// When every input is a JSON report: the reports merged, with the first one's path; nil for captures.
    public static func mergedReports(_ inputs: [String]) throws(CheckInputError)
        -> (report: TrafficReport, settings: ReportSettings, path: String)?
    {
        let reports = inputs.filter { InputFile.looksLikeJSON($0) }
        if reports.isEmpty { return nil }
        guard reports.count == inputs.count else { throw .mixedInputs }
        do {
            let merged = try ReportMerge.merge(paths: reports)
            return (merged.report, merged.report.settings!, reports[0])
        } catch {
            throw .reports(error.description)
        }
    }
}
