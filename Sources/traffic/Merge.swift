import ArgumentParser
import TrafficMerge
import TrafficOutput

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge JSON reports of disjoint captures into the report of one run over all of them.",
        discussion: """
            Reads reports written by `traffic analyze --format json` and adds up their groups and summaries: \
            the result equals one `traffic analyze` over all the captures, in the order the reports are given \
            (percentiles included: each group carries its wait histogram in `merge_state`). The reports must be \
            made with the same grouping and counting settings (--group-by, --normalize-paths, --path-template, \
            --host, --path, --filter, --overhead). `traffic baseline` and `traffic check` accept merged \
            reports in place of captures. Exit codes: 0 success, 2 usage error, 3 an unreadable report or \
            reports made with different settings (the reason is printed).

            Examples:
              traffic merge day1.json day2.json -o week.json
              traffic merge reports/*.json --format csv -o endpoints.csv
              traffic check week.json --baseline traffic-baseline.json
            """)

    @Argument(help: "JSON reports of `traffic analyze --format json`.")
    var reports: [String]

    @OptionGroup var output: OutputOptions

    @Option(help: "Table order: \(AnalyzeReport.SortKey.allCases.map(\.rawValue).joined(separator: ", ")).")
    var sort: AnalyzeReport.SortKey = .total

    @Option(help: "Show only the first N groups in the table (html: draw the first N, default 500, and sum the rest).")
    var top: Int?

    @Flag(help: "Table: add the median and p95 of each group's wait.")
    var timings = false

    @Flag(help: "No colour, even on a terminal (NO_COLOR is honoured too).")
    var noColor = false

    func validate() throws {
        if reports.isEmpty { throw ValidationError("give at least one JSON report") }
        if output.format == .har || output.format == .ndjson {
            throw ValidationError("--format \(output.format.rawValue) lists records, which reports do not carry; use table, csv, json or html")
        }
        if let top, top < 1 { throw ValidationError("--top must be at least 1") }
    }

    func run() throws {
        let merged: ReportMerge.Result
        do {
            merged = try ReportMerge.merge(paths: reports)
        } catch {
            printError("traffic: \(error)")
            throw ExitCode(inputErrorCode)
        }
        for note in merged.notes { printError("note: \(note)") }
        if output.format == .html {
            printError("note: a merged page has no timeline and no response-size percentiles (JSON reports do not carry them)")
        }
        var rendered = AnalyzeReport(report: merged.report, listMessages: false)
        rendered.sort = sort
        rendered.timings = timings
        rendered.top = top
        try output.render(rendered, noColor: noColor)
    }
}
