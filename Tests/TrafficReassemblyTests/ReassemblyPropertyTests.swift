import TrafficTestSupport
import PropertyBased
import Testing
import TrafficCapture
import TrafficReassembly
import TrafficWire

/// Any segmentation, order and duplication of a stream reassembles to the same bytes; a dropped
/// range becomes exactly one gap of its length.
@Suite struct ReassemblyPropertyTests {
    struct Segment {
        var offset: Int
        var bytes: [UInt8]
    }

    /// Cuts `stream` into 1…40-byte segments, duplicates some, shuffles within a window.
    static func segments(of stream: [UInt8], rng: inout SplitMix, duplicate: Bool) -> [Segment] {
        var result: [Segment] = []
        var offset = 0
        while offset < stream.count {
            let length = min(stream.count - offset, Int.random(in: 1...40, using: &rng))
            result.append(Segment(offset: offset, bytes: Array(stream[offset..<(offset + length)])))
            offset += length
        }
        if duplicate {
            for _ in 0..<(result.count / 3) {
                // A retransmission may cover a different range than the original segments.
                let start = Int.random(in: 0..<stream.count, using: &rng)
                let end = min(stream.count, start + Int.random(in: 1...60, using: &rng))
                result.append(Segment(offset: start, bytes: Array(stream[start..<end])))
            }
        }
        // Shuffle within a window of 8, like reordering on a real path.
        for i in result.indices {
            let j = min(result.count - 1, i + Int.random(in: 0..<8, using: &rng))
            result.swapAt(i, j)
        }
        return result
    }

    static func run(_ segments: [Segment], isn: UInt32) -> StreamRecorder {
        let recorder = StreamRecorder()
        let r = TCPReassembler(makeHandler: { _ in recorder }) { _ in }
        let factory = SegmentFactory()
        factory.send(r, fromClient: true, seq: isn, flags: [.syn])
        for segment in segments {
            factory.send(r, fromClient: true, seq: isn &+ 1 &+ UInt32(segment.offset), payload: segment.bytes)
        }
        r.finish()
        return recorder
    }

    @Test func anySegmentationOrderAndDuplicationGivesTheSameBytes() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let stream = (0..<Int.random(in: 1...2000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // ISNs near the top exercise wrap-around.
            let isn = Bool.random(using: &rng) ? UInt32.max - UInt32.random(in: 0...3000, using: &rng) : UInt32.random(in: 0...UInt32.max, using: &rng)
            let recorder = Self.run(Self.segments(of: stream, rng: &rng, duplicate: true), isn: isn)
            #expect(recorder.bytes[0] == stream, "seed \(seed)")
            #expect(recorder.skips[0].isEmpty, "seed \(seed)")
            #expect(recorder.finishCount == 1)
        }
    }

    @Test func aDroppedRangeIsExactlyOneGap() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let stream = (0..<Int.random(in: 100...2000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var segments = Self.segments(of: stream, rng: &rng, duplicate: false)
            segments.sort { $0.offset < $1.offset }
            // Drop one segment that has data after it, so the hole is known to exist.
            let dropped = segments.remove(at: Int.random(in: 0..<(segments.count - 1), using: &rng))
            segments.shuffle(using: &rng)
            let recorder = Self.run(segments, isn: UInt32.random(in: 0...UInt32.max, using: &rng))
            var expected = stream
            expected.removeSubrange(dropped.offset..<(dropped.offset + dropped.bytes.count))
            #expect(recorder.bytes[0] == expected, "seed \(seed)")
            #expect(recorder.skips[0] == [dropped.bytes.count], "seed \(seed)")
        }
    }

    /// A capture of data segments each followed by the receiver's ACK of everything so far, in this order
    /// (`true`: a data segment, by index; `false`: the ACK after segment `index`).
    static func runWithACKs(_ segments: [Segment], order: [(data: Bool, index: Int)], isn: UInt32) -> StreamRecorder {
        let recorder = StreamRecorder()
        let r = TCPReassembler(makeHandler: { _ in recorder }) { _ in }
        let factory = SegmentFactory()
        factory.send(r, fromClient: true, seq: isn, flags: [.syn])
        for (step, item) in order.enumerated() {
            let segment = segments[item.index]
            if item.data {
                factory.send(
                    r, fromClient: true, seq: isn &+ 1 &+ UInt32(segment.offset), payload: segment.bytes,
                    time: Int64(step) * 1000)
            } else {
                let acked = isn &+ 1 &+ UInt32(segment.offset + segment.bytes.count)
                factory.send(r, fromClient: false, seq: 7, ack: acked, time: Int64(step) * 1000)
            }
        }
        r.finish()
        return recorder
    }

    /// Issue 24: on a mirror port a data segment can be captured after the ACK that covers it. Moved up to 6
    /// places later (past its ACK and the next segments' ACKs), every segment still fills its hole: the same
    /// bytes, no gap, whatever the swap.
    @Test func aSegmentCapturedAfterItsACKStillFillsItsHole() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let stream = (0..<Int.random(in: 100...3000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var segments = Self.segments(of: stream, rng: &rng, duplicate: false)
            segments.sort { $0.offset < $1.offset }
            var order: [(data: Bool, index: Int)] = segments.indices.flatMap { [(true, $0), (false, $0)] }
            for _ in 0..<max(1, segments.count / 4) {
                guard let from = order.indices.filter({ order[$0].data }).randomElement(using: &rng) else { break }
                let item = order.remove(at: from)
                order.insert(item, at: min(order.count, from + Int.random(in: 1...6, using: &rng)))
            }
            let recorder = Self.runWithACKs(segments, order: order, isn: UInt32.random(in: 0...UInt32.max, using: &rng))
            #expect(recorder.bytes[0] == stream, "seed \(seed)")
            #expect(recorder.skips[0].isEmpty, "seed \(seed)")
        }
    }

    /// Past the window (64 packets of the connection) a hole the receiver acknowledged is given up: the
    /// segment that comes later is a retransmission, and its bytes are missing exactly once.
    @Test func aHoleIsGivenUpAfterTheWindow() {
        let stream = (0..<200).map { UInt8($0) }
        let segments = stride(from: 0, to: 200, by: 20).map { Segment(offset: $0, bytes: Array(stream[$0..<($0 + 20)])) }
        // Segment 1 is written after 70 more ACKs of the whole stream.
        var order: [(data: Bool, index: Int)] = [(true, 0), (false, 0)]
        order += (2..<segments.count).flatMap { [(true, $0), (false, $0)] }
        order += Array(repeating: (false, segments.count - 1), count: 70)
        order.append((true, 1))
        let recorder = Self.runWithACKs(segments, order: order, isn: 1000)
        var expected = stream
        expected.removeSubrange(20..<40)
        #expect(recorder.bytes[0] == expected)
        #expect(recorder.skips[0] == [20])
    }
}
