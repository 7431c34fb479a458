/// A TLS protocol version number as it appears on the wire (RFC 8446 §4.2.1).
public struct TLSVersion: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let ssl3 = TLSVersion(rawValue: 0x0300)
    public static let tls10 = TLSVersion(rawValue: 0x0301)
    public static let tls11 = TLSVersion(rawValue: 0x0302)
    public static let tls12 = TLSVersion(rawValue: 0x0303)
    public static let tls13 = TLSVersion(rawValue: 0x0304)

    /// "TLS 1.2", "TLS 1.3", …; drafts and unknown values as "0xXXXX", as tshark prints them.
    public var name: String {
        switch rawValue {
        case 0x0300: "SSL 3.0"
        case 0x0301: "TLS 1.0"
        case 0x0302: "TLS 1.1"
        case 0x0303: "TLS 1.2"
        case 0x0304: "TLS 1.3"
        default: TLSVersion.hex(rawValue)
        }
    }

    public var description: String { name }

    /// `0x` and four lower-case hex digits.
    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
