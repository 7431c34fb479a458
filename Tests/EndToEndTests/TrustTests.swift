import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Issue 19: the first hour of a new user. A check that compared nothing never passes; damage is in every
/// check format; hostile timestamps never trap in any format; scope is stated; the table holds its shape
/// off a terminal.
@Suite final class TrustTests {
    static let base = "samples/check-base.pcap"
    static let malformed = "samples/malformed/"

    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("traffic-trust-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func baseline(_ capture: String = base, _ extra: [String] = []) throws -> String {
        let file = path("baseline-\(UUID().uuidString).json")
        let result = try Harness.run(["baseline", capture, "-o", file] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return file
    }

    // MARK: nothing compared

    @Test func emptyCaptureFailsTheCheck() throws {
        let result = try Harness.run(["check", Self.malformed + "header-only.pcap", "--baseline", try baseline()])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Nothing compared: the captures hold no HTTP"))
        #expect(result.stdout.contains("Compared 0 endpoints; 0 new, 5 missing"))
        #expect(result.stdout.hasSuffix("FAILED: the captures hold no HTTP\n"))
        let allowed = try Harness.run(
            ["check", Self.malformed + "header-only.pcap", "--baseline", try baseline(), "--allow-empty"])
        #expect(allowed.status == 0, "\(allowed.stdout)")
    }

    @Test func filterThatMatchesNothingFailsTheCheck() throws {
        let result = try Harness.run(["check", Self.base, "--baseline", try baseline(), "--filter", "tcp port 9"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAILED: the captures hold no HTTP"))
    }

    /// A capture of another application: HTTP, but none of the baseline's endpoints.
    @Test func unrelatedCaptureFailsTheCheck() throws {
        let result = try Harness.run(["check", "samples/http-basic.pcap", "--baseline", try baseline(), "--format", "json"])
        #expect(result.status == 1)
        let json = try Harness.json(result.stdout)
        #expect(json["passed"] as? Bool == false)
        #expect(json["compared"] as? Int == 0)
        #expect(json["new"] as? Int == 6)
        #expect(json["missing"] as? Int == 5)
        #expect(json["nothing_compared"] as? String == "no endpoint of the baseline was found in the captures")
        #expect((json["run_failures"] as? [String])?.first?.hasPrefix("no endpoint of the baseline was found") == true)
    }

    /// TLS without keys holds no HTTP that can be compared; the reason names what it does hold.
    @Test func tlsOnlyCaptureSaysWhatItHolds() throws {
        let result = try Harness.run(["check", "samples/tls-v13-h2.pcap", "--baseline", try baseline()])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAILED: the captures hold no HTTP (1 of 1 TLS connection not decrypted: 1 no key"))
        #expect(result.stderr.contains("note: 1 of 1 TLS connection not decrypted: 1 no key; give the secrets with --keylog FILE"))
    }

    @Test func emptyBaselineIsRefused() throws {
        let refused = try Harness.run(["baseline", Self.malformed + "header-only.pcap", "-o", path("empty.json")])
        #expect(refused.status == 3)
        #expect(refused.stderr.hasPrefix("traffic: the captures hold no HTTP: refusing to write an empty baseline"))
        #expect(!FileManager.default.fileExists(atPath: path("empty.json")))
        let allowed = try Harness.run(["baseline", Self.malformed + "header-only.pcap", "--allow-empty"])
        #expect(allowed.status == 0)
        #expect(try Harness.json(allowed.stdout)["groups"] as? [Any] != nil)
        // A baseline written with --allow-empty still does not let a check pass vacuously.
        let file = path("allowed.json")
        try allowed.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let check = try Harness.run(["check", Self.base, "--baseline", file])
        #expect(check.status == 1)
        #expect(check.stdout.contains("FAILED: no endpoint of the baseline was found in the captures"))
    }

    @Test func budgetRuleThatMatchesNothing() throws {
        let budget = path("budget.yml")
        try """
            budgets:
              - path: "/api/*"
                max_response_bytes: 1MiB
              - path: "/v2/*"
                max_response_bytes: 1KiB
            """.write(toFile: budget, atomically: true, encoding: .utf8)
        let lenient = try Harness.run(["check", Self.base, "--budget", budget])
        #expect(lenient.status == 0, "\(lenient.stdout)")
        #expect(lenient.stdout.contains("Budget: budget rule 2 (host \"*\", path \"/v2/*\") matched nothing"))
        let strict = try Harness.run(["check", Self.base, "--budget", budget, "--strict-budget"])
        #expect(strict.status == 1)
        #expect(strict.stdout.contains("FAILED: 1 failure (1 budget rule that matched nothing) in 5 endpoints"))
        // No rule matched at all: nothing was checked.
        try "budgets:\n  - host: nowhere.test\n    max_requests: 1\n".write(toFile: budget, atomically: true, encoding: .utf8)
        let none = try Harness.run(["check", Self.base, "--budget", budget])
        #expect(none.status == 1)
        #expect(none.stdout.contains("FAILED: no endpoint matched any budget rule"))
    }

    // MARK: damage

    /// record-past-eof.pcap: the good connection of make-malformed.py, then a record cut by the file's end.
    @Test func damagedCaptureFailsInEveryFormat() throws {
        let good = try baseline(Self.malformed + "timestamps-zero.pcap")  // the same two exchanges, undamaged
        let capture = Self.malformed + "record-past-eof.pcap"
        let reason = "capture damaged at byte offset 4129"
        let junit = path("check.xml"), markdown = path("check.md"), json = path("check.json")
        let table = try Harness.run([
            "check", capture, "--baseline", good, "--junit", junit, "--markdown", markdown, "--json", json,
        ])
        #expect(table.status == 1)
        #expect(table.stdout.contains("Damage: \(capture): \(reason)"))
        // /ok/1 and /ok/2 are one endpoint once paths are normalized (/ok/{id}).
        #expect(table.stdout.contains("FAILED: 1 failure (1 damage finding) in 1 endpoint\n"))
        #expect(try String(contentsOfFile: markdown, encoding: .utf8).hasPrefix("### ❌ traffic check failed"))
        #expect(try String(contentsOfFile: markdown, encoding: .utf8).contains(reason))
        let report = try Harness.json(String(contentsOfFile: json, encoding: .utf8))
        #expect(report["passed"] as? Bool == false)
        #expect((report["damage"] as? [String])?.first?.contains(reason) == true)
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("<error type=\"traffic.check\""))
        #expect(xml.contains("errors=\"1\""))
        let counter = XMLCounter()
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: junit)))
        parser.delegate = counter
        #expect(parser.parse())
        #expect(counter.counts["testcase"] == 2)  // the run, and the endpoint
        let allowed = try Harness.run(["check", capture, "--baseline", good, "--allow-damaged"])
        #expect(allowed.status == 0, "\(allowed.stdout)")
        #expect(allowed.stdout.contains("Damage: \(capture): \(reason)"))
    }

