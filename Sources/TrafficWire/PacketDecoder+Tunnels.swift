import TrafficCapture

/// Tunnels found by IP protocol or UDP port: IP-in-IP, GRE (with ERSPAN), VXLAN, Geneve, GTP-U, Teredo.
///
/// Each decoder checks its header against both the captured bytes and `end`, the wire end of the
/// packet that carries it, before reading a field; lengths from the wire are compared by subtraction
/// from a bound already known to hold, so no sum can overflow. A UDP packet on a tunnel port whose
/// header does not validate is ordinary UDP; a header that validates but is cut or lies about its
/// length is the kind's anomaly.
extension PacketDecoder {
    /// Steps into one more tunnel layer; false past `maxTunnelDepth`.
    @inline(__always)
    mutating func enter(_ kind: Encapsulation.Kind) -> Bool {
        guard tunnelDepth < Self.maxTunnelDepth else { return false }
        tunnelDepth += 1
        encapsulation.append(kind)
        return true
    }

    /// The payload of an IP packet that is not TCP (`start..<end` in wire bytes): a tunnel, or not analysed.
    mutating func decodeTunnel(
        ipProtocol: UInt8, _ packet: CapturedPacket, at start: Int, end: Int, source: IPAddress, destination: IPAddress
    ) -> Result {
        switch ipProtocol {
        case 17:
            return decodeUDP(packet, at: start, end: end, source: source, destination: destination)
        case 47:
            return decodeGRE(packet, at: start, end: end)
        case 4:  // RFC 2003 (IPv4 in IPv4), RFC 2473 (IPv4 in IPv6)
            guard enter(.ipv4InIP) else { return .malformed(.tunnelTooDeep) }
            return decodeIPv4(packet, at: start, end: end)
        case 41:  // RFC 4213 §3.5 (6in4), RFC 2473 (IPv6 in IPv6)
            guard enter(.ipv6InIP) else { return .malformed(.tunnelTooDeep) }
            return decodeIPv6(packet, at: start, end: end)
        default:
            return .nonTCP
        }
    }

    @inline(__always)
    private static func isTunnelPort(_ port: UInt16) -> Bool {
        port == 4789 || port == 6081 || port == 2152 || port == 3544
    }

    /// RFC 768: UDP is a tunnel when either port is a tunnel's well-known port (the destination wins).
    private mutating func decodeUDP(
        _ packet: CapturedPacket, at start: Int, end: Int, source udpSource: IPAddress, destination udpDestination: IPAddress
    ) -> Result {
        let bytes = packet.bytes
        guard start >= 0, bytes.count - start >= 8 else { return .nonTCP }
        let sourcePort = bytes.loadBigEndianUInt16(at: start)
        let destinationPort = bytes.loadBigEndianUInt16(at: start + 2)
        let port = Self.isTunnelPort(destinationPort) ? destinationPort : sourcePort
        // The UDP length covers header and data; one longer than the IP payload is not trusted.
        let length = Int(bytes.loadBigEndianUInt16(at: start + 4))
        guard length >= 8, length <= end - start else { return .nonTCP }
        let payloadEnd = start + length
        let datagram = UDPDatagram(
            source: Endpoint(address: udpSource, port: sourcePort),
            destination: Endpoint(address: udpDestination, port: destinationPort), payloadLength: length - 8,
            payload: UnsafeRawBufferPointer(rebasing: bytes[(start + 8)..<min(payloadEnd, bytes.count)]),
            frameBytes: packet.originalLength, encapsulation: encapsulation)
        guard Self.isTunnelPort(port) else { return .udp(datagram) }
        let depth = tunnelDepth
        let result: Result
        switch port {
        case 4789: result = decodeVXLAN(packet, at: start + 8, end: payloadEnd)
        case 6081: result = decodeGeneve(packet, at: start + 8, end: payloadEnd)
        case 2152: result = decodeGTPU(packet, at: start + 8, end: payloadEnd)
        default: result = decodeTeredo(packet, at: start + 8, end: payloadEnd)
        }
        // A tunnel port whose header did not validate carried ordinary UDP (QUIC may use any port).
        if case .nonTCP = result, tunnelDepth == depth { return .udp(datagram) }
        return result
    }

