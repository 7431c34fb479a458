import TrafficCapture
import TrafficWire

/// One TCP connection in the reassembler's table: both directions, their accounting, and the
/// handler that receives the reassembled bytes.
final class TCPConnection {
    let info: TCPConnectionInfo
    var clientToServer = TCPStreamState()
    var serverToClient = TCPStreamState()
    /// A `let`: calls through a stored `var` retain and release the handler around each one, an atomic pair
    /// per segment; the handler goes when the reassembler drops the connection after `end`.
    let handler: (any TCPStreamHandler)?
    var lastSeen: CaptureTime
    /// Both streams have been flushed and the handler finished; the entry lingers only for late packets.
    private(set) var streamsFinished = false
    var sawSYN = false
    var sawFIN = false
    var sawRST = false
    /// The SYN-ACK's sequence number: the ACK carrying it + 1 completes the handshake.
    private var serverISN: UInt32?
    private var handshakeCompleted = false
    /// Capture time of the client's first SYN: the start of HAR's `connect` (SYN retries included, as browsers count them).
    private var synTime: CaptureTime?
    /// Segments of this connection processed so far: the clock of the late-segment window.
    private var packetCount = 0
    /// The server's bytes wait (held like out-of-order pieces) while the server has acknowledged client bytes that
    /// were not handed on yet: held behind a hole, or captured after the server's segment (two capture queues).
    /// The server answered them, so its answer must reach the handler after them (issue 24: responses are paired
    /// by TCP positions, and a response must not come before the request it answers). The wait ends when the
    /// client's bytes up to `acknowledged` are handed on, or when the late-segment window passes (then the
    /// client's holes below it are given up), at a cap, or at the end.
    private var serverWait: (acknowledged: Int64, packets: Int, time: CaptureTime)?
    private var serverWaitsForClientHole: Bool { serverWait != nil }
    /// Off only in tests, which compare `processInOrderData` with the general path on the same segments.
    var inOrderFastPath = true
    /// Whether the client is the lower endpoint of the reassembler's flow key: the reassembler tells a segment's
    /// direction from its key's order with it (`TCPReassembler.FlowKey.Side`).
    var clientIsLow = true

    /// The reassembler's limits, kept here so that the per-packet call passes none (only the general path reads them).
    let limits: TCPReassemblyLimits

    init(info: TCPConnectionInfo, handler: (any TCPStreamHandler)?, limits: TCPReassemblyLimits = .init()) {
        self.info = info
        self.handler = handler
        self.lastSeen = info.start
        self.limits = limits
    }

    /// Accounts one segment (its packet class and bytes) and delivers whatever it makes contiguous. `direction` is
    /// the segment's: from the client when its source is `info.client` (the reassembler knows it from its flow
    /// key's order). Inlined into the reassembler, so that the in-order data and pure ACK paths are reached without
    /// a call.
    @inline(__always)
    func process(_ segment: TCPSegment, direction: Direction, time: CaptureTime, bufferedTotal: inout Int,
                 anomalies: inout [Int]) {
        // The latest time seen, not the last packet's: a clock stepping back must not make the connection
        // end before it started or look idle.
        if time > lastSeen { lastSeen = time }
        packetCount &+= 1
        if inOrderFastPath,
            segment.payloadLength > 0
                ? processInOrderData(segment, direction: direction, time: time, bufferedTotal: &bufferedTotal)
                : processPureACK(segment, direction: direction, time: time)
        {
            return
        }
        processGeneral(segment, direction: direction, time: time, bufferedTotal: &bufferedTotal, anomalies: &anomalies)
    }

