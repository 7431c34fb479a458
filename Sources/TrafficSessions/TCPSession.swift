import TrafficCapture
import TrafficReassembly

/// One TCP connection as the session layer sees it: finds its protocol from its first bytes with a list of
/// detectors, hands its streams to that protocol's stage as `WireSpan`s, and passes on its packet events and
/// its end.
///
/// Until the first `prefixBytes` bytes of a direction have arrived nothing is decided; those bytes, gaps and
/// packet events are held (a few bytes at most) and replayed to the chosen stage. A gap before anything is
/// decided gives the stream to the fallback: HTTP/1 resynchronises on start lines, and it is the stage whose
/// numbers matter most.
public final class TCPSession: TCPStreamHandler {
    /// What every session of a run shares: the detectors, tried in order, each with the stage it makes, and
    /// the stage of a stream no detector claims.
    public final class Stages {
        let detectors: [ProtocolDetector]
        let makers: [(TCPConnectionInfo) -> any SessionStage]
        let fallback: (TCPConnectionInfo) -> any SessionStage

        public init(
            _ stages: [(detector: ProtocolDetector, make: (TCPConnectionInfo) -> any SessionStage)],
            fallback: @escaping (TCPConnectionInfo) -> any SessionStage
        ) {
            detectors = stages.map(\.detector)
            makers = stages.map(\.make)
            self.fallback = fallback
        }

        /// The stage for a stream whose first bytes are `first` (of `direction`), else nil.
        func stage(for first: UnsafeRawBufferPointer, _ direction: Direction, _ info: TCPConnectionInfo)
            -> (any SessionStage)?
        {
            for (detector, make) in zip(detectors, makers) where detector.matches(first, direction) {
                return make(info)
            }
            return nil
        }
    }

    /// Bytes of a direction looked at before deciding: a TLS record header's first 6 (type, version, length,
    /// handshake type), or an HTTP/2 preface's `PRI * `.
    public static let prefixBytes = 6

    private enum Held {
        case bytes([UInt8], Direction, WireSpan)
        case skip(Int, Direction, CaptureTime)
        case packet(TCPPacketEvent)
        case handshake(syn: CaptureTime, ack: CaptureTime)
    }

    // Kept small: a SYN flood creates one session per half-open connection, most of which never see a byte.
    private let info: TCPConnectionInfo
    private let stages: Stages
    /// The chosen stage, owned by this session (retained once in `decide`, released in `deinit`).
    private var chosen: Unmanaged<SessionStageBox>?
    private var held: [Held] = []
    /// The handshake when it came before anything else was held, as it nearly always does: kept here rather
    /// than as the first of `held`, whose storage was then allocated and freed for every connection.
    private var firstHandshake: (syn: CaptureTime, ack: CaptureTime)?
    private var prefix: ([UInt8], [UInt8]) = ([], [])

    public init(info: TCPConnectionInfo, stages: Stages) {
        self.info = info
        self.stages = stages
    }

    deinit { chosen?.release() }

    private func prefix(_ direction: Direction) -> [UInt8] { direction == .clientToServer ? prefix.0 : prefix.1 }

    public func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        let span = WireSpan(time: segment.time, overheadBytes: segment.overheadBytes, acknowledged: segment.acknowledged)
        // Once per segment: straight to the stage (see StreamAnalyzer's no-retain rule).
        if let chosen {
            chosen._withUnsafeGuaranteedRef { $0.stage.receive(bytes, direction: direction, span: span) }
            return
        }
        if prefix(direction).isEmpty, bytes.count >= Self.prefixBytes {
            decide(stages.stage(for: UnsafeRawBufferPointer(rebasing: bytes[..<Self.prefixBytes]), direction, info))
            chosen?._withUnsafeGuaranteedRef { $0.stage.receive(bytes, direction: direction, span: span) }
            return
        }
        let room = Self.prefixBytes - min(Self.prefixBytes, prefix(direction).count)
        if direction == .clientToServer { prefix.0 += bytes.prefix(room) } else { prefix.1 += bytes.prefix(room) }
        held.append(.bytes(Array(bytes), direction, span))
        let known = prefix(direction)
        if known.count >= Self.prefixBytes {
            decide(known.withUnsafeBytes { stages.stage(for: $0, direction, info) })
        }
    }

    public func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard let chosen else {
            held.append(.skip(byteCount, direction, time))
            decide(nil)
            return
        }
        chosen._withUnsafeGuaranteedRef { $0.stage.skip(byteCount, direction: direction, time: time) }
    }

    public func packet(_ event: TCPPacketEvent) {
        guard let chosen else {
            held.append(.packet(event))
            return
        }
        chosen._withUnsafeGuaranteedRef { $0.stage.packet(event) }
    }

    public func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {
        // Before any byte, so almost always held until the stage is chosen (in `held`: a session stays small).
        guard let chosen else {
            if held.isEmpty, firstHandshake == nil {
                firstHandshake = (syn, ack)
            } else {
                held.append(.handshake(syn: syn, ack: ack))
            }
            return
        }
        chosen._withUnsafeGuaranteedRef { $0.stage.handshakeCompleted(syn: syn, ack: ack) }
    }

    public func finish(time: CaptureTime) {
        if chosen == nil {
            // The stream ended before `prefixBytes` arrived: decide on what there is, client side first.
            var stage: (any SessionStage)?
            for (direction, first) in [(Direction.clientToServer, prefix.0), (.serverToClient, prefix.1)]
            where stage == nil && !first.isEmpty {
                stage = first.withUnsafeBytes { stages.stage(for: $0, direction, info) }
            }
            decide(stage)
        }
        guard let chosen else { return }
        chosen._withUnsafeGuaranteedRef { $0.stage.finish(time: time) }
        // The stage's stand-in while the connection lingers (finish is called once: the reassembler's
        // `finishStreams` is idempotent).
        if let stage = chosen._withUnsafeGuaranteedRef({ $0.stage.lingeringStage() }) {
            self.chosen = Unmanaged.passRetained(SessionStageBox(stage))
            chosen.release()
        }
    }

    public func connectionEnded(_ summary: TCPConnectionSummary) {
        if chosen == nil { decide(nil) }
        chosen?._withUnsafeGuaranteedRef { $0.stage.connectionEnded(summary) }
    }

    /// Hands the connection to `stage` (the fallback when nil) and replays what was held.
    private func decide(_ stage: (any SessionStage)?) {
        guard chosen == nil else { return }
        let box = SessionStageBox(stage ?? stages.fallback(info))
        chosen = Unmanaged.passRetained(box)
        let items = held
        // Usually nothing is held (a first segment of `prefixBytes` or more decides at once): no stores then.
        if !items.isEmpty { held = [] }
        if !prefix.0.isEmpty || !prefix.1.isEmpty { prefix = ([], []) }
        let stage = box.stage
        // Before everything in `held`: it came first.
        if let (syn, ack) = firstHandshake {
            firstHandshake = nil
            stage.handshakeCompleted(syn: syn, ack: ack)
        }
        for item in items {
            switch item {
            case let .bytes(bytes, direction, span):
                bytes.withUnsafeBytes { stage.receive($0, direction: direction, span: span) }
            case let .skip(count, direction, time): stage.skip(count, direction: direction, time: time)
            case let .packet(event): stage.packet(event)
            case let .handshake(syn, ack): stage.handshakeCompleted(syn: syn, ack: ack)
            }
        }
    }
}
