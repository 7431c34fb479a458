import Testing

@testable import TrafficHTTP

/// The word-compare and one-pass fast paths of head parsing give what the byte-by-byte ways give.
@Suite("HTTP head fast paths")
struct HTTPHeadFastPathTests {
    static let knownNames = [
        "host", "cookie", "upgrade", "set-cookie", "content-type", "content-length", "content-encoding",
        "transfer-encoding",
    ]

    /// The reference for `classify`: one case-insensitive byte comparison per known name.
    static func classifyBytewise(_ name: UnsafeRawBufferPointer) -> HTTPHeadFields.Name {
        let kinds: [HTTPHeadFields.Name] = [
            .host, .cookie, .upgrade, .cookie, .contentType, .contentLength, .contentEncoding, .transferEncoding,
        ]
        for (literal, kind) in zip(knownNames, kinds) where literal.utf8.count == name.count {
            if zip(name, literal.utf8).allSatisfy({ HTTPBytes.lower($0) == $1 }) { return kind }
        }
        return .other
    }

    private func classify(_ bytes: [UInt8]) -> (fast: HTTPHeadFields.Name, slow: HTTPHeadFields.Name) {
        // Copied into a buffer exactly as long as the name: the word loads must stay inside it.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        let name = UnsafeRawBufferPointer(buffer)
        return (HTTPHeadFields.Name.classify(name), Self.classifyBytewise(name))
    }

    @Test(arguments: [
        "Host", "HOST", "hOsT", "Cookie", "COOKIE", "cookie2", "Cookie ", "Upgrade", "UPGRADE", "upgrad",
        "Set-Cookie", "set-cookie", "Set_Cookie", "Set-Cookie2", "Content-Type", "CONTENT-TYPE", "content-typ",
        "Content-Length", "Content-Lengthx", "content-lengtH", "Content_Length", "Content-Encoding",
        "Content-Encodin", "Transfer-Encoding", "TRANSFER-ENCODING", "Transfer-Encodings", "X-Request-ID",
        "Accept", "Server", "Date", "Connection", "Content-Language", "Content-Location", "Hosts", "Hos", "",
        "h", "Transfer Encoding", "Content Length",
    ])
    func namesClassifyAsBytewise(_ name: String) {
        let (fast, slow) = classify(Array(name.utf8))
        #expect(fast == slow, "\(name)")
    }

    /// Every single-byte change of every known name (all 256 values at every position), and the names
    /// themselves in both cases: a byte such as CR (0x0D | 0x20 == `-`) or `@` (0x40 | 0x20 == `` ` ``)
    /// must not pass for another.
    @Test func everySingleByteChangeClassifiesAsBytewise() {
        for name in Self.knownNames {
            let bytes = Array(name.utf8)
            #expect(classify(bytes).fast != .other, "\(name)")
            #expect(classify(Array(name.uppercased().utf8)).fast == classify(bytes).fast, "\(name)")
            for position in bytes.indices {
                for value in 0...255 {
                    var changed = bytes
                    changed[position] = UInt8(value)
                    let (fast, slow) = classify(changed)
                    #expect(fast == slow, "\(name) with \(value) at \(position)")
                }
            }
        }
    }

    private func parseTarget(_ target: [UInt8], method: String = "GET", version: String = " HTTP/1.1")
        -> HTTPRequestTarget?
    {
        let line = Array(method.utf8) + [0x20] + target + Array(version.utf8)
        guard
            case .request(_, let parsed, _, _)? = line.withUnsafeBytes({
                HTTPStartLine.parse($0, request: true, maxMethodBytes: 32)
            })
        else { return nil }
        return parsed
    }

    /// A target split at the start line resolves as the whole target's string did.
    @Test(arguments: [
        "/", "/a/b?x=1&y", "/a?", "/a?b?c", "/a#frag", "/a#f?g", "/a?q#f", "/?", "/#", "/%7e/..", "/a%20b?c=%3F",
        "*", "http://user@H:81?q", "http://Example.COM:80/p?q#f", "https://h:443", "h:443", "/x y", "//double",
        "/é?ü=1", "HTTP://h/p",
    ])
    func targetsResolveAsBefore(_ target: String) {
        for method in ["GET", "CONNECT", "OPTIONS"] {
            for version in [" HTTP/1.1", " HTTP/1.0", "  HTTP/1.1", " http/1.1", " HTTP/1."] {
                let parsed = parseTarget(Array(target.utf8), method: method, version: version)
                #expect(parsed != nil, "\(method) \(target)\(version)")
                for host in [nil, "Example.ORG:80", ""] as [String?] {
                    let normalized = host.flatMap {
                        $0.isEmpty ? nil : HTTPTarget.normalizedHost($0, defaultPort: "80")
                    }
                    let split = HTTPTarget.resolve(
                        method: method, target: parsed, normalizedHost: normalized, defaultHost: "10.0.0.1")
                    let whole = HTTPTarget.resolve(
                        method: method, target: target, hostField: host, defaultHost: "10.0.0.1")
                    #expect(split == whole, "\(method) \(target)\(version) host \(host ?? "-")")
                }
            }
        }
    }

    /// Invalid UTF-8 in a target is repaired part by part as the whole target was.
    @Test func nonUTF8TargetsResolveAsBefore() {
        let targets: [[UInt8]] = [
            [0x2F, 0xC3, 0x3F, 0x61], [0x2F, 0xFF, 0x23, 0x80], [0x2F, 0x61, 0x3F, 0xE2, 0x82],
            [0x2F, 0xE2, 0x82, 0x3F, 0xAC],
            [0x2F, 0xF0, 0x9F, 0x98, 0x80, 0x3F, 0xC0, 0xAF],
        ]
        for target in targets {
            let parsed = parseTarget(target)
            let whole = HTTPTarget.resolve(
                method: "GET", target: String(decoding: target, as: UTF8.self), hostField: nil, defaultHost: "d")
            #expect(HTTPTarget.resolve(method: "GET", target: parsed, normalizedHost: nil, defaultHost: "d") == whole)
        }
    }