    /// Every segment that the fast paths do not take: control flags, holes, retransmissions, waits, closing.
    @inline(never)
    private func processGeneral(_ segment: TCPSegment, direction: Direction, time: CaptureTime,
                                bufferedTotal: inout Int, anomalies: inout [Int]) {
        let limits = self.limits
        if clientToServer.holeDeadline != nil || serverToClient.holeDeadline != nil {
            expireHoles(time: time, bufferedTotal: &bufferedTotal)
        }
        if let wait = serverWait, packetCount >= wait.packets || time >= wait.time {
            // The client's bytes the server acknowledged did not come in time: its holes below them are given up
            // (what was never captured stays unknown), and the server's bytes go on.
            while let first = firstPendingOffset(.clientToServer), first <= wait.acknowledged {
                skip(to: first, direction: .clientToServer, time: time)
                drain(.clientToServer, bufferedTotal: &bufferedTotal)
            }
            releaseServer(bufferedTotal: &bufferedTotal)
        }
        let flags = segment.flags
        let isControl = !flags.intersection([.syn, .fin, .rst]).isEmpty
        var context = TCPSegmentContext(
            time: time, frameBytes: segment.frameBytes, headerBytes: segment.headerBytes,
            overheadBytes: isControl ? 0 : segment.headerBytes)
        if direction == .serverToClient, segment.payloadLength > 0, flags.contains(.ack), clientToServer.started {
            context.acknowledged = clientToServer.offset(of: segment.acknowledgmentNumber)
        }
        // The direction's counters are updated in place (`tally`): a local copy of them (30 words) and its
        // write-back cost more than the rest of the accounting of a segment.
        tally(direction) {
            $0.packets += segment.frameCount
            $0.frameBytes += segment.frameBytes
            $0.payloadBytes += segment.payloadLength
        }
        let headerBytes = segment.headerBytes

        // The class of the frame's non-payload bytes.
        enum Control { case handshake, teardown, none }
        var control = Control.none
        var dataSequence = segment.sequenceNumber
        if flags.contains(.syn) {
            control = .handshake
            sawSYN = true
            dataSequence &+= 1  // the SYN occupies one sequence number (RFC 9293 §3.4)
            if stream(direction, \.synSequence) == nil {
                self[direction].synSequence = segment.sequenceNumber
                // A SYN fixes the stream's origin even if bytes were seen before it (capture reordering is rare).
                if !stream(direction, \.started) { self[direction].start(at: segment.sequenceNumber &+ 1) }
            }
            if flags.contains(.ack), direction == .serverToClient { serverISN = segment.sequenceNumber }
            if direction == .clientToServer, !flags.contains(.ack), synTime == nil { synTime = time }
        } else if flags.contains(.rst) || flags.contains(.fin) {
            control = .teardown
        }

        if segment.payloadLength > 0 {
            if !stream(direction, \.started) { self[direction].start(at: dataSequence) }
            let offset = streamOffset(of: dataSequence, direction)
            let next = stream(direction, \.nextOffset)
            if control == .none, segment.payloadLength <= 1, offset == next - 1 {
                // A keep-alive probe repeats the last byte (or none) to poke the peer (RFC 9293 §3.8.4).
                tally(direction) {
                    $0.ackPackets += segment.frameCount
                    $0.ackBytes += segment.frameBytes
                    $0.retransmittedBytes += segment.payloadLength
                }
                report(.ack, direction: direction, segment: segment, time: time)
            } else {
                if direction == .serverToClient, context.acknowledged > clientToServer.nextOffset, !streamsFinished {
                    if let wait = serverWait {
                        serverWait!.acknowledged = max(wait.acknowledged, context.acknowledged)
                    } else {
                        serverWait = (
                            context.acknowledged, packetCount &+ limits.lateSegmentWindowPackets,
                            time.adding(limits.lateSegmentWindowTime)
                        )
                    }
                }
                let finishedBefore = streamsFinished
                let (fresh, uncaptured) = add(segment, direction: direction, offset: offset, context: context,
                                              limits: limits, bufferedTotal: &bufferedTotal, anomalies: &anomalies)
                tally(direction) {
                    $0.retransmittedBytes += segment.payloadLength - fresh
                    $0.truncatedPayloadBytes += uncaptured
                }
                if finishedBefore, fresh > 0 { tally(direction) { $0.undeliveredPayloadBytes += fresh - uncaptured } }
                // A data frame whose new bytes were never handed on carried its headers nowhere.
                if control == .none, fresh > 0, finishedBefore || fresh == uncaptured {
                    tally(direction) { $0.undeliveredHeaderBytes += headerBytes }
                }
                // Repeated payload costs wire bytes too: a partly old segment reports its old part, a
                // control frame its old payload (whole old data frames are reported below).
                let old = segment.payloadLength - fresh
                if old > 0, fresh > 0 || control != .none, limits.packetEvents {
                    handler?.packet(TCPPacketEvent(
                        kind: .retransmission, direction: direction, frameBytes: old, streamOffset: offset, time: time))
                }
                switch control {
                case .handshake:
                    tally(direction) { $0.handshakePackets += segment.frameCount; $0.handshakeBytes += headerBytes }
                case .teardown:
                    tally(direction) { $0.teardownPackets += segment.frameCount; $0.teardownBytes += headerBytes }
                case .none:
                    break
                }
                if control != .none {
                    if fresh > 0 { tally(direction) { $0.dataPayloadBytes += segment.payloadLength } } else {
                        tally(direction) { $0.retransmissionFrameBytes += segment.payloadLength }
                    }
                } else if fresh > 0 {
                    tally(direction) {
                        $0.dataPackets += segment.frameCount
                        $0.dataHeaderBytes += headerBytes
                        $0.dataPayloadBytes += segment.payloadLength
                    }
                } else {
                    tally(direction) {
                        $0.retransmissionPackets += segment.frameCount
                        $0.retransmissionFrameBytes += segment.frameBytes
                    }
                    if limits.packetEvents {
                        handler?.packet(TCPPacketEvent(
                            kind: .retransmission, direction: direction, frameBytes: segment.frameBytes,
                            streamOffset: offset, time: time))
                    }
                }
            }
        } else {
            switch control {
            case .handshake:
                tally(direction) {
                    $0.handshakePackets += segment.frameCount
                    $0.handshakeBytes += segment.frameBytes
                }
            case .teardown:
                tally(direction) { $0.teardownPackets += segment.frameCount; $0.teardownBytes += segment.frameBytes }
            case .none:
                let other = direction.opposite
                if flags.contains(.ack), direction == .clientToServer, !handshakeCompleted, let serverISN,
                    segment.acknowledgmentNumber == serverISN &+ 1
                {
                    handshakeCompleted = true
                    if let synTime { handler?.handshakeCompleted(syn: synTime, ack: time) }
                    tally(direction) {
                        $0.handshakePackets += segment.frameCount
                        $0.handshakeBytes += segment.frameBytes
                    }
                } else if flags.contains(.ack), let fin = stream(other, \.finOffset), stream(other, \.started),
                    streamOffset(of: segment.acknowledgmentNumber, other) > fin
                {
                    tally(direction) {
                        $0.teardownPackets += segment.frameCount
                        $0.teardownBytes += segment.frameBytes
                    }
                } else {
                    tally(direction) { $0.ackPackets += segment.frameCount; $0.ackBytes += segment.frameBytes }
                    report(.ack, direction: direction, segment: segment, time: time)
                }
            }
        }

        // The client's bytes the waiting server acknowledged have been handed on: the server's answer follows them.
        if let wait = serverWait, clientToServer.nextOffset >= wait.acknowledged {
            releaseServer(bufferedTotal: &bufferedTotal)
        }

        if flags.contains(.fin) {
            sawFIN = true
            if !self[direction].started { self[direction].start(at: dataSequence) }
            let fin = self[direction].offset(of: dataSequence) + Int64(segment.payloadLength)
            if self[direction].finOffset == nil { self[direction].finOffset = fin }
        }
        if flags.contains(.rst) { sawRST = true }

        // A receiver that acknowledges bytes beyond a hole has them: no retransmission will fill it. But the
        // capture may still hold the segment, written after its ACK (two queues, one per direction): the hole
        // stays open for the late-segment window, then is given up (`expireHoles`), instead of at close.
        if flags.contains(.ack), !streamsFinished {
            let other = direction.opposite
            if stream(other, \.started), let first = firstPendingOffset(other) {
                let acknowledged = streamOffset(of: segment.acknowledgmentNumber, other)
                if acknowledged >= first {
                    self[other].acknowledgedPastHole = max(self[other].acknowledgedPastHole ?? acknowledged, acknowledged)
                    if self[other].holeDeadline == nil {
                        self[other].holeDeadline = (
                            packetCount &+ limits.lateSegmentWindowPackets, time.adding(limits.lateSegmentWindowTime)
                        )
                    }
                }
            }
        }

        if !streamsFinished {
            if sawRST {
                finishStreams(time: time, bufferedTotal: &bufferedTotal)
            } else if let c = clientToServer.finOffset, let s = serverToClient.finOffset,
                clientToServer.nextOffset >= c, serverToClient.nextOffset >= s
            {
                finishStreams(time: time, bufferedTotal: &bufferedTotal)
            }
        }
    }

