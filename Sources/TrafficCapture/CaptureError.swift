/// Why a capture could not be read at all. Damage after the first packet is a `CaptureDamage`, not an error.
public enum CaptureError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case notACapture(path: String, reason: String)
    case unsupportedLinkType(path: String, linkType: String)
    case invalidFilter(expression: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case let .notACapture(path, reason): return "\(path): not a pcap or pcapng capture (\(reason))"
        case let .unsupportedLinkType(path, linkType):
            return "\(path): unsupported link type \(linkType); traffic reads Ethernet, Linux cooked (SLL, SLL2), raw IP, BSD loopback, PPP and NFLOG captures"
        case let .invalidFilter(expression, reason): return "invalid filter '\(expression)': \(reason)"
        }
    }
}

/// Damage found part-way through a capture: everything before `offset` was read.
public struct CaptureDamage: Equatable, Sendable, CustomStringConvertible {
    /// Byte offset in the (decompressed) capture file where reading stopped.
    public var offset: Int64
    public var reason: String
    public init(offset: Int64, reason: String) {
        self.offset = offset
        self.reason = reason
    }
    public var description: String { "capture damaged at byte offset \(offset): \(reason); packets before it were analysed" }
}
