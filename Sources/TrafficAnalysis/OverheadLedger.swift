import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// Attributes pure ACKs and retransmitted segments of one connection to exchanges by stream position.
///
/// Rules (documented in the README): a pure ACK belongs to the exchange whose bytes it acknowledges
/// (the message holding the last acknowledged byte) and is charged to the acknowledging side, so a
/// client's ACKs of a download go to that exchange's request record; a retransmission belongs to the
/// message whose bytes it repeats, on its own side. Positions past the last finished message belong to
/// the message in progress, which is charged when it ends.
struct OverheadLedger {
    struct Span {
        var start: Int
        var end: Int
        var index: Int
    }

    struct Entry: Hashable {
        var index: Int
        /// The side charged: client-to-server bytes go to requests, server-to-client to responses.
        var direction: Direction
    }

    private var spans: [[Span]] = [[], []]
    /// Bytes waiting for the next message of a stream direction: [stream direction][ack, retransmission].
    private var waiting: [[Int]] = [[0, 0], [0, 0]]
    private(set) var charges: [Entry: (ack: Int, retransmitted: Int)] = [:]

    mutating func emitted(_ record: MessageRecord) {
        let direction: Direction = record.kind == .request ? .clientToServer : .serverToClient
        let end = record.streamOffset + record.transferBytes + record.missingBytes
        spans[direction.rawValue].append(Span(start: record.streamOffset, end: end, index: record.index))
        let pending = waiting[direction.rawValue]
        if pending[0] > 0 { charge(Entry(index: record.index, direction: direction.opposite), ack: pending[0]) }
        if pending[1] > 0 { charge(Entry(index: record.index, direction: direction), retransmitted: pending[1]) }
        waiting[direction.rawValue] = [0, 0]
    }

    mutating func note(_ event: TCPPacketEvent) {
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
    mutating func settle() {
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
    var unsettledBytes: Int { waiting.joined().reduce(0, +) }

    /// The finished message holding `position`; positions before the first message count to it, positions
    /// after the last one to the message in progress (nil).
    private func span(containing position: Int, in direction: Direction) -> Span? {
        let list = spans[direction.rawValue]
        guard let last = list.last, position < last.end else { return nil }
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
