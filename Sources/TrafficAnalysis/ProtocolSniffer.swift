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

    /// Makes the stage that reads a connection; one per run, shared by every sniffer.
    final class Stages {
        let makeHTTP: (TCPConnectionInfo) -> any TCPStreamHandler
        let makeTLS: (TCPConnectionInfo) -> any TCPStreamHandler
        init(http: @escaping (TCPConnectionInfo) -> any TCPStreamHandler,
             tls: @escaping (TCPConnectionInfo) -> any TCPStreamHandler) {
            makeHTTP = http
            makeTLS = tls
        }
    }

    // Kept small: a SYN flood creates one sniffer per half-open connection, most of which never see a byte.
    private let info: TCPConnectionInfo
    private let stages: Stages
    private var chosen: (any TCPStreamHandler)?
    private var held: [Held] = []
    private var prefix: ([UInt8], [UInt8]) = ([], [])

    init(info: TCPConnectionInfo, stages: Stages) {
        self.info = info
        self.stages = stages
    }

    private func prefix(_ direction: Direction) -> [UInt8] { direction == .clientToServer ? prefix.0 : prefix.1 }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        if let chosen {
            chosen.receive(bytes, direction: direction, segment: segment)
            return
        }
        if prefix(direction).isEmpty, bytes.count >= 6 {
            decide(tls: TLSConnectionParser.looksLikeTLS(bytes))
            chosen!.receive(bytes, direction: direction, segment: segment)
            return
        }
        let room = 6 - min(6, prefix(direction).count)
        if direction == .clientToServer { prefix.0 += bytes.prefix(room) } else { prefix.1 += bytes.prefix(room) }
        held.append(.bytes(Array(bytes), direction, segment))
        let known = prefix(direction)
        if known.count >= 6 { decide(tls: known.withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) }) }
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
            let tls = [prefix.0, prefix.1].contains {
                !$0.isEmpty && $0.withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) }
            }
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
        let handler = tls ? stages.makeTLS(info) : stages.makeHTTP(info)
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
        prefix = ([], [])
    }
}
