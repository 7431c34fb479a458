import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficWire

@testable import TrafficHTTP

/// One call the reassembler makes: bytes for a direction, or a gap.
enum StreamEvent: Sendable {
    case data(Direction, [UInt8])
    case gap(Direction, Int)

    static func c(_ text: String) -> StreamEvent { .data(.clientToServer, Array(text.utf8)) }
    static func s(_ text: String) -> StreamEvent { .data(.serverToClient, Array(text.utf8)) }
}

/// Every field of a record, comparable.
struct RecordSnapshot: Equatable, Sendable, CustomStringConvertible {
    var connection = 7
    var index: Int
    var kind: MessageRecord.Kind
    /// Index of the fixture event that carried the first byte (event i has time (i + 1) µs).
    var event: Int
    var client = "10.0.0.1:50000"
    var server = "10.0.0.2:80"
    var method: String?
    var status: Int?
    var version: String? = "HTTP/1.1"
    var host: String
    var path: String
    var query: String?
    var line = 0
    var header = 0
    var cookie = 0
    var body = 0
    var encoded = 0
    var decoded: Int? = 0
    var missing = 0
    var contentType: String?
    var contentEncoding: String?
    var transferEncoding: String?
    var complete = true
    var paired = true
    var flags: [String] = []

    init(
        _ kind: MessageRecord.Kind, _ index: Int, at event: Int, method: String? = "GET", status: Int? = nil,
        version: String? = "HTTP/1.1", host: String = "h", path: String = "/", query: String? = nil,
        line: Int, header: Int, cookie: Int = 0, body: Int = 0, encoded: Int? = nil, decoded: Int?? = .none,
        missing: Int = 0, contentType: String? = nil, contentEncoding: String? = nil,
        transferEncoding: String? = nil, complete: Bool = true, paired: Bool = true, flags: [String] = [],
        server: String = "10.0.0.2:80"
    ) {
        self.kind = kind
        self.index = index
        self.event = event
        self.method = method
        self.status = status
        self.version = version
        self.host = host
        self.path = path
        self.query = query
        self.line = line
        self.header = header
        self.cookie = cookie
        self.body = body
        self.encoded = encoded ?? body
        // `decoded` omitted: the same as encoded; `.some(nil)`: unknown.
        self.decoded = decoded ?? self.encoded
        self.missing = missing
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.transferEncoding = transferEncoding
        self.complete = complete
        self.paired = paired
        self.flags = flags
        self.server = server
    }

    init(_ r: MessageRecord) {
        connection = r.connection
        index = r.index
        kind = r.kind
        event = Int(r.time.nanoseconds / 1_000) - 1
        client = r.client
        server = r.server
        method = r.method
        status = r.status
        version = r.version
        host = r.host
        path = r.path
        query = r.query
        line = r.lineBytes
        header = r.headerBytes
        cookie = r.cookieBytes
        body = r.bodyBytes
        encoded = r.encodedBodyBytes
        decoded = r.decodedBodyBytes
        missing = r.missingBytes
        contentType = r.contentType
        contentEncoding = r.contentEncoding
        transferEncoding = r.transferEncoding
        complete = r.complete
        paired = r.paired
        flags = r.flags.map(\.name)
    }

    var description: String {
        "\(kind) #\(index) @\(event) \(method ?? "-") \(status.map(String.init) ?? "-") \(version ?? "-") \(host) \(path)"
            + (query.map { "?\($0)" } ?? "") + " line=\(line) header=\(header) cookie=\(cookie) body=\(body)"
            + " encoded=\(encoded) decoded=\(decoded.map(String.init) ?? "nil") missing=\(missing)"
            + " ct=\(contentType ?? "-") ce=\(contentEncoding ?? "-") te=\(transferEncoding ?? "-")"
            + " complete=\(complete) paired=\(paired) flags=\(flags)"
    }
}

/// Per-direction totals a fixture expects besides the records.
struct Leftovers: Equatable, Sendable {
    var nonHTTP = [0, 0]
    var tunnel = [0, 0]
}

/// A byte-level test case: events in capture order, the records they must produce, and leftovers.
struct HTTPFixture: Sendable, CustomTestStringConvertible {
    var name: String
    var events: [StreamEvent]
    var expected: [RecordSnapshot]
    var leftovers = Leftovers()
    var isHTTP = true
    var serverEndpoint = Endpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80)
    var limits = HTTPLimits()

    var testDescription: String { name }

    init(
        _ name: String, _ events: [StreamEvent], _ expected: [RecordSnapshot], leftovers: Leftovers = Leftovers(),
        isHTTP: Bool = true, server: Endpoint? = nil, limits: HTTPLimits = HTTPLimits()
    ) {
        self.name = name
        self.events = events
        self.expected = expected
        self.leftovers = leftovers
        self.isHTTP = isHTTP
        if let server { serverEndpoint = server }
        self.limits = limits
    }
}

/// What one run of a fixture produced.
struct ParseRun: Equatable {
    var records: [RecordSnapshot]
    var counts: [HTTPByteCounts]
    var isHTTP: Bool
}

enum FixtureRunner {
    static func time(_ event: Int) -> CaptureTime { CaptureTime(nanoseconds: Int64(event + 1) * 1_000) }

