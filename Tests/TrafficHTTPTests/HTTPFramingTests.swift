import Testing
import TrafficWire

@testable import TrafficHTTP

// Expected sizes are counted by hand from the fixture text; the arithmetic is next to each fixture.
// `RecordSnapshot` defaults: host "h", path "/", version HTTP/1.1, paired, complete, decoded = encoded = body.

/// A response head `HTTP/1.1 200 OK` + `Content-Length: 0`: line 15+2 = 17, header 19 + 2 = 21.
let okEmpty = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

let framingFixtures: [HTTPFixture] = [
    HTTPFixture(
        "simple GET",
        [
            // line "GET /index.html?x=1 HTTP/1.1" 3+1+15+1+8 = 28, +2 = 30
            // header "Host: Example.com\r\n" 6+11+2 = 19, "User-Agent: t\r\n" 12+1+2 = 15, "\r\n" 2 → 36
            .c("GET /index.html?x=1 HTTP/1.1\r\nHost: Example.com\r\nUser-Agent: t\r\n\r\n"),
            // line 15+2 = 17; header "Content-Length: 5\r\n" 16+1+2 = 19, "Content-Type: text/plain\r\n" 14+10+2 = 26,
            // "\r\n" 2 → 47; body 5
            .s("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, host: "example.com", path: "/index.html", query: "x=1", line: 30, header: 36),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, host: "example.com", path: "/index.html", query: "x=1", line: 17,
                header: 47, body: 5, contentType: "text/plain"),
        ]),
    HTTPFixture(
        "keep-alive pair; 204 has no body despite Content-Length",
        [
            // line "GET /a HTTP/1.1" 3+1+2+1+8 = 15, +2 = 17; header "Host: h\r\n" 9 + 2 = 11
            .c("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"),
            // line "HTTP/1.1 204 No Content" 8+1+3+1+10 = 23, +2 = 25; header 19 + 2 = 21
            .s("HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n"),
            .c("GET /b HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header 19 + 2 = 21; body 2
            .s("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/a", line: 17, header: 11),
            RecordSnapshot(.response, 1, at: 1, status: 204, path: "/a", line: 25, header: 21),
            RecordSnapshot(.request, 2, at: 2, path: "/b", line: 17, header: 11),
            RecordSnapshot(.response, 2, at: 3, status: 200, path: "/b", line: 17, header: 21, body: 2),
        ]),
    HTTPFixture(
        "Content-Length request body with leading zeros; non-default port kept",
        [
            // line "POST /api/v1/items HTTP/1.1" 4+1+13+1+8 = 27, +2 = 29
            // header "Host: API.example.com:8080\r\n" 6+20+2 = 28, "Content-Type: application/json\r\n" 14+16+2 = 32,
            // "Content-Length: 013\r\n" 16+3+2 = 21, "\r\n" 2 → 83; body {"a":1,"b":2} 13
            .c(
                "POST /api/v1/items HTTP/1.1\r\nHost: API.example.com:8080\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 013\r\n\r\n{\"a\":1,\"b\":2}"),
            // line "HTTP/1.1 201 Created" 8+1+3+1+7 = 20, +2 = 22; header 21
            .s("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "POST", host: "api.example.com:8080", path: "/api/v1/items", line: 29,
                header: 83, body: 13, contentType: "application/json"),
            RecordSnapshot(
                .response, 1, at: 1, method: "POST", status: 201, host: "api.example.com:8080", path: "/api/v1/items",
                line: 22, header: 21),
        ]),
    HTTPFixture(
        "chunked response with extensions, leading zeros and trailers",
        [
            .c("GET /c HTTP/1.1\r\nHost: h\r\n\r\n"),
            // line 17; header "Transfer-Encoding: chunked\r\n" 19+7+2 = 28, +2 = 30
            // body: "5;ext=1\r\n" 9 + "hello" 5 + "\r\n" 2 = 16; "000A;n=v\r\n" 10 + 10 data + 2 = 22;
            //       "0\r\n" 3 + "X-Trailer: t\r\n" 11+1+2 = 14 + "\r\n" 2 = 19 → 57; encoded 5+10 = 15
            .s(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n000A;n=v\r\n0123456789\r\n"
                    + "0\r\nX-Trailer: t\r\n\r\n"),
            .c("GET /d HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; 19 + 2 = 21; body 1
            .s("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/c", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/c", line: 17, header: 30, body: 57, encoded: 15,
                transferEncoding: "chunked"),
            RecordSnapshot(.request, 2, at: 2, path: "/d", line: 17, header: 11),
            RecordSnapshot(.response, 2, at: 3, status: 200, path: "/d", line: 17, header: 21, body: 1),
        ]),
    HTTPFixture(
        "chunked request upload with Content-Length too: TE wins",
        [
            // line "POST /u HTTP/1.1" 4+1+2+1+8 = 16, +2 = 18; header 9 + "Transfer-Encoding: chunked\r\n" 28
            // + "Content-Length: 99\r\n" 16+2+2 = 20 + 2 = 59; body "3\r\n" 3 + "abc" 3 + "\r\n" 2 + "0\r\n" 3 + "\r\n" 2 = 13
            .c(
                "POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            ),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, method: "POST", path: "/u", line: 18, header: 59, body: 13, encoded: 3,
                transferEncoding: "chunked", flags: ["te_and_cl"]),
            RecordSnapshot(.response, 1, at: 1, method: "POST", status: 200, path: "/u", line: 17, header: 21),
        ]),
    HTTPFixture(
        "pipelined requests with HEAD in the middle",
        [
            // "GET /1" 17, 11; "HEAD /2 HTTP/1.1" 4+1+2+1+8 = 16, +2 = 18, 11; "GET /3" 17, 11
            .c(
                "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
            ),
            // 1: 17, 21, body 3.  2: 17, "Content-Length: 1000\r\n" 16+4+2 = 22, +2 = 24, no body (HEAD).
            // 3: 17, 30, body "1\r\n" 3 + "x" 1 + "\r\n" 2 + "0\r\n" 3 + "\r\n" 2 = 11, encoded 1
            .s(
                "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
                    + "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
                    + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/1", line: 17, header: 11),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/1", line: 17, header: 21, body: 3),
            RecordSnapshot(.request, 2, at: 0, method: "HEAD", path: "/2", line: 18, header: 11),
            RecordSnapshot(.response, 2, at: 1, method: "HEAD", status: 200, path: "/2", line: 17, header: 24),
            RecordSnapshot(.request, 3, at: 0, path: "/3", line: 17, header: 11),
            RecordSnapshot(
                .response, 3, at: 1, status: 200, path: "/3", line: 17, header: 30, body: 11, encoded: 1,
                transferEncoding: "chunked"),
        ]),
    HTTPFixture(
        "304 has no body despite Content-Length",
        [
            // 17; header 9 + "If-None-Match: \"x\"\r\n" 15+3+2 = 20 + 2 = 31
            .c("GET /e HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"x\"\r\n\r\n"),
            // line "HTTP/1.1 304 Not Modified" 8+1+3+1+12 = 25, +2 = 27; header "ETag: \"x\"\r\n" 6+3+2 = 11,
            // "Content-Length: 50\r\n" 20, "\r\n" 2 → 33
            .s("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nContent-Length: 50\r\n\r\n"),
            .c("GET /f HTTP/1.1\r\nHost: h\r\n\r\n"),
            .s("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/e", line: 17, header: 31),
            RecordSnapshot(.response, 1, at: 1, status: 304, path: "/e", line: 27, header: 33),
            RecordSnapshot(.request, 2, at: 2, path: "/f", line: 17, header: 11),
            RecordSnapshot(.response, 2, at: 3, status: 200, path: "/f", line: 17, header: 21, body: 2),
        ]),
    HTTPFixture(
        "close-delimited response ends at finish; no Host uses the server address",
        [
            // line "GET /old HTTP/1.0" 3+1+4+1+8 = 17, +2 = 19; header 2
            .c("GET /old HTTP/1.0\r\n\r\n"),
            // line 17; header "Content-Type: text/html\r\n" 14+9+2 = 25, +2 = 27; body 6 + 7 = 13
            .s("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>"),
            .s("</html>"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, version: "HTTP/1.0", host: "10.0.0.2", path: "/old", line: 19, header: 2),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, version: "HTTP/1.0", host: "10.0.0.2", path: "/old", line: 17,
                header: 27, body: 13, contentType: "text/html"),
        ]),
    HTTPFixture(
        "Transfer-Encoding without chunked in a response: close-delimited",
        [
            .c("GET /t HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header "Transfer-Encoding: gzip\r\n" 19+4+2 = 25, +2 = 27; body 3
            .s("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/t", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/t", line: 17, header: 27, body: 3, transferEncoding: "gzip"),
        ]),
    HTTPFixture(
        "obs-fold continuation lines; a folded Cookie counts as cookie bytes",
        [
            // line 17; header "Host: h\r\n" 9 + "Cookie: a=1;\r\n" 8+4+2 = 14 + " b=2\r\n" 4+2 = 6
            // + "Content-Type: text/plain;\r\n" 14+11+2 = 27 + "\tcharset=utf-8\r\n" 1+13+2 = 16 + "\r\n" 2 = 74
            // cookie 14 + 6 = 20
            .c(
                "GET /f HTTP/1.1\r\nHost: h\r\nCookie: a=1;\r\n b=2\r\nContent-Type: text/plain;\r\n\tcharset=utf-8\r\n\r\n"
            ),
            .s(okEmpty),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, path: "/f", line: 17, header: 74, cookie: 20,
                contentType: "text/plain; charset=utf-8", flags: ["obs_fold"]),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/f", line: 17, header: 21),
        ]),
    HTTPFixture(
        "bare LF line endings, also in chunked framing",
        [
            // line "GET /lf HTTP/1.1" 16 + 1 = 17; header "Host: h\n" 8 + 1 = 9
            .c("GET /lf HTTP/1.1\nHost: h\n\n"),
            // line 15 + 1 = 16; header "Content-Length: 2\n" 18 + 1 = 19; body 2
            .s("HTTP/1.1 200 OK\nContent-Length: 2\n\nok"),
            // line "GET /lf2 HTTP/1.1" 17 + 1 = 18; header 1
            .c("GET /lf2 HTTP/1.1\n\n"),
            // line 16; header "Transfer-Encoding: chunked\n" 27 + 1 = 28; body "2\n" 2 + "ok" 2 + "\n" 1 + "0\n" 2 + "\n" 1 = 8
            .s("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/lf", line: 17, header: 9),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/lf", line: 16, header: 19, body: 2),
            RecordSnapshot(.request, 2, at: 2, host: "10.0.0.2", path: "/lf2", line: 18, header: 1),
            RecordSnapshot(
                .response, 2, at: 3, status: 200, host: "10.0.0.2", path: "/lf2", line: 16, header: 28, body: 8,
                encoded: 2, transferEncoding: "chunked"),
        ]),
    HTTPFixture(
        "Cookie and Set-Cookie lines, any case",
        [
            // 17; header 9 + "Cookie: a=1\r\n" 8+3+2 = 13 + "cookie: b=22\r\n" 8+4+2 = 14 + 2 = 38; cookie 27
            .c("GET /k HTTP/1.1\r\nHost: h\r\nCookie: a=1\r\ncookie: b=22\r\n\r\n"),
            // 17; header "Set-Cookie: s=1; Path=/\r\n" 12+11+2 = 25 + "SET-COOKIE: t=2\r\n" 12+3+2 = 17 + 19 + 2 = 63
            // cookie 42
            .s("HTTP/1.1 200 OK\r\nSet-Cookie: s=1; Path=/\r\nSET-COOKIE: t=2\r\nContent-Length: 0\r\n\r\n"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/k", line: 17, header: 38, cookie: 27),
            RecordSnapshot(.response, 1, at: 1, status: 200, path: "/k", line: 17, header: 63, cookie: 42),
        ]),
    HTTPFixture(
        "absolute-form targets win over Host; default ports dropped; OPTIONS *",
        [
            // 1: target "http://Proxy.Example:8080/p/q?r=1" 7+13+5+4+4 = 33; line 3+1+33+1+8 = 46, +2 = 48;
            //    header "Host: other\r\n" 6+5+2 = 13, +2 = 15
            // 2: "GET http://h:80 HTTP/1.1" 3+1+11+1+8 = 24, +2 = 26; header 2
            // 3: "GET https://S.example:443/x HTTP/1.1" 3+1+23+1+8 = 36, +2 = 38; header 2
            // 4: "OPTIONS * HTTP/1.1" 7+1+1+1+8 = 18, +2 = 20; header "Host: h:80\r\n" 6+4+2 = 12, +2 = 14
            .c(
                "GET http://Proxy.Example:8080/p/q?r=1 HTTP/1.1\r\nHost: other\r\n\r\n"
                    + "GET http://h:80 HTTP/1.1\r\n\r\n" + "GET https://S.example:443/x HTTP/1.1\r\n\r\n"
                    + "OPTIONS * HTTP/1.1\r\nHost: h:80\r\n\r\n"),
            .s(okEmpty + okEmpty + okEmpty + okEmpty),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, host: "proxy.example:8080", path: "/p/q", query: "r=1", line: 48, header: 15),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, host: "proxy.example:8080", path: "/p/q", query: "r=1", line: 17,
                header: 21),
            RecordSnapshot(.request, 2, at: 0, host: "h", path: "/", line: 26, header: 2),
            RecordSnapshot(.response, 2, at: 1, status: 200, host: "h", path: "/", line: 17, header: 21),
            RecordSnapshot(.request, 3, at: 0, host: "s.example", path: "/x", line: 38, header: 2),
            RecordSnapshot(.response, 3, at: 1, status: 200, host: "s.example", path: "/x", line: 17, header: 21),
            RecordSnapshot(.request, 4, at: 0, method: "OPTIONS", path: "*", line: 20, header: 14),
            RecordSnapshot(.response, 4, at: 1, method: "OPTIONS", status: 200, path: "*", line: 17, header: 21),
        ]),
    HTTPFixture(
        "IPv6 server, no Host, non-default port",
        [
            // line "GET / HTTP/1.0" 3+1+1+1+8 = 14, +2 = 16; header 2
            .c("GET / HTTP/1.0\r\n\r\n"),
            .s("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"),
        ],
        [
            RecordSnapshot(
                .request, 1, at: 0, version: "HTTP/1.0", host: "[2001:db8::1]:8080", line: 16, header: 2,
                server: "[2001:db8::1]:8080"),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, version: "HTTP/1.0", host: "[2001:db8::1]:8080", line: 17,
                header: 21, body: 1, server: "[2001:db8::1]:8080"),
        ],
        server: Endpoint(address: IPAddress(ipv6High: 0x2001_0db8_0000_0000, low: 1), port: 8080)),
    HTTPFixture(
        "content codings: unknown, undecodable, coded empty body, identity",
        [
            .c("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header "Content-Encoding: br2\r\n" 18+3+2 = 23 + 19 + 2 = 44; body 3
            .s("HTTP/1.1 200 OK\r\nContent-Encoding: br2\r\nContent-Length: 3\r\n\r\nabc"),
            .c("GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; header "Content-Encoding: gzip\r\n" 18+4+2 = 24 + 19 + 2 = 45; body 7 (not gzip)
            .s("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 7\r\n\r\nnotgzip"),
            .c("GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; 24 + 19 + 2 = 45; no body: decoded 0
            .s("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n"),
            .c("GET /4 HTTP/1.1\r\nHost: h\r\n\r\n"),
            // 17; "Content-Encoding: identity\r\n" 18+8+2 = 28 + 19 + 2 = 49; body 2
            .s("HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 2\r\n\r\nok"),
        ],
        [
            RecordSnapshot(.request, 1, at: 0, path: "/1", line: 17, header: 11),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/1", line: 17, header: 44, body: 3, decoded: .some(nil),
                contentEncoding: "br2", flags: ["unknown_encoding"]),
            RecordSnapshot(.request, 2, at: 2, path: "/2", line: 17, header: 11),
            RecordSnapshot(
                .response, 2, at: 3, status: 200, path: "/2", line: 17, header: 45, body: 7, decoded: .some(nil),
                contentEncoding: "gzip", flags: ["decode_error"]),
            RecordSnapshot(.request, 3, at: 4, path: "/3", line: 17, header: 11),
            RecordSnapshot(
                .response, 3, at: 5, status: 200, path: "/3", line: 17, header: 45, contentEncoding: "gzip"),
            RecordSnapshot(.request, 4, at: 6, path: "/4", line: 17, header: 11),
            RecordSnapshot(
                .response, 4, at: 7, status: 200, path: "/4", line: 17, header: 49, body: 2,
                contentEncoding: "identity"),
        ]),
]

@Suite("HTTP framing (RFC 9112 §6)")
struct HTTPFramingTests {
    @Test(arguments: framingFixtures)
    func fixture(_ fixture: HTTPFixture) {
        FixtureRunner.check(fixture)
    }
}
