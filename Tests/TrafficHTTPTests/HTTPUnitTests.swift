import TrafficCapture
import TrafficCodecs
import TrafficTestSupport
import Testing
import TrafficReassembly
import TrafficSessions

@testable import TrafficHTTP

@Suite("HTTP building blocks")
struct HTTPUnitTests {
    @Test(arguments: [
        ("5", HTTPBodyFraming.ContentLength.valid(5)),
        ("0005", .valid(5)),
        (" 7 ", .valid(7)),
        ("3, 3", .valid(3)),
        ("3,4", .malformed),
        ("-5", .malformed),
        ("+5", .malformed),
        ("", .malformed),
        ("abc", .malformed),
        ("9223372036854775807", .valid(Int.max)),
        ("9223372036854775808", .malformed),
        ("18446744073709551616", .malformed),
    ])
    func contentLength(_ value: String, _ expected: HTTPBodyFraming.ContentLength) {
        #expect(HTTPBodyFraming.contentLength(value) == expected)
    }

    @Test(arguments: [
        ("chunked", true), ("gzip, chunked", true), ("Chunked ", true), ("chunked, gzip", false), ("gzip", false),
        ("chunked,", true),
    ])
    func chunkedLast(_ value: String, _ expected: Bool) {
        #expect(HTTPBodyFraming.isChunkedLast(value) == expected)
    }

    @Test(arguments: [
        ("Example.COM", "example.com"), ("h:80", "h"), ("h:", "h"), ("h:8080", "h:8080"), ("[::1]:80", "[::1]"),
        ("[::1]:8443", "[::1]:8443"), ("[::1]", "[::1]"),
    ])
    func hostNormalisation(_ raw: String, _ expected: String) {
        #expect(HTTPTarget.normalizedHost(raw, defaultPort: "80") == expected)
    }

    @Test func targets() {
        let d = "10.0.0.2"
        #expect(
            HTTPTarget.resolve(method: "GET", target: "/a/b?x=1&y", hostField: "H", defaultHost: d)
                == HTTPTarget(host: "h", path: "/a/b", query: "x=1&y"))
        #expect(
            HTTPTarget.resolve(method: "GET", target: "/a?", hostField: nil, defaultHost: d)
                == HTTPTarget(host: d, path: "/a", query: ""))
        #expect(
            HTTPTarget.resolve(method: "GET", target: "http://user@H:81?q", hostField: "x", defaultHost: d)
                == HTTPTarget(host: "h:81", path: "/", query: "q"))
        #expect(
            HTTPTarget.resolve(method: "CONNECT", target: "h:443", hostField: nil, defaultHost: d)
                == HTTPTarget(host: "h:443", path: "h:443", query: nil))
    }

    @Test(arguments: [
        ("GET / HTTP/1.1", true, true), ("M-SEARCH * HTTP/1.1", true, true), ("GET /x", true, true),
        ("POST /x", true, false), ("GET x", true, false), ("GET / HTTP/2.0", true, false),
        ("GET / HTTP/1.1 junk", true, false), ("HTTP/1.1 200 OK", false, true), ("HTTP/1.0 404", false, true),
        ("HTTP/1.1 20 OK", false, false), ("HTTP/2 200", false, false), ("SSH-2.0-x", false, false),
    ])
    func startLines(_ text: String, _ request: Bool, _ valid: Bool) {
        let parsed = Array(text.utf8).withUnsafeBytes { HTTPStartLine.parse($0, request: request, maxMethodBytes: 32) }
        #expect((parsed != nil) == valid)
    }

    /// Chunked framing drip-fed one byte at a time gives the same data count as whole.
    @Test(arguments: ["3\r\nabc\r\n0\r\n\r\n", "1;a=b\r\nx\r\n0\r\nT: 1\r\nU: 2\r\n\r\n", "A\n0123456789\n0\n\n"])
    func chunkedDripFeed(_ text: String) {
        let bytes = Array(text.utf8)
        func run(_ pieces: [Range<Int>]) -> (data: Int, done: Bool) {
            var parser = ChunkedBodyParser()
            var data = 0
            var done = false
            bytes.withUnsafeBytes { all in
                for piece in pieces {
                    let slice = UnsafeRawBufferPointer(rebasing: all[piece])
                    var offset = 0
                    while offset < slice.count, !done {
                        switch parser.consume(slice, from: offset) {
                        case .framing(let end): offset = end
                        case .data(let end):
                            data += end - offset
                            offset = end
                        case .done(let end):
                            offset = end
                            done = true
                        case .malformed:
                            Issue.record("malformed")
                            return
                        }
                    }
                }
            }
            return (data, done)
        }
        let whole = run([0..<bytes.count])
        #expect(whole.done)
        let drip = run((0..<bytes.count).map { $0..<($0 + 1) })
        #expect(drip.data == whole.data && drip.done)
    }
}

