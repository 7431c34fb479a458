@testable import TrafficCheck

/// Hand-made groups for comparison tests.
enum Fixtures {
    static func counts(
        requests: Int = 1, responses: Int? = nil, requestBytes: Int = 100, responseBytes: Int = 1000,
        responseDecoded: Int = 0, requestCookies: Int = 0
    ) -> EndpointCounts {
        var counts = EndpointCounts()
        counts.requests = requests
        counts.responses = responses ?? requests
        counts.bytes = [
            .requestBytes: requestBytes, .responseBytes: responseBytes, .responseDecodedBodyBytes: responseDecoded,
            .requestCookieBytes: requestCookies,
        ]
        return counts
    }

    static func snapshot(_ groups: [(String, EndpointCounts)]) -> Snapshot {
        Snapshot(groupBy: [.host, .path], groups: groups.map { Snapshot.Group(keys: ["api", $0.0], counts: $0.1) })
    }
}
