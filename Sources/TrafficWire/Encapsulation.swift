/// The layers a packet was found inside on its way to the inner IP packet, outermost first
/// (e.g. VXLAN, then a VLAN tag on the inner Ethernet frame).
///
/// Stored inline as 4-bit kind codes so that decoding a packet allocates nothing; a packet deeper
/// than `capacity` layers keeps its outermost `capacity` (the decoder stops tunnels at depth 8 anyway).
public struct Encapsulation: Hashable, Sendable {
    /// One layer: a tunnel header or a tag that the decoder stepped over.
    public enum Kind: UInt8, CaseIterable, Sendable {
        /// 802.1Q, 802.1ad or the pre-standard 0x9100 tag.
        case vlan = 1
        /// An MPLS label stack (RFC 3032), counted once however many labels it holds.
        case mpls
        /// A PPPoE session (RFC 2516).
        case pppoe
        /// VXLAN (RFC 7348), UDP port 4789.
        case vxlan
        /// Geneve (RFC 8926), UDP port 6081.
        case geneve
        /// GTP-U G-PDU (3GPP TS 29.281), UDP port 2152.
        case gtpu
        /// Teredo (RFC 4380), UDP port 3544.
        case teredo
        /// GRE (RFC 2784, RFC 2890).
        case gre
        /// Cisco ERSPAN type I, II or III inside GRE.
        case erspan
        /// IPv4 inside IPv4 or IPv6 (IP protocol 4, RFC 2003).
        case ipv4InIP
        /// IPv6 inside IPv4 (6in4, protocol 41, RFC 4213) or IPv6.
        case ipv6InIP

        /// The stable snake_case name used in reports.
        public var name: String {
            switch self {
            case .vlan: "vlan"
            case .mpls: "mpls"
            case .pppoe: "pppoe"
            case .vxlan: "vxlan"
            case .geneve: "geneve"
            case .gtpu: "gtpu"
            case .teredo: "teredo"
            case .gre: "gre"
            case .erspan: "erspan"
            case .ipv4InIP: "ipv4_in_ip"
            case .ipv6InIP: "ipv6_in_ip"
            }
        }
    }

    /// Layers kept per packet: 16 codes of 4 bits fill the word.
    public static let capacity = 16

    /// Kind codes, outermost in the lowest 4 bits; 0 ends the list. One word, because every decoded segment
    /// carries it through the reassembler.
    public private(set) var rawValue: UInt64 = 0

    /// Codes are never 0, so the highest set bit tells how many there are.
    public var count: Int { (UInt64.bitWidth - rawValue.leadingZeroBitCount + 3) / 4 }

    public init() {}

    public init(_ kinds: [Kind]) {
        for kind in kinds { append(kind) }
    }

    public var isEmpty: Bool { rawValue == 0 }

    public mutating func append(_ kind: Kind) {
        let count = count
        guard count < Self.capacity else { return }
        rawValue |= UInt64(kind.rawValue) << UInt64(4 * count)
    }

    /// The layers, outermost first (allocates: for reports, not for the packet path).
    public var kinds: [Kind] {
        (0..<count).map { Kind(rawValue: UInt8(truncatingIfNeeded: rawValue >> UInt64(4 * $0)) & 0x0f)! }
    }

    public var names: [String] { kinds.map(\.name) }

    /// Each kind present, once, as a bit set indexed by raw value (for per-kind packet counts).
    var kindSet: UInt16 {
        var set: UInt16 = 0
        var word = rawValue
        while word != 0 {
            set |= 1 << UInt16(word & 0x0f)
            word >>= 4
        }
        return set
    }
}
