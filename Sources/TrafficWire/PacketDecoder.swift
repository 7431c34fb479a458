import TrafficCapture

/// Decodes captured frames (link → tunnels → IPv4/IPv6 → TCP) into `TCPSegment`s.
///
/// Checks each header's length once, then reads named fields at fixed offsets. Nothing here
/// allocates except the IP fragment reassembler, which copies fragments within a bounded buffer.
/// Tunnels (PacketDecoder+Tunnels.swift) lead to the inner IP packet, which is decoded as if it
/// had been captured directly; their headers count as the segment's header bytes.
public struct PacketDecoder {
    /// What one frame turned out to be.
    public enum Result {
        /// A TCP segment; valid until the next call to `decode`.
        case tcp(TCPSegment)
        /// A UDP datagram that is not a tunnel; valid until the next call to `decode`.
        case udp(UDPDatagram)
        /// Not TCP or UDP over IP (ARP, ICMP, …): counted, not analysed.
        case nonTCP
        /// An IP fragment held until its datagram is complete.
        case fragmentHeld
        /// A frame too damaged to decode; the anomaly says why.
        case malformed(WireAnomaly)
    }

    /// Tunnels inside tunnels stop here: real networks nest two or three (VXLAN in GRE in MPLS); a deeper
    /// stack is a crafted packet, and the limit bounds the decoder's recursion.
    public static let maxTunnelDepth = 8

    public let linkType: LinkType
    /// Verify IPv4 header and TCP checksums (RFC 1071) and count bad ones; off by default, like tshark and Zeek.
    public var verifyChecksums = false
    public var fragments = IPFragmentReassembler()
    public private(set) var anomalies = [Int](repeating: 0, count: WireAnomaly.allCases.count)
    /// Frames decoded through each encapsulation kind, by `Encapsulation.Kind` raw value (a frame counts
    /// once per kind however many layers of it it had).
    public private(set) var encapsulatedPackets = [Int](repeating: 0, count: Encapsulation.Kind.allCases.count + 1)

    /// The current frame's layers so far, and how many of them are tunnels (VLAN tags are not).
    var encapsulation = Encapsulation()
    var tunnelDepth = 0

    public init(linkType: LinkType) {
        self.linkType = linkType
        isEthernet = linkType == .ethernet
    }

    @usableFromInline let isEthernet: Bool

    /// The common frame, decoded without a call: untagged Ethernet, IPv4 that is not a fragment and states its
    /// length, TCP, checksums not verified. Writes the segment into `segment` and returns true; returns false,
    /// having changed nothing, for any other frame, which `decode` then takes (also to count it as malformed).
    /// `decode` returned a 13-word enum that every caller level and the read loop copied once more.
    @inlinable @inline(__always)
    public mutating func decodeCommonTCP(_ packet: CapturedPacket, into segment: inout TCPSegment) -> Bool {
        let bytes = packet.bytes
        // Ethernet (14), IPv4 (at least 20) and TCP (at least 20) headers.
        guard isEthernet, !verifyChecksums, bytes.count >= 54, bytes.loadBigEndianUInt16(at: 12) == 0x0800 else {
            return false
        }
        let versionIHL = bytes[14]
        let ipHeaderLength = Int(versionIHL & 0x0f) &* 4
        let totalLength = Int(bytes.loadBigEndianUInt16(at: 16))
        let tcpStart = 14 &+ ipHeaderLength
        // Version 4; a header of at least 20 bytes that was captured with the TCP header behind it; a total length
        // (0 is a sender's offload capture) covering the header; no fragment bits (the flag 0x4000, don't
        // fragment, is no fragment); protocol 6.
        guard versionIHL >> 4 == 4, ipHeaderLength >= 20, bytes.count >= tcpStart &+ 20,
            totalLength >= ipHeaderLength, bytes.loadBigEndianUInt16(at: 20) & 0x3fff == 0, bytes[23] == 6
        else { return false }
        let ipPayloadLength = totalLength &- ipHeaderLength
        let tcpHeaderLength = Int(bytes[tcpStart &+ 12] >> 4) &* 4
        guard tcpHeaderLength >= 20, tcpHeaderLength <= ipPayloadLength, bytes.count >= tcpStart &+ tcpHeaderLength
        else { return false }
        let payloadStart = tcpStart &+ tcpHeaderLength
        let capturedEnd = tcpStart &+ min(bytes.count &- tcpStart, ipPayloadLength)
        segment = TCPSegment(
            source: Endpoint(address: IPAddress(ipv4: bytes.loadBigEndianUInt32(at: 26)),
                             port: bytes.loadBigEndianUInt16(at: tcpStart)),
            destination: Endpoint(address: IPAddress(ipv4: bytes.loadBigEndianUInt32(at: 30)),
                                  port: bytes.loadBigEndianUInt16(at: tcpStart &+ 2)),
            sequenceNumber: bytes.loadBigEndianUInt32(at: tcpStart &+ 4),
            acknowledgmentNumber: bytes.loadBigEndianUInt32(at: tcpStart &+ 8),
            flags: TCPSegment.Flags(rawValue: bytes[tcpStart &+ 13] & 0x1f),
            payloadLength: ipPayloadLength &- tcpHeaderLength,
            payload: UnsafeRawBufferPointer(
                start: bytes.baseAddress.map { $0 + payloadStart }, count: capturedEnd &- payloadStart),
            frameBytes: packet.originalLength, frameCount: 1, encapsulation: Encapsulation())
        return true
    }

