import TrafficAggregation
import ArgumentParser
import TrafficAnalysis
import TrafficCapture
import TrafficOutput
import TrafficQUIC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension OutputFormat: ExpressibleByArgument {}

/// Exit code for unreadable or invalid input (ArgumentParser uses 2 for usage errors).
let inputErrorCode: Int32 = 3

struct InputOptions: ParsableArguments {
    @Argument(help: "Capture files (pcap or pcapng, optionally gzip-compressed); '-' reads stdin.")
    var captures: [String]

    @Option(help: "Only packets matching this BPF expression, compiled by libpcap (e.g. 'tcp port 8080').")
    var filter: String?

    @Option(name: .customLong("keylog"), help: ArgumentHelp(
        "TLS key log (NSS format, as SSLKEYLOGFILE writes it) to decrypt HTTPS; repeatable. Secrets embedded in a "
            + "pcapng capture are used without it.", valueName: "file"))
    var keyLogs: [String] = []

    func validate() throws {
        if captures.isEmpty { throw ValidationError("give at least one capture file") }
        try validateFilter(filter)
    }

    /// Runs the lower stages on every capture; prints warnings; exits 3 when a capture cannot be read.
    func analyze(options: AnalysisOptions,
                 makeHandler: @escaping (Int) -> TrafficReassemblyHandlerFactory = { _ in { _ in nil } },
                 quic: (Int) -> QUICConnectionTable? = { _ in nil }) throws
        -> [CaptureAnalysis]
    {
        var analyses: [CaptureAnalysis] = []
        for (index, path) in captures.enumerated() {
            do {
                let analysis = try CaptureAnalysis.run(
                    path: path, options: options, makeHandler: makeHandler(index), quic: quic(index))
                for warning in analysis.warnings { printError(warning.description) }
                analyses.append(analysis)
            } catch {
                printError("traffic: \(error)")
                throw ExitCode(inputErrorCode)
            }
        }
        return analyses
    }
}

/// A BPF filter that does not compile is a usage error (exit 2), found before any capture is read.
func validateFilter(_ filter: String?) throws {
    guard let filter else { return }
    do {
        try CaptureFile.checkFilter(filter)
    } catch {
        throw ValidationError(error.description)
    }
}

/// `--verify-checksums`, for the commands that report anomalies (analyze, connections).
struct ChecksumOptions: ParsableArguments {
    @Flag(help: "Count frames with a wrong IPv4 or TCP checksum (off by default: offload leaves them unfilled).")
    var verifyChecksums = false
}

struct OutputOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Output format: table, csv, json, html (analyze only: one self-contained page), har (analyze only: HAR 1.2) or ndjson (analyze only: a record per line, streamed).")
    var format: OutputFormat = .table

    @Option(name: .shortAndLong, help: "Write to this file instead of stdout.")
    var output: String?

    @Flag(name: .customLong("bytes"), help: "Exact byte counts in tables instead of KiB/MiB.")
    var exactBytes = false

    @OptionGroup var width: WidthOptions

    var terminalWidth: Int { width.tableWidth }

    func write(_ text: String) throws { try writeText(text, to: output) }

    /// Writes the pieces `render` hands over as they come, so that a large report is never one string.
    func write(_ render: (ByteSink) -> Void) throws {
        let file = try open()
        render { _ = fwrite($0.baseAddress, 1, $0.count, file) }
        try closeOutput(file, output ?? "stdout")
    }

    /// Writes `report` in the chosen format, with exact bytes as asked and colour only on a terminal that allows it
    /// (`analyze` and `merge` alike).
    func render(_ report: AnalyzeReport, noColor: Bool) throws {
        var report = report
        report.exactBytes = exactBytes
        report.color = !noColor && getenv("NO_COLOR") == nil && output == nil && isatty(1) != 0
        let width = terminalWidth
        try write { report.write(format, width: width, toBytes: $0) }
    }

    /// The output file (or a stream of our own on stdout), for output written while the captures are read.
    func open() throws -> UnsafeMutablePointer<FILE> {
        let file: UnsafeMutablePointer<FILE>
        if let path = output {
            file = try openForWriting(path)
        } else {
            // A stream of our own on stdout (Swift 6 cannot name C's `stdout` stream): whatever `print`
            // buffered goes out first, so the order on stdout is kept.
            fflush(nil)
            let descriptor = dup(1)
            guard descriptor >= 0, let stream = fdopen(descriptor, "w") else {
                if descriptor >= 0 { close(descriptor) }
                printError("traffic: stdout: cannot write: \(String(cString: strerror(errno)))")
                throw ExitCode(inputErrorCode)
            }
            file = stream
        }
        return file
    }

    /// Closes what `open` gave; exits 3 when what was written did not all reach the file.
    func closeStream(_ stream: UnsafeMutablePointer<FILE>) throws { try closeOutput(stream, output ?? "stdout") }
}

/// `--width`, for every command that prints a table.
struct WidthOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Table width in columns (default: the terminal's; off a terminal COLUMNS, else wide enough to drop nothing).",
        valueName: "n"))
    var width: Int?

    func validate() throws {
        if let width, width < 20 { throw ValidationError("--width must be at least 20") }
    }

    /// `--width`, else `COLUMNS`, else the terminal's width, else wide: a table in a CI log or a file keeps
    /// every column and whole paths, whatever the data.
    var tableWidth: Int {
        if let width { return width }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 20 { return columns }
        var size = winsize()
        if isatty(1) != 0, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 1 << 40
    }
}

/// Writes `text` to `path`, or to stdout without one; exits 3 when the file cannot be written.
func writeText(_ text: String, to path: String?) throws {
    guard let path else {
        print(text, terminator: "")
        return
    }
    let file = try openForWriting(path)
    fputs(text, file)
    try closeOutput(file, path)
}

/// A full disk or a failing device shows up as a stream error or at close: exit 3 rather than leave a cut file.
func closeOutput(_ file: UnsafeMutablePointer<FILE>, _ path: String) throws {
    let failed = ferror(file) != 0
    if fclose(file) != 0 || failed {
        printError("traffic: \(path): cannot write: \(String(cString: strerror(errno)))")
        throw ExitCode(inputErrorCode)
    }
}

private func openForWriting(_ path: String) throws -> UnsafeMutablePointer<FILE> {
    guard let file = fopen(path, "w") else {
        printError("traffic: \(path): cannot write: \(String(cString: strerror(errno)))")
        throw ExitCode(inputErrorCode)
    }
    return file
}

/// Writes one line to stderr (unbuffered, so it interleaves correctly with progress output).
func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
