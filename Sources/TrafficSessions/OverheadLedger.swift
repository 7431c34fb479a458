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

    private var spans: [[Span]] = [[], []]
    /// The furthest end of any span, per direction.
    private var ends = [0, 0]
    /// Bytes waiting for the next message of a stream direction: [stream direction][ack, retransmission].
    private var waiting: [[Int]] = [[0, 0], [0, 0]]
    package private(set) var charges: [Entry: (ack: Int, retransmitted: Int)] = [:]

    package init() {}

    package mutating func emitted(_ record: MessageRecord) {
        let direction: Direction = record.kind == .request ? .clientToServer : .serverToClient
        let end = record.streamOffset + record.transferBytes + record.missingBytes
        let span = Span(start: record.streamOffset, end: end, index: record.index)
        // HTTP/2 interleaves messages and emits them as they end, not as they start: kept in order of start
        // (almost always at the end), a position then belongs to the last message begun before it.
        if let last = spans[direction.rawValue].last, span.start < last.start {
            let at = spans[direction.rawValue].lastIndex { $0.start <= span.start }.map { $0 + 1 } ?? 0
            spans[direction.rawValue].insert(span, at: at)
        } else {
            spans[direction.rawValue].append(span)
        }
        ends[direction.rawValue] = max(ends[direction.rawValue], end)
        let pending = waiting[direction.rawValue]
        if pending[0] > 0 { charge(Entry(index: record.index, direction: direction.opposite), ack: pending[0]) }
        if pending[1] > 0 { charge(Entry(index: record.index, direction: direction), retransmitted: pending[1]) }
        waiting[direction.rawValue] = [0, 0]
    }

    package mutating func note(_ event: TCPPacketEvent) {
        switch event.kind {
        case .ack:
            // The last acknowledged byte is at streamOffset - 1 of the other direction.
            let stream = event.direction.opposite
            if let span = span(containing: Int(event.streamOffset) - 1, in: stream) {
                charge(Entry(index: span.index, direction: event.direction), ack: event.frameBytes)
            } else {
                waiting[stream.rawValue][0] += event.frameBytes
            }
        case .retransmission:
            if let span = span(containing: Int(event.streamOffset), in: event.direction) {
                charge(Entry(index: span.index, direction: event.direction), retransmitted: event.frameBytes)
            } else {
                waiting[event.direction.rawValue][1] += event.frameBytes
            }
        }
    }

    /// What never found a later message goes to the last message of its stream direction.
    package mutating func settle() {
        for stream in Direction.allCases {
            let pending = waiting[stream.rawValue]
            guard pending != [0, 0], let last = spans[stream.rawValue].last ?? spans[stream.opposite.rawValue].last
            else { continue }
            if pending[0] > 0 { charge(Entry(index: last.index, direction: stream.opposite), ack: pending[0]) }
            if pending[1] > 0 { charge(Entry(index: last.index, direction: stream), retransmitted: pending[1]) }
            waiting[stream.rawValue] = [0, 0]
        }
    }

    /// Bytes that found no message at all (a connection without records).
    package var unsettledBytes: Int { waiting.joined().reduce(0, +) }

    /// The finished message holding `position`; positions before the first message count to it, positions
    /// after the last one to the message in progress (nil).
    private func span(containing position: Int, in direction: Direction) -> Span? {
        let list = spans[direction.rawValue]
        guard !list.isEmpty, position < ends[direction.rawValue] else { return nil }
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