    /// RFC 7348 §5: flags (the I bit 0x08 must be set), 3 reserved bytes, 24-bit VNI, 1 reserved byte; then Ethernet.
    private mutating func decodeVXLAN(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard end - start >= 8 + 14 else { return .nonTCP }
        guard bytes.count - start >= 8 else { return .malformed(.badVXLANHeader) }
        guard bytes[start] & 0x08 != 0 else { return .nonTCP }
        guard enter(.vxlan) else { return .malformed(.tunnelTooDeep) }
        return decodeEthernet(packet, at: start + 8, end: end)
    }

    /// RFC 8926 §3.4: Ver(2) Opt Len(6) | O C Rsvd(6) | Protocol Type(16) | VNI(24) Rsvd(8) | options of
    /// Opt Len × 4 bytes, skipped by length. The protocol type is an EtherType: 0x6558 is Ethernet.
    private mutating func decodeGeneve(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard end - start >= 8 else { return .nonTCP }
        guard bytes.count - start >= 8 else { return .malformed(.badGeneveHeader) }
        let protocolType = bytes.loadBigEndianUInt16(at: start + 2)
        guard bytes[start] >> 6 == 0, protocolType == 0x6558 || protocolType == 0x0800 || protocolType == 0x86DD
        else { return .nonTCP }
        let headerLength = 8 + Int(bytes[start] & 0x3f) * 4
        guard headerLength <= end - start, headerLength <= bytes.count - start else {
            return .malformed(.badGeneveHeader)
        }
        guard enter(.geneve) else { return .malformed(.tunnelTooDeep) }
        if protocolType == 0x6558 { return decodeEthernet(packet, at: start + headerLength, end: end) }
        return decodeEtherType(protocolType, packet, at: start + headerLength, end: end)
    }

    /// 3GPP TS 29.281 §5.1: flags (version 1, PT 1, E, S, PN), message type (0xFF is a G-PDU: user data),
    /// length of everything after the first 8 bytes, TEID. Any of E, S, PN adds 4 bytes (sequence number,
    /// N-PDU number, next extension header type); §5.2: each extension header starts with its length in
    /// 4-byte units (0 is invalid) and ends with the next type.
    private mutating func decodeGTPU(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard end - start >= 8 else { return .nonTCP }
        guard bytes.count - start >= 8 else { return .malformed(.badGTPUHeader) }
        let flags = bytes[start]
        // Version 1 with PT 1; GTP' (PT 0) and GTPv2-C are other protocols on other ports.
        guard flags >> 5 == 1, flags & 0x10 != 0 else { return .nonTCP }
        // Echo, error indication, end marker: GTP-U signalling without user data.
        guard bytes[start + 1] == 0xFF else { return .nonTCP }
        let length = Int(bytes.loadBigEndianUInt16(at: start + 2))
        guard length <= end - start - 8 else { return .malformed(.badGTPUHeader) }
        let pduEnd = start + 8 + length
        var offset = start + 8
        if flags & 0x07 != 0 {
            guard pduEnd - offset >= 4, bytes.count - offset >= 4 else { return .malformed(.badGTPUHeader) }
            var next = bytes[offset + 3]
            offset += 4
            while next != 0 {
                guard bytes.count - offset >= 1 else { return .malformed(.badGTPUHeader) }
                let extensionLength = Int(bytes[offset]) * 4
                guard extensionLength > 0, extensionLength <= pduEnd - offset, extensionLength <= bytes.count - offset
                else { return .malformed(.badGTPUHeader) }
                next = bytes[offset + extensionLength - 1]
                offset += extensionLength
            }
        }
        // An empty G-PDU, or a non-IP PDU (an Ethernet PDU session): not followed.
        guard pduEnd > offset else { return .nonTCP }
        guard bytes.count > offset else { return .malformed(.badGTPUHeader) }
        let version = bytes[offset] >> 4
        guard version == 4 || version == 6 else { return .nonTCP }
        guard enter(.gtpu) else { return .malformed(.tunnelTooDeep) }
        return decodeIPByVersion(packet, at: offset, end: pduEnd)
    }

