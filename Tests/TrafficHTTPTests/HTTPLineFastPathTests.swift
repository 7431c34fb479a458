import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficWire

@testable import TrafficHTTP

/// The in-segment fast paths of the start line and the field lines (`startLineStep`, `headersStep`) against
/// the general path through the line buffer: `FixtureRunner.check` feeds each fixture whole (every line in its
/// segment: the fast paths), byte by byte and split at every offset (lines through the line buffer), and every
/// run must give the hand-counted records below.
@Suite struct HTTPLineFastPathTests {
    /// Obs-fold of a Cookie line, a name longer than 16 bytes (the colon past the first words), bare-LF line
    /// ends, a duplicate Host, a line without a colon; start lines with CRLF and with a bare LF.
    static let requests =
        "GET /a?b=1 HTTP/1.1\r\n"  // line 21
        + "Host: h\r\n"  // 9
        + "Cookie: id=42\r\n"  // 15, cookie
        + " more\r\n"  // 7, cookie (fold)
        + "X-Long-Name-Over-Sixteen: v\r\n"  // 29
        + "Bare: lf\n"  // 9
        + "\r\n"  // 2: header 71, cookie 22
    static let responses =
        "HTTP/1.1 200 OK\r\n"  // line 17
        + "Content-Length: 5\r\n"  // 19
        + "Set-Cookie: a=b\r\n"  // 17, cookie
        + "\r\n"  // 2: header 38, cookie 17
        + "hello"  // body 5
    static let requests2 =
        "GET / HTTP/1.1\n"  // line 15
        + "Host: h\r\n"  // 9
        + "Host: other\r\n"  // 13: ignored, the first Host counts
        + "nocolon\r\n"  // 9: malformed
        + "\r\n"  // 2: header 33
    static let responses2 =
        "HTTP/1.1 204 No Content\r\n"  // line 25
        + "\r\n"  // header 2

    static let fixture = HTTPFixture(
        "fast and general line paths", [.c(requests), .s(responses), .c(requests2), .s(responses2)],
        [
            RecordSnapshot(
                .request, 1, at: 0, path: "/a", query: "b=1", line: 21, header: 71, cookie: 22, flags: ["obs_fold"]),
            RecordSnapshot(
                .response, 1, at: 1, status: 200, path: "/a", query: "b=1", line: 17, header: 38, cookie: 17,
                body: 5),
            RecordSnapshot(.request, 2, at: 2, line: 15, header: 33, flags: ["malformed_header"]),
            RecordSnapshot(.response, 2, at: 3, status: 204, line: 25, header: 2),
        ])

    @Test func linesCountAlikeWholeAndSplit() {
        FixtureRunner.check(Self.fixture)
    }

