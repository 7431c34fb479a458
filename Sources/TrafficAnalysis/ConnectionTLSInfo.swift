import TrafficAggregation
import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficTLS

/// Reads TLS hellos of every connection for `traffic connections`; connections that are not TLS stay out.
public final class ConnectionTLSInfo {
    /// SNI, version, cipher suite and ALPN by connection number.
    public private(set) var byConnection: [Int: TLSConnectionSummary] = [:]

    private let decryption: TLSDecryptionContext?

    /// `decryption`: the run's secrets, to say per connection whether it decrypts.
    public init(decryption: TLSDecryptionContext? = nil) { self.decryption = decryption }

    /// One per capture, sharing the secrets of the key logs and of the captures' secrets blocks.
    public static func perCapture(
        paths: [String], keyLogPaths: [String], warnings: inout [AnalysisWarning]
    ) throws(CaptureError) -> [ConnectionTLSInfo] {
        let decryption = try TrafficAnalyzer.decryptionContext(paths: paths, keyLogPaths: keyLogPaths, warnings: &warnings)
        return paths.map { _ in ConnectionTLSInfo(decryption: decryption) }
    }

    /// A handler factory that sniffs each connection and parses TLS ones.
    public func makeHandler() -> TrafficReassemblyHandlerFactory {
        let stages = TCPSession.Stages(
            [(TLSConnectionParser.detector, { [unowned self] info in
                DecryptionProbe(info: info, decryption: decryption) { [unowned self] summary in
                    if summary.isTLS { byConnection[info.id] = summary }
                }
            })],
            fallback: { _ in NullStage() })
        return { info in TCPSession(info: info, stages: stages) }
    }
}

/// The keyless parser and, with secrets, a decryptor whose plaintext goes nowhere: what `traffic connections`
/// says about a TLS connection.
final class DecryptionProbe: SessionStage {
    private let parser: TLSConnectionParser
    private let decryptor: TLSDecryptor?
    private let done: (TLSConnectionSummary) -> Void

    init(info: TCPConnectionInfo, decryption: TLSDecryptionContext?, done: @escaping (TLSConnectionSummary) -> Void) {
        parser = TLSConnectionParser(info: info)
        decryptor = decryption.map { TLSDecryptor(context: $0) { NullStage() } }
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
