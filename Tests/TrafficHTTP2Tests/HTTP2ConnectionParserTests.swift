import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficWire

@testable import TrafficHTTP2

/// Frames and HPACK blocks written by hand, so every expected size below is counted from the bytes:
/// a frame is 9 + its payload; `lit(name, value)` is a literal without indexing with a new name
/// (RFC 7541 §6.2.2: 0x00, a 7-bit length, the name, a 7-bit length, the value) = 3 + name + value bytes;
/// static-table fields are one byte (§6.1: 0x80 | index).
enum H2 {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff), type, flags,
                UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)]
            + payload
    }

    static func lit(_ name: String, _ value: String) -> [UInt8] {
        [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    /// Literal with incremental indexing, new name (§6.2.1): 0x40, then as `lit`.
    static func indexing(_ name: String, _ value: String) -> [UInt8] { [0x40] + lit(name, value).dropFirst() }

    // Static table (RFC 7541 Appendix A): 2 :method GET, 3 :method POST, 4 :path /, 6 :scheme http,
    // 8 :status 200, 13 :status 404.
    static let get: UInt8 = 0x82, post: UInt8 = 0x83, root: UInt8 = 0x84, http: UInt8 = 0x86, ok: UInt8 = 0x88

    static let settings = frame(4, stream: 0, [])
    static let settingsAck = frame(4, flags: 1, stream: 0, [])
}

/// Runs a parser over client and server byte runs in the given order and collects its records.
final class H2Run {
    var records: [MessageRecord] = []
    var charges: [(Int?, Direction, Int)] = []
    let parser: HTTP2ConnectionParser

    init(limits: HTTP2Limits = HTTP2Limits(), upgraded: Int? = nil) {
        let upgraded = upgraded.map { (index: $0, method: Optional("GET"), host: "h", path: "/", query: Optional<String>.none) }
        let info = TCPConnectionInfo(
            id: 0, client: Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 40000),
            server: Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 8080), start: .zero)
        let box = Box()
        parser = HTTP2ConnectionParser(info: info, limits: limits, upgraded: upgraded) { box.records.append($0) }
        parser.controlCharge = { index, direction, bytes, _ in box.charges.append((index, direction, bytes)) }
        self.box = box
    }

    private final class Box {
        var records: [MessageRecord] = []
        var charges: [(Int?, Direction, Int)] = []
    }
    private let box: Box

    func send(_ direction: Direction, _ bytes: [UInt8], time: Int64 = 0) {
        bytes.withUnsafeBytes { parser.receive($0, direction: direction, span: WireSpan(time: CaptureTime(nanoseconds: time))) }
    }

    func finish() -> [MessageRecord] {
        parser.finish(time: .zero)
        records = box.records
        charges = box.charges
        return records
    }

    /// Every received byte is in a record, control or non-HTTP: Σ transfer_bytes + control + non-HTTP.
    func conserves() -> Bool {
        for direction in Direction.allCases {
            let c = parser.counts(for: direction)
            let side: MessageRecord.Kind = direction == .clientToServer ? .request : .response
            let transfer = records.filter { $0.kind == side }.reduce(0) { $0 + $1.transferBytes }
            guard transfer == c.messageBytes, c.messageBytes + c.controlBytes + c.nonHTTPBytes == c.receivedBytes
            else { return false }
        }
        return true
    }
}

