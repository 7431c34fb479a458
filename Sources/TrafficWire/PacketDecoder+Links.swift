import TrafficCapture

/// Layers between a link header and IP that are not tunnels over IP: MPLS and PPPoE (by EtherType), and the
/// PPP and NFLOG link types.
extension PacketDecoder {
    /// An EtherType other than IPv4 and IPv6: MPLS, a PPPoE session, or not analysed.
    mutating func decodeTunnel(etherType: UInt16, _ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        switch etherType {
        case 0x8847, 0x8848: return decodeMPLS(packet, at: start, end: end)
        case 0x8864: return decodePPPoE(packet, at: start, end: end)
        default: return .nonTCP
        }
    }

    /// RFC 3032 §2.1: 4-byte entries (label 20 bits, traffic class 3, bottom of stack 1, TTL 8) up to the entry
    /// with S set. RFC 3032 §2.2 leaves the payload's kind to the label; like tshark, its first nibble decides:
    /// 4 and 6 are IP, 0 is an RFC 4385 pseudowire control word before an Ethernet frame (RFC 4448).
    private mutating func decodeMPLS(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard enter(.mpls) else { return .malformed(.tunnelTooDeep) }
        var offset = start
        while true {
            guard offset >= 0, end - offset >= 4, bytes.count - offset >= 4 else { return .malformed(.badMPLSHeader) }
            offset += 4
            if bytes[offset - 2] & 0x01 != 0 { break }
        }
        guard end - offset >= 1, bytes.count - offset >= 1 else { return .malformed(.badMPLSHeader) }
        switch bytes[offset] >> 4 {
        case 4: return decodeIPv4(packet, at: offset, end: end)
        case 6: return decodeIPv6(packet, at: offset, end: end)
        case 0:
            guard end - offset >= 4, bytes.count - offset >= 4 else { return .malformed(.badMPLSHeader) }
            return decodeEthernet(packet, at: offset + 4, end: end)
        default: return .nonTCP
        }
    }

    /// RFC 2516 §4: VER 1 and TYPE 1 (0x11), CODE 0 for session data, SESSION_ID, LENGTH of the PPP frame
    /// (protocol field included), then the 2-byte PPP protocol.
    private mutating func decodePPPoE(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard start >= 0, end - start >= 8, bytes.count - start >= 8 else { return .malformed(.badPPPoEHeader) }
        guard bytes[start] == 0x11, bytes[start + 1] == 0 else { return .malformed(.badPPPoEHeader) }
        let length = Int(bytes.loadBigEndianUInt16(at: start + 4))
        guard length >= 2, length <= end - start - 6 else { return .malformed(.badPPPoEHeader) }
        guard enter(.pppoe) else { return .malformed(.tunnelTooDeep) }
        let pppProtocol = bytes.loadBigEndianUInt16(at: start + 6)
        return decodePPPProtocol(pppProtocol, packet, at: start + 8, end: start + 6 + length)
    }

    /// RFC 1332 (0x0021, IPv4) and RFC 5072 (0x0057, IPv6); LCP, IPCP and the rest carry no user data.
    private mutating func decodePPPProtocol(_ pppProtocol: UInt16, _ packet: CapturedPacket, at start: Int, end: Int)
        -> Result
    {
        switch pppProtocol {
        case 0x0021: return decodeIPv4(packet, at: start, end: end)
        case 0x0057: return decodeIPv6(packet, at: start, end: end)
        default: return .nonTCP
        }
    }

    /// LINKTYPE_PPP (9): RFC 1662 §3.1 address 0xFF and control 0x03, absent when address-and-control-field
    /// compression is on; RFC 1661 §6.5: an odd first protocol byte is a compressed one-byte protocol.
    /// LINKTYPE_PPP_HDLC (50) always has the address and control bytes, or is Cisco HDLC (RFC 1547 §4.3.1:
    /// address 0x0F or 0x8F, control 0, then an EtherType).
    mutating func decodePPP(_ packet: CapturedPacket, at start: Int, end: Int, hdlc: Bool) -> Result {
        let bytes = packet.bytes
        var offset = start
        guard bytes.count - offset >= 2 else { return .malformed(.badPPPHeader) }
        if hdlc, bytes[offset] == 0x0F || bytes[offset] == 0x8F {
            guard bytes.count - offset >= 4 else { return .malformed(.badPPPHeader) }
            return decodeEtherType(bytes.loadBigEndianUInt16(at: offset + 2), packet, at: offset + 4, end: end)
        }
        if bytes[offset] == 0xFF && bytes[offset + 1] == 0x03 {
            offset += 2
        } else if hdlc {
            return .malformed(.badPPPHeader)
        }
        guard bytes.count - offset >= 1 else { return .malformed(.badPPPHeader) }
        if bytes[offset] & 1 != 0 {
            return decodePPPProtocol(UInt16(bytes[offset]), packet, at: offset + 1, end: end)
        }
        guard bytes.count - offset >= 2 else { return .malformed(.badPPPHeader) }
        return decodePPPProtocol(bytes.loadBigEndianUInt16(at: offset), packet, at: offset + 2, end: end)
    }

    /// LINKTYPE_NFLOG (239, tcpdump.org/linktypes/LINKTYPE_NFLOG.html): address family, version 0, resource id,
    /// then TLVs padded to 4 bytes whose length (header included) and type are in the logging host's byte
    /// order; type 9 (NFULA_PAYLOAD) holds the IP packet. The byte order is taken from the first TLV: the
    /// reading that gives a length that fits.
    mutating func decodeNFLOG(_ packet: CapturedPacket, end: Int) -> Result {
        let bytes = packet.bytes
        guard bytes.count >= 4 else { return .malformed(.badNFLOGHeader) }
        guard bytes[1] == 0 else { return .malformed(.badNFLOGHeader) }
        var offset = 4
        var littleEndian: Bool?
        while bytes.count - offset >= 4 {
            let rawLength = bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
            let rawType = bytes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self)
            if littleEndian == nil {
                let length = Int(UInt16(littleEndian: rawLength))
                littleEndian = length >= 4 && length <= end - offset
            }
            let little = littleEndian ?? true
            let length = Int(little ? UInt16(littleEndian: rawLength) : UInt16(bigEndian: rawLength))
            // The top bits of the type are netlink's nested and byte-order flags.
            let type = (little ? UInt16(littleEndian: rawType) : UInt16(bigEndian: rawType)) & 0x3fff
            guard length >= 4, length <= end - offset else { return .malformed(.badNFLOGHeader) }
            if type == 9 { return decodeIPByVersion(packet, at: offset + 4, end: offset + length) }
            let padded = (length + 3) & ~3
            guard padded <= bytes.count - offset else { return .malformed(.badNFLOGHeader) }
            offset += padded
        }
        return offset == bytes.count ? .nonTCP : .malformed(.badNFLOGHeader)
    }
}
