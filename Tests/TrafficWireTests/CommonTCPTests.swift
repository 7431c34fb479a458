import Testing
import TrafficCapture
@testable import TrafficWire

/// `decodeCommonTCP`, the read loop's path for the common frame, on frames written out byte by byte: what it takes
/// it decodes as the bytes say (and as `decode` does), and every other frame it leaves alone for `decode`.
@Suite struct CommonTCPTests {
    /// Ethernet, then 10.0.0.1.40000 > 10.0.0.2.80: Flags [P.], seq 1000:1005, ack 7, length 5 ("hello"): 59 bytes.
    static let frame = PacketDecoderTests.ethernet + PacketDecoderTests.ipv4TCP

    struct Taken {
        var segment: TCPSegment
        var payload: [UInt8]
    }

    /// The segment `decodeCommonTCP` made of `frame` (its first `captured` bytes), with its payload copied out;
    /// nil when it declined, which it must do without touching the segment it was given.
    func common(_ frame: [UInt8], captured: Int? = nil, link: LinkType = .ethernet, verify: Bool = false) -> Taken? {
        var decoder = PacketDecoder(linkType: link)
        decoder.verifyChecksums = verify
        let sentinel = TCPSegment(
            source: Endpoint(address: IPAddress(ipv4: 0xdead_beef), port: 1),
            destination: Endpoint(address: IPAddress(ipv4: 0xfeed_face), port: 2), sequenceNumber: 3,
            acknowledgmentNumber: 4, flags: [.fin], payloadLength: 6, payload: UnsafeRawBufferPointer(start: nil, count: 0),
            frameBytes: 7)
        var segment = sentinel
        return frame.withUnsafeBytes { all in
            let bytes = UnsafeRawBufferPointer(rebasing: all[..<(captured ?? frame.count)])
            let packet = CapturedPacket(time: .zero, bytes: bytes, originalLength: frame.count)
            guard decoder.decodeCommonTCP(packet, into: &segment) else {
                #expect(segment.source == sentinel.source && segment.destination == sentinel.destination)
                #expect(segment.sequenceNumber == 3 && segment.payloadLength == 6 && segment.frameBytes == 7)
                return nil
            }
            // The general path agrees on every field.
            var general = PacketDecoder(linkType: link)
            if case .tcp(let other) = general.decode(packet) {
                #expect(other.source == segment.source && other.destination == segment.destination)
                #expect(other.sequenceNumber == segment.sequenceNumber)
                #expect(other.acknowledgmentNumber == segment.acknowledgmentNumber)
                #expect(other.flags == segment.flags && other.payloadLength == segment.payloadLength)
                #expect(other.payload.baseAddress == segment.payload.baseAddress)
                #expect(other.payload.count == segment.payload.count)
                #expect(other.frameBytes == segment.frameBytes && other.frameCount == segment.frameCount)
                #expect(other.encapsulation == segment.encapsulation)
            } else {
                Issue.record("decode did not find the TCP segment that decodeCommonTCP found")
            }
            return Taken(segment: segment, payload: Array(segment.payload))
        }
    }

    func expectHello(_ taken: Taken?, frameBytes: Int, payload: String = "hello") {
        guard let taken else {
            Issue.record("the common frame was declined")
            return
        }
        let s = taken.segment
        #expect(s.source == Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 40000))
        #expect(s.destination == Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 80))
        #expect(s.sequenceNumber == 1000)
        #expect(s.acknowledgmentNumber == 7)
        #expect(s.flags == [.psh, .ack])
        #expect(s.payloadLength == 5)
        #expect(taken.payload == Array(payload.utf8))
        #expect(s.frameBytes == frameBytes)
        #expect(s.frameCount == 1)
        #expect(s.encapsulation.isEmpty)
    }

    @Test func plainFrame() {
        expectHello(common(Self.frame), frameBytes: 59)
    }

