import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficTLS

/// Reads TLS hellos of every connection for `traffic connections`; connections that are not TLS stay out.
public final class ConnectionTLSInfo {
    /// SNI, version, cipher suite and ALPN by connection number.
    public private(set) var byConnection: [Int: TLSConnectionSummary] = [:]

    public init() {}

    /// A handler factory that sniffs each connection and parses TLS ones.
    public func makeHandler() -> TrafficReassemblyHandlerFactory {
        let stages = TCPSession.Stages(
            [(TLSConnectionParser.detector, { [unowned self] info in
                TLSConnectionParser(info: info) { [unowned self] summary in
                    if summary.isTLS { byConnection[info.id] = summary }
                }
            })],
            fallback: { _ in NullStage() })
        return { info in TCPSession(info: info, stages: stages) }
    }
}

/// Accepts a stream and does nothing with it.
final class NullStage: SessionStage {
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {}
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {}
    func finish(time: CaptureTime) {}
}