    /// Most segments carry data that continues their stream, on a connection with nothing held back, awaited or
    /// closing: no SYN, FIN or RST, captured whole, starting at the next expected byte, and (from the server)
    /// acknowledging no client byte not handed on yet. For such a segment this does what the general path of
    /// `process` does, in the same order, without its checks for holes, retransmissions, keep-alives and
    /// teardown. Returns false, having changed nothing, for any other segment.
    @inline(__always)
    private func processInOrderData(_ segment: TCPSegment, direction: Direction, time: CaptureTime,
                                    bufferedTotal: inout Int) -> Bool {
        let flags = segment.flags
        guard flags.isDisjoint(with: [.syn, .fin, .rst]), segment.payloadLength > 0,
            segment.payload.count == segment.payloadLength, !streamsFinished, !sawRST, serverWait == nil,
            clientToServer.holeDeadline == nil, serverToClient.holeDeadline == nil,
            clientToServer.pending.isEmpty, serverToClient.pending.isEmpty
        else { return false }
        let fromClient = direction == .clientToServer
        guard fromClient ? clientToServer.started : serverToClient.started,
            streamOffset(of: segment.sequenceNumber, direction) == stream(direction, \.nextOffset)
        else { return false }
        var acknowledged: Int64 = -1
        if !fromClient, flags.contains(.ack), clientToServer.started {
            acknowledged = clientToServer.offset(of: segment.acknowledgmentNumber)
            // Bytes the client sent that are not handed on yet: the server's answer waits for them (`serverWait`).
            guard acknowledged <= clientToServer.nextOffset else { return false }
        }
        let headerBytes = segment.headerBytes
        let context = TCPSegmentContext(
            time: time, frameBytes: segment.frameBytes, headerBytes: headerBytes, overheadBytes: headerBytes,
            acknowledged: acknowledged)
        // The general path counts the data frame after delivering it; the handler cannot see the counters, so here
        // they are counted at once.
        tally(direction) {
            $0.packets += segment.frameCount
            $0.frameBytes += segment.frameBytes
            $0.payloadBytes += segment.payloadLength
            $0.dataPackets += segment.frameCount
            $0.dataHeaderBytes += headerBytes
            $0.dataPayloadBytes += segment.payloadLength
        }
        deliver(segment.payload, direction: direction, context: context)
        // Data after both FINs' positions were set (a FIN seen before the last bytes) may complete both streams.
        if let c = clientToServer.finOffset, let s = serverToClient.finOffset, clientToServer.nextOffset >= c,
            serverToClient.nextOffset >= s
        {
            finishStreams(time: time, bufferedTotal: &bufferedTotal)
        }
        return true
    }

