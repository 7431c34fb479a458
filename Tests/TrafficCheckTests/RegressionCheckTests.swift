import Testing
@testable import TrafficCheck

/// The comparison of groups under the rules, on hand-made numbers.
@Suite struct RegressionCheckTests {
    func compare(
        _ before: EndpointCounts, _ after: EndpointCounts, _ configure: (inout CheckRules) -> Void = { _ in }
    ) -> GroupDiff {
        var rules = CheckRules()
        configure(&rules)
        let diffs = RegressionCheck.compare(
            baseline: Fixtures.snapshot([("/a", before)]), current: Fixtures.snapshot([("/a", after)]), rules: rules)
        return diffs[0]
    }

    func failedFields(_ diff: GroupDiff) -> [CheckField] { diff.fields.filter(\.failed).map(\.field) }

    @Test func perRequestIgnoresMorePolls() {
        let diff = compare(
            Fixtures.counts(requests: 3, requestBytes: 300, responseBytes: 3000),
            Fixtures.counts(requests: 5, requestBytes: 500, responseBytes: 5000))
        #expect(!diff.failed)
        #expect(diff.changes.map(\.field) == [.requests])
        #expect(diff.changes[0].tolerance == nil)
    }

    @Test func perRequestDividesResponseFieldsByResponses() {
        // 2 requests, 1 response of 1000 B: 1000 B per response, not 500.
        let before = Fixtures.counts(requests: 1, responseBytes: 1000)
        let after = Fixtures.counts(requests: 2, responses: 1, responseBytes: 1000)
        #expect(!compare(before, after).failed)
    }

    @Test func totalMetricChecksRequestsByPercentageOnly() {
        let before = Fixtures.counts(requests: 10, requestBytes: 1000, responseBytes: 10000)
        func after(_ requests: Int) -> EndpointCounts {
            Fixtures.counts(requests: requests, requestBytes: 1000, responseBytes: 10000)
        }
        let percent: (inout CheckRules) -> Void = { $0.metric = .total; $0.tolerance.partsPerMillion = 100_000 }
        #expect(!compare(before, after(11), percent).failed)  // at the limit: 10% of 10
        #expect(failedFields(compare(before, after(12), percent)) == [.requests])
        // A byte allowance does not stretch to counts.
        let bytes: (inout CheckRules) -> Void = { $0.metric = .total; $0.tolerance.absolute = 2048 }
        #expect(failedFields(compare(before, after(11), bytes)) == [.requests])
    }

    @Test(arguments: [(12, false), (11, false), (13, true)])
    func requestsOverride(requests: Int, failed: Bool) {
        let diff = compare(Fixtures.counts(requests: 10), Fixtures.counts(requests: requests, requestBytes: 100 * requests / 10)) {
            $0.fieldTolerances[.requests] = Tolerance(absolute: 2)
        }
        #expect(diff.failed == failed)
    }

    @Test(arguments: [(1050, false), (1049, false), (1051, true)])
    func fieldOverrideReplacesTheGlobalTolerance(responseBytes: Int, failed: Bool) {
        let rules: (inout CheckRules) -> Void = {
            $0.tolerance = Tolerance(partsPerMillion: 100_000, absolute: 4096)
            $0.fieldTolerances[.responseBytes] = Tolerance(partsPerMillion: 50_000)
        }
        let diff = compare(
            Fixtures.counts(requestBytes: 1000, responseBytes: 1000),
            Fixtures.counts(requestBytes: 1100, responseBytes: responseBytes), rules)
        #expect(diff.failed == failed)
        #expect(!diff.fields.first { $0.field == .requestBytes }!.failed)  // +10%: global allowance
    }

    @Test func offNeverFails() {
        let diff = compare(Fixtures.counts(responseBytes: 1000), Fixtures.counts(responseBytes: 9000)) {
            $0.ignoredFields.insert(.responseBytes)
        }
        #expect(!diff.failed)
        #expect(diff.changes.map(\.field) == [.responseBytes])
    }

    @Test func cookiesAreCheckedOnlyWhenNamed() {
        let before = Fixtures.counts(requestCookies: 50), after = Fixtures.counts(requestCookies: 80)
        #expect(!compare(before, after).failed)
        let named = compare(before, after) { $0.fieldTolerances[.requestCookieBytes] = Tolerance(absolute: 29) }
        #expect(failedFields(named) == [.requestCookieBytes])
    }

    @Test func decreasesNeverFail() {
        #expect(!compare(Fixtures.counts(responseBytes: 2000), Fixtures.counts(responseBytes: 1)).failed)
    }

    @Test(arguments: [false, true])
    func newAndMissingGroups(strict: Bool) {
        var rules = CheckRules()
        rules.failOnNew = strict
        rules.failOnMissing = strict
        let diffs = RegressionCheck.compare(
            baseline: Fixtures.snapshot([("/gone", Fixtures.counts())]),
            current: Fixtures.snapshot([("/new", Fixtures.counts())]), rules: rules)
        #expect(diffs.map(\.presence) == [.missing, .new])
        #expect(diffs.map(\.failed) == [strict, strict])
    }

    @Test func diffNeverFails() {
        let diffs = RegressionCheck.compare(
            baseline: Fixtures.snapshot([("/a", Fixtures.counts(responseBytes: 1))]),
            current: Fixtures.snapshot([("/a", Fixtures.counts(responseBytes: 9)), ("/b", Fixtures.counts())]),
            rules: .informational(metric: .perRequest))
        #expect(diffs.allSatisfy { !$0.failed })
        #expect(diffs[0].changes.map(\.field) == [.responseBytes])
    }

    @Test(arguments: [
        ("response_bytes=5%", CheckField.responseBytes, Tolerance(partsPerMillion: 50_000)),
        ("response_bytes=5%,1KiB", .responseBytes, Tolerance(partsPerMillion: 50_000, absolute: 1024)),
        ("requests=2", .requests, Tolerance(absolute: 2)),
        ("request_cookie_bytes=0", .requestCookieBytes, Tolerance(absolute: 0)),
    ] as [(String, CheckField, Tolerance)])
    func parsesFieldTolerances(text: String, field: CheckField, tolerance: Tolerance) throws {
        let parsed = try CheckRules.parseFieldTolerance(text)
        #expect(parsed.0 == field)
        #expect(parsed.1 == tolerance)
    }

    @Test func parsesOff() throws {
        let parsed = try CheckRules.parseFieldTolerance("requests=off")
        #expect(parsed.0 == .requests && parsed.1 == nil)
    }

    @Test(arguments: ["response_bytes", "nope=5%", "requests=2KiB", "response_bytes=5%,6%", "response_bytes=lots"])
    func rejectsFieldTolerances(text: String) {
        #expect(throws: CheckRules.ParseError.self) { try CheckRules.parseFieldTolerance(text) }
    }
}
