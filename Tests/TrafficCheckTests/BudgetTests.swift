import Testing
@testable import TrafficCheck

@Suite struct BudgetTests {
    static let yaml = """
        version: 1
        budgets:
          - name: every API call
            path: "/api/*"
            max_response_bytes: 1KiB
            max_cookie_bytes: 64
          - host: "api"
            path: "/api/status"
            max_requests: 4
            max_total_response_bytes: 5000
        """

    @Test func parses() throws {
        let budget = try Budget.parse(yaml: Self.yaml)
        #expect(budget.rules == [
            Budget.Rule(host: "*", path: "/api/*", limits: [
                Budget.Limit(field: .responseBytes, maximum: 1024, metric: .perRequest),
                Budget.Limit(field: .requestCookieBytes, maximum: 64, metric: .perRequest),
            ]),
            Budget.Rule(host: "api", path: "/api/status", limits: [
                Budget.Limit(field: .requests, maximum: 4, metric: .total),
                Budget.Limit(field: .responseBytes, maximum: 5000, metric: .total),
            ]),
        ])
    }

    /// (requests, total response bytes, failed) against max_response_bytes: 1KiB per request.
    @Test(arguments: [(3, 3072, false), (3, 3071, false), (3, 3073, true), (1, 1025, true)])
    func perRequestLimitAtItsEdge(requests: Int, responseBytes: Int, failed: Bool) throws {
        let budget = Budget(rules: [Budget.Rule(path: "/api/*", limits: [
            Budget.Limit(field: .responseBytes, maximum: 1024, metric: .perRequest),
        ])])
        let results = budget.evaluate(Fixtures.snapshot([
            ("/api/items", Fixtures.counts(requests: requests, responseBytes: responseBytes)),
        ]))
        #expect(results.count == 1)
        #expect(results[0].failed == failed)
    }

    @Test(arguments: [(4, false), (3, false), (5, true)])
    func requestLimitAtItsEdge(requests: Int, failed: Bool) throws {
        let budget = try Budget.parse(yaml: Self.yaml)
        let results = budget.evaluate(Fixtures.snapshot([("/api/status", Fixtures.counts(requests: requests, responseBytes: 100))]))
        #expect(results.first { $0.limit.key == "max_requests" }?.failed == failed)
    }

    @Test func globsSelectGroups() throws {
        let budget = try Budget.parse(yaml: Self.yaml)
        let results = budget.evaluate(Fixtures.snapshot([
            ("/api/status", Fixtures.counts()), ("/health", Fixtures.counts(responseBytes: 99999)),
        ]))
        #expect(results.allSatisfy { $0.keys == ["api", "/api/status"] })
        #expect(results.map(\.limit.key) == [
            // max_cookie_bytes is short for max_request_cookie_bytes and reported by its full name.
            "max_response_bytes", "max_request_cookie_bytes", "max_requests", "max_total_response_bytes",
        ])
    }

    @Test(arguments: [
        ("budgets:\n  - path: /x\n    max_respone_bytes: 3\n", "budgets[0]: unknown key 'max_respone_bytes'"),
        ("budgets:\n  - path: /x\n", "budgets[0]: no limits"),
        ("budgets:\n  - max_requests: 2KiB\n", "budgets[0].max_requests: '2KiB' is not a number of requests"),
        ("budgets:\n  - max_response_bytes: lots\n", "budgets[0].max_response_bytes: 'lots' is not a size"),
        ("limits: []\n", "unknown key 'limits'"),
        ("version: 2\nbudgets: []\n", "version must be 1"),
        ("budgets: [\n", "not YAML: line 2"),
        ("", "expected a mapping"),
    ])
    func rejects(yaml: String, message: String) {
        #expect {
            try Budget.parse(yaml: yaml)
        } throws: { error in
            (error as? Budget.ParseError)?.message.contains(message) == true
        }
    }
}
