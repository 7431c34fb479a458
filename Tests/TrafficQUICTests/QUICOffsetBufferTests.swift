import PropertyBased
import Testing
import TrafficTestSupport

@testable import TrafficQUIC

/// What a QUICOffsetBuffer handed on, in order: delivered pieces and lost holes.
final class OffsetSink {
    enum Event: Equatable {
        case data([UInt8])
        case lost(Int)
    }
    var events: [Event] = []
    var data: [UInt8] {
        var all: [UInt8] = []
        for case .data(let d) in events { all += d }
        return all
    }
    var lost: [Int] {
        var all: [Int] = []
        for case .lost(let n) in events { all.append(n) }
        return all
    }

    func add(_ buffer: inout QUICOffsetBuffer, _ offset: UInt64, _ bytes: [UInt8], limit: Int = 1 << 20) -> Int {
        bytes.withUnsafeBytes { raw in
            buffer.add(
                offset: offset, raw, limit: limit, deliver: { self.events.append(.data(Array($0))) },
                lose: { self.events.append(.lost($0)) })
        }
    }

    func add(_ buffer: inout QUICOffsetBuffer, _ offset: UInt64, _ text: String, limit: Int = 1 << 20) -> Int {
        add(&buffer, offset, Array(text.utf8), limit: limit)
    }

    func flush(_ buffer: inout QUICOffsetBuffer) {
        buffer.flush(deliver: { self.events.append(.data(Array($0))) }, lose: { self.events.append(.lost($0)) })
    }
}

