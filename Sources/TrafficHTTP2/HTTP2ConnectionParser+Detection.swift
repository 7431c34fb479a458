import TrafficReassembly
import TrafficSessions

extension HTTP2ConnectionParser {
    /// Whether a direction's first bytes begin HTTP/2 (RFC 9113 §3.4): the client preface (h2c with prior
    /// knowledge, or h2 inside TLS), or on the server side a SETTINGS frame, the server preface (flags 0,
    /// stream 0, a length that is a multiple of 6). A server speaks first under TLS: it may send SETTINGS as
    /// soon as its handshake is done, before the client's preface arrives.
    public static func startsHTTP2(_ first: UnsafeRawBufferPointer, _ direction: Direction) -> Bool {
        guard !first.isEmpty else { return false }
        if direction == .clientToServer {
            return first.count >= 4 && first.prefix(preface.count).elementsEqual(preface.prefix(first.count))
        }
        guard first.count >= 6 else { return false }
        let length = Int(first[0]) << 16 | Int(first[1]) << 8 | Int(first[2])
        return first[3] == HTTP2FrameType.settings.rawValue && first[4] == 0 && first[5] == 0 && length % 6 == 0
            && length <= 16_384
    }

    /// The session layer's detector: on any port (gRPC on 50051, h2c on 8080).
    public static let detector = ProtocolDetector(name: "http2") { first, direction in startsHTTP2(first, direction) }
}