    /// A pure ACK (no payload; no SYN, FIN or RST) on a connection past its handshake (or without one captured) with
    /// nothing held back, awaited or closing: what the general path of `process` does for it, in the same order,
    /// without its checks for the handshake's last ACK, the ACK of a FIN and holes. Returns false, having changed
    /// nothing, for any other segment.
    @inline(__always)
    private func processPureACK(_ segment: TCPSegment, direction: Direction, time: CaptureTime) -> Bool {
        guard segment.payloadLength == 0, segment.flags.isDisjoint(with: [.syn, .fin, .rst]), !streamsFinished, !sawRST,
            serverWait == nil, handshakeCompleted || serverISN == nil,
            clientToServer.finOffset == nil, serverToClient.finOffset == nil,
            clientToServer.holeDeadline == nil, serverToClient.holeDeadline == nil,
            clientToServer.pending.isEmpty, serverToClient.pending.isEmpty
        else { return false }
        tally(direction) {
            $0.packets += segment.frameCount
            $0.frameBytes += segment.frameBytes
            $0.ackPackets += segment.frameCount
            $0.ackBytes += segment.frameBytes
        }
        report(.ack, direction: direction, segment: segment, time: time)
        return true
    }

    /// Gives up the holes whose late-segment window has passed: those below the furthest position acknowledged.
    private func expireHoles(time: CaptureTime, bufferedTotal: inout Int) {
        for direction in Direction.allCases {
            guard let deadline = self[direction].holeDeadline else { continue }
            guard self[direction].pending.first != nil, let acknowledged = self[direction].acknowledgedPastHole else {
                self[direction].holeDeadline = nil
                self[direction].acknowledgedPastHole = nil
                continue
            }
            guard packetCount >= deadline.packets || time >= deadline.time || streamsFinished else { continue }
            while let first = firstPendingOffset(direction), first <= acknowledged {
                skip(to: first, direction: direction, time: time)
                drain(direction, bufferedTotal: &bufferedTotal)
                // Server bytes held for `serverWait` stay held (drain hands on nothing) until that wait ends: without
                // this the loop never ended when the hole's deadline came first (a clock stepping back).
                if direction == .serverToClient, serverWaitsForClientHole { break }
            }
            self[direction].holeDeadline = nil
            self[direction].acknowledgedPastHole = nil
            // The server's bytes waited for these client bytes only while they could still come.
            if direction == .clientToServer { releaseServer(bufferedTotal: &bufferedTotal) }
        }
    }