/// `restart(time:host:decrypted:)` resets a parser's record in place instead of assigning a new record: every
/// stored property but the shared identity must come back to a fresh record's value. A property added to the record
/// and forgotten in `restart` makes the first expectation fail (it is not made different below).
@Test func restartingARecordResetsEveryStoredProperty() {
    var template = MessageRecord(
        connection: 7, index: 0, kind: .response, time: CaptureTime(seconds: 1, nanoseconds: 2),
        client: "198.18.5.85:33839", server: "198.19.0.10:80", host: "198.19.0.10", path: "")
    template.decodedBodyBytes = 0
    var used = template
    used.index = 9
    used.time = CaptureTime(seconds: 5, nanoseconds: 6)
    used.method = "POST"
    used.status = 201
    used.version = "HTTP/1.1"
    used.streamID = 3
    used.host = "api.example.com.with.a.long.name"
    used.path = "/api/v1/orders/32851/with/a/long/path"
    used.query = "a=1&b=2&c=3&d=4&e=5"
    used.lineBytes = 1
    used.headerBytes = 2
    used.cookieBytes = 3
    used.headerDecodedBytes = 30
    used.cookieDecodedBytes = 31
    used.bodyBytes = 4
    used.encodedBodyBytes = 5
    used.decodedBodyBytes = nil
    used.missingBytes = 6
    used.tls = MessageRecord.TLSBytes(direction: "client_to_server")
    used.quic = MessageRecord.QUICBytes(direction: "client_to_server")
    used.handshakeBytes = 7
    used.teardownBytes = 8
    used.packetOverheadBytes = 9
    used.retransmittedBytes = 10
    used.tunnelBytes = 11
    used.tlsOverheadBytes = 14
    used.tlsHandshakeBytes = 15
    used.h2ControlBytes = 16
    used.quicOverheadBytes = 17
    used.h3ControlBytes = 18
    used.quicConnectionBytes = 19
    used.streamOffset = 12
    used.segmentHeaderBytes = 13
    used.decrypted = true
    used.lastByteTime = CaptureTime(seconds: 7, nanoseconds: 8)
    used.connect = .init(start: CaptureTime(seconds: 1, nanoseconds: 3), end: CaptureTime(seconds: 1, nanoseconds: 4))
    used.tlsHandshake = .init(start: CaptureTime(seconds: 1, nanoseconds: 5), end: CaptureTime(seconds: 1, nanoseconds: 6))
    used.wait = CaptureTime(nanoseconds: 95_000)
    used.head = Array("GET / HTTP/1.1\nHost: a\n".utf8)
    used.body = Array("a=1".utf8)
    used.contentType = "application/json; charset=utf-8"
    used.contentEncoding = "gzip"
    used.transferEncoding = "chunked"
    used.complete = false
    used.paired = true
    used.flags = [.gap, .truncated]
    let identity: Set<String> = ["connection", "kind", "client", "server"]
    func fields(_ record: MessageRecord) -> [(String, String)] {
        Mirror(reflecting: record).children.map { ($0.label ?? "?", String(reflecting: $0.value)) }
    }
    for ((label, before), (_, original)) in zip(fields(used), fields(template)) where !identity.contains(label) {
        #expect(before != original, "the test leaves \(label) as in the template: set it above")
    }
    // `restartForStartLine` leaves the version, and with `keepingMethod` the method, for the caller to assign:
    // once assigned, the record is the fresh one too.
    for keepingMethod in [false, true] {
        var started = used
        started.restartForStartLine(
            time: template.time, host: template.host, decrypted: template.decrypted, keepingMethod: keepingMethod)
        #expect(started.version == used.version)
        #expect(started.method == (keepingMethod ? used.method : nil))
        started.version = template.version
        if keepingMethod { started.method = template.method }
        for ((label, after), (_, original)) in zip(fields(started), fields(template)) {
            #expect(after == original, "\(label) after restartForStartLine, keepingMethod \(keepingMethod)")
        }
    }
    used.restart(time: template.time, host: template.host, decrypted: template.decrypted)
    for ((label, after), (_, original)) in zip(fields(used), fields(template)) {
        #expect(after == original, "\(label) after restart")
    }
    #expect(fields(used).count == fields(template).count)
}

/// `HTTPHeadFields.clear()` empties the fields in place: the result equals a new value, property by property.
@Test func clearingHeadFieldsEqualsNewFields() {
    var fields = HTTPHeadFields()
    fields.store(.host, value: "api.example.com")
    fields.store(.contentType, value: "application/json; charset=utf-8")
    fields.store(.contentEncoding, value: "gzip")
    fields.store(.transferEncoding, value: "chunked")
    fields.store(.contentLength, value: "12")
    fields.store(.upgrade, value: "websocket")
    fields.target = .origin(path: "/api/v1/orders/32851", query: "with=a&long=query")
    // Both forms of Content-Length at once (never so in a parse): clear must empty each.
    fields.contentLengthValue = 12
    fields.contentLengthDigits = 2
    fields.fieldCount = 7
    func values(_ f: HTTPHeadFields) -> [(String, String)] {
        Mirror(reflecting: f).children.map { ($0.label ?? "?", String(reflecting: $0.value)) }
    }
    for ((label, set), (_, empty)) in zip(values(fields), values(HTTPHeadFields())) {
        #expect(set != empty, "the test leaves \(label) empty: set it above")
    }
    // `keepingTarget` leaves the target for the caller's assignment and empties everything else.
    var kept = fields
    kept.clear(keepingTarget: true)
    #expect(kept.target == fields.target)
    kept.target = nil
    for ((label, after), (_, empty)) in zip(values(kept), values(HTTPHeadFields())) {
        #expect(after == empty, "\(label) after clear(keepingTarget:)")
    }
    fields.clear()
    for ((label, after), (_, empty)) in zip(values(fields), values(HTTPHeadFields())) {
        #expect(after == empty, "\(label) after clear")
    }
}

