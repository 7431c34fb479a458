/// HTTP/2 frame types (RFC 9113 §6). Unknown types are kept by number: they are control bytes, and a peer
/// must ignore them (§4.1).
public enum HTTP2FrameType: UInt8, Sendable {
    case data = 0x0
    case headers = 0x1
    case priority = 0x2
    case rstStream = 0x3
    case settings = 0x4
    case pushPromise = 0x5
    case ping = 0x6
    case goaway = 0x7
    case windowUpdate = 0x8
    case continuation = 0x9
}