    public mutating func decode(_ packet: CapturedPacket) -> Result {
        encapsulation = Encapsulation()
        tunnelDepth = 0
        let result = decodeLink(packet)
        if case .malformed(let anomaly) = result { anomalies[anomaly.rawValue] += 1 }
        if !encapsulation.isEmpty {
            var set = encapsulation.kindSet
            while set != 0 {
                encapsulatedPackets[set.trailingZeroBitCount] += 1
                set &= set - 1
            }
        }
        return result
    }

    public func count(of anomaly: WireAnomaly) -> Int { anomalies[anomaly.rawValue] }

    public func count(of kind: Encapsulation.Kind) -> Int { encapsulatedPackets[Int(kind.rawValue)] }

    private mutating func decodeLink(_ packet: CapturedPacket) -> Result {
        let bytes = packet.bytes
        let end = packet.originalLength
        switch linkType {
        case .ethernet:
            // Untagged IPv4 first and without a call: the common frame pays for no tunnel or tag check.
            guard bytes.count >= 14 else { return .malformed(.truncatedHeader) }
            if bytes.loadBigEndianUInt16(at: 12) == 0x0800 { return decodeIPv4(packet, at: 14, end: end) }
            return decodeEthernet(packet, at: 0, end: end)
        case .linuxSLL:
            guard bytes.count >= 16 else { return .malformed(.truncatedHeader) }
            return decodeEtherType(bytes.loadBigEndianUInt16(at: 14), packet, at: 16, end: end)
        case .linuxSLL2:
            guard bytes.count >= 20 else { return .malformed(.truncatedHeader) }
            return decodeEtherType(bytes.loadBigEndianUInt16(at: 0), packet, at: 20, end: end)
        case .null, .loop:
            guard bytes.count >= 4 else { return .malformed(.truncatedHeader) }
            // NULL stores the address family in the capturing host's byte order, LOOP in network order.
            var family = bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
            if linkType == .loop { family = UInt32(bigEndian: family) } else if family > 0xFFFF { family = family.byteSwapped }
            switch family {
            case 2: return decodeIPv4(packet, at: 4, end: end)
            // AF_INET6 differs by OS: 10 Linux, 24 NetBSD/OpenBSD, 28 FreeBSD, 30 macOS.
            case 10, 24, 28, 30: return decodeIPv6(packet, at: 4, end: end)
            default: return .malformed(.unknownLinkProtocol)
            }
        case .ppp:
            return decodePPP(packet, at: 0, end: end, hdlc: false)
        case .pppHDLC:
            return decodePPP(packet, at: 0, end: end, hdlc: true)
        case .nflog:
            return decodeNFLOG(packet, end: end)
        default:
            // Raw IP (and LINKTYPE_IPV4/IPV6): the version nibble tells IPv4 from IPv6.
            return decodeIPByVersion(packet, at: 0, end: end)
        }
    }