    /// Lines the ` HTTP/1.x` shortcut might misjudge are parsed by the general rules.
    @Test(
        arguments: [
            ("GET / HTTP/1.1", "/", "HTTP/1.1", false), ("GET /a   HTTP/1.0", "/a", "HTTP/1.0", false),
            ("GET  HTTP/1.1", "", "HTTP/1.1", true), ("GET / HTTP/1.2", "/", "HTTP/1.2", false),
            ("GET HTTP/1.1 HTTP/1.1", "HTTP/1.1", "HTTP/1.1", false),
            ("GET /a HTTP/1.1 HTTP/1.1", "/a HTTP/1.1", "HTTP/1.1", false),
            ("GET /HTTP/1.1", "/HTTP/1.1", "HTTP/0.9", false), ("GET x\u{7F}y HTTP/1.1", nil, "", false),
            ("GET /a\tb HTTP/1.1", nil, "", false), ("GET /a?b\u{1}c HTTP/1.1", nil, "", false),
        ] as [(String, String?, String, Bool)])
    func versionShortcut(_ line: String, _ target: String?, _ version: String, _ nonstandard: Bool) {
        let parsed = Array(line.utf8).withUnsafeBytes { HTTPStartLine.parse($0, request: true, maxMethodBytes: 32) }
        guard let target else {
            #expect(parsed == nil, "\(line)")
            return
        }
        guard case .request(_, let t, let v, let n)? = parsed else {
            Issue.record("\(line) not parsed")
            return
        }
        #expect(t.joined == target && v == version && n == nonstandard, "\(line)")
    }

    /// Status lines with and without the ` HTTP/1.x` word shortcut give the versions the general rules give.
    @Test(arguments: [
        ("HTTP/1.1 200 OK", "HTTP/1.1", 200, false), ("HTTP/1.0 404", "HTTP/1.0", 404, false),
        ("HTTP/1.1  204 No Content", "HTTP/1.1", 204, false), ("HTTP/1.2 200 OK", "HTTP/1.2", 200, false),
        ("http/1.1 200 OK", "http/1.1", 200, true), ("HTTP/1.1 99 X", nil, 0, false), ("HTTP/1.1 200x", nil, 0, false),
        ("HTTP/1.1\t200 OK", nil, 0, false), ("HTTP/1.x 200 OK", nil, 0, false),
    ] as [(String, String?, Int, Bool)])
    func statusShortcut(_ line: String, _ version: String?, _ code: Int, _ nonstandard: Bool) {
        let parsed = Array(line.utf8).withUnsafeBytes { HTTPStartLine.parse($0, request: false, maxMethodBytes: 32) }
        guard let version else {
            #expect(parsed == nil, "\(line)")
            return
        }
        guard case .status(let v, let c, let n)? = parsed else {
            Issue.record("\(line) not parsed")
            return
        }
        #expect(v == version && c == code && n == nonstandard, "\(line)")
    }

    /// `Content-Length` kept as a number reads as its text would, through later lines and folds.
    @Test(arguments: [
        ["12"], ["0"], ["007"], ["000000000000000000"], ["999999999999999999"], ["9999999999999999999"], [" 5"],
        ["5", "5"], ["5", "6"], ["0012", "12"], ["12", "+12"], ["1x"], [""], ["12", "fold:34"], ["007", "fold:7"],
        ["-1"],
    ])
    func contentLengthAsNumber(_ lines: [String]) {
        var fast = HTTPHeadFields()
        var slow = HTTPHeadFields()
        for line in lines {
            if line.hasPrefix("fold:") {
                let value = String(line.dropFirst(5))
                fast.extend(with: value)
                slow.extend(with: value)
                continue
            }
            Array(line.utf8).withUnsafeBytes { fast.storeContentLength($0) }
            slow.store(.contentLength, value: line)
        }
        func length(_ f: HTTPHeadFields) -> HTTPBodyFraming.ContentLength {
            HTTPHeadFields.contentLength(value: f.contentLengthValue, list: f.contentLengthList)
        }
        #expect(length(fast) == HTTPBodyFraming.contentLength(slow.contentLengthList), "\(lines)")
        #expect(length(slow) == HTTPBodyFraming.contentLength(slow.contentLengthList))
        if fast.contentLengthValue < 0 { #expect(fast.contentLengthList == slow.contentLengthList, "\(lines)") }
    }

    /// The normalised `Host` follows `host` through an obs-fold.
    @Test func normalizedHostFollowsFolds() {
        var fields = HTTPHeadFields()
        fields.storeHost("Example.COM", normalized: "example.com")
        fields.extend(with: ":80")
        #expect(fields.host == "Example.COM :80")
        #expect(fields.normalizedHost == HTTPTarget.normalizedHost("Example.COM :80", defaultPort: "80"))
        // A second `Host` line is ignored, and so is a fold after it.
        fields.store(.host, value: "second.example")
        fields.extend(with: "more")
        #expect(fields.host == "Example.COM :80")
        var empty = HTTPHeadFields()
        empty.store(.host, value: "")
        #expect(empty.normalizedHost == nil)
        empty.extend(with: "H:80")
        #expect(empty.host == "H:80" && empty.normalizedHost == "h")
    }
}
