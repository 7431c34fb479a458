import TrafficAggregation
import TrafficCapture
import TrafficHTTP
import TrafficHTTP2
import TrafficQUIC
import TrafficReassembly
import TrafficSessions
import TrafficTLS

/// Reads TLS hellos of every connection for `traffic connections`, and the HTTP/2 control bytes of connections
/// that speak HTTP/2 (directly, after an h2c upgrade, or decrypted); other connections stay out.
public final class ConnectionTLSInfo {
    /// SNI, version, cipher suite and ALPN by connection number.
    public private(set) var byConnection: [Int: TLSConnectionSummary] = [:]
    /// HTTP/2 control bytes (`h2_control_bytes`) by connection number: client to server, server to client.
    public private(set) var http2ControlBytes: [Int: [Int]] = [:]

    /// The capture's QUIC connections, in the order they began.
    public var quic: [QUICConnectionSummary] { quicEnded.sorted { $0.id < $1.id } }
    private var quicEnded: [QUICConnectionSummary] = []

    private let decryption: TLSDecryptionContext?

    /// A table that keeps each QUIC connection's summary (decrypting with the run's secrets, to say whether it
    /// does; the streams go nowhere).
    public func makeQUICTable() -> QUICConnectionTable {
        // A consumer that keeps nothing: streams are still put in order, so retransmitted STREAM bytes are told from
        // new ones as in `traffic analyze`.
        QUICConnectionTable(keyLog: decryption?.keyLog, makeConsumer: { _ in DiscardingStreams() }) { [unowned self] in
            quicEnded.append($0.summary)
        }
    }

    /// `decryption`: the run's secrets, to say per connection whether it decrypts.
    public init(decryption: TLSDecryptionContext? = nil) { self.decryption = decryption }

    /// One per capture, with the secrets of the key logs and of that capture's secrets blocks.
    public static func perCapture(
        paths: [String], keyLogPaths: [String], warnings: inout [AnalysisWarning]
    ) throws(CaptureError) -> [ConnectionTLSInfo] {
        try TrafficAnalyzer.decryptionContexts(paths: paths, keyLogPaths: keyLogPaths, warnings: &warnings)
            .map { ConnectionTLSInfo(decryption: $0) }
    }

    /// A handler factory that sniffs each connection and parses TLS ones.
    public func makeHandler() -> TrafficReassemblyHandlerFactory {
        let stages = TCPSession.Stages(
            [(TLSConnectionParser.detector, { [unowned self] info in
                DecryptionProbe(info: info, decryption: decryption, child: { [unowned self] in
                    HTTP2ControlProbe(info: info, start: .detect, decrypted: true) { [unowned self] in
                        http2ControlBytes[info.id] = $0
                    }
                }) { [unowned self] summary in
                    if summary.isTLS { byConnection[info.id] = summary }
                }
            }),
            (HTTP2ConnectionParser.detector, { [unowned self] info in
                HTTP2ControlProbe(info: info, start: .http2, decrypted: false) { [unowned self] in
                    http2ControlBytes[info.id] = $0
                }
            })],
            fallback: { [unowned self] info in
                HTTP2ControlProbe(info: info, start: .http1, decrypted: false) { [unowned self] in
                    http2ControlBytes[info.id] = $0
                }
            })
        return { info in TCPSession(info: info, stages: stages) }
    }
}

/// The keyless parser and, with secrets, a decryptor whose plaintext goes nowhere: what `traffic connections`
/// says about a TLS connection.
final class DecryptionProbe: SessionStage {
    private let parser: TLSConnectionParser
    private let decryptor: TLSDecryptor?
    private let done: (TLSConnectionSummary) -> Void

