import CPcap

/// The link-layer header type of a capture (libpcap's DLT value, as `pcap_datalink` returns it).
public struct LinkType: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// BSD loopback: a 4-byte address family in the capturing host's byte order (macOS `lo0`).
    public static let null = LinkType(rawValue: 0)
    public static let ethernet = LinkType(rawValue: 1)
    /// PPP (RFC 1661), with or without the RFC 1662 address and control bytes.
    public static let ppp = LinkType(rawValue: 9)
    /// PPP in HDLC-like framing (RFC 1662), or Cisco HDLC; libpcap's DLT_PPP_SERIAL.
    public static let pppHDLC = LinkType(rawValue: 50)
    /// Raw IP. libpcap reports LINKTYPE_RAW (101) as DLT_RAW, which is 12 on most systems and 14 on OpenBSD.
    public static let raw = LinkType(rawValue: 12)
    public static let rawOpenBSD = LinkType(rawValue: 14)
    public static let rawLinktype = LinkType(rawValue: 101)
    /// OpenBSD loopback: like NULL but the family is in network byte order.
    public static let loop = LinkType(rawValue: 108)
    public static let linuxSLL = LinkType(rawValue: 113)
    public static let ipv4 = LinkType(rawValue: 228)
    public static let ipv6 = LinkType(rawValue: 229)
    /// Linux netfilter log: TLVs around the logged IP packet.
    public static let nflog = LinkType(rawValue: 239)
    public static let linuxSLL2 = LinkType(rawValue: 276)

    /// libpcap's name for the link type, e.g. `EN10MB` or `IEEE802_11_RADIO`.
    public var name: String {
        guard let name = pcap_datalink_val_to_name(rawValue) else { return "DLT \(rawValue)" }
        return String(cString: name)
    }

    public var description: String { "\(name) (\(rawValue))" }
}