    @Test func ethernetPaddingIsNotPayload() {
        // Padded to the 60-byte minimum (and beyond): the IPv4 total length (45) ends the payload.
        expectHello(common(Self.frame + [0, 0, 0, 0, 0, 0, 0]), frameBytes: 66)
    }

    @Test func snaplenCutKeepsTheClaimedLength() {
        expectHello(common(Self.frame, captured: 57), frameBytes: 59, payload: "hel")
        // Cut right after the TCP header: no payload captured.
        expectHello(common(Self.frame, captured: 54), frameBytes: 59, payload: "")
    }

    @Test func ipAndTCPOptionsAreStepped() {
        // IHL 6: four option bytes (NOP NOP NOP EOL) after the 20-byte header; total length 49.
        var ipOptions = Self.frame
        ipOptions[14] = 0x46
        ipOptions[17] = 49
        ipOptions.insert(contentsOf: [1, 1, 1, 0], at: 34)
        expectHello(common(ipOptions), frameBytes: 63)
        // TCP data offset 6: four option bytes (NOP NOP NOP NOP) before the payload; total length 49.
        var tcpOptions = Self.frame
        tcpOptions[17] = 49
        tcpOptions[46] = 0x60
        tcpOptions.insert(contentsOf: [1, 1, 1, 1], at: 54)
        expectHello(common(tcpOptions), frameBytes: 63)
    }

    @Test func dontFragmentIsNoFragment() {
        var frame = Self.frame
        frame[20] = 0x40  // DF only (the fixture's own flags)
        expectHello(common(frame), frameBytes: 59)
        frame[20] = 0x00
        expectHello(common(frame), frameBytes: 59)
    }

    @Test func otherFramesAreLeftToDecode() {
        func declined(_ frame: [UInt8], captured: Int? = nil, link: LinkType = .ethernet, verify: Bool = false,
                      _ why: Comment) {
            #expect(common(frame, captured: captured, link: link, verify: verify) == nil, why)
        }
        var vlan = Self.frame
        vlan.replaceSubrange(12..<14, with: [0x81, 0x00, 0x00, 0x05, 0x08, 0x00])
        declined(vlan, "802.1Q tag")
        var ipv6 = Self.frame
        ipv6[12] = 0x86
        ipv6[13] = 0xdd
        declined(ipv6, "IPv6 EtherType")
        var moreFragments = Self.frame
        moreFragments[20] = 0x20
        declined(moreFragments, "more-fragments flag")
        var fragmentOffset = Self.frame
        fragmentOffset[20] = 0x40
        fragmentOffset[21] = 0x01
        declined(fragmentOffset, "fragment offset 8")
        var zeroLength = Self.frame
        zeroLength[16] = 0
        zeroLength[17] = 0
        declined(zeroLength, "total length 0 (offload)")
        var udp = Self.frame
        udp[23] = 17
        declined(udp, "UDP")
        var version6 = Self.frame
        version6[14] = 0x65
        declined(version6, "version 6 in an IPv4 EtherType")
        var shortIHL = Self.frame
        shortIHL[14] = 0x44
        declined(shortIHL, "IHL 16 bytes")
        var shortTotal = Self.frame
        shortTotal[17] = 19
        declined(shortTotal, "total length below the header")
        var shortOffset = Self.frame
        shortOffset[46] = 0x40
        declined(shortOffset, "TCP data offset 16 bytes")
        var longOffset = Self.frame
        longOffset[46] = 0x70
        declined(longOffset, "TCP data offset 28 bytes, past the 25-byte IP payload")
        declined(Self.frame, captured: 53, "TCP header cut by the snaplen")
        var ipOptionsCut = Self.frame
        ipOptionsCut[14] = 0x4f  // 60-byte IP header: the TCP header would end at 94, past the 59 captured
        ipOptionsCut[17] = 0xff
        declined(ipOptionsCut, "IP options and TCP header past the captured bytes")
        declined(Self.frame, verify: true, "checksums verified")
        declined(PacketDecoderTests.ipv4TCP, link: .raw, "raw IP link")
    }
}