    /// http-segments-truncated.pcap ends inside the 12 000-byte body of /file-12k.txt: that response is
    /// cut short, so its endpoint is not compared (it would read as a large decrease), and the check fails.
    @Test func messageCutShortIsNeverComparedAsWhole() throws {
        let whole = try baseline("samples/http-segments.pcap")
        let cut = "samples/http-segments-truncated.pcap"
        let result = try Harness.run(["check", cut, "--baseline", whole, "--format", "json"])
        #expect(result.status == 1)
        let json = try Harness.json(result.stdout)
        let groups = try #require(json["groups"] as? [[String: Any]])
        let data = try #require(groups.first { ($0["path"] as? String)?.contains("file-12k") == true })
        #expect(data["compared"] as? Bool == false)
        #expect((data["fields"] as? [Any])?.isEmpty == true)
        #expect(json["not_compared"] as? Int == 1)
        #expect((json["damage"] as? [String])?.contains { $0.hasPrefix("1 message cut short") } == true)
        // The only endpoint found was cut short: allowing the damage still leaves nothing compared.
        let damaged = try Harness.run(["check", cut, "--baseline", whole, "--allow-damaged"])
        #expect(damaged.status == 1)
        #expect(damaged.stdout.contains("FAILED: no endpoint of the baseline could be compared: each one found holds a message cut short"))
        let table = try Harness.run(
            ["check", cut, "--baseline", whole, "--allow-damaged", "--allow-empty"], environment: ["COLUMNS": "200"])
        #expect(table.status == 0, "\(table.stdout)")
        #expect(table.stdout.contains("(cut short: not compared)"))
        // The temporary baseline's name is random: look at the rows only.
        let rows = table.stdout.split(separator: "\n").filter { $0.contains("/file-12k.txt") || $0.contains("/index.html") }
        #expect(rows.count == 2)
        #expect(!rows.contains { $0.contains("-99") })
        #expect(table.stdout.hasSuffix(
            "PASSED (--allow-empty): no endpoint of the baseline could be compared: each one found holds a message cut short\n"))
    }

    // MARK: several formats in one run

    @Test func checkWritesSeveralFormatsInOneRun() throws {
        let base = try baseline()
        let markdown = path("a.md"), junit = path("b.xml"), json = path("c.json")
        let result = try Harness.run([
            "check", Self.base, "--baseline", base, "--fail-on-missing", "--format", "markdown", "-o", markdown,
            "--junit", junit, "--json", json,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "traffic check: PASSED: 5 endpoints within budget\n")
        #expect(try String(contentsOfFile: markdown, encoding: .utf8).hasPrefix("### ✅ traffic check passed"))
        #expect(try String(contentsOfFile: junit, encoding: .utf8).contains("tests=\"6\" failures=\"0\" errors=\"0\""))
        let report = try Harness.json(String(contentsOfFile: json, encoding: .utf8))
        #expect(report["compared"] as? Int == 5)
        #expect(report["passed"] as? Bool == true)
    }

    // MARK: hostile timestamps

    /// The earliest and latest timestamp of a classic little-endian microsecond pcap, read from its record
    /// headers here (not through libpcap), as seconds and microseconds.
    static func span(_ file: String) throws -> (first: (Int, Int), last: (Int, Int)) {
        let data = try [UInt8](Data(contentsOf: Harness.packageRoot.appendingPathComponent(file)))
        func u32(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24 }
        var offset = 24
        var stamps: [(Int, Int)] = []
        while offset + 16 <= data.count {
            stamps.append((u32(offset), u32(offset + 4)))
            offset += 16 + u32(offset + 8)
        }
        let sorted = stamps.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return (sorted.first!, sorted.last!)
    }

    static func decimal(_ stamp: (Int, Int)) -> String { "\(stamp.0).\(String(format: "%06d", stamp.1))000" }

    static let hostile = ["backwards", "zero", "max", "jump-back", "jump-forward"].map { "timestamps-\($0).pcap" }

    static let outputs: [[String]] = [
        ["analyze"], ["analyze", "--format", "csv"], ["analyze", "--format", "json"],
        ["analyze", "--messages"], ["analyze", "--messages", "--format", "csv"], ["analyze", "--messages", "--format", "json"],
        ["analyze", "--overhead", "all", "--per-capture"], ["analyze", "--sort", "decoded", "--width", "60"],
        ["connections"], ["connections", "--format", "csv"], ["connections", "--format", "json"],
        ["baseline"],
    ]

    @Test(arguments: hostile)
    func hostileTimestampsNeverTrap(file: String) throws {
        let capture = Self.malformed + file
        for output in Self.outputs {
            let result = try Harness.run(output + [capture], environment: ["COLUMNS": "100"])
            MalformedInputTests.expectClean(result, "\(file) \(output)")
            #expect(result.status == 0, "\(file) \(output): \(result.stderr)")
            #expect(!result.stdout.contains("-0."), "\(file) \(output): a negative time")
        }
        let base = try baseline(capture)
        for format in ["table", "markdown", "json", "junit"] {
            let check = try Harness.run(["check", capture, "--baseline", base, "--format", format])
            MalformedInputTests.expectClean(check, "\(file) check \(format)")
            #expect(check.status == 0, "\(file) check \(format): \(check.stdout)")
        }
        let diff = try Harness.run(["diff", capture, capture])
        #expect(diff.status == 0)
        // Both exchanges of each connection survive whatever the clock did.
        let json = try Harness.json(try Harness.run(["analyze", "--messages", "--format", "json", capture]).stdout)
        let records = try #require(json["messages"] as? [[String: Any]])
        let connections = file == "timestamps-backwards.pcap" ? 2 : 1
        #expect(records.count == 4 * connections)
        #expect(records.allSatisfy { $0["complete"] as? Bool == true })
        // The capture span runs from the earliest to the latest timestamp of the file's records.
        let (first, last) = try Self.span(capture)
        let summary = try #require((json["captures"] as? [[String: Any]])?.first)
        let text = try Harness.run(["analyze", "--format", "json", capture]).stdout
        #expect(text.contains("\"start\": \(Self.decimal(first))"), "\(file)")
        #expect(text.contains("\"end\": \(Self.decimal(last))"), "\(file)")
        let micros = (last.0 - first.0) * 1_000_000 + last.1 - first.1
        #expect(text.contains("\"duration\": \(micros / 1_000_000).\(String(format: "%06d", micros % 1_000_000))000"), "\(file)")
        let backwards = ["timestamps-backwards.pcap": 1, "timestamps-jump-back.pcap": 1, "timestamps-jump-forward.pcap": 0][file] ?? 0
        #expect(summary["backward_timestamps"] as? Int == backwards)
    }

    @Test func backwardTimestampsWarnOnceAndAreAnAnomaly() throws {
        let file = Self.malformed + "timestamps-backwards.pcap"
        let result = try Harness.run(["analyze", "--format", "json", file])
        #expect(result.stderr == "warning: \(file): 1 packet is timestamped earlier than the packet before (files "
            + "joined out of order, or a damaged record?); the capture span runs from the earliest to the latest timestamp\n")
        let anomalies = (try Harness.json(result.stdout)["summary"] as? [String: Any])?["anomalies"] as? [String: Any]
        #expect(anomalies?["timestamp_backwards"] as? Int == 1)
        // 2024-01-01 00:00:00.001 to 00:01:40.012 less float rounding in the generator: see span(_:).
        let table = try Harness.run(["analyze", file])
        #expect(table.stdout.contains("capture span 100.01"))
    }

    // MARK: scope

    /// h2c-two-connections.pcap: one connection with prior knowledge (preface first), one upgraded from
    /// HTTP/1.1 with `101 Switching Protocols` (the GET and the 101 are HTTP/1 records of stream 1). Until
    /// issue 22 these were named as not analysed; now both are read as HTTP/2: each direction carries only a
    /// preface and an empty SETTINGS (client 24 + 9, server 9, from `tshark -z follow,tcp,hex`), which are
    /// control bytes, and nothing is left unanalysed.
    @Test func cleartextHTTP2IsRead() throws {
        let file = Self.malformed + "h2c-two-connections.pcap"
        let result = try Harness.run(["analyze", "--format", "json", "--messages", file])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let json = try Harness.json(result.stdout)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["http2_connections"] as? Int == 2)
        #expect(summary["h2_control_bytes"] as? Int == 2 * (33 + 9))
        #expect(summary["requests"] as? Int == 1)
        #expect(summary["non_http_bytes"] as? Int == 0)
        #expect((summary["not_analysed"] as? [Any])?.isEmpty == true)
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.map { $0["stream_id"] as? Int } == [1, 1])
        #expect(messages.map { $0["status"] as? Int } == [101, 101])
    }

    @Test func tlsWithoutKeysIsNamed() throws {
        let result = try Harness.run(["analyze", "--format", "json", "samples/tls-v12-h2.pcap"])
        let summary = try #require(try Harness.json(result.stdout)["summary"] as? [String: Any])
        let notes = try #require(summary["not_analysed"] as? [[String: Any]])
        #expect(notes.map { $0["kind"] as? String } == ["tls"])
        // TLS 1.2 sends the server's ALPN choice in the clear (ServerHello): h2 here.
        #expect(summary["tls_http2_connections"] as? Int == 1)
        #expect(result.stderr.contains("1 of 1 TLS connection not decrypted: 1 no key; 1 HTTP/2 by ALPN; give the "
            + "secrets with --keylog FILE; its bytes are counted per server in (tls) rows"))
    }

    // MARK: the table off a terminal

    /// Without a terminal and without COLUMNS the table keeps every column and whole paths.
    @Test func tableOffATerminalDropsNothing() throws {
        let wide = try Harness.run(["analyze", "samples/http-basic.pcap"], environment: ["COLUMNS": ""])
        let header = try #require(wide.stdout.split(separator: "\n").first)
        #expect(header.split(separator: " ", omittingEmptySubsequences: true) == [
            "host", "path", "reqs", "sent", "received", "resp/req", "head", "cookies", "decoded", "saved", "total",
        ])
        // The legend explains each shown column.
        for title in ["reqs:", "resp/req:", "decoded:", "saved:", "total:"] { #expect(wide.stdout.contains(title)) }
        // Narrow: the optional columns go, and the legend no longer explains them.
        let narrow = try Harness.run(["analyze", "--width", "60", "samples/http-basic.pcap"])
        let titles = try #require(narrow.stdout.split(separator: "\n").first).split(separator: " ")
        #expect(!titles.contains("resp/req") && !titles.contains("saved"))
        #expect(!narrow.stdout.contains("resp/req:") && !narrow.stdout.contains("saved:"))
        for line in narrow.stdout.split(separator: "\n") { #expect(line.count <= 60, "\(line)") }
    }

    /// http-basic.pcap: /index.html received 1217 B over 3 responses (samples/expected/http-basic, checked
    /// against tshark there): 405 B per response, rounded down; decoded 0 + 515 B of bodies.
    @Test func perResponseAndDecodedColumns() throws {
        let result = try Harness.run(["analyze", "--bytes", "samples/http-basic.pcap"], environment: ["COLUMNS": ""])
        let row = try #require(result.stdout.split(separator: "\n").first { $0.contains("/index.html") })
        let cells = row.split(separator: " ")
        #expect(cells[4] == "1217" && cells[5] == "405" && cells[8] == "515", "\(row)")
    }

    @Test func sortingByAColumnShowsIt() throws {
        let result = try Harness.run(["analyze", "--sort", "decoded", "--width", "60", "samples/http-basic.pcap"])
        let titles = try #require(result.stdout.split(separator: "\n").first).split(separator: " ")
        #expect(titles.contains("decoded"))
        #expect(result.stdout.contains("decoded:"))
    }

    @Test func pluralsAreRight() throws {
        let result = try Harness.run(["analyze", "samples/tls-v13-h2.pcap"], environment: ["COLUMNS": ""])
        #expect(result.stdout.contains("1 capture, 19 packets"))
        #expect(result.stdout.contains("1 TCP connection, 0 with HTTP"))
        #expect(result.stdout.contains("1 group; 0 requests, 0 responses"))
        let connections = try Harness.run(["connections", "samples/tls-v13-h2.pcap"])
        #expect(connections.stdout.contains("1 connection, 19 packets"))
    }

    // MARK: help and usage

    @Test func usageErrors() throws {
        let typo = try Harness.run(["chek", Self.base])
        #expect(typo.status == 2)
        #expect(typo.stderr.hasPrefix("Error: unknown subcommand 'chek'; did you mean 'check'?"))
        let capture = try Harness.run([Self.base])
        #expect(capture.status == 2)
        #expect(capture.stderr.hasPrefix("Error: unknown subcommand '\(Self.base)'; to analyse a capture: traffic analyze"))
        for command in [["analyze"], ["connections"], ["baseline"], ["check", "--budget", "x.yml"]] {
            let filter = try Harness.run(command + ["--filter", "tcp prt", Self.base])
            #expect(filter.status == 2, "\(command)")
            #expect(filter.stderr.hasPrefix("Error: invalid filter 'tcp prt'"), "\(command): \(filter.stderr)")
        }
        for command in ["check", "baseline", "diff", "analyze"] {
            let help = try Harness.run([command, "--help"])
            #expect(!help.stdout.contains("docs/"), "\(command) --help names a file that does not exist")
        }
        let diffHelp = try Harness.run(["diff", "--help"])
        #expect(!diffHelp.stdout.contains("junit"), "diff --help offers junit, which diff refuses")
    }
}
