import Foundation
import Testing

/// Runs the built `traffic` binary and reads the committed expectations.
enum Harness {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let samples = packageRoot.appendingPathComponent("samples")
    /// Zeek's public test traces beside the project; absent in a user's fresh clone.
    static let corpus = packageRoot.appendingPathComponent("../shared/corpus/zeek").standardizedFileURL

    /// `TRAFFIC_TEST_BINARY` runs the suite against another build, e.g. the release binary with its profile and
    /// link-time optimization (`make build`), which the debug build of `make test` does not exercise.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["TRAFFIC_TEST_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        for configuration in ["debug", "release"] {
            let url = packageRoot.appendingPathComponent(".build/\(configuration)/traffic")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return packageRoot.appendingPathComponent(".build/debug/traffic")
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var signalled: Bool
    }

    static func run(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        var env = ProcessInfo.processInfo.environment
        env["COLUMNS"] = "80"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // Read before waiting: a full pipe would block the child.
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self),
            signalled: process.terminationReason == .uncaughtSignal)
    }

    static func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    /// RFC 4180 rows as dictionaries keyed by the header row.
    static func csv(_ text: String) -> [[String: String]] {
        let rows = parseCSV(text)
        guard let header = rows.first else { return [] }
        return rows.dropFirst().map { row in
            Dictionary(uniqueKeysWithValues: zip(header, row + Array(repeating: "", count: max(0, header.count - row.count))))
        }
    }

    static func parseCSV(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var iterator = Array(text).makeIterator()
        var pending: Character? = nil
        while let c = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(field); field = ""
            } else if c == "\n" || c == "\r\n" {
                row.append(field); field = ""
                rows.append(row); row = []
            } else if c != "\r" {
                field.append(c)
            }
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }

    /// Capture files in samples/ and the name of their expected folder: dots become dashes, `-pcap` at the end goes.
    static func sampleCaptures() -> [(file: String, expected: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []
        return names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".gz") }
            // TLS samples have suites of their own: TLSReportTests (no keys), HTTPSReportTests (with keys);
            // so do the HTTP/2 samples (issue 22: expected/http2-NAME/records.csv, samples/README.md).
            // QUIC too (issue 23: expected/quic-NAME/*.csv, QUICReportTests).
            .filter { !$0.hasPrefix("tls-") && !$0.hasPrefix("https-") && !$0.hasPrefix("http2-") && !$0.hasPrefix("quic-") }
            .sorted()
            .map { name in
                var expected = name.replacingOccurrences(of: ".", with: "-")
                if expected.hasSuffix("-pcap") { expected.removeLast(5) }
                return ("samples/" + name, expected)
            }
    }

    /// HTTPS samples with their key log (nil for a pcapng that carries its secrets) and expected folder.
    static func httpsSamples() -> [(file: String, keyLog: String?, expected: String)] { keyedSamples(prefix: "https-") }

    /// QUIC samples with their key log (nil without one: a keyless capture, or a pcapng that carries its
    /// secrets) and expected folder.
    static func quicSamples() -> [(file: String, keyLog: String?, expected: String)] { keyedSamples(prefix: "quic-") }

    /// Captures named `PREFIX…` with the key log beside them (`NAME.keys`), if any, and their expected folder.
    static func keyedSamples(prefix: String) -> [(file: String, keyLog: String?, expected: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && ($0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng")) }.sorted().map {
            name in
            var expected = name.replacingOccurrences(of: ".", with: "-")
            if expected.hasSuffix("-pcap") { expected.removeLast(5) }
            let base = name.hasSuffix(".pcapng") ? String(name.dropLast(7)) : String(name.dropLast(5))
            let keys = "samples/\(base).keys"
            let hasKeys = FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(keys).path)
            return ("samples/" + name, hasKeys ? keys : nil, expected)
        }
    }

    /// Runs `python3 SCRIPT ARGUMENTS` from the package root (a checking script of scripts/); its exit status and
    /// its stdout and stderr together.
    static func runPython(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", packageRoot.appendingPathComponent(script).path] + arguments
        process.currentDirectoryURL = packageRoot
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Whether `python3 -c "import MODULES"` succeeds (optional test tools: Playwright, jsonschema, haralyzer).
    static func pythonCanImport(_ modules: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import \(modules)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus == 0
        } catch {
            return false
        }
    }

    static func corpusTraces() -> [String] {
        let traces = corpus.appendingPathComponent("traces")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: traces.path)) ?? []
        return names.sorted()
    }

    static func corpusName(_ trace: String) -> String {
        for suffix in [".pcap.gz", ".pcapng", ".pcap"] where trace.hasSuffix(suffix) { return String(trace.dropLast(suffix.count)) }
        return trace
    }
}