@Suite struct HTTP2ConnectionParserTests {
    /// One GET and its padded, gzip-less answer, every size counted from the frames.
    @Test func oneExchangeSizesAsSent() {
        let run = H2Run()
        // Request block: :method GET (1) :scheme http (1) :path / (1) + lit(":authority","a.example")
        // (3 + 10 + 9 = 22) + lit("cookie","id=42") (3 + 6 + 5 = 14) = 39 bytes.
        let request = [H2.get, H2.http, H2.root] + H2.lit(":authority", "a.example") + H2.lit("cookie", "id=42")
        #expect(request.count == 39)
        run.send(.clientToServer, H2.preface + H2.settings + H2.frame(1, flags: 0x5, stream: 1, request))
        // Response block: :status 200 (1) + lit("content-type","text/plain") (3 + 12 + 10 = 25) = 26.
        let response = [H2.ok] + H2.lit("content-type", "text/plain")
        // DATA padded: pad length 1 byte + 5 data + 3 padding = 9 payload bytes, END_STREAM.
        let data = H2.frame(0, flags: 0x9, stream: 1, [3] + Array("hello".utf8) + [0, 0, 0])
        run.send(.serverToClient, H2.settings + H2.settingsAck + H2.frame(1, flags: 0x4, stream: 1, response) + data)
        run.send(.clientToServer, H2.settingsAck)
        let records = run.finish()
        #expect(records.count == 2)
        let req = records.first { $0.kind == .request }!, resp = records.first { $0.kind == .response }!
        #expect(req.version == "HTTP/2" && req.streamID == 1 && req.index == 1)
        #expect(req.method == "GET" && req.host == "a.example" && req.path == "/")
        #expect(req.lineBytes == 0 && req.headerBytes == 9 + 39 && req.bodyBytes == 0)
        // Decoded: ":method"+"GET" 10, ":scheme"+"http" 11, ":path"+"/" 6, ":authority"+"a.example" 19,
        // "cookie"+"id=42" 11 = 57.
        #expect(req.headerDecodedBytes == 57)
        #expect(req.cookieBytes == 14 && req.cookieDecodedBytes == 11)
        #expect(req.complete && req.paired)
        #expect(resp.status == 200 && resp.method == "GET" && resp.path == "/")
        #expect(resp.headerBytes == 9 + 26 && resp.headerDecodedBytes == 7 + 3 + 12 + 10)
        #expect(resp.bodyBytes == 9 + 9 && resp.encodedBodyBytes == 5 && resp.decodedBodyBytes == 5)
        #expect(resp.transferBytes == 35 + 18 && resp.complete)
        // Control: preface 24 + SETTINGS 9 + ACK 9 on the client side; SETTINGS 9 + ACK 9 from the server.
        #expect(run.parser.counts(for: .clientToServer).controlBytes == 24 + 9 + 9)
        #expect(run.parser.counts(for: .serverToClient).controlBytes == 18)
        #expect(run.conserves())
    }

    /// A cookie whose representation spans HEADERS → CONTINUATION counts whole; the block's frames are all
    /// header bytes; PRIORITY fields and padding in HEADERS are header bytes too.
    @Test func continuationPriorityAndPadding() {
        let run = H2Run()
        let block = [H2.get, H2.http, H2.root] + H2.lit(":authority", "h") + H2.lit("cookie", "a=1; b=2; c=3")
        // 3 + (3 + 10 + 1) + (3 + 6 + 13) = 39; cut in the middle of the cookie's value.
        let cut = 30
        // HEADERS with PADDED|PRIORITY (0x28), no END_HEADERS: pad length 1, dependency 4, weight 1, fragment, 2 pad.
        let first = H2.frame(1, flags: 0x28 | 0x1, stream: 1, [2, 0, 0, 0, 0, 15] + Array(block[..<cut]) + [0, 0])
        let second = H2.frame(9, flags: 0x4, stream: 1, Array(block[cut...]))
        run.send(.clientToServer, H2.preface + first + second)
        run.send(.serverToClient, H2.frame(1, flags: 0x5, stream: 1, [H2.ok]))
        let records = run.finish()
        let req = records.first { $0.kind == .request }!
        #expect(req.headerBytes == (9 + 1 + 5 + 30 + 2) + (9 + 9))
        #expect(req.cookieBytes == 22 && req.cookieDecodedBytes == 6 + 13)
        #expect(req.complete && req.host == "h")
        #expect(run.conserves())
    }

    /// RST_STREAM flags what was not complete; DATA in flight after it still counts to the body.
    @Test func resetStreamKeepsLateData() {
        let run = H2Run()
        run.send(.clientToServer, H2.preface + H2.frame(1, flags: 0x5, stream: 1, [H2.get, H2.http, H2.root]))
        run.send(.serverToClient, H2.frame(1, flags: 0x4, stream: 1, [H2.ok]) + H2.frame(0, stream: 1, [UInt8](repeating: 7, count: 100)))
        run.send(.clientToServer, H2.frame(3, stream: 1, [0, 0, 0, 8]))
        run.send(.serverToClient, H2.frame(0, stream: 1, [UInt8](repeating: 7, count: 50)))
        let records = run.finish()
        let resp = records.first { $0.kind == .response }!
        #expect(resp.flags.contains(.reset) && !resp.complete)
        #expect(resp.bodyBytes == 109 + 59 && resp.encodedBodyBytes == 150)
        let req = records.first { $0.kind == .request }!
        #expect(req.complete && !req.flags.contains(.reset))
        // The RST_STREAM (13 bytes) is the client's control, charged to exchange 1.
        #expect(run.charges.contains { $0.0 == 1 && $0.1 == .clientToServer && $0.2 == 13 })
        #expect(run.conserves())
    }

