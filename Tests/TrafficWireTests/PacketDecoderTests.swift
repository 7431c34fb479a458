import Testing
import TrafficCapture
@testable import TrafficWire

/// Frames are written out byte by byte, each with the tcpdump line it represents.
@Suite struct PacketDecoderTests {
    // 10.0.0.1.40000 > 10.0.0.2.80: Flags [P.], seq 1000:1005, ack 7, length 5 ("hello")
    static let ipv4TCP: [UInt8] =
        [0x45, 0x00, 0x00, 0x2d,  // IPv4, IHL 5, total length 45 = 20 + 20 + 5
         0x12, 0x34, 0x40, 0x00,  // id 0x1234, DF
         0x40, 0x06, 0x00, 0x00,  // TTL 64, TCP, checksum unfilled (offload)
         10, 0, 0, 1, 10, 0, 0, 2,
         0x9c, 0x40, 0x00, 0x50,  // ports 40000 → 80
         0x00, 0x00, 0x03, 0xe8,  // seq 1000
         0x00, 0x00, 0x00, 0x07,  // ack 7
         0x50, 0x18, 0xff, 0xff,  // data offset 5, flags PSH|ACK, window
         0x00, 0x00, 0x00, 0x00]  // checksum, urgent
        + Array("hello".utf8)
    static let ethernet: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00]

    /// Decodes `frame` and checks the result while the frame's memory is alive (segments point into it).
    func decode(_ frame: [UInt8], link: LinkType, _ check: (PacketDecoder.Result) -> Void) {
        var decoder = PacketDecoder(linkType: link)
        frame.withUnsafeBytes { bytes in
            check(decoder.decode(CapturedPacket(time: .zero, bytes: bytes, originalLength: frame.count)))
        }
    }

    func expectHello(_ frame: [UInt8], link: LinkType, frameBytes: Int, sourceText: String = "10.0.0.1:40000") {
        decode(frame, link: link) { expectHello($0, frameBytes: frameBytes, sourceText: sourceText) }
    }

    func expectMalformed(_ frame: [UInt8], link: LinkType, _ anomaly: WireAnomaly) {
        decode(frame, link: link) { result in
            guard case .malformed(let found) = result, found == anomaly else {
                Issue.record("expected \(anomaly), got \(result)")
                return
            }
        }
    }

    func expectHello(_ result: PacketDecoder.Result, frameBytes: Int, sourceText: String = "10.0.0.1:40000") {
        guard case .tcp(let segment) = result else {
            Issue.record("expected a TCP segment, got \(result)")
            return
        }
        #expect(segment.source.description == sourceText)
        #expect(segment.destination.port == 80)
        #expect(segment.sequenceNumber == 1000)
        #expect(segment.acknowledgmentNumber == 7)
        #expect(segment.flags == [.psh, .ack])
        #expect(segment.payloadLength == 5)
        #expect(Array(segment.payload) == Array("hello".utf8))
        #expect(segment.frameBytes == frameBytes)
        #expect(segment.headerBytes == frameBytes - 5)
    }

    @Test func ethernet() {
        expectHello(Self.ethernet + Self.ipv4TCP, link: .ethernet, frameBytes: 59)
    }

    @Test func ethernetPaddingIsNotPayload() {
        // A 60-byte minimum Ethernet frame: the IP total length, not the frame, bounds the payload.
        let frame = Self.ethernet + Self.ipv4TCP + [0, 0, 0, 0, 0, 0]
        expectHello(frame, link: .ethernet, frameBytes: 65)
    }

    @Test func vlanAndQinQ() {
        // 802.1Q tag VID 100, then 802.1ad outer tag + 802.1Q inner tag.
        let dot1q: [UInt8] = Array(Self.ethernet[0..<12]) + [0x81, 0x00, 0x00, 0x64, 0x08, 0x00]
        expectHello(dot1q + Self.ipv4TCP, link: .ethernet, frameBytes: 63)
        let qinq: [UInt8] = Array(Self.ethernet[0..<12]) + [0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x64, 0x08, 0x00]
        expectHello(qinq + Self.ipv4TCP, link: .ethernet, frameBytes: 67)
    }

    @Test func linuxCooked() {
        // SLL: packet type, ARPHRD, address length, 8 address bytes, protocol 0x0800.
        let sll: [UInt8] = [0, 0, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8) + [0x08, 0x00]
        expectHello(sll + Self.ipv4TCP, link: .linuxSLL, frameBytes: 61)
        // SLL2: protocol 0x0800 first, then reserved, ifindex, ARPHRD, type, address length, 8 address bytes.
        let sll2: [UInt8] = [0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6] + [UInt8](repeating: 0, count: 8)
        expectHello(sll2 + Self.ipv4TCP, link: .linuxSLL2, frameBytes: 65)
    }

    @Test func bsdLoopbackAndRaw() {
        // macOS lo0: AF_INET = 2 in little-endian host order.
        expectHello([2, 0, 0, 0] + Self.ipv4TCP, link: .null, frameBytes: 49)
        expectHello([0, 0, 0, 2] + Self.ipv4TCP, link: .loop, frameBytes: 49)
        expectHello(Self.ipv4TCP, link: .raw, frameBytes: 45)
        expectHello(Self.ipv4TCP, link: .ipv4, frameBytes: 45)
    }

    static let tcpHello: [UInt8] = Array(ipv4TCP[20...])

    static func ipv6(nextHeader: UInt8, payload: [UInt8]) -> [UInt8] {
        let length = UInt16(payload.count)
        return [0x60, 0, 0, 0, UInt8(length >> 8), UInt8(length & 0xff), nextHeader, 64]
            + [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]  // 2001:db8::1
            + [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [2]  // 2001:db8::2
            + payload
    }

    @Test func ipv6WithExtensionHeaders() {
        // Hop-by-hop (8 bytes, next = destination options) → destination options (8 bytes, next = TCP).
        let hopByHop: [UInt8] = [60, 0, 1, 4, 0, 0, 0, 0]
        let destination: [UInt8] = [6, 0, 1, 4, 0, 0, 0, 0]
        let frame = Self.ipv6(nextHeader: 0, payload: hopByHop + destination + Self.tcpHello)
        expectHello(frame, link: .raw, frameBytes: 40 + 16 + 25, sourceText: "[2001:db8::1]:40000")
        // An atomic fragment (RFC 6946) is a whole datagram.
        let atomic: [UInt8] = [6, 0, 0, 0, 0, 0, 0, 9]
        expectHello(Self.ipv6(nextHeader: 44, payload: atomic + Self.tcpHello), link: .raw,
                    frameBytes: 40 + 8 + 25, sourceText: "[2001:db8::1]:40000")
    }

    @Test func ipv4FragmentsOutOfOrder() {
        // The 25-byte TCP segment split at 16: second fragment first, offset 2 (×8 = 16 bytes).
        func fragment(offset: Int, more: Bool, _ payload: ArraySlice<UInt8>) -> [UInt8] {
            let total = 20 + payload.count
            let field = UInt16(offset / 8) | (more ? 0x2000 : 0)
            return [0x45, 0, UInt8(total >> 8), UInt8(total & 0xff), 0x12, 0x34, UInt8(field >> 8), UInt8(field & 0xff),
                    64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2] + payload
        }
        var decoder = PacketDecoder(linkType: .raw)
        let second = fragment(offset: 16, more: false, Self.tcpHello[16...])
        let first = fragment(offset: 0, more: true, Self.tcpHello[..<16])
        let held = second.withUnsafeBytes {
            decoder.decode(CapturedPacket(time: .zero, bytes: $0, originalLength: second.count))
        }
        guard case .fragmentHeld = held else {
            Issue.record("expected the fragment to be held, got \(held)")
            return
        }
        first.withUnsafeBytes {
            let result = decoder.decode(CapturedPacket(time: .zero, bytes: $0, originalLength: first.count))
            // Both fragment frames count: (20 + 9) + (20 + 16).
            expectHello(result, frameBytes: 65)
            if case .tcp(let segment) = result { #expect(segment.frameCount == 2) }
        }
    }

    @Test func ipv6FragmentsReassemble() {
        // RFC 8200 §4.5: the 25-byte TCP segment in two fragments (offset 0, M=1; offset 16, M=0), id 7.
        func fragment(offset: Int, more: Bool, _ payload: ArraySlice<UInt8>) -> [UInt8] {
            let field = UInt16(offset / 8) << 3 | (more ? 1 : 0)
            let header: [UInt8] = [6, 0, UInt8(field >> 8), UInt8(field & 0xff), 0, 0, 0, 7]
            return Self.ipv6(nextHeader: 44, payload: header + payload)
        }
        var decoder = PacketDecoder(linkType: .raw)
        let first = fragment(offset: 0, more: true, Self.tcpHello[..<16])
        let second = fragment(offset: 16, more: false, Self.tcpHello[16...])
        let held = first.withUnsafeBytes { decoder.decode(CapturedPacket(time: .zero, bytes: $0, originalLength: first.count)) }
        guard case .fragmentHeld = held else {
            Issue.record("expected the first fragment to be held, got \(held)")
            return
        }
        second.withUnsafeBytes {
            let result = decoder.decode(CapturedPacket(time: .zero, bytes: $0, originalLength: second.count))
            // Frames: (40 + 8 + 16) + (40 + 8 + 9) = 121.
            expectHello(result, frameBytes: 121, sourceText: "[2001:db8::1]:40000")
        }
    }

    @Test func snaplenCutIsShortPayload() {
        // Captured 3 of the 5 payload bytes: the segment still claims 5.
        let frame = Self.ethernet + Self.ipv4TCP
        var decoder = PacketDecoder(linkType: .ethernet)
        frame.withUnsafeBytes {
            let result = decoder.decode(CapturedPacket(
                time: .zero, bytes: UnsafeRawBufferPointer(rebasing: $0[..<(frame.count - 2)]), originalLength: frame.count))
            guard case .tcp(let segment) = result else {
                Issue.record("expected TCP, got \(result)")
                return
            }
            #expect(segment.payloadLength == 5)
            #expect(Array(segment.payload) == Array("hel".utf8))
        }
    }

    @Test func malformedHeaders() {
        var badIHL = Self.ipv4TCP
        badIHL[0] = 0x44  // IHL 4 words = 16 bytes < 20
        expectMalformed(badIHL, link: .raw, .badIPHeader)
        var badOffset = Self.ipv4TCP
        badOffset[32] = 0xf0  // data offset 60 bytes, past the 25-byte IP payload
        expectMalformed(badOffset, link: .raw, .badTCPHeader)
        expectMalformed(Array(Self.ipv4TCP[0..<30]), link: .raw, .truncatedHeader)
        decode(Array(Self.ethernet.dropLast(2)) + [0x08, 0x06] + [UInt8](repeating: 0, count: 28), link: .ethernet) {
            guard case .nonTCP = $0 else {
                Issue.record("ARP is not TCP")
                return
            }
        }
    }

    @Test(arguments: [
        ("::1", IPAddress(ipv6High: 0, low: 1)),
        ("2001:db8::1", IPAddress(ipv6High: 0x2001_0db8_0000_0000, low: 1)),
        ("2001:db8:0:1:1:1:1:1", IPAddress(ipv6High: 0x2001_0db8_0000_0001, low: 0x0001_0001_0001_0001)),
        ("fe80::1:0:1", IPAddress(ipv6High: 0xfe80_0000_0000_0000, low: 0x0000_0001_0000_0001)),
        // Two equal zero runs: the first is compressed (RFC 5952 §4.2.3).
        ("2001:db8::1:0:0:1", IPAddress(ipv6High: 0x2001_0db8_0000_0000, low: 0x0001_0000_0000_0001)),
        ("127.0.0.1", IPAddress(ipv4: 0x7f00_0001)),
    ])
    func addressText(expected: String, address: IPAddress) {
        #expect(address.description == expected)
    }

    /// IPv4 text is written digit by digit: compared with interpolation over octets and ports of every length.
    @Test func ipv4EndpointTextMatchesInterpolation() {
        let octets: [UInt32] = [0, 1, 9, 10, 99, 100, 199, 200, 249, 250, 255]
        let ports: [UInt16] = [0, 1, 9, 10, 80, 99, 100, 443, 999, 1000, 8080, 9999, 10000, 54321, 65535]
        for a in octets {
            for b in [UInt32(0), 10, 255] {
                let value = a << 24 | b << 16 | (255 - a) << 8 | (a / 2)
                let address = IPAddress(ipv4: value)
                let dotted = "\(value >> 24).\((value >> 16) & 0xff).\((value >> 8) & 0xff).\(value & 0xff)"
                #expect(address.description == dotted)
                for port in ports {
                    #expect(Endpoint(address: address, port: port).description == "\(dotted):\(port)")
                }
            }
        }
        #expect(Endpoint(address: IPAddress(ipv6High: 0, low: 1), port: 8080).description == "[::1]:8080")
    }
}