    /// Tells the handler about a pure ACK, with the position it acknowledges in the other direction.
    private func report(_ kind: TCPPacketEvent.Kind, direction: Direction, segment: TCPSegment, time: CaptureTime) {
        guard handler != nil, limits.packetEvents else { return }
        let other = direction.opposite
        let acknowledged = stream(other, \.started) && segment.flags.contains(.ack)
            ? streamOffset(of: segment.acknowledgmentNumber, other) : 0
        handler?.packet(TCPPacketEvent(
            kind: kind, direction: direction, frameBytes: segment.frameBytes, streamOffset: acknowledged, time: time))
    }

    /// Delivers or holds the segment's payload; returns how many of its bytes were new, and how many of
    /// those the snaplen cut off.
    private func add(_ segment: TCPSegment, direction: Direction, offset: Int64, context: TCPSegmentContext,
                     limits: TCPReassemblyLimits, bufferedTotal: inout Int, anomalies: inout [Int]) -> (Int, Int) {
        let end = offset + Int64(segment.payloadLength)
        let capturedEnd = offset + Int64(segment.payload.count)
        let next = stream(direction, \.nextOffset)
        let waits = direction == .serverToClient && serverWaitsForClientHole
        if firstPendingOffset(direction) == nil, offset <= next, !streamsFinished, !waits {
            // The common case, in order with nothing held back: straight from the packet, no copy, no allocation.
            guard end > next else { return (0, 0) }
            if capturedEnd > next {
                deliver(UnsafeRawBufferPointer(rebasing: segment.payload[Int(next - offset)...]), direction: direction,
                        context: context)
            }
            skip(to: end, direction: direction, time: context.time)
            return (Int(end - next), Int(end - max(next, capturedEnd)))
        }
        let fresh = self[direction].uncovered(offset..<end)
        let freshCount = fresh.reduce(0) { $0 + Int($1.count) }
        let uncaptured = fresh.reduce(0) { $0 + Int($1.clamped(to: capturedEnd..<max(capturedEnd, end)).count) }
        guard freshCount > 0 else { return (0, 0) }
        if streamsFinished {
            anomalies[TCPAnomaly.dataAfterClose.rawValue] += 1
            return (freshCount, 0)
        }
        // Hold back every fresh range but one starting at `next`, which goes straight from the packet. The
        // frame's header bytes travel with its first captured piece only, so they are attributed once.
        var overheadCarried = false
        if !waits, let first = fresh.first, first.lowerBound == next, next < capturedEnd { overheadCarried = true }
        for range in fresh {
            for (piece, isData) in [(range.clamped(to: offset..<capturedEnd), true),
                                    (range.clamped(to: capturedEnd..<end), false)] where !piece.isEmpty {
                if piece.lowerBound == next && isData && !waits { continue }
                var held = TCPStreamState.Piece(offset: piece.lowerBound, bytes: [], gapLength: 0, context: context)
                if isData {
                    if overheadCarried { held.context.overheadBytes = 0 }
                    overheadCarried = true
                    let from = Int(piece.lowerBound - offset), to = Int(piece.upperBound - offset)
                    held.bytes = Array(UnsafeRawBufferPointer(rebasing: segment.payload[from..<to]))
                } else {
                    held.gapLength = Int(piece.count)
                }
                bufferedTotal += held.cost
                self[direction].insert(held)
            }
        }
        if !waits, let first = fresh.first, first.lowerBound == next, next < capturedEnd {
            let stop = min(first.upperBound, capturedEnd)
            let from = Int(next - offset), to = Int(stop - offset)
            deliver(UnsafeRawBufferPointer(rebasing: segment.payload[from..<to]), direction: direction, context: context)
        }
        drain(direction, bufferedTotal: &bufferedTotal)
        // Over a cap: give up the oldest hole, so memory stays bounded whatever the capture holds. Waiting server
        // bytes over the cap give up the client's hole they wait for first.
        if waits, self[direction].pendingBytes > limits.maxBufferedBytesPerConnection
            || bufferedTotal > limits.maxBufferedBytesTotal
        {
            anomalies[TCPAnomaly.bufferOverflow.rawValue] += 1
            while let first = firstPendingOffset(.clientToServer) {
                skip(to: first, direction: .clientToServer, time: context.time)
                drain(.clientToServer, bufferedTotal: &bufferedTotal)
            }
            releaseServer(bufferedTotal: &bufferedTotal)
        }
        while !self[direction].pending.isEmpty,
            self[direction].pendingBytes > limits.maxBufferedBytesPerConnection
                || bufferedTotal > limits.maxBufferedBytesTotal
        {
            anomalies[TCPAnomaly.bufferOverflow.rawValue] += 1
            skip(to: self[direction].pending[0].offset, direction: direction, time: context.time)
            drain(direction, bufferedTotal: &bufferedTotal)
        }
        return (freshCount, uncaptured)
    }

