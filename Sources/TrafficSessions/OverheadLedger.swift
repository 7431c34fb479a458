import TrafficReassembly

/// Attributes pure ACKs and retransmitted segments of one connection to exchanges by stream position.
///
/// Rules (documented in the README): a pure ACK belongs to the exchange whose bytes it acknowledges
/// (the message holding the last acknowledged byte) and is charged to the acknowledging side, so a
/// client's ACKs of a download go to that exchange's request record; a retransmission belongs to the
/// message whose bytes it repeats, on its own side. Positions past the last finished message belong to
/// the message in progress, which is charged when it ends.
package struct OverheadLedger {
    struct Span {
        var start: Int
        var end: Int
        var index: Int
    }

    package struct Entry: Hashable {
        package var index: Int
        /// The side charged: client-to-server bytes go to requests, server-to-client to responses.
        package var direction: Direction
    }

    /// One stream direction: its messages' spans, the furthest end of any, and bytes waiting for its next
    /// message. Stored as two fields, not arrays of arrays: resetting `[[Int]]` per message allocated an array
    /// every time (half of `--overhead`'s mallocs on the API bench).
    private struct Stream {
        var spans: [Span] = []
        var end = 0
        var waitingAck = 0
        var waitingRetransmitted = 0
    }

    private var clientToServer = Stream()
    private var serverToClient = Stream()
    package private(set) var charges: [Entry: (ack: Int, retransmitted: Int)] = [:]

    package init() {}

    private subscript(_ direction: Direction) -> Stream {
        get { direction == .clientToServer ? clientToServer : serverToClient }
        _modify {
            if direction == .clientToServer { yield &clientToServer } else { yield &serverToClient }
        }
    }

    package mutating func emitted(_ record: MessageRecord) {
        let direction: Direction = record.kind == .request ? .clientToServer : .serverToClient
        let end = record.streamOffset + record.transferBytes + record.missingBytes
        let span = Span(start: record.streamOffset, end: end, index: record.index)
        // HTTP/2 interleaves messages and emits them as they end, not as they start: kept in order of start
        // (almost always at the end), a position then belongs to the last message begun before it.
        if let last = self[direction].spans.last, span.start < last.start {
            let at = self[direction].spans.lastIndex { $0.start <= span.start }.map { $0 + 1 } ?? 0
            self[direction].spans.insert(span, at: at)
        } else {
            if self[direction].spans.isEmpty { self[direction].spans.reserveCapacity(16) }
            self[direction].spans.append(span)
        }
        self[direction].end = max(self[direction].end, end)
        let ack = self[direction].waitingAck, retransmitted = self[direction].waitingRetransmitted
        if ack > 0 { charge(Entry(index: record.index, direction: direction.opposite), ack: ack) }
        if retransmitted > 0 { charge(Entry(index: record.index, direction: direction), retransmitted: retransmitted) }
        self[direction].waitingAck = 0
        self[direction].waitingRetransmitted = 0
    }

    package mutating func note(_ event: TCPPacketEvent) {
        switch event.kind {
        case .ack:
            // The last acknowledged byte is at streamOffset - 1 of the other direction.
            let stream = event.direction.opposite
            if let span = span(containing: Int(event.streamOffset) - 1, in: stream) {
                charge(Entry(index: span.index, direction: event.direction), ack: event.frameBytes)
            } else {
                self[stream].waitingAck += event.frameBytes
            }
        case .retransmission:
            if let span = span(containing: Int(event.streamOffset), in: event.direction) {
                charge(Entry(index: span.index, direction: event.direction), retransmitted: event.frameBytes)
            } else {
                self[event.direction].waitingRetransmitted += event.frameBytes
            }
        }
    }

    /// What never found a later message goes to the last message of its stream direction.
    package mutating func settle() {
        for stream in Direction.allCases {
            let ack = self[stream].waitingAck, retransmitted = self[stream].waitingRetransmitted
            guard ack != 0 || retransmitted != 0, let last = self[stream].spans.last ?? self[stream.opposite].spans.last
            else { continue }
            if ack > 0 { charge(Entry(index: last.index, direction: stream.opposite), ack: ack) }
            if retransmitted > 0 { charge(Entry(index: last.index, direction: stream), retransmitted: retransmitted) }
            self[stream].waitingAck = 0
            self[stream].waitingRetransmitted = 0
        }
    }

    /// Bytes that found no message at all (a connection without records).
    package var unsettledBytes: Int {
        clientToServer.waitingAck + clientToServer.waitingRetransmitted + serverToClient.waitingAck
            + serverToClient.waitingRetransmitted
    }

    /// The finished message holding `position`; positions before the first message count to it, positions
    /// after the last one to the message in progress (nil).
    private func span(containing position: Int, in direction: Direction) -> Span? {
        let stream = direction == .clientToServer ? clientToServer : serverToClient
        let list = stream.spans
        guard !list.isEmpty, position < stream.end else { return nil }
        var low = 0, high = list.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if list[mid].start <= position { low = mid } else { high = mid - 1 }
        }
        return list[low]
    }

    private mutating func charge(_ entry: Entry, ack: Int = 0, retransmitted: Int = 0) {
        var value = charges[entry] ?? (0, 0)
        value.ack += ack
        value.retransmitted += retransmitted
        charges[entry] = value
    }
}
