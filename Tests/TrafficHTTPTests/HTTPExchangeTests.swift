import Testing
import TrafficCapture
import TrafficReassembly
import TrafficWire

@testable import TrafficHTTP

// Pairing, interim responses, protocol switches and HTTP/0.9. Sizes counted by hand (see comments).

let exchangeFixtures: [HTTPFixture] = [
    HTTPFixture(
        "100 Continue and 103 share the request's index; request emitted once complete and paired",
        [
            // line "POST /up HTTP/1.1" 4+1+3+1+8 = 17, +2 = 19; header 9 + "Expect: 100-continue\r\n" 8+12+2 = 22
            // + "Content-Length: 4\r\n" 19 + 2 = 52
            .c("POST /up HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"),
            // line "HTTP/1.1 100 Continue" 8+1+3+1+8 = 21, +2 = 23; header 2
            .s("HTTP/1.1 100 Continue\r\n\r\n"),
            .c("data"),
            // 103: line "HTTP/1.1 103 Early Hints" 8+1+3+1+11 = 24, +2 = 26; header "Link: </s.css>\r\n" 6+8+2 = 16 + 2 = 18
            // 201: line "HTTP/1.1 201 Created" 20 + 2 = 22; header 21
            .s("HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
        ],
        [
            RecordSnapshot(.response, 1, at: 1, method: "POST", status: 100, path: "/up", line: 23, header: 2),
            RecordSnapshot(.request, 1, at: 0, method: "POST", path: "/up", line: 19, header: 52, body: 4),
            RecordSnapshot(.response, 1, at: 3, method: "POST", status: 103, path: "/up", line: 26, header: 18),
            RecordSnapshot(.response, 1, at: 3, method: "POST", status: 201, path: "/up", line: 22, header: 21),
        ]),
    HTTPFixture(
        "101 Switching Protocols: WebSocket bytes in both directions are tunnel bytes",
        [
            // line "GET /chat HTTP/1.1" 3+1+5+1+8 = 18, +2 = 20; header 9 + "Upgrade: websocket\r\n" 9+9+2 = 20
            // + "Connection: Upgrade\r\n" 12+7+2 = 21 + 2 = 52
            .c("GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
            // a masked frame the client sent before the 101 arrived: 11 bytes, held, then tunnel
            .data(.clientToServer, [0x81, 0x85, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
            // line "HTTP/1.1 101 Switching Protocols" 8+1+3+1+19 = 32, +2 = 34; header 20 + 21 + 2 = 43
            // then a 4-byte frame: tunnel
            .data(
                .serverToClient,
                Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
                    + [0x81, 0x02, 0x68, 0x69]),
            // 6 more client bytes: tunnel 11 + 6 = 17
            .data(.clientToServer, [0x88, 0x80, 0, 0, 0, 0]),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/chat", line: 20, header: 52),
            RecordSnapshot(
                .response, 1, at: 2, status: 101, path: "/chat", line: 34, header: 43, flags: ["upgrade"]),
        ],
        leftovers: Leftovers(tunnel: [17, 4])),
    HTTPFixture(
        "CONNECT answered 200: tunnel; authority is host and path",
        [
            // line "CONNECT Example.com:443 HTTP/1.1" 7+1+15+1+8 = 32, +2 = 34; header "Host: example.com:443\r\n"
            // 6+15+2 = 23, +2 = 25
            .c("CONNECT Example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
            // line "HTTP/1.1 200 Connection Established" 8+1+3+1+22 = 35, +2 = 37; header 2
            .s("HTTP/1.1 200 Connection Established\r\n\r\n"),
            .data(.clientToServer, [0x16, 0x03, 0x01, 0x00, 0x02, 0x01, 0x00]),  // 7
            .data(.serverToClient, [0x16, 0x03, 0x03, 0x00, 0x01, 0x02]),  // 6
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "CONNECT", host: "example.com:443", path: "Example.com:443", line: 34,
                header: 25),
            RecordSnapshot(
                .response, 1, at: 1, method: "CONNECT", status: 200, host: "example.com:443", path: "Example.com:443",
                line: 37, header: 2, flags: ["tunnel"]),
        ],
        leftovers: Leftovers(tunnel: [7, 6])),
    HTTPFixture(
        "CONNECT refused with 407: the connection stays HTTP",
        [
            // line "CONNECT a.example:443 HTTP/1.1" 7+1+13+1+8 = 30, +2 = 32; header 2
            .c("CONNECT a.example:443 HTTP/1.1\r\n\r\n"),
            // line "HTTP/1.1 407 Proxy Authentication Required" 8+1+3+1+29 = 42, +2 = 44; header 21
            .s("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"),
            // line "GET /after HTTP/1.1" 3+1+6+1+8 = 19, +2 = 21; header 11
            .c("GET /after HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "CONNECT", host: "a.example:443", path: "a.example:443", line: 32,
                header: 2),
            RecordSnapshot(
                .response, 1, at: 1, method: "CONNECT", status: 407, host: "a.example:443", path: "a.example:443",
                line: 44, header: 21),
            RecordSnapshot(.request, 2, at: 2, path: "/after", line: 21, header: 11),
            RecordSnapshot(.response, 2, at: 3, status: 200, path: "/after", line: 17, header: 21),
        ]),
    HTTPFixture(
        "HTTP/0.9 simple request; the response is everything until close",
        [
            // line "GET /old" 8 + 2 = 10; no header section
            .c("GET /old\r\n"),
            // body 6 + 2 + 7 = 15, then 1 → 16
            .s("<html>hi</html>"),
            .s("\n"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, version: "HTTP/0.9", host: "10.0.0.2", path: "/old", line: 10, header: 0,
                flags: ["http09"]),
            RecordSnapshot(
                .response, 1, at: 1, version: "HTTP/0.9", host: "10.0.0.2", path: "/old", line: 0, header: 0,
                body: 16, flags: ["http09"]),
        ]),
    HTTPFixture(
        "a response without a request: path (unknown), GET framing",
        [
            // 17; 19 + 2 = 21; body 2
            .s("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
            // the next request gets the next index
            .c("GET /n HTTP/1.1\r\nHost: h\r\n\r\n"),
        ],
        [
            RecordSnapshot(
                .response, 1, at: 0, method: nil, status: 200, host: "10.0.0.2:8080", path: "(unknown)", line: 17,
                header: 21, body: 2, paired: false, server: "10.0.0.2:8080"),
            RecordSnapshot(
                .request, 2, at: 1, path: "/n", line: 17, header: 11, paired: false, server: "10.0.0.2:8080"),
        ],
        server: Endpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 8080)),
    HTTPFixture(
        "pipelined requests, one unanswered: emitted unpaired at finish",
        [
            .c("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/1", line: 17, header: 11),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/1", line: 17, header: 21),
            RecordSnapshot(.request, 2, at: 0, path: "/2", line: 17, header: 11, paired: false),
        ]),
]

@Suite("HTTP exchanges: pairing, interim responses, protocol switches")
struct HTTPExchangeTests {
    @Test(arguments: exchangeFixtures)
    func fixture(_ fixture: HTTPFixture) {
        FixtureRunner.check(fixture)
    }

    /// More pending requests than the limit: pairing is abandoned and every request is still emitted once.
    @Test func pendingLimitAbandonsPairing() {
        let fixture = HTTPFixture(
            "limit",
            [.c(String(repeating: "GET / HTTP/1.1\r\n\r\n", count: 4)), .s(okEmpty)],
            [
                // each request: line 14 + 2 = 16, header 2; host 10.0.0.2; the third overflows the limit of 2
                RecordSnapshot(.request, 1, at: 0, host: "10.0.0.2", line: 16, header: 2, paired: false),
                RecordSnapshot(.request, 2, at: 0, host: "10.0.0.2", line: 16, header: 2, paired: false),
                RecordSnapshot(.request, 3, at: 0, host: "10.0.0.2", line: 16, header: 2, paired: false),
                RecordSnapshot(.request, 4, at: 0, host: "10.0.0.2", line: 16, header: 2, paired: false),
                RecordSnapshot(
                    .response, 5, at: 1, method: nil, status: 200, host: "10.0.0.2", path: "(unknown)", line: 17,
                    header: 21, paired: false),
            ],
            limits: HTTPLimits(maxPendingRequests: 2))
        FixtureRunner.check(fixture)
    }
}

/// A reused exchange is what a new one with the same values is: every stored property, read through `Mirror`
/// (a property added to `HTTPExchange` but not reset by `reuse` shows up here).
@Test func reusedExchangeEqualsAFreshOne() {
    let used = HTTPExchange(
        index: 3, method: "CONNECT", host: "a.example", path: "a.example:443", query: "x", isHTTP09: true,
        wantsSwitch: true)
    used.offersH2C = true
    used.upgradedToHTTP2 = true
    used.paired = true
    used.unpairable = true
    used.switchDecided = true
    used.requestEnd = CaptureTime(seconds: 5, nanoseconds: 6)
    used.isHolding = true
    used.startOffset = 77
    used.reuse(index: 4, method: "GET", host: "b.example", path: "/b", query: nil, isHTTP09: false, wantsSwitch: false)
    let fresh = HTTPExchange(
        index: 4, method: "GET", host: "b.example", path: "/b", query: nil, isHTTP09: false, wantsSwitch: false)
    let usedFields = Mirror(reflecting: used).children.map { "\($0.label ?? "?")=\($0.value)" }
    let freshFields = Mirror(reflecting: fresh).children.map { "\($0.label ?? "?")=\($0.value)" }
    #expect(usedFields.count == 15)
    #expect(usedFields == freshFields)
}
