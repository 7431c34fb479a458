import TrafficAggregation
import TrafficSessions
import ArgumentParser
import TrafficAnalysis
import TrafficCapture
import TrafficOutput

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AnalyzeReport.SortKey: ExpressibleByArgument {}

struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Report HTTP bytes per host and path: start lines, headers, cookies, bodies as sent and decoded.",
        discussion: """
            Every request and every response is measured as it crossed the wire. Groups are sorted by \
            total bytes. Warnings go to stderr, and so do notes on traffic seen but not analysed (TLS \
            and QUIC without keys, other protocols, packets neither TCP nor QUIC). Exit codes: 0 success, \
            2 usage error (an invalid --filter included), 3 unreadable input.

            Examples:
              traffic analyze capture.pcap
              traffic analyze --normalize-paths --top 20 session.pcapng.gz
              traffic analyze --group-by host,method,status --format csv -o costs.csv capture.pcap
              traffic analyze --messages --format json capture.pcap | jq '.messages[0]'
              traffic analyze --path-template '/users/{id}/orders/{order}' --host 'api.*' capture.pcap
              traffic analyze --filter 'tcp port 8080' run1.pcap run2.pcap --per-capture
              traffic analyze --overhead all --bytes capture.pcap
              traffic analyze --format html -o report.html capture.pcap
              traffic analyze --format har -o capture.har capture.pcap
              traffic analyze --format ndjson -o records.ndjson captures/*.pcap
            """)

    @OptionGroup var input: InputOptions
    @OptionGroup var checksums: ChecksumOptions
    @OptionGroup var output: OutputOptions

    @Option(help: "Group by these fields, in order: host, path, method, status, content-type, connection.")
    var groupBy: String = "host,path"

    @Flag(help: "Collapse identifier path segments (numbers, UUIDs, hex/base64 tokens, dates) to {id}.")
    var normalizePaths = false

    @Option(help: "Group paths matching this template, e.g. '/users/{id}/orders/{order}'. Repeatable.")
    var pathTemplate: [String] = []

    @Option(help: "Add connection overhead to wire_bytes: handshake, teardown, packets (comma-separated) or all.")
    var overhead: String?

    @Option(help: "Worker threads; connections are spread over them by a hash of their endpoints (default: cores).")
    var jobs: Int?

    @Option(help: ArgumentHelp(
        "Groups kept in memory per thread; more go to a temporary file in sorted runs (memory stays flat).",
        valueName: "n"))
    var groupsInMemory: Int = ReportOptions().groupsInMemory

    @Flag(help: "Inflate every gzip body instead of reading its size from the gzip trailer (slower; same numbers).")
    var verifyDecoding = false

    @Flag(help: "List every request and response record instead of groups (--format ndjson always lists them).")
    var messages = false

    @Option(help: "Only records whose host matches this glob, e.g. 'api.*'.")
    var host: String?

    @Option(help: "Only records whose path matches this glob, e.g. '/v1/*'.")
    var path: String?

    @Flag(help: "Add a capture column when analysing several captures.")
    var perCapture = false

    @Option(help: "Table order: \(AnalyzeReport.SortKey.allCases.map(\.rawValue).joined(separator: ", ")).")
    var sort: AnalyzeReport.SortKey = .total

    @Option(help: "Show only the first N groups in the table (html: draw the first N, default 500, and sum the rest).")
    var top: Int?

    @Option(help: ArgumentHelp(
        "html: draw a waterfall when there are at most this many messages, else bytes over time by host.",
        valueName: "n"))
    var timelineMessages: Int = ReportOptions().timelineEventLimit

    @Flag(help: "Table: add the median and p95 of each group's wait (request's last byte to response's first).")
    var timings = false

    @Flag(help: "har: put each request's body in postData.text (up to 1 MiB each; off: bodies are counted, not stored).")
    var harBodies = false

    @Flag(help: "No colour, even on a terminal (NO_COLOR is honoured too).")
    var noColor = false

    func validate() throws {
        if GroupField.parseList(groupBy) == nil {
            throw ValidationError("unknown --group-by field in '\(groupBy)'; use host, path, method, status, content-type, connection")
        }
        if let overhead, OverheadOptions(list: overhead) == nil {
            throw ValidationError("unknown --overhead '\(overhead)'; use handshake, teardown, packets or all")
        }
        if let top, top < 1 { throw ValidationError("--top must be at least 1") }
        if harBodies, output.format != .har { throw ValidationError("--har-bodies is for --format har") }
        if timelineMessages < 0 || timelineMessages > 100_000 {
            throw ValidationError("--timeline-messages must be between 0 and 100000")
        }
        if groupsInMemory < 1 { throw ValidationError("--groups-in-memory must be at least 1") }
        if let jobs, jobs < 1 || jobs > 256 { throw ValidationError("--jobs must be between 1 and 256") }
    }

    func run() throws {
        var options = ReportOptions()
        options.groupBy = GroupField.parseList(groupBy) ?? [.host, .path]
        options.overhead = overhead.flatMap(OverheadOptions.init(list:)) ?? []
        if perCapture { options.groupBy.insert(.capture, at: 0) }
        options.paths = PathNormalizer(collapseIdentifiers: normalizePaths, templates: pathTemplate)
        options.hostGlob = host
        options.pathGlob = path
        // The page is built from the groups; keeping every record for it would only cost memory and a spool.
        options.keepMessages = messages && output.format != .html
        if messages && output.format == .html { printError("note: --messages is not listed in --format html; the page shows the groups and a timeline") }
        // NDJSON: records go out as they complete, through the stream; nothing is kept for a final rendering.
        var streamFile: UnsafeMutablePointer<FILE>?
        if output.format == .ndjson {
            let file = try output.open()
            streamFile = file
            options.keepMessages = false
            options.countGroups = false
            options.recordStream = NDJSONRecordWriter(capturePaths: input.captures) { _ = fwrite($0.baseAddress, 1, $0.count, file) }
        }
        if output.format == .har {
            // HAR's entries are the records with their heads as sent, read back in order from sorted runs.
            options.keepMessages = true
            options.keepHeads = true
            options.keepRequestBodies = harBodies
        }
        options.verifyDecoding = verifyDecoding
        options.groupsInMemory = groupsInMemory
        options.jobs = jobs ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        options.analysis.filter = input.filter
        options.analysis.keyLogPaths = input.keyLogs
        options.analysis.verifyChecksums = checksums.verifyChecksums
        // The page's timeline: bounded (a few thousand messages' times, bytes per host and second).
        options.collectTimeline = output.format == .html
        options.collectResponseSizes = output.format == .html
        // Only the table's summary says what --normalize-paths would merge.
        options.countNormalizedRows = output.format == .table
        // The waits' median and p95: columns of JSON and CSV, and of the table with --timings.
        options.collectWaits = output.format == .json || output.format == .csv || (output.format == .table && timings)
        options.timelineEventLimit = timelineMessages
        let progress = ProgressBar(enabled: isatty(2) != 0)
        let report: TrafficReport
        do {
            report = try TrafficAnalyzer.analyze(paths: input.captures, options: options, progress: progress.update)
        } catch {
            progress.clear()
            if let streamFile { fclose(streamFile) }
            printError("traffic: \(error)")
            throw ExitCode(inputErrorCode)
        }
        progress.clear()
        for warning in report.warnings { printError(warning.description) }
        for note in report.summary.scopeNotes { printError("note: \(note.message)") }
        if let streamFile {
            try output.closeStream(streamFile)
            keepUntilExit(report)
            return
        }
        var rendered = AnalyzeReport(report: report, listMessages: options.keepMessages)
        rendered.rowThreads = options.jobs
        rendered.sort = sort
        rendered.harOverhead = !options.overhead.isEmpty
        rendered.harBodies = harBodies
        rendered.timings = timings
        rendered.top = top
        try output.render(rendered, noColor: noColor)
        if let failure = report.groups.readFailure {
            // Groups beyond what is kept in memory went to a temporary file, and could not all be read back.
            printError("traffic: groups: \(failure); the report is incomplete")
            throw ExitCode(inputErrorCode)
        }
        if let failure = report.messages?.readFailure {
            // The records were spooled to a temporary file and could not all be read back: what was written
            // is a report cut short.
            printError("traffic: --messages: \(failure); the listing is incomplete")
            throw ExitCode(inputErrorCode)
        }
        keepUntilExit(report)
    }
}
