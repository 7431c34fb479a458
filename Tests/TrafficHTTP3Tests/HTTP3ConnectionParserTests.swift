import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions

@testable import TrafficHTTP3

/// One connection written by hand: control streams with SETTINGS, an encoder stream, three request streams
/// interleaved, a blocked field section, a 1xx, a gzip body in two DATA frames, trailers, an unknown frame type on
/// a request stream, a grease unidirectional stream, a reset.
enum Conversation {
    static let c = Direction.clientToServer, s = Direction.serverToClient

    // Client control stream 2: type 0x00 (1) + SETTINGS 04 05 [01 40dc (QPACK_MAX_TABLE_CAPACITY 220), 07 10
    // (BLOCKED_STREAMS 16)] = 2 + 5 = 7: 8 octets.
    static let clientControl: [UInt8] = [0x00] + H3.frame(4, [0x01, 0x40, 0xdc, 0x07, 0x10])
    // Server control stream 3: 0x00 + SETTINGS 04 03 [01 40dc] = 1 + 5 = 6 octets. Capacity 220 bounds the
    // client's encoder: MaxEntries 6, Required Insert Counts modulo 12.
    static let serverControl: [UInt8] = [0x00] + H3.frame(4, [0x01, 0x40, 0xdc])
    // Client encoder stream 6: type 0x02 (1) + Set Dynamic Table Capacity 220 `3f bd 01` (3) + Insert With Name
    // Reference static 0 (:authority) `c0 0f` + "www.example.com" (2 + 15 = 17): 21 octets.
    static let clientEncoder: [UInt8] = [0x02, 0x3f, 0xbd, 0x01, 0xc0, 0x0f] + Array("www.example.com".utf8)
    // Server QPACK decoder stream 7: type 0x03 + Section Acknowledgment stream 0 (0x80): 2 octets.
    static let serverDecoder: [UInt8] = [0x03, 0x80]
    // Grease unidirectional stream 10: type 0x21 (0x1f·0 + 0x21) + 4 octets: 5 octets.
    static let grease: [UInt8] = [0x21, 1, 2, 3, 4]

    // Stream 0 request section: RIC 1 (encoded 1 % 12 + 1 = 0x02), Base 1 (0x00) = 2; :method GET 0xd1 (1);
    // :scheme https 0xd7 (1); dynamic relative 0 = absolute 1 - 0 - 1 = 0, :authority www.example.com, 0x80
    // (1); :path `51 06 /a?x=1` (8); cookie `55 08 id=12345` (10); x-a: b `23 x-a 01 b` (6): 29 octets; the frame
    // 1 + 1 + 29 = 31. Decoded: 7+3 + 7+5 + 10+15 + 5+6 + 6+8 + 3+1 = 76; cookie 10 as sent, 14 decoded.
    static let request0 = H3.headers(
        [0x02, 0x00, 0xd1, 0xd7, 0x80] + H3.literal(1, "/a?x=1") + H3.literal(5, "id=12345") + H3.literal("x-a", "b"))
    // 103: 00 00 d8 (static 24, :status 103) = 3; frame 5; decoded 7 + 3 = 10.
    static let interim = H3.headers(H3.noDynamic + H3.indexed(24))
    // 200: 00 00, d9 (:status 200), eb (static 43 content-encoding gzip), set-cookie `5e 03 a=b` (5), f5 (static
    // 53 content-type text/plain): 2 + 1 + 1 + 5 + 1 = 10; frame 12. Decoded 7+3 + 16+4 + 10+3 + 12+10 = 65.
    static let final0 = H3.headers(H3.noDynamic + [0xd9, 0xeb] + H3.literal(14, "a=b") + [0xf5])
    // gzip of "hello, hello, hello, hello!\n" (28 octets): 31 octets, sent as DATA of 10 and of 21: (2 + 10) +
    // (2 + 21) = 35 body octets.
    static let gzip = hex("1f8b0800000000000203cb48cdc9c9d751c8c0a414b900c3c280a51c000000")
    static let response0 = final0 + H3.data(Array(gzip[..<10])) + H3.data(Array(gzip[10...]))

    // Stream 4: 00 00 d4 (POST) d7 (https) `51 07 /upload` (9) = 13, frame 15, decoded 7+4 + 7+5 + 5+7 = 35; no
    // :authority: the host given. Then DATA "hello" (7), a reserved frame 0x21 of 3 octets (5, control), DATA
    // " world" (8), trailers 00 00 `23 x-t 01 1` (8), frame 10: body 7 + 8 + 10 = 25, payload 11.
    static let request4 =
        H3.headers(H3.noDynamic + [0xd4, 0xd7] + H3.literal(1, "/upload")) + H3.data("hello")
        + H3.frame(0x21, [0xaa, 0xbb, 0xcc]) + H3.data(" world") + H3.headers(H3.noDynamic + H3.literal("x-t", "1"))
    // 200 (frame 5) + DATA "ok" (4).
    static let response4 = H3.headers(H3.noDynamic + [0xd9]) + H3.data("ok")
    // Stream 8: 00 00 d1 d7 c1 (:path /) = 5, frame 7, decoded 10 + 12 + 5+1 = 28.
    static let request8 = H3.headers(H3.noDynamic + [0xd1, 0xd7, 0xc1])
    // 200 (5) + the first 6 octets of a DATA frame of 10 (00 0a + 4 of payload), then RESET_STREAM.
    static let response8 = H3.headers(H3.noDynamic + [0xd9]) + Array(H3.data("0123456789").prefix(6))

