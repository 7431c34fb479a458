/// A connection ID (RFC 9000 §5.1): at most 20 bytes in v1 and v2, kept inline (no allocation) so that the
/// connection table can key by it.
public struct QUICConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// Up to 20 bytes, zero-padded: two 8-byte words and a 4-byte word.
    private var a: UInt64 = 0, b: UInt64 = 0, c: UInt32 = 0
    public private(set) var count: Int = 0

    public static let maxLength = 20

    /// nil when `bytes` is longer than 20 bytes (a version that allows more is not one we read).
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.maxLength else { return nil }
        count = bytes.count
        for i in 0..<bytes.count {
            let v = bytes[i]
            switch i {
            case 0..<8: a |= UInt64(v) << (8 * i)
            case 8..<16: b |= UInt64(v) << (8 * (i - 8))
            default: c |= UInt32(v) << (8 * (i - 16))
            }
        }
    }

    public init() {}

    public var bytes: [UInt8] {
        (0..<count).map { i in
            switch i {
            case 0..<8: UInt8(truncatingIfNeeded: a >> (8 * i))
            case 8..<16: UInt8(truncatingIfNeeded: b >> (8 * (i - 8)))
            default: UInt8(truncatingIfNeeded: c >> (8 * (i - 16)))
            }
        }
    }

    public var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
