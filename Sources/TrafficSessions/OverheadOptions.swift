/// Which connection costs beyond HTTP bytes are attributed to records (`--overhead`).
public struct OverheadOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// SYN, SYN-ACK and the completing ACK, on the connection's first exchange.
    public static let handshake = OverheadOptions(rawValue: 1)
    /// FIN/RST frames and the ACKs of FINs, on the connection's last exchange.
    public static let teardown = OverheadOptions(rawValue: 2)
    /// L2–L4 headers of data segments, pure ACKs, and retransmitted segments.
    public static let packets = OverheadOptions(rawValue: 4)
    public static let all: OverheadOptions = [.handshake, .teardown, .packets]

    /// Parses `handshake,teardown,packets` or `all`; nil for an unknown name.
    public init?(list: String) {
        var options: OverheadOptions = []
        for name in list.split(separator: ",") {
            // Lists like `handshake, teardown` allow spaces around their commas.
            var trimmed = name
            while trimmed.first == " " { trimmed.removeFirst() }
            while trimmed.last == " " { trimmed.removeLast() }
            switch trimmed {
            case "all": options.formUnion(.all)
            case "handshake": options.insert(.handshake)
            case "teardown": options.insert(.teardown)
            case "packets": options.insert(.packets)
            default: return nil
            }
        }
        self = options
    }
}