    /// A pushed stream: a response record named by its PUSH_PROMISE; the promise is control bytes of the
    /// stream it came on.
    @Test func serverPush() {
        let run = H2Run()
        run.send(.clientToServer, H2.preface + H2.frame(1, flags: 0x5, stream: 1, [H2.get, H2.http, H2.root] + H2.lit(":authority", "h")))
        let promise = H2.frame(5, flags: 0x4, stream: 1, [0, 0, 0, 2] + [H2.get, H2.http] + H2.lit(":path", "/style.css") + H2.lit(":authority", "h"))
        run.send(.serverToClient, promise + H2.frame(1, flags: 0x4, stream: 1, [H2.ok]) + H2.frame(1, flags: 0x4, stream: 2, [H2.ok])
            + H2.frame(0, flags: 0x1, stream: 2, Array("body{}".utf8)) + H2.frame(0, flags: 0x1, stream: 1, Array("<html>".utf8)))
        let records = run.finish()
        #expect(records.count == 3)
        let pushed = records.first { $0.flags.contains(.pushed) }!
        #expect(pushed.kind == .response && pushed.streamID == 2 && pushed.path == "/style.css" && !pushed.paired)
        #expect(pushed.headerBytes == 10 && pushed.bodyBytes == 15)
        #expect(run.parser.counts(for: .serverToClient).controlBytes == promise.count)
        #expect(run.conserves())
    }

    /// An interim 103 is a response record of its own, complete when its block ends.
    @Test func interimResponse() {
        let run = H2Run()
        run.send(.clientToServer, H2.preface + H2.frame(1, flags: 0x5, stream: 1, [H2.get, H2.http, H2.root]))
        run.send(.serverToClient, H2.frame(1, flags: 0x4, stream: 1, H2.lit(":status", "103") + H2.lit("link", "</a.css>"))
            + H2.frame(1, flags: 0x5, stream: 1, [H2.ok]))
        let records = run.finish()
        let responses = records.filter { $0.kind == .response }
        #expect(responses.map(\.status) == [103, 200])
        #expect(responses.allSatisfy { $0.complete && $0.index == 1 && $0.streamID == 1 })
        #expect(responses[0].headerBytes == 9 + (3 + 7 + 3) + (3 + 4 + 8))
    }

    /// After an h2c upgrade, stream 1 is the upgrading exchange's response; the client's next stream is the
    /// next exchange.
    @Test func afterUpgrade() {
        let run = H2Run(upgraded: 1)
        run.send(.serverToClient, H2.settings + H2.frame(1, flags: 0x5, stream: 1, [H2.ok]))
        run.send(.clientToServer, H2.preface + H2.settings + H2.frame(1, flags: 0x5, stream: 3, [H2.get, H2.http, H2.root]))
        run.send(.serverToClient, H2.frame(1, flags: 0x5, stream: 3, [H2.ok]))
        let records = run.finish()
        #expect(records.map(\.index) == [1, 2, 2])
        #expect(records.map(\.streamID) == [1, 3, 3])
        #expect(records[0].kind == .response && records[0].paired)
    }

