import Testing
import TrafficReassembly

@testable import TrafficHTTP

// Malformed lengths, gaps, truncation, non-HTTP streams and limits. Sizes counted by hand (see comments).

let anomalyFixtures: [HTTPFixture] = [
    HTTPFixture(
        "negative Content-Length in a request: no body",
        [
            // line "POST /n HTTP/1.1" 16 + 2 = 18; header "Content-Length: -5\r\n" 16+2+2 = 20, +2 = 22
            // then "GET /next HTTP/1.1" 3+1+5+1+8 = 18, +2 = 20; header 2
            .c("POST /n HTTP/1.1\r\nContent-Length: -5\r\n\r\nGET /next HTTP/1.1\r\n\r\n"),
            .s(okEmpty + okEmpty),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "POST", host: "10.0.0.2", path: "/n", line: 18, header: 22,
                flags: ["malformed_length"]),
            RecordSnapshot(
                .response, 1, at: 1, method: "POST", status: 200, host: "10.0.0.2", path: "/n", line: 17, header: 21),
            RecordSnapshot(.request, 2, at: 0, host: "10.0.0.2", path: "/next", line: 20, header: 2),
            RecordSnapshot(.response, 2, at: 1, status: 200, host: "10.0.0.2", path: "/next", line: 17, header: 21),
        ]),
    HTTPFixture(
        "Content-Length 2^64 in a response: close-delimited",
        [
            .c("GET /o HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header "Content-Length: 18446744073709551616\r\n" 16+20+2 = 38, +2 = 40; body 3 until close
            .s("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\nabc"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/o", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/o", line: 17, header: 40, body: 3,
                flags: ["malformed_length"]),
        ]),
    HTTPFixture(
        "identical Content-Length list is fine; conflicting values: close-delimited",
        [
            .c("GET /p HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header "Content-Length: 3, 3\r\n" 16+4+2 = 22, +2 = 24; body 3
            .s("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc"),
            .c("GET /q HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header 19 + 19 + 2 = 40; body 4 until close
            .s("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/p", line: 17, header: 11),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/p", line: 17, header: 24, body: 3),
            RecordSnapshot(.request, 2, at: 2, path: "/q", line: 17, header: 11),
            RecordSnapshot(
                .response, 2, at: 3, status: 200, path: "/q", line: 17, header: 40, body: 4,
                flags: ["malformed_length"]),
        ]),
    HTTPFixture(
        "chunk size above 2^63: malformed_chunk, resynchronise at the next status line",
        [
            .c("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 1: 17, 30; body: the 17th digit of "10000000000000000" overflows (16^16 = 2^64) → 17 bytes
            // then non-HTTP: "\r\n" 2 + "junk\r\n" 6 = 8; 2: 17, 21
            .s(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\njunk\r\n" + okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/1", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/1", line: 17, header: 30, body: 17, encoded: 0,
                transferEncoding: "chunked", complete: false, flags: ["malformed_chunk"]),
            RecordSnapshot(.request, 2, at: 0, path: "/2", line: 17, header: 11),
            RecordSnapshot(.response, 2, at: 1, status: 200, path: "/2", line: 17, header: 21),
        ],
        leftovers: Leftovers(nonHTTP: [0, 8])),
    HTTPFixture(
        "request Transfer-Encoding without chunked: the rest of the stream is its body",
        [
            // line "POST /t HTTP/1.1" 18; header "Transfer-Encoding: gzip\r\n" 25 + 2 = 27; body 6
            .c("POST /t HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabcdef")
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "POST", host: "10.0.0.2", path: "/t", line: 18, header: 27, body: 6,
                transferEncoding: "gzip", paired: false, flags: ["malformed_length"])
        ]),
    HTTPFixture(
        "non-HTTP streams stay non-HTTP without a gap",
        [
            .data(.clientToServer, [0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x02, 0x03, 0x04, 0x05]),  // 10
            .s("SSH-2.0-OpenSSH_9.6\r\n"),  // 19 + 2 = 21
            .s("HTTP/1.1 200 OK\r\n\r\n"),  // 19: still not HTTP
        ],
        [],
        leftovers: Leftovers(nonHTTP: [10, 40]), isHTTP: false),
    HTTPFixture(
        "non-HTTP start, gap, then HTTP: parsed, but pairing is abandoned (requests may be in the gap)",
        [
            .data(.clientToServer, [0x00, 0x01, 0x02]),
            .gap(.clientToServer, 100),
            .c("GET /r HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 2, path: "/r", line: 17, header: 11, paired: false),
            RecordSnapshot(
                .response, 2, at: 3, method: nil, status: 200, host: "10.0.0.2", path: "(unknown)", line: 17,
                header: 21, paired: false),
        ],
        leftovers: Leftovers(nonHTTP: [3, 0])),
    HTTPFixture(
        "gap inside a Content-Length body: framing kept; without a content coding decoded = encoded (bytes seen)",
        [
            .c("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header "Content-Length: 10\r\n" 20 + 2 = 22; body "abc" 3 + gap 4 + "def" 3 → body 6, missing 4
            .s("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
            .gap(.serverToClient, 4),
            // then 17, 21, body 1
            .s("defHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/1", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/1", line: 17, header: 22, body: 6, decoded: .some(6),
                missing: 4, complete: false, flags: ["gap"]),
            RecordSnapshot(.request, 2, at: 0, path: "/2", line: 17, header: 11),
            RecordSnapshot(.response, 2, at: 3, status: 200, path: "/2", line: 17, header: 21, body: 1),
        ]),
    HTTPFixture(
        "gap inside chunk data is absorbed",
        [
            .c("GET /c HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17, 30; body "a\r\n" 3 + "0123" 4; gap 4; "89\r\n" 4 + "0\r\n" 3 + "\r\n" 2 → body 16, encoded 6, missing 4
            .s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123"),
            .gap(.serverToClient, 4),
            .s("89\r\n0\r\n\r\n"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/c", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/c", line: 17, header: 30, body: 16, encoded: 6,
                decoded: .some(6), missing: 4, transferEncoding: "chunked", complete: false, flags: ["gap"]),
        ]),
    HTTPFixture(
        "gap in a request head: message incomplete, resync at the next request line, pairing abandoned after",
        [
            .c("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
            // line 17; "Ho" (2 bytes of a field line) become header bytes when the gap ends the message
            .c("GET /b HTTP/1.1\r\nHo"),
            .gap(.clientToServer, 10),
            // "st: x\r\n" 7 and "\r\n" 2 are not HTTP (9); then "GET /c HTTP/1.1" 17, header 2
            .c("st: x\r\n\r\nGET /c HTTP/1.1\r\n\r\n"),
            .s(okEmpty + okEmpty + okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/a", line: 17, header: 11),
            RecordSnapshot(.response, 1, at: 4, status: 200, path: "/a", line: 17, header: 21),
            RecordSnapshot(
                .request, 2, at: 1, host: "10.0.0.2", path: "/b", line: 17, header: 2, complete: false, flags: ["gap"]),
            RecordSnapshot(.response, 2, at: 4, status: 200, host: "10.0.0.2", path: "/b", line: 17, header: 21),
            RecordSnapshot(.request, 3, at: 3, host: "10.0.0.2", path: "/c", line: 17, header: 2, paired: false),
            RecordSnapshot(
                .response, 4, at: 4, method: nil, status: 200, host: "10.0.0.2", path: "(unknown)", line: 17,
                header: 21, paired: false),
        ],
        leftovers: Leftovers(nonHTTP: [9, 0])),
    HTTPFixture(
        "truncated at finish: request body and response head",
        [
            // line "POST /up HTTP/1.1" 19; header 9 + "Content-Length: 100\r\n" 16+3+2 = 21 + 2 = 32; body 10 of 100
            .c("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n0123456789"),
            // line "HTTP/1.1 500 Internal Server Error" 8+1+3+1+21 = 34, +2 = 36; partial field line 10
            .s("HTTP/1.1 500 Internal Server Error\r\nContent-Ty"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "POST", path: "/up", line: 19, header: 32, body: 10, complete: false,
                flags: ["truncated"]),
            RecordSnapshot(
                .response, 1, at: 1, method: "POST", status: 500, path: "/up", line: 36, header: 10, complete: false,
                flags: ["truncated"]),
        ]),
    HTTPFixture(
        "truncated at finish: a chunked body, and a start line cut short is not HTTP",
        [
            // line "GET /x HTTP/1.1" 17; header 2; host 10.0.0.2
            .c("GET /x HTTP/1.1\r\n\r\n"),
            // 17, 30; body "5\r\n" 3 + "ab" 2 = 5, encoded 2
            .s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"),
            .c("GET /y HT"),  // 9 bytes, never completed: non-HTTP
        ],
        [
            RecordSnapshot(.request, 1, at: 0, host: "10.0.0.2", path: "/x", line: 17, header: 2),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, host: "10.0.0.2", path: "/x", line: 17, header: 30, body: 5,
                encoded: 2, transferEncoding: "chunked", complete: false, flags: ["truncated"]),
        ],
        leftovers: Leftovers(nonHTTP: [9, 0])),
    HTTPFixture(
        "empty lines between messages are not part of any message",
        [
            // line "POST /p HTTP/1.1" 18; header 9 + 19 + 2 = 30; body 2; "\r\n" 2 non-HTTP; "GET /q" 17, 11
            .c("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab\r\nGET /q HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s(okEmpty + okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, method: "POST", path: "/p", line: 18, header: 30, body: 2),
            RecordSnapshot(.response, 1, at: 1, method: "POST", status: 200, path: "/p", line: 17, header: 21),
            RecordSnapshot(.request, 2, at: 0, path: "/q", line: 17, header: 11),
            RecordSnapshot(.response, 2, at: 1, status: 200, path: "/q", line: 17, header: 21),
        ],
        leftovers: Leftovers(nonHTTP: [2, 0])),
    HTTPFixture(
        "an empty line before the first request is ignored, wherever the stream is cut",
        [
            // "\r\n" 2 non-HTTP; line "GET / HTTP/1.1" 14 + 2 = 16; header 2
            .c("\r\nGET / HTTP/1.1\r\n\r\n"),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, host: "10.0.0.2", line: 16, header: 2),
            RecordSnapshot(.response, 1, at: 1, status: 200, host: "10.0.0.2", line: 17, header: 21),
        ],
        leftovers: Leftovers(nonHTTP: [2, 0])),
    HTTPFixture(
        "header limits: an overlong line and too many fields are counted but not kept",
        [
            // limits: 32-byte lines, 3 fields. line 17; header "Host: h\r\n" 9
            // + "X-A: " 5 + 34 digits + 2 = 41 (> 32: header_limit) + "Cookie: c=1\r\n" 13 (cookie)
            // + "Content-Type: t\r\n" 14+1+2 = 17 (4th field: not kept) + 2 = 82
            .c(
                "GET /l HTTP/1.1\r\nHost: h\r\nX-A: 0123456789012345678901234567890123\r\nCookie: c=1\r\n"
                    + "Content-Type: t\r\n\r\n"),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, path: "/l", line: 17, header: 82, cookie: 13, flags: ["header_limit"]),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/l", line: 17, header: 21),
        ],
        limits: HTTPLimits(maxLineBytes: 32, maxHeaderFields: 3)),
]

@Suite("HTTP anomalies: malformed lengths, gaps, truncation, non-HTTP")
struct HTTPAnomalyTests {
    @Test(arguments: anomalyFixtures)
    func fixture(_ fixture: HTTPFixture) {
        FixtureRunner.check(fixture)
    }
}
