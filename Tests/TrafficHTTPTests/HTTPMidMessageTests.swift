import Testing
import TrafficReassembly

@testable import TrafficHTTP

// A direction whose first bytes are inside a message (issue 24 item 2): the bytes before the first start
// line found (at a line start, or at a segment start once the other direction carried HTTP) become one
// incomplete record, flag `mid_message_start`, path `(unknown)`, decoded size unknown. Sizes counted by hand.
// Every fixture is also drip-fed at every split (FixtureRunner.check): none of the hunted bytes holds a start
// line at any offset, so extra segment starts change nothing.

let midMessageFixtures: [HTTPFixture] = [
    HTTPFixture(
        "server starts mid-body without a line end; the status line at the next segment start ends it",
        [
            .s("tail of a body"),  // 4+1+2+1+1+1+4 = 14, no request yet
            // "GET /n HTTP/1.1" 15, +2 = 17; "Host: h\r\n" 9, +2 = 11
            .c("GET /n HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s("more bytes"),  // 10: the partial message is 24 bytes
            // 15 + 2 = 17; "Content-Length: 2\r\n" 19, +2 = 21; body 2
            .s("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        ],
        [
            // Answers a request before the capture: unpaired, the next free index.
            RecordSnapshot(
                .response, 2, at: 0, method: nil, version: nil, host: "10.0.0.2", path: "(unknown)", line: 0,
                header: 0, body: 24, decoded: .some(nil), complete: false, paired: false,
                flags: ["mid_message_start"]),
            RecordSnapshot(.request, 1, at: 1, path: "/n", line: 17, header: 11),
            RecordSnapshot(.response, 1, at: 3, status: 200, path: "/n", line: 17, header: 21, body: 2),
        ]),
    HTTPFixture(
        "server's first bytes after a request was sent: the partial message answers it",
        [
            .c("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),  // 17, 11
            .s("lost head's body\r\n"),  // 16 + 2 = 18
            .s("HTTP/1.1 204 No Content\r\n\r\n"),  // 8+1+3+1+10 = 23, +2 = 25; 2
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/a", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, version: nil, path: "/a", line: 0, header: 0, body: 18, decoded: .some(nil),
                complete: false, flags: ["mid_message_start"]),
            // Its request was answered by the partial one: this answers none we saw.
            RecordSnapshot(
                .response, 2, at: 2, method: nil, status: 204, host: "10.0.0.2", path: "(unknown)", line: 25,
                header: 2, paired: false),
        ]),
    HTTPFixture(
        "client starts mid-upload; the next request line after the server answered ends it",
        [
            .c("ial upload data\r\n"),  // 3+1+6+1+4 = 15, +2 = 17: no request line
            // "HTTP/1.1 201 Created" 20, +2 = 22; "Content-Length: 0\r\n" 19, +2 = 21
            .s("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
            .c("GET /b HTTP/1.1\r\nHost: h\r\n\r\n"),  // 17, 11
            .s(okEmpty),  // 17, 21
        ],
        [
            // The response came before the partial request was recognised: both unpaired.
            RecordSnapshot(
                .response, 1, at: 1, method: nil, status: 201, host: "10.0.0.2", path: "(unknown)", line: 22,
                header: 21, paired: false),
            RecordSnapshot(
                .request, 2, at: 0, method: nil, version: nil, host: "10.0.0.2", path: "(unknown)", line: 0,
                header: 0, body: 17, decoded: .some(nil), complete: false, paired: false,
                flags: ["mid_message_start"]),
            RecordSnapshot(.request, 3, at: 2, path: "/b", line: 17, header: 11),
            RecordSnapshot(.response, 3, at: 3, status: 200, path: "/b", line: 17, header: 21),
        ]),
    HTTPFixture(
        "a status line in the first bytes before any request: not trusted; the partial ends at the next one",
        [
            .s("junk\r\nHTTP/1.1 200 OK\r\n\r\n"),  // 4+2 + 15+2 + 2 = 25
            .c("GET /d HTTP/1.1\r\n\r\n"),  // 17, 2
            .s(okEmpty),
        ],
        [
            RecordSnapshot(
                .response, 2, at: 0, method: nil, version: nil, host: "10.0.0.2", path: "(unknown)", line: 0,
                header: 0, body: 25, decoded: .some(nil), complete: false, paired: false,
                flags: ["mid_message_start"]),
            RecordSnapshot(.request, 1, at: 1, host: "10.0.0.2", path: "/d", line: 17, header: 2),
            RecordSnapshot(
                .response, 1, at: 2, status: 200, host: "10.0.0.2", path: "/d", line: 17, header: 21),
        ]),
    HTTPFixture(
        "a gap while hunting: the first bytes stay non-HTTP and the usual resynchronisation follows",
        [
            .s("xyz"),  // 3
            .gap(.serverToClient, 5),
            .c("GET /c HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 2, path: "/c", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 3, status: 200, path: "/c", line: 17, header: 21, flags: ["pairing_uncertain"]),
        ],
        leftovers: Leftovers(nonHTTP: [0, 3])),
    HTTPFixture(
        "a stream that never shows a start line stays non-HTTP",
        [
            .c("GET /e HTTP/1.1\r\n\r\n"),  // 17, 2
            .s("\u{1}\u{2}binary\r\nstill binary"),  // 2+6+2 + 12 = 22
        ],
        [RecordSnapshot(.request, 1, at: 0, host: "10.0.0.2", path: "/e", line: 17, header: 2, paired: false)],
        leftovers: Leftovers(nonHTTP: [0, 22])),
]

@Suite("HTTP: a direction that starts inside a message (mid_message_start)")
struct HTTPMidMessageTests {
    @Test(arguments: midMessageFixtures)
    func fixture(_ fixture: HTTPFixture) {
        FixtureRunner.check(fixture)
    }
}