    /// Ethernet II at `start`, with any 802.1Q/802.1ad tags; `end` is where the frame ends on the wire.
    mutating func decodeEthernet(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard bytes.count >= start + 14 else { return .malformed(.truncatedHeader) }
        var etherType = bytes.loadBigEndianUInt16(at: start + 12)
        var offset = start + 14
        // 802.1Q (0x8100), 802.1ad QinQ (0x88a8) and the pre-standard 0x9100: 4-byte tags, possibly stacked.
        while etherType == 0x8100 || etherType == 0x88a8 || etherType == 0x9100 {
            guard bytes.count >= offset + 4 else { return .malformed(.truncatedHeader) }
            etherType = bytes.loadBigEndianUInt16(at: offset + 2)
            offset += 4
            encapsulation.append(.vlan)
        }
        return decodeEtherType(etherType, packet, at: offset, end: end)
    }

    mutating func decodeEtherType(_ etherType: UInt16, _ packet: CapturedPacket, at offset: Int, end: Int) -> Result {
        switch etherType {
        case 0x0800: return decodeIPv4(packet, at: offset, end: end)
        case 0x86DD: return decodeIPv6(packet, at: offset, end: end)
        default: return decodeTunnel(etherType: etherType, packet, at: offset, end: end)
        }
    }

    /// An IP packet whose kind only its version nibble tells (raw IP, MPLS, GTP-U).
    mutating func decodeIPByVersion(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        guard packet.bytes.count > start else { return .malformed(.truncatedHeader) }
        switch packet.bytes[start] >> 4 {
        case 4: return decodeIPv4(packet, at: start, end: end)
        case 6: return decodeIPv6(packet, at: start, end: end)
        default: return .malformed(.badIPHeader)
        }
    }

