import Foundation
import Testing

/// `traffic analyze` end to end: committed expected outputs, internal consistency, CSV read back by
/// Python's csv module, table width, exit codes and messages.
@Suite struct AnalyzeReportTests {
    /// Set TRAFFIC_RECORD=1 to rewrite the expected files; the run still fails so a recording never passes silently.
    static let recording = ProcessInfo.processInfo.environment["TRAFFIC_RECORD"] == "1"

    static let goldenSamples = Harness.sampleCaptures().filter { !$0.file.contains("truncated") }.map(\.file)

    func golden(_ capture: String, _ arguments: [String], file: String) throws {
        let name = Harness.sampleCaptures().first { $0.file == capture }!.expected
        let url = Harness.samples.appendingPathComponent("expected/\(name)/\(file)")
        let result = try Harness.run(["analyze"] + arguments + [capture])
        #expect(result.status == 0, "\(capture): \(result.stderr)")
        if Self.recording {
            try result.stdout.write(to: url, atomically: true, encoding: .utf8)
            Issue.record("recorded \(url.path); unset TRAFFIC_RECORD and run again")
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(result.stdout == expected, "\(capture) \(arguments): output differs from \(file)")
    }

    @Test(arguments: goldenSamples)
    func committedOutputs(capture: String) throws {
        try golden(capture, ["--format", "csv"], file: "analyze.csv")
        try golden(capture, ["--format", "json", "--messages"], file: "analyze.json")
    }

    @Test(arguments: goldenSamples)
    func groupTotalsAreSumsOfRecords(capture: String) throws {
        let result = try Harness.run(["analyze", "--format", "json", "--messages", capture])
        let json = try Harness.json(result.stdout)
        let groups = try #require(json["groups"] as? [[String: Any]])
        let messages = try #require(json["messages"] as? [[String: Any]])
        for group in groups {
            let members = messages.filter { $0["host"] as? String == group["host"] as? String && $0["path"] as? String == group["path"] as? String }
            func sum(_ kind: String, _ field: String) -> Int {
                members.filter { $0["kind"] as? String == kind }.reduce(0) { $0 + (($1[field] as? Int) ?? 0) }
            }
            let label = "\(capture) \(group["path"] ?? "")"
            #expect(group["requests"] as? Int == members.filter { $0["kind"] as? String == "request" }.count, "\(label)")
            #expect(group["responses"] as? Int == members.filter { $0["kind"] as? String == "response" }.count, "\(label)")
            for (side, kind) in [("request", "request"), ("response", "response")] {
                #expect(group["\(side)_bytes"] as? Int == sum(kind, "transfer_bytes"), "\(label) \(side)_bytes")
                for field in ["line_bytes", "header_bytes", "cookie_bytes", "body_bytes", "decoded_body_bytes"] {
                    #expect(group["\(side)_\(field)"] as? Int == sum(kind, field), "\(label) \(side)_\(field)")
                }
                // HTTP/2's decoded header sizes: the sum over the records that have one, null when none has.
                let decoded = members.filter { $0["kind"] as? String == kind }.compactMap { $0["header_decoded_bytes"] as? Int }
                let column = group["\(side)_header_decoded_bytes"]
                if decoded.isEmpty {
                    #expect(column is NSNull, "\(label) \(side)_header_decoded_bytes")
                } else {
                    #expect(column as? Int == decoded.reduce(0, +), "\(label) \(side)_header_decoded_bytes")
                }
            }
            #expect(group["h2_control_bytes"] as? Int == sum("request", "h2_control_bytes") + sum("response", "h2_control_bytes"))
            #expect(group["total_bytes"] as? Int == sum("request", "transfer_bytes") + sum("response", "transfer_bytes"))
        }
    }

    @Test func csvReadsBackInPython() throws {
        let capture = "samples/http-basic.pcap"
        let csv = try Harness.run(["analyze", "--format", "csv", capture]).stdout
        let json = try Harness.json(try Harness.run(["analyze", "--format", "json", capture]).stdout)
        let groups = try #require(json["groups"] as? [[String: Any]])
        let script = """
            import csv, json, sys
            rows = list(csv.DictReader(sys.stdin))
            print(json.dumps([{k: (int(v) if v.isdigit() else v) for k, v in r.items()} for r in rows]))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(csv.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let rows = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(rows.count == groups.count)
        for (row, group) in zip(rows, groups) {
            for (key, value) in group {
                if let number = value as? Int {
                    #expect(row[key] as? Int == number, "\(key)")
                } else if value is NSNull {
                    // JSON's null is an empty CSV cell (a decoded header size no HTTP/1 group has, a missing wait).
                    #expect(row[key] as? String == "", "\(key)")
                } else if let seconds = value as? Double {
                    // Decimal seconds (the wait columns): the same number in both.
                    #expect((row[key] as? String).flatMap(Double.init) == seconds, "\(key)")
                } else {
                    #expect(row[key] as? String == value as? String, "\(key)")
                }
            }
        }
    }

    @Test(arguments: goldenSamples)
    func tableFitsEightyColumns(capture: String) throws {
        for extra in [[], ["--messages"], ["--group-by", "host,path,method,status"]] {
            let result = try Harness.run(["analyze"] + extra + [capture])
            for line in result.stdout.split(separator: "\n") {
                #expect(line.count <= 80, "\(capture) \(extra): \(line.count) columns: \(line)")
            }
            #expect(!result.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
        }
    }

    @Test func exitCodesAndMessages() throws {
        let missing = try Harness.run(["analyze", "samples/no-such-file.pcap"])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("samples/no-such-file.pcap") && missing.stderr.contains("No such file"))
        let notCapture = try Harness.run(["analyze", "README.md"])
        #expect(notCapture.status == 3)
        #expect(notCapture.stderr.contains("README.md: not a pcap or pcapng capture"))
        let usage = try Harness.run(["analyze", "--group-by", "colour", "samples/http-basic.pcap"])
        #expect(usage.status == 2)
        let badFilter = try Harness.run(["analyze", "--filter", "tcp port", "samples/http-basic.pcap"])
        // A filter that does not compile is a usage error, found before the capture is read.
        #expect(badFilter.status == 2 && badFilter.stderr.contains("invalid filter"))
        // A full device: the report could not be written, which is an error, not a cut file and exit 0.
        let full = try Harness.run(["analyze", "-o", "/dev/full", "samples/http-basic.pcap"])
        #expect(full.status == 3 && full.stderr.contains("/dev/full: cannot write"))
        // The same on stdout (written through a stream of its own): it used to exit 0 with the report lost.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "exec \"$0\" analyze samples/http-basic.pcap > /dev/full", Harness.binary.path]
        shell.currentDirectoryURL = Harness.packageRoot
        let shellError = Pipe()
        shell.standardError = shellError
        try shell.run()
        let shellMessage = String(decoding: shellError.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 3 && shellMessage.contains("traffic: stdout: cannot write"))
        let truncated = try Harness.run(["analyze", "samples/http-segments-truncated.pcap"])
        #expect(truncated.status == 0)
        #expect(truncated.stderr.contains("capture damaged at byte offset"))
        let help = try Harness.run(["analyze", "--help"])
        #expect(help.status == 0 && help.stdout.contains("Examples:"))
        let version = try Harness.run(["--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty)
    }

    @Test func stdinAndGzipGiveTheSameReport() throws {
        let plain = try Harness.run(["analyze", "--format", "csv", "samples/http-basic.pcap"]).stdout
        let gzip = try Harness.run(["analyze", "--format", "csv", "samples/http-basic.pcap.gz"]).stdout
        let data = try Data(contentsOf: Harness.samples.appendingPathComponent("http-basic.pcap.gz"))
        let stdin = try Harness.run(["analyze", "--format", "csv", "-"], stdin: data).stdout
        #expect(plain == gzip && gzip == stdin && !plain.isEmpty)
    }

    @Test func filtersAndNormalization() throws {
        let onlyIndex = try Harness.run(["analyze", "--format", "json", "--path", "/index*", "samples/http-basic.pcap"])
        let groups = try #require(try Harness.json(onlyIndex.stdout)["groups"] as? [[String: Any]])
        #expect(groups.map { $0["path"] as? String } == ["/index.html"])
        let bpf = try Harness.run(["analyze", "--format", "json", "--filter", "tcp port 9", "samples/http-basic.pcap"])
        #expect(try #require(try Harness.json(bpf.stdout)["summary"] as? [String: Any])["requests"] as? Int == 0)
        let byStatus = try Harness.run(["analyze", "--format", "csv", "--group-by", "status", "samples/http-basic.pcap"])
        #expect(byStatus.stdout.hasPrefix("status,requests,responses,"))
    }
}

/// `--verify-checksums` counts what tshark's checksum validation flags
/// (`tshark -o tcp.check_checksum:TRUE -Y 'tcp.checksum.status==0'`).
@Suite struct ChecksumTests {
    func anomalies(_ capture: String) throws -> [String: Int] {
        let result = try Harness.run(["analyze", "--verify-checksums", "--format", "json", capture])
        let summary = try #require(try Harness.json(result.stdout)["summary"] as? [String: Any])
        return summary["anomalies"] as? [String: Int] ?? [:]
    }

    @Test func loopbackCaptureHasUnfilledChecksums() throws {
        // All 25 frames were captured on the sending host with checksum offload: tshark flags 25 bad TCP checksums.
        #expect(try anomalies("samples/http-basic.pcap")["bad_tcp_checksum"] == 25)
        let result = try Harness.run(["analyze", "--verify-checksums", "samples/http-basic.pcap"])
        #expect(result.status == 0 && result.stderr.contains("25 bad checksums"))
    }

    @Test func correctChecksumsPass() throws {
        // Written with valid checksums by make-malformed.py; tshark: 12 of 12 good.
        #expect(try anomalies("samples/malformed/overlap-conflict.pcap")["bad_tcp_checksum"] == nil)
        // Off by default: nothing is counted.
        let plain = try Harness.run(["analyze", "--format", "json", "samples/http-basic.pcap"])
        let summary = try #require(try Harness.json(plain.stdout)["summary"] as? [String: Any])
        #expect((summary["anomalies"] as? [String: Int])?["bad_tcp_checksum"] == nil)
    }

    @Test(.enabled(if: !Harness.corpusTraces().isEmpty, "../shared/corpus is absent"))
    func ipv6PseudoHeader() throws {
        // tshark: 4 bad of 36 TCP checksums in this IPv6 trace, 0 of 14 in get.pcap.
        #expect(try anomalies(Harness.corpus.appendingPathComponent("traces/ipv6-http-atomic-frag.pcap").path)["bad_tcp_checksum"] == 4)
        #expect(try anomalies(Harness.corpus.appendingPathComponent("traces/get.pcap").path)["bad_tcp_checksum"] == nil)
    }
}