/// Held request records come back oldest first, and pipelining that never drains the queue (one or two
/// requests always held) reuses a bounded number of slots.
@Test func heldRequestRecordsAreFIFOInBoundedSlots() {
    let template = MessageRecord(
        connection: 1, index: 0, kind: .request, time: .zero, client: "198.18.5.85:33839",
        server: "198.19.0.10:80", host: "198.19.0.10", path: "")
    let parser = HTTPMessageParser(isRequest: true, template: template, limits: HTTPLimits(), scratch: DecodingScratch())
    var held = HeldRequestRecords()
    var next = 1, expected = 1
    func hold() {
        parser.record.restart(time: template.time, host: template.host, decrypted: template.decrypted)
        parser.record.index = next
        parser.record.path = "/api/v1/orders/\(next)/with/a/long/path"
        held.hold(from: parser)
        next += 1
    }
    func release() {
        var seen: (Int, String)?
        held.releaseOldest { seen = ($0.index, $0.path) }
        #expect(seen?.0 == expected && seen?.1 == "/api/v1/orders/\(expected)/with/a/long/path")
        expected += 1
    }
    hold()
    hold()
    for _ in 0..<1000 {
        hold()
        release()
    }
    #expect(held.slotCount <= 4)
    release()
    release()
    var none = true
    held.releaseOldest { _ in none = false }
    #expect(none)
    for _ in 0..<5 { hold() }
    for _ in 0..<5 { release() }
    #expect(expected == next)
}

/// Random and mutated input: nothing traps, and the accounting invariant holds.
@Suite("HTTP robustness")
struct HTTPRobustnessTests {
    @Test(arguments: 0..<8)
    func mutatedFixtures(seed: Int) {
        var rng = SplitMix(state: UInt64(seed) &* 7919)
        let pool = framingFixtures + exchangeFixtures + anomalyFixtures
        let alphabet = Array("\r\n :;0123456789aAfFxX-HTTP/1.1GETchunked".utf8) + [0, 0xFF]
        for fixture in pool {
            for _ in 0..<20 {
                var mutated = fixture
                mutated.events = fixture.events.map { event in
                    guard case .data(let direction, var bytes) = event, !bytes.isEmpty else { return event }
                    for _ in 0..<Int.random(in: 0...3, using: &rng) {
                        let i = Int.random(in: 0..<bytes.count, using: &rng)
                        switch Int.random(in: 0..<3, using: &rng) {
                        case 0: bytes[i] = alphabet.randomElement(using: &rng)!
                        case 1: bytes.remove(at: i)
                        default: bytes.insert(alphabet.randomElement(using: &rng)!, at: i)
                        }
                        if bytes.isEmpty { break }
                    }
                    return .data(direction, bytes)
                }
                if Bool.random(using: &rng), !mutated.events.isEmpty {
                    let at = Int.random(in: 0...mutated.events.count, using: &rng)
                    let direction: Direction = Bool.random(using: &rng) ? .clientToServer : .serverToClient
                    mutated.events.insert(.gap(direction, Int.random(in: 1...50, using: &rng)), at: at)
                }
                let n = FixtureRunner.dataLength(mutated)
                let cuts = n > 1 ? [Int.random(in: 1..<n, using: &rng)] : []
                let run = FixtureRunner.run(mutated, cuts: cuts)
                FixtureRunner.checkInvariant(mutated, run, sourceLocation: #_sourceLocation)
                // Split-independence holds for any input, valid or not.
                #expect(FixtureRunner.run(mutated, cuts: []) == run, "\(mutated.name) cut \(cuts)")
            }
        }
    }

    @Test(arguments: 0..<4)
    func randomBytes(seed: Int) {
        var rng = SplitMix(state: UInt64(seed) &+ 12345)
        for _ in 0..<50 {
            var events: [StreamEvent] = []
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let direction: Direction = Bool.random(using: &rng) ? .clientToServer : .serverToClient
                let count = Int.random(in: 0...200, using: &rng)
                events.append(.data(direction, (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }))
            }
            let fixture = HTTPFixture("random", events, [])
            let run = FixtureRunner.run(fixture, cuts: [])
            FixtureRunner.checkInvariant(fixture, run, sourceLocation: #_sourceLocation)
        }
    }
}