func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite struct QUICOffsetBufferTests {
    @Test func inOrderIsDeliveredAtOnce() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 0, "abc") == 3)
        #expect(sink.add(&b, 3, "de") == 2)
        #expect(sink.events == [.data(utf8("abc")), .data(utf8("de"))])
        #expect(b.delivered == 5)
        #expect(b.isEmpty)
        #expect(b.heldBytes == 0)
    }

    @Test func outOfOrderIsHeldUntilTheHoleFills() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 3, "de") == 2)
        #expect(sink.events.isEmpty)
        #expect(b.heldBytes == 2)
        #expect(b.delivered == 0)
        #expect(sink.add(&b, 0, "abc") == 3)
        #expect(sink.events == [.data(utf8("abc")), .data(utf8("de"))])
        #expect(b.delivered == 5)
        #expect(b.isEmpty)
    }

    @Test func overlappingChunksCountEachByteOnce() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        // Held 4..<8 "4567".
        #expect(sink.add(&b, 4, "4567") == 4)
        // 2..<6 "2345": only 2..<4 is new.
        #expect(sink.add(&b, 2, "2345") == 2)
        #expect(b.heldBytes == 6)
        // 0..<10: new are 0..<2 and 8..<10 = 4.
        #expect(sink.add(&b, 0, "0123456789") == 4)
        #expect(sink.data == utf8("0123456789"))
        #expect(sink.lost.isEmpty)
        #expect(b.delivered == 10)
        #expect(b.heldBytes == 0)
    }

    @Test func aChunkSpanningTwoHeldChunksKeepsOnlyTheHoles() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 2, "23") == 2)
        #expect(sink.add(&b, 6, "67") == 2)
        // 1..<9: new are 1..<2, 4..<6, 8..<9 = 1 + 2 + 1 = 4.
        #expect(sink.add(&b, 1, "12345678") == 4)
        #expect(b.heldBytes == 8)
        #expect(sink.events.isEmpty)
        #expect(sink.add(&b, 0, "0") == 1)
        #expect(sink.data == utf8("012345678"))
        #expect(b.delivered == 9)
    }

    @Test func duplicatesAreNotNew() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 0, "abc") == 3)
        #expect(sink.add(&b, 0, "abc") == 0)
        #expect(sink.add(&b, 5, "fg") == 2)
        #expect(sink.add(&b, 5, "fg") == 0)
        #expect(b.heldBytes == 2)
        #expect(sink.events == [.data(utf8("abc"))])
        // An empty chunk is nothing.
        #expect(sink.add(&b, 3, "") == 0)
        #expect(sink.events == [.data(utf8("abc"))])
    }

    @Test func retransmittedAfterDeliveryOnlyTheTailIsNew() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 0, "abcdef") == 6)
        // 2..<8: 2..<6 were delivered; "gh" is new and delivered alone.
        #expect(sink.add(&b, 2, "cdefgh") == 2)
        #expect(sink.events == [.data(utf8("abcdef")), .data(utf8("gh"))])
        #expect(b.delivered == 8)
    }

    @Test func pastTheLimitTheHoleIsGivenUp() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 0, "ab", limit: 4) == 2)
        #expect(sink.add(&b, 4, "ef", limit: 4) == 2)
        #expect(b.heldBytes == 2)
        // Holding 4..<9 would be 5 bytes > 4: the hole 2..<4 (2 bytes) is lost, then 4..<9 delivered.
        #expect(sink.add(&b, 6, "ghi", limit: 4) == 3)
        #expect(sink.events == [.data(utf8("ab")), .lost(2), .data(utf8("ef")), .data(utf8("ghi"))])
        #expect(b.delivered == 9)
        #expect(b.heldBytes == 0)
        // The hole's bytes arriving late are not new and not delivered.
        #expect(sink.add(&b, 2, "cd", limit: 4) == 0)
        #expect(sink.events.count == 4)
    }

    @Test func pastTheLimitOnlyTheFirstHoleIsGivenUpWhenThatSuffices() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        // Held: 2..<4 and 6..<8 (4 bytes, at the limit).
        #expect(sink.add(&b, 2, "cd", limit: 4) == 2)
        #expect(sink.add(&b, 6, "gh", limit: 4) == 2)
        #expect(sink.events.isEmpty)
        // 10..<11 makes 5 held: the hole 0..<2 is lost and 2..<4 delivered; 3 bytes remain held (6..<8, 10).
        #expect(sink.add(&b, 10, "k", limit: 4) == 1)
        #expect(sink.events == [.lost(2), .data(utf8("cd"))])
        #expect(b.delivered == 4)
        #expect(b.heldBytes == 3)
    }

    @Test func flushDeliversHeldChunksAndDeclaresHolesLost() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 3, "de") == 2)
        #expect(sink.add(&b, 7, "h") == 1)
        sink.flush(&b)
        // Holes 0..<3 and 5..<7.
        #expect(sink.events == [.lost(3), .data(utf8("de")), .lost(2), .data(utf8("h"))])
        #expect(b.delivered == 8)
        #expect(b.isEmpty)
        // Nothing held: flush again is nothing.
        sink.flush(&b)
        #expect(sink.events.count == 4)
    }

    @Test func skipDropsHeldChunksBeforeTheOffset() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        #expect(sink.add(&b, 3, "de") == 2)
        #expect(sink.add(&b, 7, "h") == 1)
        b.skip(to: 6)
        #expect(b.delivered == 6)
        #expect(b.heldBytes == 1)
        // 6..<8: "g" is new; "h" was held (not new) and follows it.
        #expect(sink.add(&b, 6, "gh") == 1)
        #expect(sink.events == [.data(utf8("g")), .data(utf8("h"))])
    }

    @Test func newByteCountMatchesWhatAddWouldCount() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        _ = sink.add(&b, 0, "ab")
        _ = sink.add(&b, 4, "ef")
        _ = sink.add(&b, 8, "ij")
        // Delivered 0..<2, held 4..<6 and 8..<10.
        #expect(b.newByteCount(offset: 0, count: 12) == 6)  // 2..<4, 6..<8, 10..<12
        #expect(b.newByteCount(offset: 0, count: 2) == 0)
        #expect(b.newByteCount(offset: 4, count: 2) == 0)
        #expect(b.newByteCount(offset: 5, count: 4) == 2)  // 6..<8
        #expect(b.newByteCount(offset: 20, count: 3) == 3)
        #expect(b.newByteCount(offset: 1, count: 0) == 0)
    }

    @Test func anOffsetNearTheTopDoesNotTrap() {
        var b = QUICOffsetBuffer()
        let sink = OffsetSink()
        // offset + count wraps around UInt64: nothing past `delivered` by that arithmetic.
        #expect(sink.add(&b, UInt64.max - 1, "abc") == 0)
        #expect(b.newByteCount(offset: UInt64.max - 1, count: 3) == 0)
    }

    /// Any chunking of a byte string, with retransmissions over arbitrary ranges, in any order, delivers exactly
    /// the string, and the new-byte counts sum to its length.
    @Test func anyOrderOfChunksDeliversTheBytesOnce() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let length = Int.random(in: 1...3000, using: &rng)
            let text = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var chunks: [(offset: Int, bytes: [UInt8])] = []
            var offset = 0
            while offset < length {
                let end = min(length, offset + Int.random(in: 1...100, using: &rng))
                chunks.append((offset, Array(text[offset..<end])))
                offset = end
            }
            for _ in 0..<Int.random(in: 0...(chunks.count), using: &rng) {
                let start = Int.random(in: 0..<length, using: &rng)
                let end = min(length, start + Int.random(in: 1...150, using: &rng))
                chunks.append((start, Array(text[start..<end])))
            }
            chunks.shuffle(using: &rng)
            var b = QUICOffsetBuffer()
            let sink = OffsetSink()
            var newTotal = 0
            for chunk in chunks { newTotal += sink.add(&b, UInt64(chunk.offset), chunk.bytes, limit: Int.max) }
            #expect(sink.data == text, "seed \(seed)")
            #expect(sink.lost.isEmpty, "seed \(seed)")
            #expect(newTotal == length, "seed \(seed)")
            #expect(b.delivered == UInt64(length), "seed \(seed)")
            #expect(b.isEmpty && b.heldBytes == 0, "seed \(seed)")
        }
    }

    /// With a limit, bytes are delivered in order with holes reported as lost: delivered + lost covers the
    /// string's length exactly, and every delivered byte is the string's byte at its position.
    @Test func withALimitDeliveredAndLostCoverTheString() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let length = Int.random(in: 1...2000, using: &rng)
            let text = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var chunks: [(offset: Int, bytes: [UInt8])] = []
            var offset = 0
            while offset < length {
                let end = min(length, offset + Int.random(in: 1...60, using: &rng))
                chunks.append((offset, Array(text[offset..<end])))
                offset = end
            }
            chunks.shuffle(using: &rng)
            let limit = Int.random(in: 0...500, using: &rng)
            var b = QUICOffsetBuffer()
            let sink = OffsetSink()
            for chunk in chunks { _ = sink.add(&b, UInt64(chunk.offset), chunk.bytes, limit: limit) }
            sink.flush(&b)
            var position = 0
            var matches = true
            for event in sink.events {
                switch event {
                case .data(let d):
                    if Array(text[position..<min(length, position + d.count)]) != d { matches = false }
                    position += d.count
                case .lost(let n):
                    position += n
                }
            }
            #expect(matches, "seed \(seed)")
            #expect(position == length, "seed \(seed)")
            #expect(b.heldBytes <= max(limit, 0), "seed \(seed)")
        }
    }
}
