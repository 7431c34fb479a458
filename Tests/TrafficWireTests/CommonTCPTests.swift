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
        // Single bytes of the fixture changed: (offset, value) pairs and why the frame is not the common one.
        let patched: [([(Int, UInt8)], Comment)] = [
            ([(12, 0x86), (13, 0xdd)], "IPv6 EtherType"),
            ([(20, 0x20)], "more-fragments flag"),
            ([(20, 0x40), (21, 0x01)], "fragment offset 8"),
            ([(16, 0), (17, 0)], "total length 0 (offload)"),
            ([(23, 17)], "UDP"),
            ([(14, 0x65)], "version 6 in an IPv4 EtherType"),
            ([(14, 0x44)], "IHL 16 bytes"),
            ([(17, 19)], "total length below the header"),
            ([(46, 0x40)], "TCP data offset 16 bytes"),
            ([(46, 0x70)], "TCP data offset 28 bytes, past the 25-byte IP payload"),
            // 60-byte IP header: the TCP header would end at 94, past the 59 captured.
            ([(14, 0x4f), (17, 0xff)], "IP options and TCP header past the captured bytes"),
        ]
        for (patches, why) in patched {
            var frame = Self.frame
            for (offset, value) in patches { frame[offset] = value }
            declined(frame, why)
        }
        declined(Self.frame, captured: 53, "TCP header cut by the snaplen")
        declined(Self.frame, verify: true, "checksums verified")
        declined(PacketDecoderTests.ipv4TCP, link: .raw, "raw IP link")
    }
}
