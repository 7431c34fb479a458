import TrafficCapture
import TrafficReassembly
import TrafficTLS

/// Reads TLS hellos of every connection for `traffic connections`; connections that are not TLS stay out.
public final class ConnectionTLSInfo {
    /// SNI, version, cipher suite and ALPN by connection number.
    public private(set) var byConnection: [Int: TLSConnectionSummary] = [:]

    public init() {}

    /// A handler factory that sniffs each connection and parses TLS ones.
    public func makeHandler() -> TrafficReassemblyHandlerFactory {
        let stages = ProtocolSniffer<NullStreamHandler, TLSConnectionParser>.Stages(
            http: { _ in NullStreamHandler() },
            tls: { [unowned self] info in
                TLSConnectionParser(info: info) { [unowned self] summary in
                    if summary.isTLS { byConnection[info.id] = summary }
                }
            })
        return { info in ProtocolSniffer(info: info, stages: stages) }
    }
}

/// Accepts a stream and does nothing with it.
final class NullStreamHandler: TCPStreamHandler {
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {}
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {}
    func finish(time: CaptureTime) {}
}
