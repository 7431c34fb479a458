import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficTestSupport

@testable import TrafficHTTP3

/// Gaps, broken frames, impossible QPACK state, huge lengths: flags and bounded memory, never a trap, and every
/// received octet still accounted for.
@Suite struct HTTP3HostileInputTests {
    static let c = Direction.clientToServer, s = Direction.serverToClient
    // GET / (00 00 d1 d7 c1): frame 7.
    static let get = H3.headers(H3.noDynamic + [0xd1, 0xd7, 0xc1])

    /// A DATA frame of length 2^62 − 1 (8-octet varint ff…ff): its payload is counted as it comes, the record ends
    /// `truncated` at the connection's end.
    @Test func dataLengthOf2To62() {
        let run = H3Run()
        let header: [UInt8] = [0x00] + [UInt8](repeating: 0xff, count: 8)
        let records = run.run([.bytes(0, Self.c, Self.get + header + [1, 2, 3])])
        #expect(records.count == 1)
        // 7 + (1 + 8 + 3).
        #expect(records[0].headerBytes == 7 && records[0].bodyBytes == 12 && records[0].encodedBodyBytes == 3)
        #expect(records[0].flags.contains(.truncated) && !records[0].complete)
        run.checkAccounting()
    }

    /// A HEADERS frame longer than the limit: counted, not buffered, not decoded.
    @Test func fieldSectionOverTheLimit() {
        let run = H3Run(limits: HTTP3Limits(maxFieldSectionBytes: 16))
        let section = H3.noDynamic + [0xd1, 0xd7] + H3.literal(1, "/" + String(repeating: "a", count: 30))
        let records = run.run([.bytes(0, Self.c, H3.headers(section)), .end(0, Self.c)])
        #expect(records.count == 1)
        // 2 + 2 + (2 + 31) = 37 octets of section, frame 1 + 1 + 37 = 39.
        #expect(records[0].headerBytes == 39)
        #expect(records[0].headerDecodedBytes == nil)
        #expect(records[0].flags.contains(.headerLimit) && records[0].flags.contains(.hpackError))
        run.checkAccounting()
    }

    /// A HEADERS frame of length 2^62 − 1 cut by the end of the capture.
    @Test func headersLengthOf2To62() {
        let run = H3Run()
        let records = run.run([.bytes(0, Self.c, [0x01] + [UInt8](repeating: 0xff, count: 8) + [0, 0, 0xd1])])
        #expect(records.count == 1)
        #expect(records[0].headerBytes == 12 && records[0].headerDecodedBytes == nil)
        #expect(records[0].flags.contains(.truncated) && records[0].flags.contains(.headerLimit))
        run.checkAccounting()
    }

    /// Encoded Required Insert Count 14 with MaxEntries 6 (full range 12): impossible (RFC 9204 §4.5.1.1).
    @Test func impossibleRequiredInsertCount() {
        let run = H3Run()
        let records = run.run([
            .bytes(3, Self.s, Conversation.serverControl),
            .bytes(0, Self.c, H3.headers([0x0e, 0x00, 0xd1])), .end(0, Self.c),
        ])
        #expect(records.count == 1)
        #expect(records[0].headerBytes == 5 && records[0].headerDecodedBytes == nil)
        #expect(records[0].flags.contains(.hpackError))
        run.checkAccounting()
    }

    /// Set Dynamic Table Capacity 4096 above the decoder's maximum 220 (`3f e1 1f` = 31 + 97 + 31·128): the
    /// table is lost; a section that needs it decodes as far as it can instead of blocking for ever.
    @Test func capacityAboveTheMaximum() {
        let run = H3Run()
        let records = run.run([
            .bytes(3, Self.s, Conversation.serverControl),
            .bytes(6, Self.c, [0x02, 0x3f, 0xe1, 0x1f, 0xc0, 0x01, 0x61]),
            // RIC 1 (0x02), Base 1; GET (static) then dynamic absolute 0.
            .bytes(0, Self.c, H3.headers([0x02, 0x00, 0xd1, 0x80])), .end(0, Self.c),
        ], finish: false)
        #expect(records.isEmpty)  // the request waits for an answer
        run.parser.finish(time: .zero)
        #expect(run.records.count == 1)
        // 1 + 1 + 4; GET known, the dynamic entry not: decoded size unknown.
        #expect(run.records[0].headerBytes == 6 && run.records[0].method == "GET")
        #expect(run.records[0].headerDecodedBytes == nil && run.records[0].flags.contains(.hpackError))
        // Encoder stream: 7 octets of control.
        #expect(run.parser.controlBytes == [7, 6])
        run.checkAccountingAfterFinish()
    }

    /// A prefix integer that does not fit 62 bits in a field section.
    @Test func integerOverflowInSection() {
        let run = H3Run()
        let section: [UInt8] = [0x00, 0x00, 0xff] + [UInt8](repeating: 0xff, count: 12) + [0x7f]
        let records = run.run([.bytes(0, Self.c, H3.headers(section)), .end(0, Self.c)])
        #expect(records.count == 1 && records[0].flags.contains(.hpackError))
        #expect(records[0].headerBytes == 2 + section.count)
        run.checkAccounting()
    }

