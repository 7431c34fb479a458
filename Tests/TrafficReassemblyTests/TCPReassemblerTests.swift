import Testing
import TrafficCapture
import TrafficReassembly
import TrafficWire

@Suite struct TCPReassemblerTests {
    let factory = SegmentFactory()

    func makeReassembler(limits: TCPReassemblyLimits = .init()) -> (TCPReassembler, StreamRecorder, Box) {
        let recorder = StreamRecorder()
        let box = Box()
        let reassembler = TCPReassembler(limits: limits, makeHandler: { _ in recorder }) { box.summaries.append($0) }
        return (reassembler, recorder, box)
    }

    final class Box { var summaries: [TCPConnectionSummary] = [] }

    /// A whole connection: handshake, one request, one response, FIN from each side, final ACKs.
    @Test func wholeConnectionAccounting() throws {
        let (r, recorder, box) = makeReassembler()
        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)  // 18 bytes
        let response = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)  // 27 bytes
        factory.send(r, fromClient: true, seq: 100, flags: [.syn])  // SYN
        factory.send(r, fromClient: false, seq: 500, ack: 101, flags: [.syn, .ack])  // SYN-ACK
        factory.send(r, fromClient: true, seq: 101, ack: 501)  // ACK completing the handshake
        factory.send(r, fromClient: true, seq: 101, ack: 501, flags: [.psh, .ack], payload: request)
        factory.send(r, fromClient: false, seq: 501, ack: 119)  // pure ACK
        factory.send(r, fromClient: false, seq: 501, ack: 119, flags: [.psh, .ack], payload: response)
        factory.send(r, fromClient: true, seq: 119, ack: 528, flags: [.fin, .ack])
        factory.send(r, fromClient: false, seq: 528, ack: 120, flags: [.fin, .ack])
        factory.send(r, fromClient: true, seq: 120, ack: 529)  // ACK of the server's FIN
        r.finish()
        #expect(recorder.bytes[0] == request)
        #expect(recorder.bytes[1] == response)
        #expect(recorder.finishCount == 1)
        let summary = try #require(box.summaries.first)
        let h = SegmentFactory.headerBytes
        let c = summary.clientToServer, s = summary.serverToClient
        #expect(c.packets == 5 && s.packets == 4)
        #expect(c.handshakeBytes == 2 * h && c.handshakePackets == 2)  // SYN + completing ACK
        #expect(s.handshakeBytes == h)  // SYN-ACK
        #expect(c.teardownBytes == 2 * h && c.teardownPackets == 2)  // FIN + ACK of the server's FIN
        #expect(s.teardownBytes == h)  // FIN
        #expect(s.ackBytes == h && c.ackBytes == 0)
        #expect(c.dataHeaderBytes == h && c.dataPayloadBytes == 18)
        #expect(c.frameBytes == 5 * h + 18 && s.frameBytes == 4 * h + 27)
        #expect(c.deliveredBytes == 18 && s.deliveredBytes == 27)
        #expect(c.isConserved && s.isConserved)
        #expect(summary.info.client == SegmentFactory.client)
    }

    @Test func sequenceWrapAround() {
        let (r, recorder, _) = makeReassembler()
        let isn: UInt32 = .max - 5
        let data = Array(0..<40).map { UInt8($0) }
        factory.send(r, fromClient: true, seq: isn, flags: [.syn])
        // Segment 2 crosses 2^32; deliver it first (out of order), then segment 1.
        factory.send(r, fromClient: true, seq: isn &+ 1 &+ 10, payload: Array(data[10...]))
        factory.send(r, fromClient: true, seq: isn &+ 1, payload: Array(data[..<10]))
        r.finish()
        #expect(recorder.bytes[0] == data)
        #expect(recorder.skips[0].isEmpty)
    }

    @Test func midConnectionStartAndClientByPort() throws {
        let (r, recorder, box) = makeReassembler()
        // The first packet is the server's data: the higher port (40000) is still the client.
        factory.send(r, fromClient: false, seq: 7000, payload: Array("abc".utf8))
        factory.send(r, fromClient: true, seq: 3000, payload: Array("xy".utf8))
        factory.send(r, fromClient: false, seq: 7003, payload: Array("def".utf8))
        r.finish()
        #expect(recorder.bytes[1] == Array("abcdef".utf8))
        #expect(recorder.bytes[0] == Array("xy".utf8))
        let summary = try #require(box.summaries.first)
        #expect(summary.info.client == SegmentFactory.client)
    }

    /// A segment's direction comes from where its source sits in the flow's key: the client may be the lower or the
    /// higher endpoint, and the connection may open with either side's packet.
    @Test(arguments: [false, true], [false, true])
    func directionFromTheKeyOrder(clientIsHigher: Bool, serverFirst: Bool) throws {
        var factory = SegmentFactory()
        if clientIsHigher { factory.client = Endpoint(address: IPAddress(ipv4: 0x0a00_0009), port: 40000) }
        let (r, recorder, box) = makeReassembler()
        if !serverFirst { factory.send(r, fromClient: true, seq: 100, flags: [.syn]) }
        factory.send(r, fromClient: false, seq: 500, ack: 101, flags: [.syn, .ack])
        factory.send(r, fromClient: true, seq: 101, ack: 501, payload: Array("ping".utf8))
        factory.send(r, fromClient: false, seq: 501, ack: 105, payload: Array("pong!".utf8))
        factory.send(r, fromClient: true, seq: 105, ack: 506, payload: Array("x".utf8))
        r.finish()
        #expect(recorder.bytes[0] == Array("pingx".utf8))
        #expect(recorder.bytes[1] == Array("pong!".utf8))
        let summary = try #require(box.summaries.first)
        #expect(summary.info.client == factory.client)
        #expect(summary.clientToServer.packets == (serverFirst ? 2 : 3))
        #expect(summary.serverToClient.packets == 2)
    }

    /// Both ends one endpoint (a crafted or looped-back packet): every segment counts as the client's.
    @Test func bothEndsOneEndpoint() {
        var factory = SegmentFactory()
        factory.server = factory.client
        let (r, recorder, _) = makeReassembler()
        factory.send(r, fromClient: false, seq: 500, flags: [.syn, .ack])
        factory.send(r, fromClient: false, seq: 501, payload: Array("abc".utf8))
        factory.send(r, fromClient: true, seq: 504, payload: Array("de".utf8))
        r.finish()
        #expect(recorder.bytes[0] == Array("abcde".utf8))
        #expect(recorder.bytes[1].isEmpty)
    }

    /// A closed connection takes late packets for `closedLinger` after its streams finished, ends at the first packet
    /// after that, and its 4-tuple then starts a new connection (nothing keeps finding the ended one).
    @Test func closedConnectionLingersThenEnds() throws {
        var limits = TCPReassemblyLimits()
        limits.closedLinger = CaptureTime(nanoseconds: 1_000)
        let (r, _, box) = makeReassembler(limits: limits)
        factory.send(r, fromClient: true, seq: 100, flags: [.syn], time: 0)
        factory.send(r, fromClient: false, seq: 500, ack: 101, flags: [.syn, .ack], time: 1)
        factory.send(r, fromClient: true, seq: 101, ack: 501, flags: [.fin, .ack], time: 2)
        factory.send(r, fromClient: false, seq: 501, ack: 102, flags: [.fin, .ack], time: 3)  // both streams finish at 3
        // The ACK of the server's FIN at 1 003: 1 003 − 3 is not more than the linger, so it is still this connection's.
        factory.send(r, fromClient: true, seq: 102, ack: 502, time: 1_003)
        #expect(box.summaries.isEmpty)
        // Another flow's packet at 1 004 ends it (1 004 − 3 > 1 000).
        var other = SegmentFactory()
        other.client = Endpoint(address: IPAddress(ipv4: 0x0a00_0003), port: 50000)
        other.send(r, fromClient: true, seq: 1, flags: [.syn], time: 1_004)
        #expect(box.summaries.count == 1)
        let ended = try #require(box.summaries.first)
        #expect(ended.clientToServer.packets == 3 && ended.serverToClient.packets == 2)
        // The same 4-tuple once more: a third connection.
        factory.send(r, fromClient: true, seq: 102, ack: 502, time: 1_005)
        r.finish()
        #expect(box.summaries.count == 3)
        #expect(Set(box.summaries.map(\.info.id)) == [0, 1, 2])
        #expect(box.summaries.last?.clientToServer.packets == 1)
    }

    /// Idle connections are looked for at most every tenth of the idle timeout, and end at the first look after
    /// they have been silent longer than it.
    @Test func idleConnectionEndsAtTheFirstSweepPastItsTimeout() throws {
        var limits = TCPReassemblyLimits()
        limits.idleTimeout = CaptureTime(nanoseconds: 100)  // a sweep when more than 10 ns passed since the last
        let (r, _, box) = makeReassembler(limits: limits)
        factory.send(r, fromClient: true, seq: 1, payload: [7], time: 0)  // the first packet's sweep finds nothing
        var other = SegmentFactory()
        other.client = Endpoint(address: IPAddress(ipv4: 0x0a00_0003), port: 50000)
        other.send(r, fromClient: true, seq: 1, time: 11)  // sweep: silent 11
        other.send(r, fromClient: true, seq: 1, time: 100)  // sweep: silent 100, not more than the timeout
        other.send(r, fromClient: true, seq: 1, time: 110)  // 110 − 100 is no more than 10: no sweep
        #expect(box.summaries.isEmpty)
        other.send(r, fromClient: true, seq: 1, time: 111)  // sweep: silent 111
        #expect(box.summaries.count == 1)
        let ended = try #require(box.summaries.first)
        #expect(ended.info.client == SegmentFactory.client && ended.evicted)
        #expect(r.count(of: .connectionTimedOut) == 1)
    }

    @Test func keepAliveIsIgnored() throws {
        let (r, recorder, box) = makeReassembler()
        factory.send(r, fromClient: true, seq: 1, payload: Array("hello".utf8))
        // Keep-alive: one garbage byte at next - 1.
        factory.send(r, fromClient: true, seq: 5, payload: [0])
        factory.send(r, fromClient: true, seq: 6, payload: Array("!".utf8))
        r.finish()
        #expect(recorder.bytes[0] == Array("hello!".utf8))
        let c = try #require(box.summaries.first).clientToServer
        #expect(c.ackPackets == 1 && c.dataPackets == 2 && c.retransmissionPackets == 0)
        #expect(c.isConserved)
    }

    @Test func retransmissionFirstCopyWins() throws {
        let (r, recorder, box) = makeReassembler()
        factory.send(r, fromClient: true, seq: 1, payload: Array("abcd".utf8))
        factory.send(r, fromClient: true, seq: 1, payload: Array("ABCD".utf8))  // full retransmission
        factory.send(r, fromClient: true, seq: 3, payload: Array("CDef".utf8))  // overlap: "CD" old, "ef" new
        r.finish()
        #expect(recorder.bytes[0] == Array("abcdef".utf8))
        let c = try #require(box.summaries.first).clientToServer
        #expect(c.retransmittedBytes == 6 && c.retransmissionPackets == 1 && c.dataPackets == 2)
        #expect(c.payloadBytes == 12 && c.deliveredBytes == 6 && c.isConserved)
    }

    @Test func snaplenCutBecomesGap() throws {
        let (r, recorder, box) = makeReassembler()
        // 10 bytes on the wire, 4 captured; then the next segment.
        factory.send(r, fromClient: true, seq: 1, payload: Array("abcd".utf8), claimed: 10)
        factory.send(r, fromClient: true, seq: 11, payload: Array("xyz".utf8))
        r.finish()
        #expect(recorder.events[0] == [4, -6, 3])
        #expect(try #require(box.summaries.first).clientToServer.missingBytes == 6)
    }

    @Test func portReuseStartsNewConnection() {
        let (r, _, box) = makeReassembler()
        factory.send(r, fromClient: true, seq: 100, flags: [.syn])
        factory.send(r, fromClient: false, seq: 500, ack: 101, flags: [.syn, .ack])
        factory.send(r, fromClient: true, seq: 101, ack: 501, flags: [.fin, .ack])
        factory.send(r, fromClient: false, seq: 501, ack: 102, flags: [.fin, .ack])
        factory.send(r, fromClient: true, seq: 102, ack: 502)
        factory.send(r, fromClient: true, seq: 90_000, flags: [.syn])  // same 4-tuple, new SYN
        factory.send(r, fromClient: true, seq: 90_000, flags: [.syn])  // its retransmission: same connection
        r.finish()
        #expect(box.summaries.map(\.info.id) == [0, 1])
        #expect(box.summaries.last?.clientToServer.handshakePackets == 2)
        #expect(r.connectionCount == 2)
    }

    @Test func outOfOrderCapBecomesGap() throws {
        var limits = TCPReassemblyLimits()
        limits.maxBufferedBytesPerConnection = 100
        let (r, recorder, box) = makeReassembler(limits: limits)
        factory.send(r, fromClient: true, seq: 1, payload: [UInt8](repeating: 1, count: 10))
        // A hole of 50 bytes at 11..<61, then 150 bytes beyond it in three segments: over the cap.
        for k in 0..<3 {
            factory.send(r, fromClient: true, seq: UInt32(61 + 50 * k), payload: [UInt8](repeating: 2, count: 50))
        }
        #expect(recorder.skips[0] == [50])
        #expect(r.count(of: .bufferOverflow) == 1)
        r.finish()
        #expect(recorder.bytes[0].count == 160)
        #expect(try #require(box.summaries.first).clientToServer.missingBytes == 50)
    }

    /// An ACK past a hole starts the late-segment window (issue 24); the hole is given up when the window
    /// passes (here a packet 2 s later), not at the ACK, and not only at close.
    @Test func ackBeyondHoleGivesItUpAfterTheWindow() {
        let (r, recorder, _) = makeReassembler()
        factory.send(r, fromClient: false, seq: 1, payload: Array("aaaa".utf8))
        factory.send(r, fromClient: false, seq: 9, payload: Array("cccc".utf8))  // bytes 5..<9 never captured
        #expect(recorder.skips[1].isEmpty)
        factory.send(r, fromClient: true, seq: 1, ack: 13)  // the client has everything up to 13
        #expect(recorder.events[1] == [4])
        factory.send(r, fromClient: true, seq: 1, ack: 13, time: 2_000_000_000)
        #expect(recorder.events[1] == [4, -4, 4])
        r.finish()
    }

    /// The segment written after its ACK (a mirror port's two queues) fills the hole within the window.
    @Test func lateSegmentAfterItsACKFillsTheHole() {
        let (r, recorder, box) = makeReassembler()
        factory.send(r, fromClient: false, seq: 1, payload: Array("aaaa".utf8))
        factory.send(r, fromClient: false, seq: 9, payload: Array("cccc".utf8))
        factory.send(r, fromClient: true, seq: 1, ack: 13)
        factory.send(r, fromClient: false, seq: 5, payload: Array("bbbb".utf8))
        #expect(recorder.events[1] == [4, 4, 4])  // no gap: aaaa, then bbbb and the held cccc
        r.finish()
        let server = try? #require(box.summaries.first).serverToClient
        #expect(server?.missingBytes == 0 && server?.retransmittedBytes == 0)
    }

    @Test func synFloodStaysWithinTheConnectionCap() {
        var limits = TCPReassemblyLimits()
        limits.maxConnections = 1000
        let recorder = StreamRecorder()
        var ended = 0
        let r = TCPReassembler(limits: limits, makeHandler: { _ in recorder }) { _ in ended += 1 }
        var peak = 0
        for port in 0..<200_000 {
            var f = SegmentFactory()
            f.client.port = UInt16(truncatingIfNeeded: port &+ 1024)
            f.client.address = IPAddress(ipv4: 0x0b00_0000 | UInt32(port >> 16))
            f.send(r, fromClient: true, seq: 1, flags: [.syn], time: Int64(port) * 1000)
            peak = max(peak, r.openConnections)
        }
        r.finish()
        #expect(peak <= 1000)
        #expect(ended == 200_000)
        #expect(r.count(of: .connectionEvicted) > 0)
    }
}
