import ArgumentParser
import TrafficCapture
import TrafficCheck

struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show how per-endpoint byte costs changed between two captures, reports or baselines.",
        discussion: """
            Each side is a capture, a JSON report (`traffic analyze --format json`) or a baseline, told \
            apart by content. Shows the same table as `traffic check` without a verdict. Captures are grouped \
            by the grouping options, else like a baseline on the other side, else by host and normalized path. \
            Exit codes: 0 success (whatever changed), 2 usage error, 3 unreadable or invalid input.

            Examples:
              traffic diff before.pcap after.pcap
              traffic diff traffic-baseline.json session.pcap --metric total
              traffic diff old-report.json new-report.json --format markdown
              traffic diff before.pcap after.pcap --format html -o diff.html
            """)

    @Argument(help: "The earlier run: a capture, a JSON report or a baseline.")
    var before: String

    @Argument(help: "The later run: a capture, a JSON report or a baseline.")
    var after: String

    @Option(help: "Compare per-request averages or totals.")
    var metric: Metric = .perRequest

    @OptionGroup var grouping: GroupingOptions

    @Option(help: "Only packets matching this BPF expression when reading captures.")
    var filter: String?

    @Option(name: .customLong("keylog"), help: ArgumentHelp(
        "TLS key log (NSS format, SSLKEYLOGFILE) to decrypt HTTPS in captures; repeatable.", valueName: "file"))
    var keyLogs: [String] = []

    @Option(name: .shortAndLong, help: "Output format: table, markdown, json or html.")
    var format: DiffFormat = .table

    @Option(name: .shortAndLong, help: "Write to this file instead of stdout.")
    var output: String?

    @OptionGroup var width: WidthOptions

    func validate() throws {
        try validateFilter(filter)
    }

    func run() throws {
        let outcome: CheckOutcome
        do {
            let settings = grouping.isGiven || filter != nil ? grouping.settings(filter: filter) : nil
            outcome = try SnapshotDiff.run(
                left: before, right: after, grouping: settings, metric: metric, keyLogPaths: keyLogs)
        } catch {
            printError("traffic: \(error)")
            throw ExitCode(inputErrorCode)
        }
        try writeText(CheckReport(outcome: outcome, verdict: false).render(format.checkFormat, width: width.tableWidth), to: output)
    }
}

/// What `diff` writes: the formats of `check` but JUnit, which needs a verdict.
enum DiffFormat: String, CaseIterable, ExpressibleByArgument {
    case table, markdown, json, html

    var checkFormat: CheckFormat {
        switch self {
        case .table: return .table
        case .markdown: return .markdown
        case .json: return .json
        case .html: return .html
        }
    }
}
