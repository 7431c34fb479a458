import TrafficAggregation
import ArgumentParser
import TrafficAnalysis
import TrafficOutput

struct Connections: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connections",
        abstract: "List TCP connections with packets and bytes each way, like tshark -z conv,tcp.",
        discussion: """
            Connections are numbered like tshark's tcp.stream. The client is the sender of the SYN.

            Examples:
              traffic connections capture.pcap
              traffic connections --format csv -o conns.csv capture.pcap.gz
              traffic connections --filter 'tcp port 8080' capture.pcapng
            """)

    @OptionGroup var input: InputOptions
    @OptionGroup var checksums: ChecksumOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if output.format == .html { throw ValidationError("--format html is for analyze, diff and check; use table, csv or json") }
        if output.format == .har { throw ValidationError("--format har is for analyze; use table, csv or json") }
        if output.format == .ndjson { throw ValidationError("--format ndjson is for analyze; use table, csv or json") }
    }

    func run() throws {
        var options = AnalysisOptions()
        options.filter = input.filter
        options.keyLogPaths = input.keyLogs
        options.verifyChecksums = checksums.verifyChecksums
        var warnings: [AnalysisWarning] = []
        let tls: [ConnectionTLSInfo]
        do {
            tls = try ConnectionTLSInfo.perCapture(paths: input.captures, keyLogPaths: input.keyLogs, warnings: &warnings)
        } catch {
            printError("traffic: \(error)")
            throw ExitCode(inputErrorCode)
        }
        for warning in warnings { printError(warning.description) }
        let analyses = try input.analyze(options: options, makeHandler: { tls[$0].makeHandler() }, quic: { tls[$0].makeQUICTable() })
        var report = ConnectionsReport(analyses: analyses)
        report.tls = tls.map(\.byConnection)
        report.http2ControlBytes = tls.map(\.http2ControlBytes)
        report.quic = tls.map(\.quic)
        try output.write(report.render(output.format, width: output.terminalWidth, exactBytes: output.exactBytes))
    }
}