    /// SETTINGS on a request stream (H3_FRAME_UNEXPECTED): the direction is given up, its later bytes unparsed.
    @Test func frameNotAllowedOnARequestStream() {
        let run = H3Run()
        let bad = H3.frame(4, [0x01, 0x00])
        let records = run.run([.bytes(0, Self.c, Self.get + bad + H3.data("late")), .end(0, Self.c)])
        #expect(records.count == 1)
        #expect(records[0].flags.contains(.frameError) && !records[0].complete)
        #expect(records[0].headerBytes == 7 && records[0].bodyBytes == 0)
        // SETTINGS frame 4 octets + DATA 6.
        #expect(run.parser.unparsedBytes == [10, 0])
        run.checkAccounting()
    }

    /// DATA before any HEADERS is a frame error too.
    @Test func dataBeforeHeaders() {
        let run = H3Run()
        let records = run.run([.bytes(0, Self.c, H3.data("abc"))])
        #expect(records.isEmpty)
        #expect(run.parser.unparsedBytes == [5, 0])
        run.checkAccounting()
    }

    /// A gap inside a DATA payload keeps the framing: the hole is `missingBytes`, later DATA still counts.
    @Test func gapInsideData() {
        let run = H3Run()
        let data = H3.data("0123456789")  // 00 0a + 10
        let records = run.run([
            .bytes(0, Self.c, Self.get + Array(data[..<5])), .skip(0, Self.c, 4), .bytes(0, Self.c, Array(data[9...]) + H3.data("x")),
            .end(0, Self.c),
        ])
        #expect(records.count == 1)
        // Captured: 7 + (12 - 4) + 3 of body; 4 missing.
        #expect(records[0].bodyBytes == 11 && records[0].missingBytes == 4 && records[0].encodedBodyBytes == 7)
        #expect(records[0].flags.contains(.gap) && !records[0].complete)
        run.checkAccounting()
    }

    /// A gap across a frame header loses the stream direction's framing.
    @Test func gapAcrossAFrameHeader() {
        let run = H3Run()
        let records = run.run([
            .bytes(0, Self.c, Self.get + [0x00]), .skip(0, Self.c, 3), .bytes(0, Self.c, H3.data("zz")), .end(0, Self.c),
        ])
        #expect(records.count == 1)
        #expect(records[0].flags.contains(.gap) && !records[0].complete)
        // The DATA type octet before the gap and the 4 after it.
        #expect(run.parser.unparsedBytes == [5, 0])
        run.checkAccounting()
    }

    /// A section blocked for ever (its insert never captured) is decoded as far as possible at the end.
    @Test func blockedUntilTheEnd() {
        let run = H3Run()
        let records = run.run([
            .bytes(3, Self.s, Conversation.serverControl),
            .bytes(0, Self.c, H3.headers([0x02, 0x00, 0xd1, 0x80]) + H3.data("abc")), .end(0, Self.c),
        ])
        #expect(records.count == 1)
        #expect(records[0].headerBytes == 6 && records[0].bodyBytes == 5 && records[0].headerDecodedBytes == nil)
        #expect(records[0].method == "GET" && records[0].flags.contains(.hpackError))
        run.checkAccounting()
    }

    /// More held octets than `maxBlockedBytes`: the section is forced early, the rest read at once.
    @Test func blockedBytesLimit() {
        let run = H3Run(limits: HTTP3Limits(maxBlockedBytes: 8))
        let records = run.run([
            .bytes(3, Self.s, Conversation.serverControl),
            .bytes(0, Self.c, H3.headers([0x02, 0x00, 0xd1, 0x80])),
            .bytes(0, Self.c, H3.data("0123456789")), .end(0, Self.c),
        ], finish: false)
        #expect(records.isEmpty)
        run.parser.finish(time: .zero)
        #expect(run.records.count == 1)
        // Forced when 12 octets (DATA) were held: the body still counts, 12 octets.
        #expect(run.records[0].headerBytes == 6 && run.records[0].bodyBytes == 12)
        #expect(run.records[0].flags.contains(.hpackError))
        run.checkAccountingAfterFinish()
    }

    /// Random octets on random streams in random pieces: no trap, and every octet accounted for.
    @Test(arguments: 0..<40)
    func garbage(seed: Int) {
        var rng = SplitMix(state: UInt64(seed) &* 0x9e37_79b9_7f4a_7c15 &+ 1)
        var calls: [H3Call] = []
        let ids: [UInt64] = [0, 1, 2, 3, 4, 6, 7, 8, 10, 11]
        for _ in 0..<60 {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            let d: Direction = rng.next() % 2 == 0 ? .clientToServer : .serverToClient
            switch rng.next() % 10 {
            case 0: calls.append(.end(id, d))
            case 1: calls.append(.skip(id, d, Int(rng.next() % 20) + 1))
            case 2: calls.append(.reset(id, d))
            case 3: calls.append(.overhead(id, d, 5))
            default:
                let n = Int(rng.next() % 40)
                // Mostly plausible frames, sometimes pure noise.
                var bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if rng.next() % 2 == 0 { bytes = H3.frame(rng.next() % 3, Array(bytes.prefix(12))) + bytes }
                calls.append(.bytes(id, d, bytes))
            }
        }
        let run = H3Run(limits: HTTP3Limits(maxFieldSectionBytes: 64, maxBlockedStreams: 2, maxBlockedBytes: 32))
        run.run(calls, chunk: Int(rng.next() % 5) + 1)
        run.checkAccounting()
    }
}

extension H3Run {
    /// After a `finish` called outside `run`.
    func checkAccountingAfterFinish(sourceLocation: SourceLocation = #_sourceLocation) {
        checkAccounting(sourceLocation: sourceLocation)
    }
}
