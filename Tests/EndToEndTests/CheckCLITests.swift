import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `traffic baseline|check|diff` on the recorded API session: samples/check-larger.pcap is
/// samples/check-base.pcap with GET /api/items grown from 2000 to 3000 body bytes (+1000 B: response
/// bytes 2134 → 3134, +46.9%; decoded body +50.0%), a new /api/recommendations, and 5 polls of
/// /api/status instead of 3 (see samples/make-check-samples.sh).
@Suite final class CheckCLITests {
    static let base = "samples/check-base.pcap"
    static let larger = "samples/check-larger.pcap"

    /// A fresh temporary directory per test.
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("traffic-check-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// Each test's directory goes with it (a suite instance per test).
    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Writes the baseline of check-base.pcap and returns its path.
    func baseline() throws -> String {
        let file = path("traffic-baseline.json")
        let result = try Harness.run(["baseline", Self.base, "-o", file])
        #expect(result.status == 0, "\(result.stderr)")
        return file
    }

    func check(_ arguments: [String]) throws -> Harness.Result {
        try Harness.run(["check", Self.larger, "--baseline", try baseline()] + arguments, environment: Self.wide)
    }

    /// Wide enough that no path is shortened in the tables.
    static let wide = ["COLUMNS": "200"]

    // MARK: baseline

    @Test func baselineIsByteIdenticalEveryTime() throws {
        let first = try baseline()
        let second = path("again.json")
        #expect(try Harness.run(["baseline", Self.base, "-o", second]).status == 0)
        let stdout = try Harness.run(["baseline", Self.base])
        let a = try Data(contentsOf: URL(fileURLWithPath: first)), b = try Data(contentsOf: URL(fileURLWithPath: second))
        #expect(a == b)
        #expect(Data(stdout.stdout.utf8) == a)
    }

    @Test func baselineHoldsNormalizedGroupsWithAverages() throws {
        let json = try Harness.json(String(contentsOfFile: try baseline(), encoding: .utf8))
        #expect(json["schema"] as? String == "traffic.baseline/1")
        let groups = try #require(json["groups"] as? [[String: Any]])
        #expect(groups.map { $0["path"] as? String } == [
            "/api/config", "/api/events", "/api/items", "/api/status", "/api/users/{id}",
        ])
        let items = groups[2]
        #expect(items["response_bytes"] as? Int == 2134)
        #expect(items["response_decoded_body_bytes"] as? Int == 2000)
        #expect(items["request_cookie_bytes"] as? Int == 50)
        let status = try #require(groups[3]["per_request"] as? [String: Any])
        #expect(status["response_bytes"] as? Double == 253.0)  // 759 B over 3 polls
    }

    @Test func baselineOfAnUnreadableCapture() throws {
        let result = try Harness.run(["baseline", "samples/no-such.pcap"])
        #expect(result.status == 3)
        #expect(result.stderr == "traffic: samples/no-such.pcap: cannot open: No such file or directory\n")
    }

    // MARK: check against a baseline

    @Test func sameRunPasses() throws {
        let result = try Harness.run(["check", Self.base, "--baseline", try baseline(), "--fail-on-new", "--fail-on-missing"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("No changes"))
        #expect(result.stdout.hasSuffix("PASSED: 5 endpoints within budget\n"))
    }

    @Test func largerResponseFails() throws {
        let result = try check([])
        #expect(result.status == 1)
        let failing = result.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL  ") }
        #expect(failing.count == 2)
        #expect(failing.allSatisfy { $0.contains("/api/items") })
        #expect(failing[0].contains("response_bytes") && failing[0].contains("2134") && failing[0].contains("3134")
            && failing[0].contains("+1000") && failing[0].contains("+46.9%"))
        // More polls are not a regression per request.
        #expect(!result.stdout.contains("FAIL  127.0.0.1:8080  /api/status"))
        #expect(result.stdout.contains("FAILED: 2 failures (2 regressions) in 6 endpoints"))
    }

    /// The growth is +1000 B per request: +46.9% of response bytes, +50.0% of the decoded body.
    @Test(arguments: [
        (["--max-increase", "50%"], 0), (["--max-increase", "51%"], 0), (["--max-increase", "49.9%"], 1),
        (["--max-increase-bytes", "1000"], 0), (["--max-increase-bytes", "1001B"], 0), (["--max-increase-bytes", "999"], 1),
        (["--max-increase", "10%", "--max-increase-bytes", "1000B"], 0),  // the larger allowance applies
        (["--max-increase", "10%", "--max-increase-bytes", "999B"], 1),
        (["--max-increase", "60%", "--field-tolerance", "response_bytes=46%"], 1),  // an override replaces
        (["--max-increase", "60%", "--field-tolerance", "response_bytes=47%"], 0),
        (["--field-tolerance", "response_bytes=off", "--field-tolerance", "response_decoded_body_bytes=off"], 0),
        (["--max-increase", "60%", "--fail-on-new"], 1),
        (["--max-increase", "60%", "--metric", "total"], 1),  // 3 → 5 polls is +66.7% requests
        (["--max-increase", "67%", "--metric", "total"], 0),
    ] as [([String], Int32)])
    func tolerances(arguments: [String], status: Int32) throws {
        let result = try check(arguments)
        #expect(result.status == status, "\(arguments): \(result.stdout)\(result.stderr)")
    }

    @Test func failOnMissing() throws {
        let largerBaseline = path("larger.json")
        #expect(try Harness.run(["baseline", Self.larger, "-o", largerBaseline]).status == 0)
        let lenient = try Harness.run(["check", Self.base, "--baseline", largerBaseline], environment: Self.wide)
        #expect(lenient.status == 0)
        #expect(lenient.stdout.contains("missing  127.0.0.1:8080  /api/recommendations  (missing endpoint)"))
        let strict = try Harness.run(["check", Self.base, "--baseline", largerBaseline, "--fail-on-missing"])
        #expect(strict.status == 1)
        #expect(strict.stdout.contains("/api/recommendations: endpoint in the baseline is missing"))
    }

    // MARK: formats

    @Test func junitIsWellFormedWithOneTestCasePerEndpoint() throws {
        let file = path("junit.xml")
        let result = try check(["--format", "junit", "-o", file, "--fail-on-new"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "traffic check: FAILED: 3 failures (2 regressions, 1 new endpoint) in 6 endpoints\n")
        let counter = XMLCounter()
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: file)))
        parser.delegate = counter
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        // One test case per endpoint, and one for the run as a whole (traffic.run captures).
        #expect(counter.counts["testcase"] == 7)
        #expect(counter.counts["failure"] == 2)
        #expect(counter.attributes["testsuites"]?["tests"] == "7")
        #expect(counter.attributes["testsuites"]?["failures"] == "2")
        #expect(counter.failureMessages.contains { $0.hasPrefix("response_bytes per request rose from 2134 B to 3134 B") })
        #expect(counter.failureMessages.contains("new endpoint, not in the baseline (--fail-on-new)"))
    }

    @Test func junitPassingRunHasNoFailures() throws {
        let result = try check(["--format", "junit", "--max-increase", "51%"])
        #expect(result.status == 0)
        let counter = XMLCounter()
        let parser = XMLParser(data: Data(result.stdout.utf8))
        parser.delegate = counter
        #expect(parser.parse())
        #expect(counter.counts["testcase"] == 7)
        #expect(counter.counts["failure"] == nil)
    }

    @Test func json() throws {
        let result = try check(["--format", "json"])
        #expect(result.status == 1)
        let json = try Harness.json(result.stdout)
        #expect(json["schema"] as? String == "traffic.check/1")
        #expect(json["passed"] as? Bool == false)
        #expect(json["failures"] as? Int == 2)
        let groups = try #require(json["groups"] as? [[String: Any]])
        let items = try #require(groups.first { $0["path"] as? String == "/api/items" })
        let fields = try #require(items["fields"] as? [[String: Any]])
        let response = try #require(fields.first { $0["field"] as? String == "response_bytes" })
        #expect(response["baseline"] as? Int == 2134)
        #expect(response["now"] as? Int == 3134)
        #expect(response["delta_percent"] as? Double == 46.9)
        #expect(response["failed"] as? Bool == true)
        #expect(groups.first { $0["path"] as? String == "/api/recommendations" }?["presence"] as? String == "new")
    }

    @Test func markdown() throws {
        let result = try check(["--format", "markdown"])
        #expect(result.stdout.hasPrefix("### ❌ traffic check failed\n"))
        #expect(result.stdout.contains("| ❌ | 127.0.0.1:8080 | /api/items | response\\_bytes | 2134 | 3134 | +1000 | +46.9% |"))
    }

    // MARK: budgets

    @Test func budgetWithoutBaseline() throws {
        let budget = path("traffic-budget.yml")
        try """
            budgets:
              - path: "/api/*"
                max_response_bytes: 3KiB   # 3072 per request
              - path: /api/status
                max_requests: 4
            """.write(toFile: budget, atomically: true, encoding: .utf8)
        let base = try Harness.run(["check", Self.base, "--budget", budget])
        #expect(base.status == 0, "\(base.stdout)")
        let larger = try Harness.run(["check", Self.larger, "--budget", budget])
        #expect(larger.status == 1)
        #expect(larger.stdout.contains("/api/items: response_bytes per request is 3134 B, over the budget of 3072 B"))
        #expect(larger.stdout.contains("/api/status: requests is 5, over the budget of 4"))
    }

    @Test func invalidBudget() throws {
        let budget = path("bad.yml")
        try "budgets:\n  - max_respone_bytes: 3\n".write(toFile: budget, atomically: true, encoding: .utf8)
        let result = try Harness.run(["check", Self.base, "--budget", budget])
        #expect(result.status == 3)
        #expect(result.stderr.hasPrefix("traffic: \(budget): invalid budget: budgets[0]: unknown key 'max_respone_bytes'"))
    }

    // MARK: input errors

    @Test func missingBaseline() throws {
        let result = try Harness.run(["check", Self.base, "--baseline", path("absent.json")])
        #expect(result.status == 3)
        #expect(result.stderr == "traffic: \(path("absent.json")): cannot read baseline: No such file or directory\n")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [
        ("{\"schema\": \"traffic.baseline/1\", \"groups\": [{\"host\"", "corrupt baseline: not valid JSON (cut short or edited by hand?)"),
        ("not json at all", "corrupt baseline: not valid JSON (cut short or edited by hand?)"),
        ("{\"schema\": \"traffic.baseline/7\", \"groups\": []}",
         "unknown schema 'traffic.baseline/7'; this traffic reads traffic.baseline/1"),
    ])
    func badBaseline(text: String, message: String) throws {
        let file = path("bad.json")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try Harness.run(["check", Self.base, "--baseline", file])
        #expect(result.status == 3)
        #expect(result.stderr == "traffic: \(file): \(message)\n")
    }

    @Test(arguments: [
        ["check", base],  // neither --baseline nor --budget
        ["check", base, "--budget", "x.yml", "--max-increase", "10"],
        ["check", base, "--budget", "x.yml", "--max-increase-bytes", "lots"],
        ["check", base, "--budget", "x.yml", "--field-tolerance", "speed=1%"],
        ["check", base, "--baseline", "x.json", "--group-by", "host"],
        ["diff", base, larger, "--format", "junit"],
    ])
    func usageErrors(arguments: [String]) throws {
        let result = try Harness.run(arguments)
        // Usage errors exit with 2 (the main entry point maps ArgumentParser's EX_USAGE to it).
        #expect(result.status == 2, "\(arguments): \(result.status)")
        #expect(result.stderr.hasPrefix("Error: "))
    }

    // MARK: diff

    @Test func diffOfTwoCapturesHasNoVerdict() throws {
        let result = try Harness.run(["diff", Self.base, Self.larger], environment: Self.wide)
        #expect(result.status == 0)
        #expect(result.stdout.contains("127.0.0.1:8080  /api/items            response_bytes                   2134  3134  +1000  +46.9%"))
        #expect(result.stdout.hasSuffix("3 of 6 endpoints changed (per request)\n"))
        #expect(!result.stdout.contains("FAIL"))
        // Both captures hold HTTP: no "Nothing compared" note (every diff printed one until the diff kept the
        // runs' integrity).
        #expect(!result.stdout.contains("Nothing compared"))
    }

    /// `--keylog` on diff decrypts both sides (issue 21): two captures of the same three exchanges over different
    /// suites compare equal.
    @Test func diffDecryptsWithKeyLogs() throws {
        let result = try Harness.run(
            ["diff", "samples/https-v12-aes128gcm.pcap", "samples/https-v12-chacha20.pcap",
             "--keylog", "samples/https-v12-aes128gcm.keys", "--keylog", "samples/https-v12-chacha20.keys"],
            environment: Self.wide)
        #expect(result.status == 0)
        #expect(result.stdout.contains("No changes: 3 endpoints as before."))
        #expect(!result.stdout.contains("Nothing compared"))
    }

    @Test func diffDetectsJSONByContent() throws {
        let report = path("report.json")
        #expect(try Harness.run(["analyze", "--normalize-paths", "--format", "json", "-o", report, Self.base]).status == 0)
        let result = try Harness.run(["diff", report, try baseline(), "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try Harness.json(result.stdout)
        #expect(json["schema"] as? String == "traffic.diff/1")
        #expect((json["groups"] as? [[String: Any]])?.allSatisfy { $0["changed"] as? Bool == false } == true)
        let capture = try Harness.run(["diff", try baseline(), Self.larger], environment: Self.wide)
        #expect(capture.stdout.contains("/api/recommendations  (new endpoint)"))
    }

    @Test func diffOfAnUnknownSchema() throws {
        let file = path("other.json")
        try "{\"schema\": \"something/1\"}".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try Harness.run(["diff", file, Self.base])
        #expect(result.status == 3)
        #expect(result.stderr == "traffic: \(file): unknown schema 'something/1'; this traffic reads traffic.baseline/1 and traffic.report/1\n")
    }
}

/// Counts elements and collects attributes and failure messages of a JUnit file.
final class XMLCounter: NSObject, XMLParserDelegate {
    var counts: [String: Int] = [:]
    var attributes: [String: [String: String]] = [:]
    var failureMessages: [String] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        counts[elementName, default: 0] += 1
        attributes[elementName] = attributeDict
        if elementName == "failure", let message = attributeDict["message"] { failureMessages.append(message) }
    }
}