    /// `end` bounds the packet on the wire: the frame's length, or the payload of the tunnel around it.
    mutating func decodeIPv4(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard bytes.count >= start + 20 else { return .malformed(.truncatedHeader) }
        let versionIHL = bytes[start]
        guard versionIHL >> 4 == 4 else { return .malformed(.badIPHeader) }
        let headerLength = Int(versionIHL & 0x0f) * 4
        guard headerLength >= 20 else { return .malformed(.badIPHeader) }
        guard bytes.count >= start + headerLength else { return .malformed(.truncatedHeader) }
        var totalLength = Int(bytes.loadBigEndianUInt16(at: start + 2))
        if totalLength == 0 {
            // TCP segmentation offload: the sender's own capture shows a 0 total length (tshark
            // reports the same quirk); the frame length is the only truth left.
            totalLength = end - start
        }
        guard totalLength >= headerLength else { return .malformed(.badIPHeader) }
        // An inner packet longer than the tunnel payload that carries it is a lie of one of the two headers.
        if tunnelDepth > 0, totalLength > end - start { return .malformed(.badIPHeader) }
        if verifyChecksums, Checksum.sum(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + headerLength)])) != 0xffff {
            anomalies[WireAnomaly.badIPChecksum.rawValue] += 1
        }
        let fragmentField = bytes.loadBigEndianUInt16(at: start + 6)
        let moreFragments = fragmentField & 0x2000 != 0
        let fragmentOffset = Int(fragmentField & 0x1fff) * 8
        let proto = bytes[start + 9]
        let source = IPAddress.read(bytes, at: start + 12, ipv6: false)
        let destination = IPAddress.read(bytes, at: start + 16, ipv6: false)
        let payloadStart = start + headerLength
        let payloadLength = totalLength - headerLength
        if moreFragments || fragmentOffset != 0 {
            guard proto == 6 else { return .nonTCP }
            let key = IPFragmentReassembler.Key(
                source: source, destination: destination, identification: UInt32(bytes.loadBigEndianUInt16(at: start + 4)))
            return reassemble(key: key, packet: packet, payloadStart: payloadStart, payloadLength: payloadLength,
                              fragmentOffset: fragmentOffset, moreFragments: moreFragments)
        }
        guard proto == 6 else {
            return decodeTunnel(
                ipProtocol: proto, packet, at: payloadStart, end: payloadStart + payloadLength, source: source,
                destination: destination)
        }
        return decodeTCP(packet, source: source, destination: destination, at: payloadStart, ipPayloadLength: payloadLength)
    }

    /// RFC 9293 §3.1: the TCP checksum covers a pseudo-header and the whole segment; only checked when the
    /// segment was captured whole (a snaplen cut leaves nothing to check).
    private mutating func checkTCPChecksum(_ segment: UnsafeRawBufferPointer, source: IPAddress, destination: IPAddress) {
        var sum = Checksum.sum(segment)
        for address in [source, destination] {
            if address.isIPv6 {
                sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.high >> 48) & 0xffff)
                sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.high >> 32) & 0xffff)
                sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.high >> 16) & 0xffff)
                sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.high) & 0xffff)
                sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.low >> 48) & 0xffff)
                sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.low >> 32) & 0xffff)
            }
            sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.low >> 16) & 0xffff)
            sum = Checksum.add(sum, UInt32(truncatingIfNeeded: address.low) & 0xffff)
        }
        sum = Checksum.add(sum, 6)
        let length = UInt32(segment.count)
        sum = Checksum.add(sum, length >> 16)
        sum = Checksum.add(sum, length & 0xffff)
        if sum != 0xffff { anomalies[WireAnomaly.badTCPChecksum.rawValue] += 1 }
    }

    mutating func decodeIPv6(_ packet: CapturedPacket, at start: Int, end: Int) -> Result {
        let bytes = packet.bytes
        guard bytes.count >= start + 40 else { return .malformed(.truncatedHeader) }
        guard bytes[start] >> 4 == 6 else { return .malformed(.badIPHeader) }
        var payloadLength = Int(bytes.loadBigEndianUInt16(at: start + 4))
        if payloadLength == 0 { payloadLength = end - start - 40 }  // jumbogram or offload
        if tunnelDepth > 0, payloadLength > end - start - 40 { return .malformed(.badIPHeader) }
        var next = bytes[start + 6]
        let source = IPAddress.read(bytes, at: start + 8, ipv6: true)
        let destination = IPAddress.read(bytes, at: start + 24, ipv6: true)
        var offset = start + 40
        var remaining = payloadLength
        // RFC 8200 §4: walk the extension header chain up to the upper-layer header.
        while true {
            switch next {
            case 6:
                return decodeTCP(packet, source: source, destination: destination, at: offset, ipPayloadLength: remaining)
            case 0, 43, 60, 135, 139, 140:  // hop-by-hop, routing, destination options, mobility, HIP, shim6
                guard bytes.count >= offset + 2 else { return .malformed(.truncatedHeader) }
                let length = (Int(bytes[offset + 1]) + 1) * 8
                guard remaining >= length else { return .malformed(.badIPHeader) }
                next = bytes[offset]
                offset += length
                remaining -= length
            case 51:  // AH: its length is in 4-byte units, minus 2 (RFC 4302 §2.2)
                guard bytes.count >= offset + 2 else { return .malformed(.truncatedHeader) }
                let length = (Int(bytes[offset + 1]) + 2) * 4
                guard remaining >= length else { return .malformed(.badIPHeader) }
                next = bytes[offset]
                offset += length
                remaining -= length
            case 44:  // fragment header (RFC 8200 §4.5)
                guard bytes.count >= offset + 8, remaining >= 8 else { return .malformed(.truncatedHeader) }
                let field = bytes.loadBigEndianUInt16(at: offset + 2)
                let fragmentOffset = Int(field >> 3) * 8
                let moreFragments = field & 1 != 0
                let identification = bytes.loadBigEndianUInt32(at: offset + 4)
                next = bytes[offset]
                offset += 8
                remaining -= 8
                // An atomic fragment (offset 0, no more fragments; RFC 6946) is a whole datagram.
                if fragmentOffset == 0 && !moreFragments { continue }
                guard next == 6 else { return .nonTCP }
                let key = IPFragmentReassembler.Key(source: source, destination: destination, identification: identification)
                return reassemble(key: key, packet: packet, payloadStart: offset, payloadLength: remaining,
                                  fragmentOffset: fragmentOffset, moreFragments: moreFragments)
            default:
                return decodeTunnel(
                    ipProtocol: next, packet, at: offset, end: offset + remaining, source: source, destination: destination)
            }
        }
    }

    private mutating func reassemble(
        key: IPFragmentReassembler.Key, packet: CapturedPacket, payloadStart: Int, payloadLength: Int,
        fragmentOffset: Int, moreFragments: Bool
    ) -> Result {
        let available = max(0, min(payloadLength, packet.bytes.count - payloadStart))
        let piece = UnsafeRawBufferPointer(rebasing: packet.bytes[payloadStart..<(payloadStart + available)])
        switch fragments.add(key: key, time: packet.time, offset: fragmentOffset, claimedLength: payloadLength,
                             bytes: piece, last: !moreFragments, frameBytes: packet.originalLength) {
        case .held: return .fragmentHeld
        case .dropped: return .malformed(.fragmentDropped)
        case let .complete(datagram, frameBytes, frameCount):
            return decodeTCPPayload(
                datagram, source: key.source, destination: key.destination, ipPayloadLength: datagram.count,
                frameBytes: frameBytes, frameCount: frameCount)
        }
    }

    private mutating func decodeTCP(
        _ packet: CapturedPacket, source: IPAddress, destination: IPAddress, at start: Int, ipPayloadLength: Int
    ) -> Result {
        let region = UnsafeRawBufferPointer(rebasing: packet.bytes[min(start, packet.bytes.count)...])
        return decodeTCPPayload(region, source: source, destination: destination, ipPayloadLength: ipPayloadLength,
                                frameBytes: packet.originalLength, frameCount: 1)
    }

    /// `bytes` starts at the TCP header and holds what was captured of the IP payload.
    private mutating func decodeTCPPayload(
        _ bytes: UnsafeRawBufferPointer, source: IPAddress, destination: IPAddress, ipPayloadLength: Int,
        frameBytes: Int, frameCount: Int
    ) -> Result {
        guard bytes.count >= 20 else { return .malformed(.truncatedHeader) }
        let dataOffset = Int(bytes[12] >> 4) * 4
        guard dataOffset >= 20, dataOffset <= ipPayloadLength else { return .malformed(.badTCPHeader) }
        guard bytes.count >= dataOffset else { return .malformed(.truncatedHeader) }
        let payloadLength = ipPayloadLength - dataOffset
        let capturedEnd = min(bytes.count, ipPayloadLength)
        if verifyChecksums, bytes.count >= ipPayloadLength {
            checkTCPChecksum(UnsafeRawBufferPointer(rebasing: bytes[..<ipPayloadLength]), source: source,
                             destination: destination)
        }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[dataOffset..<capturedEnd])
        return .tcp(TCPSegment(
            source: Endpoint(address: source, port: bytes.loadBigEndianUInt16(at: 0)),
            destination: Endpoint(address: destination, port: bytes.loadBigEndianUInt16(at: 2)),
            sequenceNumber: bytes.loadBigEndianUInt32(at: 4),
            acknowledgmentNumber: bytes.loadBigEndianUInt32(at: 8),
            flags: TCPSegment.Flags(rawValue: bytes[13] & 0x1f),
            payloadLength: payloadLength, payload: payload, frameBytes: frameBytes, frameCount: frameCount,
            encapsulation: encapsulation))
    }
}
