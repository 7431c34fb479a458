/// A QUIC version number (RFC 9000 §15) and what the packet layer needs to know of it.
public struct QUICVersion: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let negotiation = QUICVersion(rawValue: 0)
    public static let v1 = QUICVersion(rawValue: 0x0000_0001)
    /// RFC 9369.
    public static let v2 = QUICVersion(rawValue: 0x6b33_43cf)

    /// `0x00000001`: the form issue 23 writes versions in.
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// Versions whose Initial keys we can derive: v1 (RFC 9001 §5.2), v2 (RFC 9369 §3.3.1) and the drafts
    /// 29–32 that deployed stacks spoke before v1 (they share draft-29's salt and v1's labels).
    public var isKnown: Bool { initialSalt != nil }

    var isDraft: Bool { rawValue >= 0xff00_001d && rawValue <= 0xff00_0020 }

    var initialSalt: [UInt8]? {
        switch self {
        case .v1: [0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad,
                   0xcc, 0xbb, 0x7f, 0x0a]
        case .v2: [0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb,
                   0xf9, 0xbd, 0x2e, 0xd9]
        default:
            isDraft
                ? [0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97, 0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43,
                   0x90, 0xa8, 0x99] : nil
        }
    }

    /// RFC 9369 §3.3.2: v2 derives packet keys with "quicv2 key", "quicv2 iv", "quicv2 hp", "quicv2 ku".
    var labelPrefix: String { self == .v2 ? "quicv2 " : "quic " }

    /// The long-header packet type from the two type bits: v2 renumbered them (RFC 9369 §3.2).
    func longPacketType(_ bits: UInt8) -> QUICPacketType {
        if self == .v2 {
            switch bits & 3 {
            case 1: return .initial
            case 2: return .zeroRTT
            case 3: return .handshake
            default: return .retry
            }
        }
        switch bits & 3 {
        case 0: return .initial
        case 1: return .zeroRTT
        case 2: return .handshake
        default: return .retry
        }
    }
}

/// RFC 9000 §17.
public enum QUICPacketType: Sendable, Equatable {
    case initial, zeroRTT, handshake, retry, versionNegotiation, oneRTT

    /// The packet number space (RFC 9000 §12.3): 0 Initial, 1 Handshake, 2 application data (0-RTT and 1-RTT).
    var space: Int {
        switch self {
        case .initial: 0
        case .handshake: 1
        default: 2
        }
    }
}
