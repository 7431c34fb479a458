import TrafficCapture
import TrafficHTTP2
import TrafficReassembly
import TrafficSessions

/// Holds a connection's first deliveries until a direction's first bytes say whether it speaks HTTP/2 (below
/// a decrypting TLS stage, where ALPN `h2` is encrypted in TLS 1.3 but the plaintext's first bytes are not).
struct HTTPVersionDetector {
    private var held: [(bytes: [UInt8], direction: Direction, span: WireSpan)] = []
    private var prefixes: ([UInt8], [UInt8]) = ([], [])

    var isEmpty: Bool { held.isEmpty }

    /// Holds a delivery; the decision (true for HTTP/2) once its direction has `TCPSession.prefixBytes`.
    mutating func hold(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) -> Bool? {
        held.append((Array(bytes), direction, span))
        let need = TCPSession.prefixBytes
        if direction == .clientToServer {
            prefixes.0 += bytes.prefix(need - min(need, prefixes.0.count))
        } else {
            prefixes.1 += bytes.prefix(need - min(need, prefixes.1.count))
        }
        let prefix = direction == .clientToServer ? prefixes.0 : prefixes.1
        guard prefix.count >= need else { return nil }
        return prefix.withUnsafeBytes { HTTP2ConnectionParser.startsHTTP2($0, direction) }
    }

    /// The decision on what there is (the streams ended or a gap came first): client side first.
    var decisionNow: Bool {
        if !prefixes.0.isEmpty {
            return prefixes.0.withUnsafeBytes { HTTP2ConnectionParser.startsHTTP2($0, .clientToServer) }
        }
        return prefixes.1.withUnsafeBytes { HTTP2ConnectionParser.startsHTTP2($0, .serverToClient) }
    }

    /// Hands the held deliveries on, in order, and forgets them.
    mutating func release(to stage: any StreamAnalyzer) {
        let items = held
        held = []
        prefixes = ([], [])
        for (bytes, direction, span) in items {
            bytes.withUnsafeBytes { stage.receive($0, direction: direction, span: span) }
        }
    }
}