    @inline(__always)
    private func deliver(_ bytes: UnsafeRawBufferPointer, direction: Direction, context: TCPSegmentContext) {
        // Not through the subscript: its `_modify` is a coroutine, two calls per delivery.
        if direction == .clientToServer {
            clientToServer.nextOffset += Int64(bytes.count)
        } else {
            serverToClient.nextOffset += Int64(bytes.count)
        }
        tally(direction) { $0.deliveredBytes += bytes.count }
        handler?.receive(bytes, direction: direction, segment: context)
    }

    private func skip(to offset: Int64, direction: Direction, time: CaptureTime) {
        let count = offset - self[direction].nextOffset
        guard count > 0 else { return }
        self[direction].nextOffset = offset
        tally(direction) { $0.missingBytes += Int(count) }
        handler?.skip(Int(count), direction: direction, time: time)
    }

    /// Hands on held pieces that have become contiguous.
    private func drain(_ direction: Direction, bufferedTotal: inout Int) {
        guard !self[direction].pending.isEmpty else { return }
        if direction == .serverToClient, serverWaitsForClientHole { return }
        var delivered = 0
        while delivered < self[direction].pending.count,
            self[direction].pending[delivered].offset == self[direction].nextOffset
        {
            let piece = self[direction].pending[delivered]
            if piece.bytes.isEmpty {
                skip(to: piece.end, direction: direction, time: piece.context.time)
            } else {
                piece.bytes.withUnsafeBytes { deliver($0, direction: direction, context: piece.context) }
            }
            self[direction].pendingBytes -= piece.cost
            bufferedTotal -= piece.cost
            delivered += 1
        }
        if delivered > 0 { self[direction].pending.removeFirst(delivered) }
    }