    /// Runs the fixture with data events cut at the given global data offsets (sorted).
    static func run(_ fixture: HTTPFixture, cuts: [Int]) -> ParseRun {
        let info = TCPConnectionInfo(
            id: 7, client: Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 50000),
            server: fixture.serverEndpoint, start: .zero)
        var records: [MessageRecord] = []
        let parser = HTTPConnectionParser(info: info, limits: fixture.limits) { records.append($0) }
        var base = 0
        var cutIndex = 0
        for (i, event) in fixture.events.enumerated() {
            switch event {
            case .gap(let direction, let n):
                parser.skip(n, direction: direction, time: time(i))
            case .data(let direction, let bytes):
                let segment = WireSpan(time: time(i), overheadBytes: 54)
                var start = 0
                while cutIndex < cuts.count, cuts[cutIndex] <= base { cutIndex += 1 }
                var pieces: [Range<Int>] = []
                while cutIndex < cuts.count, cuts[cutIndex] < base + bytes.count {
                    pieces.append(start..<(cuts[cutIndex] - base))
                    start = cuts[cutIndex] - base
                    cutIndex += 1
                }
                pieces.append(start..<bytes.count)
                bytes.withUnsafeBytes { all in
                    for piece in pieces {
                        parser.receive(
                            UnsafeRawBufferPointer(rebasing: all[piece]), direction: direction, span: segment)
                    }
                }
                base += bytes.count
            }
        }
        parser.finish(time: time(fixture.events.count))
        return ParseRun(
            records: records.map(RecordSnapshot.init),
            counts: Direction.allCases.map { parser.counts(for: $0) }, isHTTP: parser.isHTTP)
    }

    static func dataLength(_ fixture: HTTPFixture) -> Int {
        fixture.events.reduce(0) { sum, event in
            if case .data(_, let bytes) = event { return sum + bytes.count }
            return sum
        }
    }

    /// The accounting invariant, with totals computed from the fixture itself.
    static func checkInvariant(_ fixture: HTTPFixture, _ run: ParseRun, sourceLocation: SourceLocation) {
        for direction in Direction.allCases {
            var received = 0
            var skipped = 0
            for event in fixture.events {
                switch event {
                case .data(let d, let bytes) where d == direction: received += bytes.count
                case .gap(let d, let n) where d == direction: skipped += n
                default: break
                }
            }
            let c = run.counts[direction.rawValue]
            let kind: MessageRecord.Kind = direction == .clientToServer ? .request : .response
            let transfer = run.records.filter { $0.kind == kind }.reduce(0) { $0 + $1.line + $1.header + $1.body }
            #expect(c.messageBytes == transfer, "\(direction.name) messageBytes", sourceLocation: sourceLocation)
            #expect(c.receivedBytes == received, "\(direction.name) received", sourceLocation: sourceLocation)
            #expect(c.missingBytes == skipped, "\(direction.name) missing", sourceLocation: sourceLocation)
            #expect(
                transfer + c.nonHTTPBytes + c.tunnelBytes + c.missingBytes == received + skipped,
                "\(direction.name) invariant", sourceLocation: sourceLocation)
            #expect(c.isBalanced, sourceLocation: sourceLocation)
        }
    }

    /// Whole, byte by byte, split in two at every offset and in three at many offset pairs: same result.
    static func check(_ fixture: HTTPFixture, sourceLocation: SourceLocation = #_sourceLocation) {
        let whole = run(fixture, cuts: [])
        #expect(whole.records.count == fixture.expected.count, sourceLocation: sourceLocation)
        for (i, (actual, expected)) in zip(whole.records, fixture.expected).enumerated() where actual != expected {
            Issue.record(
                "record \(i)\n  actual:   \(actual)\n  expected: \(expected)", sourceLocation: sourceLocation)
        }
        if whole.records.count != fixture.expected.count {
            Issue.record("records: \(whole.records)", sourceLocation: sourceLocation)
        }
        #expect(
            whole.counts.map(\.nonHTTPBytes) == fixture.leftovers.nonHTTP, "nonHTTP", sourceLocation: sourceLocation)
        #expect(whole.counts.map(\.tunnelBytes) == fixture.leftovers.tunnel, "tunnel", sourceLocation: sourceLocation)
        #expect(whole.isHTTP == fixture.isHTTP, sourceLocation: sourceLocation)
        checkInvariant(fixture, whole, sourceLocation: sourceLocation)

        let n = dataLength(fixture)
        guard n > 1 else { return }
        func same(_ cuts: [Int], _ label: String) -> Bool {
            let other = run(fixture, cuts: cuts)
            guard other == whole else {
                Issue.record(
                    "\(label) differs:\n  got:  \(other.records)\n  want: \(whole.records)\n  counts \(other.counts) vs \(whole.counts)",
                    sourceLocation: sourceLocation)
                return false
            }
            return true
        }
        guard same(Array(1..<n), "byte by byte") else { return }
        for k in 1..<n where !same([k], "split at \(k)") { return }
        // Three pieces: all pairs for short fixtures, a stride over the first cut for long ones.
        let stride = max(1, n / 40)
        for i in Swift.stride(from: 1, to: n - 1, by: stride) {
            for j in (i + 1)..<n where !same([i, j], "split at \(i), \(j)") { return }
        }
    }
}
