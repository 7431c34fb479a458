import Foundation
import Testing
import TrafficAggregation
@testable import TrafficCheck

/// HTTP/2's decoded header sizes (issue 22) as checkable fields: opt-in like cookie bytes, known only for groups
/// that have them, and absent from HTTP/1 baselines, which stay the files they were.
@Suite struct DecodedHeaderFieldTests {
    /// An HTTP/2 group: 2 requests with 300 B of decoded headers, 2 responses with 500 B.
    static func http2(requestDecoded: Int = 300, responseDecoded: Int = 500) -> EndpointCounts {
        var counts = Fixtures.counts(requests: 2)
        counts.bytes[.requestHeaderDecodedBytes] = requestDecoded
        counts.bytes[.responseHeaderDecodedBytes] = responseDecoded
        return counts
    }

    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("baseline-\(UUID().uuidString).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func countsFromGroupTotals() {
        var totals = GroupTotals()
        totals.requests = 2
        totals.request.headerDecodedSum = 300
        totals.request.headerDecodedRecords = 2
        let counts = EndpointCounts(totals)
        #expect(counts.has(.requestHeaderDecodedBytes) && counts.total(.requestHeaderDecodedBytes) == 300)
        // No response had a decoded size: unknown, not 0.
        #expect(!counts.has(.responseHeaderDecodedBytes))
        #expect(EndpointCounts(GroupTotals()).has(.requestCookieBytes))
        #expect(!EndpointCounts(GroupTotals()).has(.requestHeaderDecodedBytes))
        #expect(CheckField.responseHeaderDecodedBytes.isResponseSide && !CheckField.requestHeaderDecodedBytes.isResponseSide)
        #expect(counts.value(.requestHeaderDecodedBytes, .perRequest) == Amount(total: 300, count: 2))
    }

    /// HTTP/1 baselines are written as before (no new keys); HTTP/2 groups carry the sizes they have, with
    /// per-request averages, and read back equal.
    @Test func baselinesWriteThemOnlyWhenKnown() throws {
        var http2 = Self.http2()
        http2.bytes[.responseHeaderDecodedBytes] = nil
        let baseline = Baseline(settings: GroupingSettings(), snapshot: Fixtures.snapshot([
            ("/h1", Fixtures.counts(requests: 3)), ("/h2", http2),
        ]))
        let json = baseline.json()
        #expect(json.components(separatedBy: "\"request_header_decoded_bytes\"").count == 3)  // total and per request, once
        #expect(json.contains("\"request_header_decoded_bytes\": 300,") && json.contains("\"request_header_decoded_bytes\": 150.0"))
        #expect(!json.contains("response_header_decoded_bytes"))
        let h1Only = Baseline(settings: GroupingSettings(), snapshot: Fixtures.snapshot([("/h1", Fixtures.counts(requests: 3))]))
        #expect(!h1Only.json().contains("header_decoded"))
        let path = try write(json)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let read = try Baseline.load(path: path)
        #expect(read == baseline)
        let group = try #require(read.snapshot.groups.first { $0.keys == ["api", "/h2"] })
        #expect(group.counts.has(.requestHeaderDecodedBytes) && !group.counts.has(.responseHeaderDecodedBytes))
    }

    /// A baseline written before the fields existed (and a report whose HTTP/1 groups have them null) loads.
    @Test func oldFilesAndNullsLoad() throws {
        let old = """
            {"schema": "traffic.baseline/1", "group_by": ["host", "path"], "normalize_paths": true, "path_templates": [],
             "filter": null, "groups": [{"host": "api", "path": "/a", "requests": 1, "responses": 1, "request_bytes": 100,
             "response_bytes": 1000, "request_decoded_body_bytes": 0, "response_decoded_body_bytes": 0,
             "request_cookie_bytes": 0, "response_cookie_bytes": 0}]}
            """
        let path = try write(old)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let baseline = try Baseline.load(path: path)
        #expect(baseline.snapshot.groups.count == 1 && !baseline.snapshot.groups[0].counts.has(.requestHeaderDecodedBytes))
        let report = """
            {"schema": "traffic.report/1", "groups": [{"host": "api", "path": "/a", "requests": 1, "responses": 1,
             "request_bytes": 100, "response_bytes": 1000, "request_decoded_body_bytes": 0,
             "response_decoded_body_bytes": 0, "request_cookie_bytes": 0, "response_cookie_bytes": 0,
             "request_header_decoded_bytes": null, "response_header_decoded_bytes": 77}]}
            """
        let reportPath = try write(report)
        defer { try? FileManager.default.removeItem(atPath: reportPath) }
        let snapshot = try SnapshotFile.load(path: reportPath, what: "report").snapshot
        let counts = snapshot.groups[0].counts
        #expect(!counts.has(.requestHeaderDecodedBytes) && counts.total(.responseHeaderDecodedBytes) == 77)
        // A value that is not a size is still damage.
        let bad = try write(report.replacingOccurrences(of: "77", with: "\"x\""))
        defer { try? FileManager.default.removeItem(atPath: bad) }
        #expect(throws: CheckInputError.self) { try SnapshotFile.load(path: bad, what: "report") }
    }

    /// Not compared unless named (like cookie bytes); named, compared only where both runs have the field.
    @Test func comparedWhenNamedAndKnownOnBothSides() throws {
        let before = Fixtures.snapshot([("/h2", Self.http2()), ("/h1", Fixtures.counts()), ("/moved", Fixtures.counts(requests: 2))])
        let after = Fixtures.snapshot([
            ("/h2", Self.http2(requestDecoded: 400)), ("/h1", Fixtures.counts()), ("/moved", Self.http2()),
        ])
        var rules = CheckRules()
        let plain = RegressionCheck.compare(baseline: before, current: after, rules: rules)
        #expect(plain.allSatisfy { !$0.failed && !$0.fields.contains { $0.field.isOptional } })
        rules.fieldTolerances[.requestHeaderDecodedBytes] = try #require(CheckRules.parseFieldTolerance("request_header_decoded_bytes=10%").1)
        let named = RegressionCheck.compare(baseline: before, current: after, rules: rules)
        let h2 = try #require(named.first { $0.keys == ["api", "/h2"] })
        let change = try #require(h2.fields.first { $0.field == .requestHeaderDecodedBytes })
        // 150 → 200 B per request: +33 %, over 10 %.
        #expect(change.baseline == Amount(total: 300, count: 2) && change.current == Amount(total: 400, count: 2))
        #expect(change.failed && h2.failed)
        // HTTP/1 on either side: not compared, and never "0 B → 300 B".
        for path in ["/h1", "/moved"] {
            let group = try #require(named.first { $0.keys == ["api", path] })
            #expect(!group.fields.contains { $0.field == .requestHeaderDecodedBytes } && !group.failed, "\(path)")
        }
    }

    /// Budgets limit the field on the groups that have it and skip the others.
    @Test func budgetsSkipGroupsWithoutTheField() throws {
        let budget = try Budget.parse(yaml: """
            budgets:
              - max_request_header_decoded_bytes: 100
                max_total_response_header_decoded_bytes: 1KiB
            """)
        let snapshot = Fixtures.snapshot([("/h2", Self.http2()), ("/h1", Fixtures.counts())])
        let results = budget.evaluate(snapshot)
        #expect(results.map(\.keys) == [["api", "/h2"], ["api", "/h2"]])
        #expect(results.map(\.failed) == [true, false])  // 150 B per request > 100 B; 500 B ≤ 1 KiB
    }
}
