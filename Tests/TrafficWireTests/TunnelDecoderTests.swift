import Testing
import TrafficCapture
@testable import TrafficWire

/// Each tunnel and link type around the "hello" segment of PacketDecoderTests, then damaged headers: a
/// truncated or lying tunnel header is its kind's anomaly, a UDP packet that does not validate is plain UDP.
@Suite struct TunnelDecoderTests {
    let plain = PacketDecoderTests()
    static let hello = PacketDecoderTests.ipv4TCP
    static let helloV6 = PacketDecoderTests.ipv6(nextHeader: 6, payload: PacketDecoderTests.tcpHello)

    /// Decodes `frame` (cut to `captured` bytes) and hands over the result and the decoder afterwards.
    func decode(_ frame: [UInt8], link: LinkType = .ethernet, captured: Int? = nil,
                _ check: (PacketDecoder.Result, PacketDecoder) -> Void) {
        var decoder = PacketDecoder(linkType: link)
        frame.withUnsafeBytes { bytes in
            let cut = UnsafeRawBufferPointer(rebasing: bytes[..<(captured ?? frame.count)])
            let result = decoder.decode(CapturedPacket(time: .zero, bytes: cut, originalLength: frame.count))
            check(result, decoder)
        }
    }

    func expectHello(_ frame: [UInt8], link: LinkType = .ethernet, stack: [Encapsulation.Kind], ipv6: Bool = false) {
        decode(frame, link: link) { result, decoder in
            plain.expectHello(result, frameBytes: frame.count, sourceText: ipv6 ? "[2001:db8::1]:40000" : "10.0.0.1:40000")
            if case .tcp(let segment) = result { #expect(segment.encapsulation.kinds == stack) }
            for kind in Encapsulation.Kind.allCases {
                #expect(decoder.count(of: kind) == (stack.contains(kind) ? 1 : 0), "\(kind)")
            }
        }
    }

    func expect(_ frame: [UInt8], link: LinkType = .ethernet, captured: Int? = nil, _ anomaly: WireAnomaly?,
                sourceLocation: SourceLocation = #_sourceLocation) {
        decode(frame, link: link, captured: captured) { result, decoder in
            switch (result, anomaly) {
            case (.malformed(let found), let anomaly?):
                #expect(found == anomaly, sourceLocation: sourceLocation)
                #expect(decoder.count(of: anomaly) == 1, sourceLocation: sourceLocation)
            case (.nonTCP, nil), (.udp, nil): break
            default: Issue.record("expected \(anomaly.map { "\($0)" } ?? "non-TCP"), got \(result)", sourceLocation: sourceLocation)
            }
        }
    }

    static func ethernet(_ packet: [UInt8]) -> [UInt8] { TunnelFrames.ethernet(around: packet) }

    @Test(arguments: TunnelFrames.Layer.allCases)
    func eachTunnelLeadsToTheInnerSegment(layer: TunnelFrames.Layer) {
        for packet in [Self.hello, Self.helloV6] where layer.fits(packet) {
            let v6 = TunnelFrames.isIPv6(packet)
            expectHello(Self.ethernet(layer.wrap(packet)), stack: layer.kinds(innerIPv6: v6), ipv6: v6)
        }
    }

    @Test(arguments: TunnelFrames.Link.allCases)
    func eachLinkLeadsToTheSegment(link: TunnelFrames.Link) {
        for packet in [Self.hello, Self.helloV6] {
            let (type, frame, stack) = link.frame(packet)
            expectHello(frame, link: type, stack: stack, ipv6: TunnelFrames.isIPv6(packet))
        }
    }

    // 192.0.2.1.49152 > 192.0.2.2.4789: VXLAN, flags [I] (0x08), vni 42 — then Ethernet, IPv4, the segment.
    @Test func vxlanByteForByte() {
        let frame = Self.ethernet(TunnelFrames.Layer.vxlan.wrap(Self.hello))
        #expect(frame.count == 14 + 20 + 8 + 8 + 14 + 45)
        // Ports 49152 > 4789, UDP length 75 = 8 + 8 (VXLAN) + 14 (Ethernet) + 45, checksum 0; flags I, VNI 42.
        #expect(Array(frame[34..<50]) == [0xc0, 0x00, 0x12, 0xb5, 0x00, 0x4b, 0, 0, 0x08, 0, 0, 0, 0, 0, 42, 0])
        expectHello(frame, stack: [.vxlan])
    }

    @Test func vxlanThatDoesNotValidateIsUDP() {
        var frame = Self.ethernet(TunnelFrames.Layer.vxlan.wrap(Self.hello))
        frame[42] = 0  // I flag clear
        expect(frame, nil)
        // Snaplen cut inside the VXLAN header while the UDP length says it is there.
        expect(Self.ethernet(TunnelFrames.Layer.vxlan.wrap(Self.hello)), captured: 14 + 20 + 8 + 4, .badVXLANHeader)
        // Too short to carry an Ethernet frame: ordinary UDP.
        expect(Self.ethernet(TunnelFrames.ipv4(TunnelFrames.udp(TunnelFrames.vxlanHeader, port: 4789), proto: 17)), nil)
    }

    @Test func geneve() {
        var frame = Self.ethernet(TunnelFrames.Layer.geneveEthernet.wrap(Self.hello))
        frame[42] = 0x3f  // options of 63 words: past the UDP payload
        expect(frame, .badGeneveHeader)
        frame[42] = 0x42  // version 1
        expect(frame, nil)
        frame[42] = 0x02
        frame[44] = 0x12  // protocol type 0x1258: unknown
        expect(frame, nil)
        expect(Self.ethernet(TunnelFrames.Layer.geneveEthernet.wrap(Self.hello)), captured: 14 + 20 + 8 + 12, .badGeneveHeader)
    }

    @Test func gtpu() {
        let good = Self.ethernet(TunnelFrames.Layer.gtpu.wrap(Self.hello))
        var frame = good
        frame[54] = 0  // extension header length 0 words
        expect(frame, .badGTPUHeader)
        frame = good
        frame[44] = 0xff  // length past the UDP payload
        expect(frame, .badGTPUHeader)
        frame = good
        frame[43] = 1  // echo request: no user data
        expect(frame, nil)
        frame = good
        frame[42] = 0x26  // PT 0: GTP', not GTP-U
        expect(frame, nil)
        expect(good, captured: 14 + 20 + 8 + 10, .badGTPUHeader)
    }

    @Test func teredo() {
        let good = Self.ethernet(TunnelFrames.Layer.teredo.wrap(Self.helloV6))
        expectHello(good, stack: [.teredo], ipv6: true)
        // Only an origin indication; then neither indicator.
        let originOnly = TunnelFrames.ipv4(TunnelFrames.udp(TunnelFrames.teredoOrigin + Self.helloV6, port: 3544), proto: 17)
        expectHello(Self.ethernet(originOnly), stack: [.teredo], ipv6: true)
        expectHello(Self.ethernet(TunnelFrames.ipv4(TunnelFrames.udp(Self.helloV6, port: 3544), proto: 17)), stack: [.teredo],
                    ipv6: true)
        // An IPv6 payload length that does not fill the UDP payload: not Teredo.
        expect(Self.ethernet(TunnelFrames.ipv4(TunnelFrames.udp(Self.helloV6 + [0, 0], port: 3544), proto: 17)), nil)
        // IPv4 inside: not Teredo.
        expect(Self.ethernet(TunnelFrames.ipv4(TunnelFrames.udp(Self.hello, port: 3544), proto: 17)), nil)
        expect(good, captured: 14 + 20 + 8 + 15 + 8 + 20, .badTeredoHeader)
    }

    @Test func gre() {
        let good = Self.ethernet(TunnelFrames.Layer.greTEB.wrap(Self.hello))
        var frame = good
        frame[34] |= 0x40  // routing present (RFC 1701): discarded per RFC 2784 §2.3
        expect(frame, .badGREHeader)
        frame = good
        frame[35] = 1  // version 1: PPTP
        expect(frame, nil)
        expect(good, captured: 14 + 20 + 6, .badGREHeader)  // cut inside the key
        // An IP header that claims less than the GRE header.
        expect(Self.ethernet(Array(TunnelFrames.ipv4([0x20, 0], proto: 47))), .badGREHeader)
        frame = good
        frame[36] = 0x12  // protocol type 0x1258: unknown
        expect(frame, nil)
    }

    @Test func erspan() {
        var frame = Self.ethernet(TunnelFrames.Layer.erspan2.wrap(Self.hello))
        frame[42] = 0x20  // version 2 under the type II protocol
        expect(frame, .badERSPANHeader)
        let typeIII = Self.ethernet(TunnelFrames.Layer.erspan3.wrap(Self.hello))
        expect(typeIII, captured: 14 + 20 + 8 + 14, .badERSPANHeader)  // cut inside the platform subheader
        frame = typeIII
        frame[52] = 0x08  // frame type 2 (IP): not followed
        expect(frame, nil)
    }

    @Test func mpls() {
        // Two labels, neither with the bottom-of-stack bit, then the frame ends.
        let open = TunnelFrames.ethernet([0, 0x10, 0, 64, 0, 0x11, 0, 64], etherType: [0x88, 0x47])
        expect(open, .badMPLSHeader)
        // Bottom of stack, then nothing.
        expect(TunnelFrames.ethernet([0, 0x10, 1, 64], etherType: [0x88, 0x47]), .badMPLSHeader)
        // A payload whose first nibble is neither IP nor a control word.
        expect(TunnelFrames.ethernet([0, 0x10, 1, 64, 0x80, 0, 0, 0], etherType: [0x88, 0x47]), nil)
    }

    @Test func pppoe() {
        let good = TunnelFrames.ethernet(TunnelFrames.pppoe(around: Self.hello), etherType: [0x88, 0x64])
        var frame = good
        frame[15] = 0x09  // PADI code: discovery, not session data
        expect(frame, .badPPPoEHeader)
        frame = good
        frame[18] = 0xff  // length past the frame
        expect(frame, .badPPPoEHeader)
        frame = good
        frame[21] = 0x23  // PPP protocol 0x0023: not IP
        expect(frame, nil)
        expect(good, captured: 14 + 5, .badPPPoEHeader)
    }

    @Test func pppAndNFLOG() {
        expect([0xfe, 0x03, 0x00, 0x21] + Self.hello, link: .pppHDLC, .badPPPHeader)
        expect([0xff], link: .ppp, .badPPPHeader)
        expect([0xff, 0x03, 0xc0, 0x21, 1, 1, 0, 4], link: .ppp, nil)  // LCP configure-request
        expect([2, 0, 0, 5, 3, 0, 1, 0], link: .nflog, .badNFLOGHeader)  // a TLV of 3 bytes
        expect([2, 1, 0, 5], link: .nflog, .badNFLOGHeader)  // version 1
        expect([2, 0, 0, 5, 8, 0, 1, 0, 8, 0, 3, 0], link: .nflog, nil)  // packet header only, no payload
    }

    @Test func innerPacketLongerThanItsTunnelIsBadIP() {
        var inner = Self.hello
        inner[3] = 0x40  // total length 64 > 45 carried by the tunnel
        expect(Self.ethernet(TunnelFrames.ipv4(inner, proto: 4)), .badIPHeader)
    }

    @Test func depthIsLimitedToEight() {
        var packet = Self.hello
        for _ in 0..<PacketDecoder.maxTunnelDepth { packet = TunnelFrames.ipv4(packet, proto: 4) }
        expectHello(Self.ethernet(packet), stack: [Encapsulation.Kind](repeating: .ipv4InIP, count: 8))
        expect(Self.ethernet(TunnelFrames.ipv4(packet, proto: 4)), .tunnelTooDeep)
    }

    /// Every prefix of every wrapped frame decodes to something, never a trap, with the whole frame's length
    /// as the wire length (a snaplen cut anywhere).
    @Test func everyCutIsSafe() {
        for layer in TunnelFrames.Layer.allCases {
            for packet in [Self.hello, Self.helloV6] where layer.fits(packet) {
                let frame = Self.ethernet(layer.wrap(packet))
                for cut in 0...frame.count { decode(frame, captured: cut) { _, _ in } }
            }
        }
        for link in TunnelFrames.Link.allCases {
            let (type, frame, _) = link.frame(Self.helloV6)
            for cut in 0...frame.count { decode(frame, link: type, captured: cut) { _, _ in } }
        }
    }

    @Test func anomalyNamesAreStable() {
        #expect(WireAnomaly.allCases.map(\.name).suffix(11) == [
            "bad_vxlan_header", "bad_geneve_header", "bad_gtpu_header", "bad_teredo_header", "bad_gre_header",
            "bad_erspan_header", "bad_mpls_header", "bad_pppoe_header", "bad_ppp_header", "bad_nflog_header",
            "tunnel_too_deep",
        ])
        #expect(Encapsulation([.vxlan, .vlan]).names == ["vxlan", "vlan"])
        var full = Encapsulation()
        for _ in 0..<20 { full.append(.gre) }
        #expect(full.count == Encapsulation.capacity)
    }
}
