import Testing
import TrafficReassembly

@testable import TrafficHTTP

// Start lines outside RFC 9112 that real peers send and Zeek's HTTP analyzer accepts (issue 24 item 4):
// each parses, with flag `nonstandard_start_line`; nothing looser than that. Sizes counted by hand.

let leniencyFixtures: [HTTPFixture] = [
    HTTPFixture(
        "no target, lower-case versions, a version without its minor digit",
        [
            // "OPTIONS HTTP/1.1" 7+1+8 = 16, +2 = 18; "Host: h\r\n" 9, +2 = 11
            .c("OPTIONS HTTP/1.1\r\nHost: h\r\n\r\n"),
            // "http/1.1 200 OK" 15, +2 = 17; "Content-Length: 2\r\n" 15+2+2 = 19, +2 = 21; body 2
            .s("http/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
            // "GET / http/1.0" 3+1+1+1+8 = 14, +2 = 16; 11
            .c("GET / http/1.0\r\nHost: h\r\n\r\n"),
            // "HTTP/1.0 204 No Content" 8+1+3+1+10 = 23, +2 = 25; 2
            .s("HTTP/1.0 204 No Content\r\n\r\n"),
            // "HEAD /x HTTP/1." 4+1+2+1+7 = 15, +2 = 17; 11
            .c("HEAD /x HTTP/1.\r\nHost: h\r\n\r\n"),
            // 17, 21; a HEAD response has no body
            .s("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "OPTIONS", path: "", line: 18, header: 11,
                flags: ["nonstandard_start_line"]),
            RecordSnapshot(
                .response, 1, at: 1, method: "OPTIONS", status: 200, version: "http/1.1", path: "", line: 17,
                header: 21, body: 2, flags: ["nonstandard_start_line"]),
            RecordSnapshot(
                .request, 2, at: 2, version: "http/1.0", line: 16, header: 11, flags: ["nonstandard_start_line"]),
            RecordSnapshot(.response, 2, at: 3, status: 204, version: "HTTP/1.0", line: 25, header: 2),
            RecordSnapshot(
                .request, 3, at: 4, method: "HEAD", version: "HTTP/1.", path: "/x", line: 17, header: 11,
                flags: ["nonstandard_start_line"]),
            RecordSnapshot(.response, 3, at: 5, method: "HEAD", status: 200, path: "/x", line: 17, header: 21),
        ]),
    HTTPFixture(
        "a response version without its minor digit is not a status line: the direction is not HTTP",
        [
            // "GET /a HTTP/1.1" 15, +2 = 17; 11
            .c("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
            // "HTTP/1. 200 OK\r\n" 16 + "\r\n" 2 + "xy" 2 = 20 non-HTTP
            .s("HTTP/1. 200 OK\r\n\r\nxy"),
        ],
        [RecordSnapshot(.request, 1, at: 0, path: "/a", line: 17, header: 11, paired: false)],
        leftovers: Leftovers(nonHTTP: [0, 20])),
]

@Suite("HTTP start line leniencies (nonstandard_start_line)")
struct HTTPStartLineLeniencyTests {
    @Test(arguments: leniencyFixtures)
    func fixture(_ fixture: HTTPFixture) {
        FixtureRunner.check(fixture)
    }

    /// (line, request, parses, nonstandard, version, target)
    @Test(arguments: [
        ("GET / HTTP/1.1", true, true, false, "HTTP/1.1", "/"),
        ("OPTIONS HTTP/1.1", true, true, true, "HTTP/1.1", ""),
        ("OPTIONS   HTTP/1.0  ", true, true, true, "HTTP/1.0", ""),
        ("GET HTTP/1.", true, true, true, "HTTP/1.", ""),
        ("GET / hTtP/1.1", true, true, true, "hTtP/1.1", "/"),
        ("GET / HTTP/1.", true, true, true, "HTTP/1.", "/"),
        ("GET /HTTP/1.1", true, true, false, "HTTP/0.9", "/HTTP/1.1"),
        ("OPTIONSHTTP/1.1", true, false, false, "", ""),
        ("GET / HTTP/1.x", true, false, false, "", ""),
        ("GET / HTTP/1", true, false, false, "", ""),
        ("GET / HTTP/", true, false, false, "", ""),
        ("GET HTTP/2.0", true, false, false, "", ""),
        ("GET / HTTPS/1.1", true, false, false, "", ""),
        ("G\u{1}T / HTTP/1.1", true, false, false, "", ""),
        ("\u{C3}\u{83} / HTTP/1.", true, false, false, "", ""),
        ("HTTP/1.1 200 OK", false, true, false, "HTTP/1.1", ""),
        ("http/1.1 200 OK", false, true, true, "http/1.1", ""),
        ("Http/1.0 404", false, true, true, "Http/1.0", ""),
        ("HTTP/1. 200 OK", false, false, false, "", ""),
        ("http/2.0 200 OK", false, false, false, "", ""),
        ("htt/1.1 200 OK", false, false, false, "", ""),
        ("HTTP/1.1 2x0 OK", false, false, false, "", ""),
    ])
    func lines(_ text: String, _ request: Bool, _ parses: Bool, _ nonstandard: Bool, _ version: String, _ target: String) {
        let parsed = Array(text.utf8).withUnsafeBytes { HTTPStartLine.parse($0, request: request, maxMethodBytes: 32) }
        #expect((parsed != nil) == parses)
        guard let parsed else { return }
        #expect(parsed.isNonstandard == nonstandard)
        switch parsed {
        case .request(_, let t, let v, _):
            #expect(request && v == version && t.joined == target)
        case .status(let v, _, _):
            #expect(!request && v == version)
        }
    }

    /// A lower-case status line is recognised before its line end arrives (no early rejection).
    @Test func sniffIsCaseInsensitive() {
        for (prefix, verdict) in [
            ("http/1.", HTTPStartLine.Sniff.viable), ("hTTp/", .undecided), ("HTTX", .rejected), ("\u{16}\u{3}", .rejected),
        ] {
            let v = Array(prefix.utf8).withUnsafeBytes { HTTPStartLine.sniff($0, request: false, maxMethodBytes: 32) }
            #expect(v == verdict, "\(prefix)")
        }
    }
}
