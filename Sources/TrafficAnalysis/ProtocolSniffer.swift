import TrafficCapture
import TrafficCodecs
import TrafficReassembly
import TrafficTLS

/// Decides per connection, from its first bytes, whether the HTTP or the TLS stage reads it.
///
/// TLS is recognised by content on any port: a plausible record header (`TLSConnectionParser.looksLikeTLS`).
/// Until the first 6 bytes of a direction have arrived nothing is decided; those bytes and any packet
/// events are held (a few bytes at most) and replayed to the chosen stage.
///
/// Generic over the two stages so that the chosen one is held as an `Unmanaged` reference of its own type:
/// calling a handler kept in a `var` retains and releases it around every call (an atomic pair per
/// segment), and the stage is known only after the first bytes, so it cannot be a `let`.
final class ProtocolSniffer<HTTPStage: TCPStreamHandler, TLSStage: TCPStreamHandler>: TCPStreamHandler {
    private enum Held {
        case bytes([UInt8], Direction, TCPSegmentContext)
        case skip(Int, Direction, CaptureTime)
        case packet(TCPPacketEvent)
    }

    /// Makes the stage that reads a connection; one per run, shared by every sniffer.
    final class Stages {
        let makeHTTP: (TCPConnectionInfo) -> HTTPStage
        let makeTLS: (TCPConnectionInfo) -> TLSStage
        init(http: @escaping (TCPConnectionInfo) -> HTTPStage, tls: @escaping (TCPConnectionInfo) -> TLSStage) {
            makeHTTP = http
            makeTLS = tls
        }
    }

    // Kept small: a SYN flood creates one sniffer per half-open connection, most of which never see a byte.
    private let info: TCPConnectionInfo
    private let stages: Stages
    /// The chosen stage, owned by this sniffer (retained once in `decide`, released in `deinit`).
    private var http: Unmanaged<HTTPStage>?
    private var tls: Unmanaged<TLSStage>?
    private var held: [Held] = []
    private var prefix: ([UInt8], [UInt8]) = ([], [])

    init(info: TCPConnectionInfo, stages: Stages) {
        self.info = info
        self.stages = stages
    }

    deinit {
        http?.release()
        tls?.release()
    }

    private var isDecided: Bool { http != nil || tls != nil }

    /// Calls `body` with the chosen stage, without retaining it (this sniffer owns it for its whole life).
    private func withChosen(_ body: (any TCPStreamHandler) -> Void) {
        if let http {
            http._withUnsafeGuaranteedRef { body($0) }
        } else if let tls {
            tls._withUnsafeGuaranteedRef { body($0) }
        }
    }

    private func prefix(_ direction: Direction) -> [UInt8] { direction == .clientToServer ? prefix.0 : prefix.1 }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        // The stages are called directly (not through `withChosen`): this is once per segment.
        if let http {
            http._withUnsafeGuaranteedRef { $0.receive(bytes, direction: direction, segment: segment) }
            return
        }
        if let tls {
            tls._withUnsafeGuaranteedRef { $0.receive(bytes, direction: direction, segment: segment) }
            return
        }
        if prefix(direction).isEmpty, bytes.count >= 6 {
            decide(tls: TLSConnectionParser.looksLikeTLS(bytes))
            withChosen { $0.receive(bytes, direction: direction, segment: segment) }
            return
        }
        let room = 6 - min(6, prefix(direction).count)
        if direction == .clientToServer { prefix.0 += bytes.prefix(room) } else { prefix.1 += bytes.prefix(room) }
        held.append(.bytes(Array(bytes), direction, segment))
        let known = prefix(direction)
        if known.count >= 6 { decide(tls: known.withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) }) }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard isDecided else {
            // A gap before anything is decided: HTTP resynchronises on start lines, TLS on record headers;
            // HTTP is the stage whose numbers matter most, so it gets the stream.
            held.append(.skip(byteCount, direction, time))
            decide(tls: false)
            return
        }
        withChosen { $0.skip(byteCount, direction: direction, time: time) }
    }

    func packet(_ event: TCPPacketEvent) {
        if isDecided { withChosen { $0.packet(event) } } else { held.append(.packet(event)) }
    }

    func finish(time: CaptureTime) {
        if !isDecided {
            let tls = [prefix.0, prefix.1].contains {
                !$0.isEmpty && $0.withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) }
            }
            decide(tls: tls)
        }
        withChosen { $0.finish(time: time) }
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        if !isDecided { decide(tls: false) }
        withChosen { $0.connectionEnded(summary) }
    }

    private func decide(tls isTLS: Bool) {
        guard !isDecided else { return }
        if isTLS {
            tls = Unmanaged.passRetained(stages.makeTLS(info))
        } else {
            http = Unmanaged.passRetained(stages.makeHTTP(info))
        }
        let items = held
        held = []
        prefix = ([], [])
        withChosen { handler in
            for item in items {
                switch item {
                case let .bytes(bytes, direction, segment):
                    bytes.withUnsafeBytes { handler.receive($0, direction: direction, segment: segment) }
                case let .skip(count, direction, time): handler.skip(count, direction: direction, time: time)
                case let .packet(event): handler.packet(event)
                }
            }
        }
    }
}
