import Testing
import TrafficCapture
import TrafficTestSupport
import TrafficWire

@testable import TrafficReassembly

/// `TCPConnection.processInOrderData` takes most segments past the general path: on the same segments, a
/// reassembler with it and one without must hand on the same bytes, skips, packet events and timings in the
/// same order, and end with the same accounting. Random conversations with the damage real captures have
/// (loss, reordering, retransmissions, keep-alives, snaplen cuts, ACKs ahead of the capture, FIN, RST).
@Suite struct InOrderFastPathTests {
    /// Everything a handler is told, as text, in order.
    final class Log: TCPStreamHandler {
        var lines: [String] = []

        func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
            // The bytes as a count and an FNV-1a hash: printing them whole made the test slow.
            let hash = bytes.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            lines.append(
                "receive \(direction) \(bytes.count) \(hash) t=\(segment.time.nanoseconds) frame=\(segment.frameBytes) "
                    + "header=\(segment.headerBytes) overhead=\(segment.overheadBytes) ack=\(segment.acknowledged)")
        }
        func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
            lines.append("skip \(direction) \(byteCount) t=\(time.nanoseconds)")
        }
        func finish(time: CaptureTime) { lines.append("finish t=\(time.nanoseconds)") }
        func packet(_ event: TCPPacketEvent) {
            lines.append(
                "packet \(event.kind) \(event.direction) \(event.frameBytes) \(event.streamOffset) "
                    + "t=\(event.time.nanoseconds)")
        }
        func connectionEnded(_ summary: TCPConnectionSummary) {
            lines.append("ended \(summary.clientToServer) \(summary.serverToClient) \(summary.end.nanoseconds) "
                + "\(summary.sawSYN) \(summary.sawFIN) \(summary.sawRST) \(summary.evicted)")
        }
        func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {
            lines.append("handshake \(syn.nanoseconds) \(ack.nanoseconds)")
        }
    }

    struct Segment {
        var fromClient: Bool
        var seq: UInt32
        var ack: UInt32
        var flags: TCPSegment.Flags
        var payload: [UInt8]
        var claimed: Int
        var time: Int64
    }

    /// A conversation of request/response rounds between ISNs `c` and `s`, then damaged by `rng`.
    static func conversation(_ rng: inout SplitMix) -> [Segment] {
        let c = UInt32.random(in: 0...UInt32.max, using: &rng), s = UInt32.random(in: 0...UInt32.max, using: &rng)
        var clientNext = c &+ 1, serverNext = s &+ 1
        var time: Int64 = 1_000_000
        var result: [Segment] = []
        func add(_ fromClient: Bool, _ flags: TCPSegment.Flags, _ payload: [UInt8] = [], seq: UInt32? = nil) {
            time += Int64.random(in: 1...2_000_000, using: &rng)
            let seq = seq ?? (fromClient ? clientNext : serverNext)
            result.append(Segment(
                fromClient: fromClient, seq: seq, ack: fromClient ? serverNext : clientNext, flags: flags,
                payload: payload, claimed: payload.count, time: time))
        }
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        if Int.random(in: 0..<4, using: &rng) > 0 {
            add(true, [.syn], seq: c)
            add(false, [.syn, .ack], seq: s)
            add(true, [.ack])
        }
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let data = bytes(Int.random(in: 1...300, using: &rng))
                add(true, [.ack, .psh], data)
                clientNext &+= UInt32(data.count)
            }
            if Bool.random(using: &rng) { add(false, [.ack]) }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let data = bytes(Int.random(in: 1...500, using: &rng))
                add(false, [.ack], data)
                serverNext &+= UInt32(data.count)
            }
            add(true, [.ack])
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            add(true, [.fin, .ack])
            clientNext &+= 1
            add(false, [.fin, .ack])
            serverNext &+= 1
            add(true, [.ack])
        case 1: add(Bool.random(using: &rng), [.rst])
        case 2:
            // A FIN with data, then the rest.
            let data = bytes(20)
            add(false, [.fin, .ack, .psh], data)
            serverNext &+= UInt32(data.count) &+ 1
            add(true, [.fin, .ack])
        default: break
        }
        // Damage: each kind now and then, anywhere.
        for _ in 0..<Int.random(in: 0...4, using: &rng) where !result.isEmpty {
            let i = Int.random(in: 0..<result.count, using: &rng)
            switch Int.random(in: 0..<7, using: &rng) {
            case 0: result.remove(at: i)
            case 1: if i + 1 < result.count { result.swapAt(i, i + 1) }
            case 2: result.insert(result[i], at: min(result.count, i + Int.random(in: 1...5, using: &rng)))
            case 3:  // a snaplen cut
                if !result[i].payload.isEmpty { result[i].payload.removeLast(result[i].payload.count / 2) }
            case 4:  // keep-alive: the last byte again
                var probe = result[i]
                probe.seq &-= 1
                probe.payload = probe.payload.isEmpty ? [] : [0]
                probe.claimed = probe.payload.count
                probe.flags = [.ack]
                result.insert(probe, at: i)
            case 5: result[i].ack &+= UInt32.random(in: 1...400, using: &rng)  // acknowledges bytes not captured yet
            default: result[i].time -= 3_000_000  // clock step back
            }
        }
        return result
    }

    static func run(_ segments: [Segment], fastPath: Bool, packetEvents: Bool = true) -> [String] {
        let log = Log()
        var limits = TCPReassemblyLimits()
        limits.lateSegmentWindowPackets = 6
        limits.packetEvents = packetEvents
        let reassembler = TCPReassembler(limits: limits, makeHandler: { _ in log }) { _ in }
        reassembler.inOrderFastPath = fastPath
        for segment in segments {
            segment.payload.withUnsafeBytes { payload in
                reassembler.process(
                    TCPSegment(
                        source: segment.fromClient ? SegmentFactory.client : SegmentFactory.server,
                        destination: segment.fromClient ? SegmentFactory.server : SegmentFactory.client,
                        sequenceNumber: segment.seq, acknowledgmentNumber: segment.ack, flags: segment.flags,
                        payloadLength: segment.claimed, payload: payload,
                        frameBytes: SegmentFactory.headerBytes + segment.claimed),
                    time: CaptureTime(nanoseconds: segment.time))
            }
        }
        reassembler.finish()
        return log.lines + reassembler.anomalies.map { "anomaly \($0)" }
    }

    /// The server's data acknowledges client bytes the capture lacks, so it waits (`serverWait`); the client's ACK
    /// of it, stamped earlier (a clock stepping back), makes its held bytes look like a hole with an earlier
    /// deadline than the wait's. Expiring that "hole" once looped forever; the bytes now go when the wait ends.
    @Test func heldServerBytesPastAnACKDoNotHang() {
        let c: UInt32 = 1000, s: UInt32 = 5000
        func segment(_ fromClient: Bool, _ seq: UInt32, _ ack: UInt32, _ flags: TCPSegment.Flags, _ count: Int,
                     _ time: Int64) -> Segment {
            Segment(
                fromClient: fromClient, seq: seq, ack: ack, flags: flags, payload: Array(repeating: 7, count: count),
                claimed: count, time: time)
        }
        var segments = [
            segment(true, c, 0, [.syn], 0, 1_000_000), segment(false, s, c + 1, [.syn, .ack], 0, 2_000_000),
            segment(true, c + 1, s + 1, [.ack], 0, 3_000_000), segment(true, c + 1, s + 1, [.ack], 100, 4_000_000),
            // Acknowledges 50 client bytes that were never captured.
            segment(false, s + 1, c + 151, [.ack], 200, 10_000_000),
            segment(true, c + 101, s + 201, [.ack], 0, 9_000_000),
        ]
        for i in 0..<10 {
            segments.append(segment(true, c + 101, s + 201, [.ack], 0, 11_000_000 + Int64(i) * 400_000_000))
        }
        let events = Self.run(segments, fastPath: true)
        #expect(events == Self.run(segments, fastPath: false))
        #expect(events.contains { $0.hasPrefix("receive serverToClient 200 ") })
    }

    @Test func sameEventsWithAndWithoutTheFastPath() {
        var rng = SplitMix(state: 0x1A2B_3C4D)
        for round in 0..<1000 {
            let segments = Self.conversation(&rng)
            let fast = Self.run(segments, fastPath: true)
            let general = Self.run(segments, fastPath: false)
            #expect(fast == general, "round \(round)")
            if fast != general { break }
        }
    }

    /// Without packet events (no packet-overhead attribution) the handler hears everything else exactly as with them,
    /// on both paths: the same bytes, skips, handshake, end and counters, only no pure ACKs and retransmissions.
    @Test func withoutPacketEventsOnlyThoseAreMissing() {
        var rng = SplitMix(state: 0x5EED_0025)
        var events = 0
        rounds: for round in 0..<300 {
            let segments = Self.conversation(&rng)
            let with = Self.run(segments, fastPath: true)
            events += with.filter { $0.hasPrefix("packet ") }.count
            for fastPath in [true, false] {
                let without = Self.run(segments, fastPath: fastPath, packetEvents: false)
                let expected = with.filter { !$0.hasPrefix("packet ") }
                #expect(without == expected, "round \(round) fast path \(fastPath)")
                if without != expected { break rounds }
            }
        }
        // Both kinds happened: the comparison above removed something.
        #expect(events > 1000)
    }
}