    /// A gap inside a DATA frame keeps the framing; a gap across a frame header loses it, the next frame is
    /// found again, and HPACK's table is lost (later blocks' decoded sizes unknown).
    @Test func gaps() {
        let run = H2Run()
        run.send(.clientToServer, H2.preface + H2.frame(1, flags: 0x5, stream: 1, [H2.get, H2.http, H2.root] + H2.indexing(":authority", "h")))
        let head = H2.frame(1, flags: 0x4, stream: 1, [H2.ok])
        let data = H2.frame(0, stream: 1, [UInt8](repeating: 1, count: 100))
        run.send(.serverToClient, head + Array(data[..<50]))
        run.parser.skip(20, direction: .serverToClient, time: .zero)
        run.send(.serverToClient, Array(data[70...]) + H2.frame(0, flags: 0x1, stream: 1, [1, 2]))
        // Client: stream 3 uses the dynamic-table entry (index 62 = :authority h); a gap covering a whole
        // frame header first.
        run.parser.skip(13, direction: .clientToServer, time: .zero)
        run.send(.clientToServer, H2.frame(1, flags: 0x5, stream: 3, [H2.get, H2.http, H2.root, 0x80 | 62]))
        run.send(.serverToClient, H2.frame(1, flags: 0x5, stream: 3, [H2.ok]))
        let records = run.finish()
        let first = records.first { $0.kind == .response && $0.streamID == 1 }!
        #expect(first.missingBytes == 20 && first.bodyBytes == 9 + 80 + 9 + 2 && first.flags.contains(.gap))
        #expect(first.decodedBodyBytes == 80 + 2 && first.encodedBodyBytes == 82 && !first.complete)
        let third = records.first { $0.kind == .request && $0.streamID == 3 }!
        #expect(third.headerBytes == 13 && third.headerDecodedBytes == nil && third.flags.contains(.hpackError))
        #expect(third.method == "GET")
        #expect(run.conserves())
    }

    /// Hostile framing: a length over SETTINGS_MAX_FRAME_SIZE ends the direction's framing (`frame_error`);
    /// a CONTINUATION flood past the block limit is counted, not kept (`header_limit`).
    @Test func hostileFraming() {
        let run = H2Run(limits: HTTP2Limits(maxHeaderBlockBytes: 1000))
        run.send(.clientToServer, H2.preface + H2.settings + H2.frame(1, flags: 0x1, stream: 1, [H2.get, H2.http, H2.root]))
        for _ in 0..<20 { run.send(.clientToServer, H2.frame(9, stream: 1, [UInt8](repeating: 0x41, count: 100))) }
        run.send(.clientToServer, H2.frame(9, flags: 0x4, stream: 1, []))
        run.send(.serverToClient, H2.settings + [0x01, 0, 0, 1, 4, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 300))
        let records = run.finish()
        let req = records.first { $0.kind == .request }!
        #expect(req.flags.contains(.headerLimit) && req.headerBytes == 12 + 20 * 109 + 9)
        #expect(run.parser.counts(for: .serverToClient).nonHTTPBytes == 309)
        #expect(run.conserves())
    }

    /// Every way of cutting the byte streams into deliveries gives the same records.
    @Test func deliveriesDoNotMatter() {
        let client = H2.preface + H2.settings
            + H2.frame(1, flags: 0x4, stream: 1, [H2.post, H2.http, H2.root] + H2.indexing(":authority", "h") + H2.lit("cookie", "x=1"))
            + H2.frame(0, flags: 0x9, stream: 1, [2, 1, 2, 3, 0, 0])
            + H2.frame(1, flags: 0x5, stream: 3, [H2.get, H2.http, H2.root, 0x80 | 62])
        let server = H2.settings + H2.frame(1, flags: 0x4, stream: 1, [H2.ok] + H2.lit("set-cookie", "x=2"))
            + H2.frame(0, flags: 0x1, stream: 1, [9, 9]) + H2.frame(1, flags: 0x5, stream: 3, [0x80 | 13])
        func run(_ step: Int) -> [String] {
            let run = H2Run()
            var c = 0, s = 0
            while c < client.count || s < server.count {
                if c < client.count {
                    run.send(.clientToServer, Array(client[c..<min(client.count, c + step)]))
                    c += step
                }
                if s < server.count {
                    run.send(.serverToClient, Array(server[s..<min(server.count, s + step)]))
                    s += step
                }
            }
            let records = run.finish()
            #expect(run.conserves())
            return records.map {
                "\($0.kind) \($0.streamID ?? -1) \($0.status ?? 0) \($0.headerBytes) \($0.headerDecodedBytes ?? -1) "
                    + "\($0.cookieBytes) \($0.bodyBytes) \($0.encodedBodyBytes) \($0.complete)"
            }.sorted()
        }
        let whole = run(100_000)
        #expect(whole.count == 4)
        for step in [1, 2, 3, 7, 9, 10, 64] { #expect(run(step) == whole, "step \(step)") }
    }
}