    static let calls: [H3Call] = [
        .overhead(0, c, 30),
        // Blocked: the server's SETTINGS (the table's maximum capacity) and the insert are not read yet.
        .bytes(0, c, request0), .end(0, c),
        .bytes(2, c, clientControl), .overhead(2, c, 9),
        .bytes(3, s, serverControl),
        .bytes(6, c, clientEncoder),
        .bytes(10, c, grease),
        .overhead(0, s, 40),
        .bytes(0, s, interim),
        .bytes(4, c, request4), .end(4, c),
        .overhead(0, s, 50),
        .bytes(0, s, response0), .end(0, s),
        .overhead(0, s, 7),
        .bytes(7, s, serverDecoder),
        .bytes(4, s, response4), .end(4, s),
        .bytes(8, c, request8), .end(8, c),
        .bytes(8, s, response8), .reset(8, s),
    ]
}

@Suite struct HTTP3ConnectionParserTests {
    typealias C = Conversation

    /// Whole, byte by byte, and in pieces of 2, 3 and 7: the same records.
    @Test(arguments: [nil, 1, 2, 3, 7])
    func conversation(chunk: Int?) throws {
        let run = H3Run()
        let records = run.run(C.calls, chunk: chunk)
        #expect(records.map { "\($0.kind) \($0.streamID!) \($0.status ?? 0)" } == [
            "request 0 0", "response 0 103", "response 0 200", "request 4 0", "response 4 200", "request 8 0",
            "response 8 200",
        ])
        let req0 = records[0], interim = records[1], resp0 = records[2]
        let req4 = records[3], resp4 = records[4], req8 = records[5], resp8 = records[6]

        #expect(req0.version == "HTTP/3")
        #expect(req0.index == 1 && req4.index == 2 && req8.index == 3)
        #expect(req0.method == "GET" && req0.host == "www.example.com" && req0.path == "/a" && req0.query == "x=1")
        #expect(req0.headerBytes == 31 && req0.headerDecodedBytes == 76)
        #expect(req0.cookieBytes == 10 && req0.cookieDecodedBytes == 14)
        #expect(req0.bodyBytes == 0 && req0.decodedBodyBytes == 0)
        #expect(req0.transferBytes == 31)
        #expect(req0.quicOverheadBytes == 30)
        #expect(req0.paired && req0.complete && req0.flags.isEmpty)

        #expect(interim.headerBytes == 5 && interim.headerDecodedBytes == 10 && interim.bodyBytes == 0)
        #expect(interim.path == "/a" && interim.host == "www.example.com" && interim.index == 1 && interim.paired)
        #expect(interim.quicOverheadBytes == 40)
        #expect(interim.wait != nil)

        #expect(resp0.headerBytes == 12 && resp0.headerDecodedBytes == 65)
        #expect(resp0.cookieBytes == 5 && resp0.cookieDecodedBytes == 13)
        #expect(resp0.bodyBytes == 35 && resp0.encodedBodyBytes == 31 && resp0.decodedBodyBytes == 28)
        #expect(resp0.contentEncoding == "gzip" && resp0.contentType == "text/plain")
        #expect(resp0.quicOverheadBytes == 50)
        #expect(resp0.method == "GET" && resp0.path == "/a" && resp0.complete && resp0.flags.isEmpty)

        #expect(req4.method == "POST" && req4.host == "h3.test" && req4.path == "/upload")
        #expect(req4.headerBytes == 15 && req4.headerDecodedBytes == 35)
        #expect(req4.bodyBytes == 25 && req4.encodedBodyBytes == 11 && req4.decodedBodyBytes == 11)
        #expect(req4.complete && req4.paired)
        #expect(resp4.headerBytes == 5 && resp4.bodyBytes == 4 && resp4.decodedBodyBytes == 2 && resp4.path == "/upload")

        #expect(req8.headerBytes == 7 && req8.headerDecodedBytes == 28 && req8.path == "/" && req8.paired)
        #expect(resp8.headerBytes == 5 && resp8.bodyBytes == 6 && resp8.encodedBodyBytes == 4)
        #expect(resp8.flags == [.reset] && !resp8.complete)

        // Control: client 8 + 21 + 5 (grease) + 5 (reserved frame on stream 4) = 39; server 6 + 2 = 8.
        #expect(run.parser.controlBytes == [39, 8])
        #expect(run.parser.unparsedBytes == [0, 0])
        // 9 on the control stream; 7 after stream 0's response was emitted.
        #expect(run.parser.lateOverheadBytes == [9, 7])
        #expect(run.parser.streamCount == 3)
        // Client 31 + 8 + 21 + 5 + 45 + 7 = 117; server 52 + 6 + 2 + 9 + 11 = 80.
        #expect(run.received == [117, 80])
        run.checkAccounting()
    }

    /// Stream 4's client bytes cut in two at every offset: the same request record.
    @Test func everySplitOfARequestStream() {
        let whole = H3Run().run(C.calls)
        let bytes = C.request4
        for k in 0...bytes.count {
            var calls = C.calls
            let at = calls.firstIndex { if case .bytes(4, .clientToServer, _) = $0 { true } else { false } }!
            calls.replaceSubrange(
                at...at, with: [.bytes(4, .clientToServer, Array(bytes[..<k])), .bytes(4, .clientToServer, Array(bytes[k...]))])
            let run = H3Run()
            let records = run.run(calls)
            #expect(records.count == whole.count)
            let a = records[3], b = whole[3]
            #expect(a.headerBytes == b.headerBytes && a.bodyBytes == b.bodyBytes && a.encodedBodyBytes == b.encodedBodyBytes)
            #expect(a.headerDecodedBytes == b.headerDecodedBytes && a.path == b.path)
            run.checkAccounting()
        }
    }
}
