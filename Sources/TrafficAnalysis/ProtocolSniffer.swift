import TrafficCapture
import TrafficCodecs
import TrafficReassembly
import TrafficTLS

/// Decides per connection, from its first bytes, whether the HTTP or the TLS stage reads it.
///
/// TLS is recognised by content on any port: a plausible record header (`TLSConnectionParser.looksLikeTLS`).
/// Until the first 6 bytes of a direction have arrived nothing is decided; those bytes and any packet
/// events are held (a few bytes at most) and replayed to the chosen stage.
final class ProtocolSniffer: TCPStreamHandler {
    private enum Held {
        case bytes([UInt8], Direction, TCPSegmentContext)
        case skip(Int, Direction, CaptureTime)
        case packet(TCPPacketEvent)
    }

    private let makeHTTP: () -> any TCPStreamHandler
    private let makeTLS: () -> any TCPStreamHandler
    private var chosen: (any TCPStreamHandler)?
    private var held: [Held] = []
    private var heldBytes = [0, 0]
    private var prefix: [[UInt8]] = [[], []]

    init(makeHTTP: @escaping () -> any TCPStreamHandler, makeTLS: @escaping () -> any TCPStreamHandler) {
        self.makeHTTP = makeHTTP
        self.makeTLS = makeTLS
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        if let chosen {
            chosen.receive(bytes, direction: direction, segment: segment)
            return
        }
        let d = direction.rawValue
        if prefix[d].isEmpty, bytes.count >= 6 {
            decide(tls: TLSConnectionParser.looksLikeTLS(bytes))
            chosen!.receive(bytes, direction: direction, segment: segment)
            return
        }
        prefix[d] += bytes.prefix(6 - min(6, prefix[d].count))
        held.append(.bytes(Array(bytes), direction, segment))
        heldBytes[d] += bytes.count
        if prefix[d].count >= 6 {
            decide(tls: prefix[d].withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) })
        }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard let chosen else {
            // A gap before anything is decided: HTTP resynchronises on start lines, TLS on record headers;
            // HTTP is the stage whose numbers matter most, so it gets the stream.
            held.append(.skip(byteCount, direction, time))
            decide(tls: false)
            return
        }
        chosen.skip(byteCount, direction: direction, time: time)
    }

    func packet(_ event: TCPPacketEvent) {
        if let chosen { chosen.packet(event) } else { held.append(.packet(event)) }
    }

    func finish(time: CaptureTime) {
        if chosen == nil {
            let tls = prefix.contains { !$0.isEmpty && $0.withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) } }
            decide(tls: tls)
        }
        chosen!.finish(time: time)
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        if chosen == nil { decide(tls: false) }
        chosen!.connectionEnded(summary)
    }

    private func decide(tls: Bool) {
        guard chosen == nil else { return }
        let handler = tls ? makeTLS() : makeHTTP()
        chosen = handler
        for item in held {
            switch item {
            case let .bytes(bytes, direction, segment):
                bytes.withUnsafeBytes { handler.receive($0, direction: direction, segment: segment) }
            case let .skip(count, direction, time): handler.skip(count, direction: direction, time: time)
            case let .packet(event): handler.packet(event)
            }
        }
        held = []
    }
}