    /// RFC 4380 §5.1.1: an IPv6 packet, optionally behind an authentication indicator (0x0001, client
    /// identifier length, authentication value length, both values, 8-byte nonce, confirmation byte) and an
    /// origin indication (0x0000, port, address: 8 bytes), in that order. It validates only when exactly one
    /// IPv6 packet fills the rest of the UDP payload.
    private mutating func decodeTeredo(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        var offset = start
        guard end - offset >= 40 else { return .nonTCP }
        guard bytes.count - offset >= 2 else { return .malformed(.badTeredoHeader) }
        if bytes.loadBigEndianUInt16(at: offset) == 1 {
            guard bytes.count - offset >= 4 else { return .malformed(.badTeredoHeader) }
            let indicator = 4 + Int(bytes[offset + 2]) + Int(bytes[offset + 3]) + 8 + 1
            guard indicator <= end - offset else { return .nonTCP }
            offset += indicator
        }
        if end - offset >= 8 {
            guard bytes.count - offset >= 2 else { return .malformed(.badTeredoHeader) }
            if bytes.loadBigEndianUInt16(at: offset) == 0 { offset += 8 }
        }
        guard end - offset >= 40 else { return .nonTCP }
        guard bytes.count - offset >= 40 else { return .malformed(.badTeredoHeader) }
        guard bytes[offset] >> 4 == 6, 40 + Int(bytes.loadBigEndianUInt16(at: offset + 4)) == end - offset else {
            return .nonTCP
        }
        guard enter(.teredo) else { return .malformed(.tunnelTooDeep) }
        return decodeIPv6(packet, at: offset, end: end)
    }

    /// RFC 2784 §2 with RFC 2890 §2: C, K and S flags add checksum, key and sequence number words; the protocol
    /// type is an EtherType (0x6558: transparent Ethernet bridging; 0x88BE, 0x22EB: ERSPAN).
    private mutating func decodeGRE(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard end - start >= 4, start >= 0, bytes.count - start >= 4 else { return .malformed(.badGREHeader) }
        let flags = bytes.loadBigEndianUInt16(at: start)
        // Version 1 is PPTP's enhanced GRE (RFC 2637), carrying PPP: not followed.
        guard flags & 0x0007 == 0 else { return .nonTCP }
        // RFC 2784 §2.3: discard when any of bits 1-5 is set, bar K and S (RFC 2890): routing and recursion
        // come from RFC 1701 and are not followed.
        guard flags & 0x4F00 == 0 else { return .malformed(.badGREHeader) }
        var headerLength = 4
        if flags & 0x8000 != 0 { headerLength += 4 }
        if flags & 0x2000 != 0 { headerLength += 4 }
        let sequenced = flags & 0x1000 != 0
        if sequenced { headerLength += 4 }
        guard headerLength <= end - start, headerLength <= bytes.count - start else {
            return .malformed(.badGREHeader)
        }
        let protocolType = bytes.loadBigEndianUInt16(at: start + 2)
        let inner = start + headerLength
        switch protocolType {
        case 0x0800, 0x86DD, 0x8847, 0x8848:
            guard enter(.gre) else { return .malformed(.tunnelTooDeep) }
            return decodeEtherType(protocolType, packet, at: inner, end: end)
        case 0x6558:
            guard enter(.gre) else { return .malformed(.tunnelTooDeep) }
            return decodeEthernet(packet, at: inner, end: end)
        case 0x88BE, 0x22EB:
            guard enter(.gre), enter(.erspan) else { return .malformed(.tunnelTooDeep) }
            return decodeERSPAN(packet, at: inner, end: end, typeIII: protocolType == 0x22EB, sequenced: sequenced)
        default:
            return .nonTCP
        }
    }

    /// ERSPAN (draft-foschiano-erspan-03 §4): type I (0x88BE without a GRE sequence number) has no header; type II
    /// is 8 bytes with version 1; type III 12 bytes with version 2, frame type in bits 14-10 of its last 16-bit
    /// word (0: Ethernet) and an 8-byte platform-specific subheader when O (bit 0) is set.
    private mutating func decodeERSPAN(
        _ packet: CapturedPacket, at start: Int, end: Int, typeIII: Bool, sequenced: Bool
    ) -> Result {
        if !typeIII && !sequenced { return decodeEthernet(packet, at: start, end: end) }
        let bytes = packet.bytes
        var headerLength = typeIII ? 12 : 8
        guard headerLength <= end - start, headerLength <= bytes.count - start else {
            return .malformed(.badERSPANHeader)
        }
        guard bytes[start] >> 4 == (typeIII ? 2 : 1) else { return .malformed(.badERSPANHeader) }
        if typeIII {
            let word = bytes.loadBigEndianUInt16(at: start + 10)
            guard (word >> 10) & 0x1f == 0 else { return .nonTCP }
            if word & 1 != 0 { headerLength += 8 }
            guard headerLength <= end - start, headerLength <= bytes.count - start else {
                return .malformed(.badERSPANHeader)
            }
        }
        return decodeEthernet(packet, at: start + headerLength, end: end)
    }
}