    /// A response's `Content-Encoding` list repeated by the same cached string takes its codings again
    /// (`contentDecoding`); an unknown coding is parsed and flagged every time; another list is parsed anew.
    @Test func repeatedCodingListsDecodeAlike() {
        // gzip of "hello" (25 bytes) and of "hello world" (31 bytes).
        let hello: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 255, 203, 72, 205, 201, 201, 7, 0, 134, 166, 16, 54, 5, 0, 0, 0,
        ]
        let helloWorld: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 255, 203, 72, 205, 201, 201, 87, 40, 207, 47, 202, 73, 1, 0, 133, 17, 74,
            13, 11, 0, 0, 0,
        ]
        func gzipResponse(_ body: [UInt8]) -> StreamEvent {
            // line 17; "Content-Encoding: gzip\r\n" 24 + "Content-Length: 25\r\n" 20 + 2 = header 46
            .data(
                .serverToClient,
                Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        // line 17; "Content-Encoding: br2\r\n" 23 + "Content-Length: 3\r\n" 19 + 2 = header 44; body 3
        let unknown = StreamEvent.s("HTTP/1.1 200 OK\r\nContent-Encoding: br2\r\nContent-Length: 3\r\n\r\nabc")
        let request = { (n: Int) in StreamEvent.c("GET /\(n) HTTP/1.1\r\nHost: h\r\n\r\n") }  // line 17, header 11
        let bodies = [hello, helloWorld, nil, nil, hello]
        var events: [StreamEvent] = []
        var expected: [RecordSnapshot] = []
        for (i, body) in bodies.enumerated() {
            events.append(request(i + 1))
            events.append(body.map(gzipResponse) ?? unknown)
            expected.append(RecordSnapshot(.request, i + 1, at: 2 * i, path: "/\(i + 1)", line: 17, header: 11))
            if let body {
                expected.append(
                    RecordSnapshot(
                        .response, i + 1, at: 2 * i + 1, status: 200, path: "/\(i + 1)", line: 17, header: 46,
                        body: body.count, decoded: .some(body == hello ? 5 : 11), contentEncoding: "gzip"))
            } else {
                expected.append(
                    RecordSnapshot(
                        .response, i + 1, at: 2 * i + 1, status: 200, path: "/\(i + 1)", line: 17, header: 44,
                        body: 3, decoded: .some(nil), contentEncoding: "br2", flags: ["unknown_encoding"]))
            }
        }
        FixtureRunner.check(HTTPFixture("repeated coding lists", events, expected))
    }

    /// The kept head (HAR) of each record, with the data cut at `cuts`.
    private static func heads(cuts: [Int]) -> [[UInt8]] {
        let info = TCPConnectionInfo(
            id: 7, client: Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 50000),
            server: Endpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80), start: .zero)
        var heads: [[UInt8]] = []
        let parser = HTTPConnectionParser(info: info, limits: HTTPLimits(maxKeptHeadBytes: 4096)) {
            heads.append($0.head)
        }
        var base = 0
        for (i, event) in fixture.events.enumerated() {
            guard case .data(let direction, let bytes) = event else { continue }
            let span = WireSpan(time: FixtureRunner.time(i), overheadBytes: 54)
            var start = 0
            bytes.withUnsafeBytes { all in
                for cut in cuts where cut > base && cut < base + bytes.count {
                    parser.receive(UnsafeRawBufferPointer(rebasing: all[start..<(cut - base)]), direction: direction, span: span)
                    start = cut - base
                }
                parser.receive(UnsafeRawBufferPointer(rebasing: all[start...]), direction: direction, span: span)
            }
            base += bytes.count
        }
        parser.finish(time: FixtureRunner.time(fixture.events.count))
        return heads
    }

    /// The start line is kept from the segment after the record restarted (no copy first) on the fast path,
    /// from the line buffer's copy on the general one: the same bytes either way.
    @Test func keptHeadsAlikeWholeAndSplit() {
        let expected = [
            "GET /a?b=1 HTTP/1.1\nHost: h\nCookie: id=42\n more\nX-Long-Name-Over-Sixteen: v\nBare: lf\n",
            "HTTP/1.1 200 OK\nContent-Length: 5\nSet-Cookie: a=b\n",
            "GET / HTTP/1.1\nHost: h\nHost: other\nnocolon\n",
            "HTTP/1.1 204 No Content\n",
        ].map { Array($0.utf8) }
        #expect(Self.heads(cuts: []) == expected)
        let n = FixtureRunner.dataLength(Self.fixture)
        for k in 1..<n {
            #expect(Self.heads(cuts: [k]) == expected, "split at \(k)")
        }
        #expect(Self.heads(cuts: Array(1..<n)) == expected, "byte by byte")
    }

    /// The 16-byte colon search against the word search, for every colon position and content length in a
    /// 40-byte buffer (the bytes past the content readable, as in a segment): a colon past the content is none.
    @Test func colonSearchAsWordSearch() {
        for colonAt in [nil] + Array(0..<40) as [Int?] {
            var buffer = [UInt8](repeating: UInt8(ascii: "a"), count: 40)
            if let colonAt { buffer[colonAt] = HTTPBytes.colon }
            buffer[39] = HTTPBytes.colon  // a colon after every content but the longest
            buffer.withUnsafeBytes { all in
                for length in 0...39 {
                    let content = UnsafeRawBufferPointer(rebasing: all[0..<length])
                    let expected = HTTPBytes.firstColon(in: content)
                    #expect(
                        HTTPBytes.firstColon(in: content, readable: all.count) == expected,
                        "colon at \(String(describing: colonAt)), length \(length)")
                    #expect(HTTPBytes.firstColon(in: content, readable: length) == expected)
                }
            }
        }
    }

    /// Target bytes by the rule, one at a time: nil with a control character or DEL, else the origin-form split
    /// at the first `#` and the first `?` before it.
    private static func referenceTarget(_ target: [UInt8]) -> HTTPRequestTarget? {
        if target.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return nil }
        guard target.first == UInt8(ascii: "/") else { return .other(String(decoding: target, as: UTF8.self)) }
        let end = target.firstIndex(of: UInt8(ascii: "#")) ?? target.count
        guard let question = target[..<end].firstIndex(of: UInt8(ascii: "?")) else {
            return .origin(path: String(decoding: target[..<end], as: UTF8.self), query: nil)
        }
        return .origin(
            path: String(decoding: target[..<question], as: UTF8.self),
            query: String(decoding: target[(question + 1)..<end], as: UTF8.self))
    }

    /// The target's last word (overlapping the words before it) and the `GET `/`POST ` method shortcut, for
    /// every target length up to 30 with `?`, `#`, a control character or DEL at every position.
    @Test func targetsAndMethodsAsByByte() {
        for method in ["GET", "POST", "PUT", "GETS", "POSTS", "G", "PO"] {
            for length in 1...30 {
                var plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                plain[0] = UInt8(ascii: "/")
                var targets = [plain]
                for at in 1..<length {
                    for special in [UInt8(ascii: "?"), UInt8(ascii: "#"), 0x01, 0x7F, 0x09] {
                        var t = plain
                        t[at] = special
                        targets.append(t)
                        if at + 2 < length {
                            t[at + 2] = UInt8(ascii: "?")
                            targets.append(t)
                        }
                    }
                }
                for target in targets {
                    let line = Array(method.utf8) + [0x20] + target + Array(" HTTP/1.1".utf8)
                    let parsed = line.withUnsafeBytes { HTTPStartLine.parse($0, request: true, maxMethodBytes: 32) }
                    let expected = Self.referenceTarget(target)
                    guard let expected else {
                        #expect(parsed == nil, "\(method) \(target)")
                        continue
                    }
                    guard case .request(let m, let t, let v, let nonstandard)? = parsed else {
                        Issue.record("no request: \(method) \(target)")
                        continue
                    }
                    #expect(m == method && t == expected && v == "HTTP/1.1" && !nonstandard, "\(method) \(target)")
                }
            }
        }
    }

    /// `isHTTP09` tells the literal by its bits: every version a start line can parse to is told apart.
    @Test func http09ByBits() {
        #expect(HTTPStartLine.isHTTP09(HTTPStartLine.http09))
        #expect(HTTPStartLine.isHTTP09(String(decoding: Array("HTTP/0.9".utf8), as: UTF8.self)))
        for version in ["HTTP/1.1", "HTTP/1.0", "http/1.1", "HTTP/1.", "HTTP/1.9", "HTTP/0.9 "] {
            #expect(!HTTPStartLine.isHTTP09(String(decoding: Array(version.utf8), as: UTF8.self)), "\(version)")
        }
        guard case .request(_, _, let version, _)? = Self.parse("GET /x") else {
            Issue.record("no HTTP/0.9 request")
            return
        }
        #expect(HTTPStartLine.isHTTP09(version))
        guard case .request(_, _, let version11, _)? = Self.parse("GET /x HTTP/1.1") else {
            Issue.record("no request")
            return
        }
        #expect(!HTTPStartLine.isHTTP09(version11))
    }

    private static func parse(_ line: String) -> HTTPStartLine? {
        Array(line.utf8).withUnsafeBytes { HTTPStartLine.parse($0, request: true, maxMethodBytes: 32) }
    }
}