    /// The client's hole is filled or given up: the server's waiting bytes go on, after the client's.
    private func releaseServer(bufferedTotal: inout Int) {
        guard serverWait != nil else { return }
        serverWait = nil
        drain(.serverToClient, bufferedTotal: &bufferedTotal)
    }

    /// Flushes both directions (remaining holes become gaps) and finishes the handler. Idempotent.
    func finishStreams(time: CaptureTime, bufferedTotal: inout Int) {
        guard !streamsFinished else { return }
        streamsFinished = true
        // `allCases` is client first: the server's waiting bytes follow the client's, then go.
        for direction in Direction.allCases {
            if direction == .serverToClient { serverWait = nil }
            // Offsets read through `firstPendingOffset`: the subscript's getter copied the whole stream state.
            while let first = firstPendingOffset(direction) {
                skip(to: first, direction: direction, time: time)
                drain(direction, bufferedTotal: &bufferedTotal)
            }
            if direction == .clientToServer { clientToServer.pending = [] } else { serverToClient.pending = [] }
        }
        handler?.finish(time: time)
    }

    /// The reassembler lets go of the connection: the handler gets the final accounting.
    func end(evicted: Bool) -> TCPConnectionSummary {
        let summary = summary(evicted: evicted)
        handler?.connectionEnded(summary)
        return summary
    }

    func summary(evicted: Bool) -> TCPConnectionSummary {
        var summary = TCPConnectionSummary(info: info, end: lastSeen)
        summary.clientToServer = clientToServer.stats
        summary.serverToClient = serverToClient.stats
        summary.sawSYN = sawSYN
        summary.sawFIN = sawFIN
        summary.sawRST = sawRST
        summary.evicted = evicted
        return summary
    }

    /// Updates one direction's counters in place. Through the subscript's `_modify` each update was a
    /// coroutine call (not inlined), more than the update itself.
    @inline(__always)
    private func tally(_ direction: Direction, _ update: (inout TCPDirectionStats) -> Void) {
        if direction == .clientToServer { update(&clientToServer.stats) } else { update(&serverToClient.stats) }
    }

    // Field reads of one direction's state without the subscript's getter, which copies the whole state
    // (stats, and a retain of `pending`) for every read on the per-packet path.
    @inline(__always)
    private func stream<T>(_ direction: Direction, _ field: (TCPStreamState) -> T) -> T {
        direction == .clientToServer ? field(clientToServer) : field(serverToClient)
    }

    @inline(__always)
    private func streamOffset(of sequence: UInt32, _ direction: Direction) -> Int64 {
        direction == .clientToServer ? clientToServer.offset(of: sequence) : serverToClient.offset(of: sequence)
    }

    @inline(__always)
    private func firstPendingOffset(_ direction: Direction) -> Int64? {
        direction == .clientToServer ? clientToServer.pending.first?.offset : serverToClient.pending.first?.offset
    }

    subscript(direction: Direction) -> TCPStreamState {
        get { direction == .clientToServer ? clientToServer : serverToClient }
        // In place: a get/set pair would copy `pending` on every mutation.
        _modify {
            if direction == .clientToServer { yield &clientToServer } else { yield &serverToClient }
        }
    }
}