    init(
        info: TCPConnectionInfo, decryption: TLSDecryptionContext?, child: @escaping () -> any SessionStage = { NullStage() },
        done: @escaping (TLSConnectionSummary) -> Void
    ) {
        parser = TLSConnectionParser(info: info)
        decryptor = decryption.map { TLSDecryptor(context: $0, makeChild: child) }
        self.done = done
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        parser.receive(bytes, direction: direction, span: span)
        decryptor?.receive(bytes, direction: direction, span: span)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser.skip(byteCount, direction: direction, time: time)
        decryptor?.skip(byteCount, direction: direction, time: time)
    }

    func finish(time: CaptureTime) {
        guard !parser.isFinished else { return }
        parser.finish(time: time)
        decryptor?.finish(time: time)
        var summary = parser.summary
        summary.decryption = decryptor?.outcome
        done(summary)
    }
}

/// Accepts a stream and does nothing with it.
final class NullStage: SessionStage {
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {}
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {}
    func finish(time: CaptureTime) {}
}

/// Reads a connection's HTTP (HTTP/1 with its h2c upgrade, or HTTP/2) only for the HTTP/2 control bytes of
/// each direction; records go nowhere. Reports only connections that spoke HTTP/2.
final class HTTP2ControlProbe: SessionStage {
    private var http1: HTTPConnectionParser?
    private var http2: HTTP2ConnectionParser?
    private var undecided: HTTPVersionDetector?
    private let info: TCPConnectionInfo
    private let decrypted: Bool
    private let done: ([Int]) -> Void

    init(info: TCPConnectionInfo, start: HTTPConnectionTap.Start, decrypted: Bool, done: @escaping ([Int]) -> Void) {
        self.info = info
        self.decrypted = decrypted
        self.done = done
        switch start {
        case .http1: useHTTP1()
        case .http2: http2 = HTTP2ConnectionParser(info: info, decrypted: decrypted) { _ in }
        case .detect: undecided = HTTPVersionDetector()
        }
    }

    private func useHTTP1() {
        let parser = HTTPConnectionParser(info: info, decrypted: decrypted) { _ in }
        parser.upgradeToHTTP2 = { [unowned self] exchange in
            let child = HTTP2ConnectionParser(info: info, decrypted: decrypted, upgraded: exchange) { _ in }
            http2 = child
            return child
        }
        http1 = parser
    }

    private func decide(_ speaksHTTP2: Bool) {
        guard var held = undecided else { return }
        undecided = nil
        if speaksHTTP2 { http2 = HTTP2ConnectionParser(info: info, decrypted: decrypted) { _ in } } else { useHTTP1() }
        held.release(to: self)
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        if let http1 {
            http1.receive(bytes, direction: direction, span: span)
        } else if let http2 {
            http2.receive(bytes, direction: direction, span: span)
        } else if let speaksHTTP2 = undecided?.hold(bytes, direction: direction, span: span) {
            decide(speaksHTTP2)
        }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        if undecided != nil { decide(false) }
        if let http1 {
            http1.skip(byteCount, direction: direction, time: time)
        } else {
            http2?.skip(byteCount, direction: direction, time: time)
        }
    }

    func finish(time: CaptureTime) {
        if let held = undecided { decide(held.decisionNow) }
        if let http1 {
            http1.finish(time: time)
        } else {
            http2?.finish(time: time)
        }
        guard let http2 else { return }
        done([http2.counts(for: .clientToServer).controlBytes, http2.counts(for: .serverToClient).controlBytes])
        self.http1 = nil
        self.http2 = nil
    }
}

/// Decrypted QUIC streams that go nowhere (`traffic connections` sizes them without parsing HTTP/3).
final class DiscardingStreams: QUICStreamConsumer {
    func receive(stream: UInt64, direction: Direction, bytes: UnsafeRawBufferPointer, time: CaptureTime) {}
    func end(stream: UInt64, direction: Direction, time: CaptureTime) {}
    func skip(stream: UInt64, direction: Direction, byteCount: Int, time: CaptureTime) {}
    func reset(stream: UInt64, direction: Direction, time: CaptureTime) {}
    func addOverhead(stream: UInt64, direction: Direction, bytes: Int) {}
    func finish(time: CaptureTime) {}
}
