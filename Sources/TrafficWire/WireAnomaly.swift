/// Named oddities of packet decoding, counted per capture (Zeek calls them "weirds").
public enum WireAnomaly: Int, CaseIterable, Sendable {
    /// The snaplen cut the packet inside its link, IP or TCP header.
    case truncatedHeader
    /// An IPv4 header length below 20 bytes, a total length below the header, or a bad version nibble.
    case badIPHeader
    /// A TCP data offset below 5 words or past the end of the IP payload.
    case badTCPHeader
    /// An IP fragment that could not be reassembled (overlap conflict, too large, timed out, or over the memory cap).
    case fragmentDropped
    /// A BSD loopback or cooked header with an unknown protocol.
    case unknownLinkProtocol
    /// With `--verify-checksums`: an IPv4 header or TCP segment whose checksum does not add up. Counted, not
    /// dropped: the sender's own capture shows unfilled checksums when the NIC computes them (offload).
    case badIPChecksum
    case badTCPChecksum
    /// A tunnel header that passed its kind's validation (or has no validation: GRE, MPLS, PPPoE, the link
    /// types) but is cut by the snaplen or claims lengths past the packet that carries it. One name per kind.
    case badVXLANHeader
    case badGeneveHeader
    case badGTPUHeader
    case badTeredoHeader
    case badGREHeader
    case badERSPANHeader
    case badMPLSHeader
    case badPPPoEHeader
    case badPPPHeader
    case badNFLOGHeader
    /// Tunnels nested deeper than `PacketDecoder.maxTunnelDepth`: a decompression-bomb guard, not a real network.
    case tunnelTooDeep

    /// The stable snake_case name used in reports.
    public var name: String {
        switch self {
        case .truncatedHeader: "truncated_header"
        case .badIPHeader: "bad_ip_header"
        case .badTCPHeader: "bad_tcp_header"
        case .fragmentDropped: "fragment_dropped"
        case .unknownLinkProtocol: "unknown_link_protocol"
        case .badIPChecksum: "bad_ip_checksum"
        case .badTCPChecksum: "bad_tcp_checksum"
        case .badVXLANHeader: "bad_vxlan_header"
        case .badGeneveHeader: "bad_geneve_header"
        case .badGTPUHeader: "bad_gtpu_header"
        case .badTeredoHeader: "bad_teredo_header"
        case .badGREHeader: "bad_gre_header"
        case .badERSPANHeader: "bad_erspan_header"
        case .badMPLSHeader: "bad_mpls_header"
        case .badPPPoEHeader: "bad_pppoe_header"
        case .badPPPHeader: "bad_ppp_header"
        case .badNFLOGHeader: "bad_nflog_header"
        case .tunnelTooDeep: "tunnel_too_deep"
        }
    }
}
