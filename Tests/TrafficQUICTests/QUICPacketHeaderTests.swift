import Testing

@testable import TrafficQUIC

/// Hand-built datagrams read without keys (RFC 9000 §17, §12.2; RFC 9369 §3.2). Offsets are counted in the
/// comments from the fields' sizes.
@Suite struct QUICPacketHeaderTests {
    static let dcid: [UInt8] = [0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]
    static let scid: [UInt8] = [0x21, 0x22, 0x23, 0x24]
    static let v1: [UInt8] = [0, 0, 0, 1]
    static let v2: [UInt8] = [0x6b, 0x33, 0x43, 0xcf]

    /// A long header packet: first byte, version, DCID, SCID, [token], Length (1-byte varint) and `length`
    /// bytes of packet number and payload (0xaa).
    static func long(
        _ first: UInt8, version: [UInt8] = v1, dcid: [UInt8] = dcid, scid: [UInt8] = scid, token: [UInt8]? = nil,
        length: Int = 32
    ) -> [UInt8] {
        precondition(length < 64)
        var p: [UInt8] = [first] + version + [UInt8(dcid.count)] + dcid + [UInt8(scid.count)] + scid
        if let token { p += [UInt8(token.count)] + token }
        p += [UInt8(length)] + [UInt8](repeating: 0xaa, count: length)
        return p
    }

    /// Initial v1: 1 + 4 + 1 + 8 + 1 + 4 + 1 (token length 0) + 1 (Length) + 32 = 53 bytes; pnOffset 21.
    static let initial = long(0xc0, token: [])
    /// Handshake v1: type bits 10 → 0xe0; no token: 52 bytes; pnOffset 20 from its start.
    static let handshake = long(0xe0)
    /// 1-RTT: 0x40 (fixed bit), the 8-byte DCID, 20 bytes: 29 bytes; pnOffset 9 from its start.
    static let oneRTT: [UInt8] = [0x40] + dcid + [UInt8](repeating: 0xbb, count: 20)

    static func read(_ bytes: [UInt8], end: Int? = nil, version: QUICVersion = .v1, shortDCIDLength: Int? = nil)
        -> QUICDatagramPackets?
    {
        bytes.withUnsafeBytes {
            QUICDatagramPackets.read($0, end: end ?? bytes.count, version: version, shortDCIDLength: shortDCIDLength)
        }
    }

    @Test func coalescedInitialHandshakeAndOneRTT() throws {
        #expect(Self.initial.count == 53)
        #expect(Self.handshake.count == 52)
        let datagram = Self.initial + Self.handshake + Self.oneRTT  // 53 + 52 + 29 = 134
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 3)
        #expect(result.paddingBytes == 0)
        #expect(result.packets.map(\.type) == [.initial, .handshake, .oneRTT])
        #expect(result.packets.map(\.start) == [0, 53, 105])
        #expect(result.packets.map(\.end) == [53, 105, 134])
        #expect(result.packets.map(\.pnOffset) == [21, 73, 114])
        #expect(result.packets.map(\.truncated) == [false, false, false])
        // DCID at 6..<14 (after first byte, version, length); SCID at 15..<19.
        #expect(result.packets[0].dcid == 6..<14)
        #expect(result.packets[0].scid == 15..<19)
        #expect(result.packets[0].token == 20..<20)
        #expect(result.packets[1].dcid == 59..<67)
        // The short header's DCID: its length is the first packet's.
        #expect(result.packets[2].dcid == 106..<114)
        #expect(result.packets.allSatisfy { $0.version == .v1 })
    }

    @Test func trailingZerosArePadding() throws {
        let datagram = Self.initial + [UInt8](repeating: 0, count: 47)  // 100 bytes
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 1)
        #expect(result.paddingBytes == 47)
        #expect(result.packets[0].end == 53)
    }

    @Test func paddingPastTheCapturedBytesCounts() throws {
        // The UDP payload is 1200 bytes, the capture kept 60: 1200 − 53 = 1147 bytes of padding.
        let datagram = Self.initial + [UInt8](repeating: 0, count: 7)
        let result = try #require(Self.read(datagram, end: 1200))
        #expect(result.packets.count == 1)
        #expect(result.paddingBytes == 1147)
    }

    @Test func aCoalescedPacketWithAnotherDCIDIsPadding() throws {
        let other = Self.long(0xe0, dcid: [1, 2, 3, 4, 5, 6, 7, 8])
        let datagram = Self.initial + other  // 53 + 52
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 1)
        #expect(result.paddingBytes == 52)
    }

    @Test func garbageAfterAPacketIsPadding() throws {
        // 0x30 reads as a short header whose 8 DCID bytes (the first packet's DCID length) are not the first
        // packet's DCID: another connection's, or garbage: padding.
        let datagram = Self.initial + [0x30, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 1)
        #expect(result.paddingBytes == 10)
    }

    @Test func versionNegotiation() throws {
        // First byte 0x8a (long form, unused bits), version 0, DCID 4 bytes, SCID 8 bytes, versions v1 and v2:
        // 1 + 4 + 1 + 4 + 1 + 8 + 8 = 27 bytes.
        let datagram: [UInt8] = [0x8a, 0, 0, 0, 0, 4, 1, 2, 3, 4, 8] + Self.dcid + Self.v1 + Self.v2
        #expect(datagram.count == 27)
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 1)
        let header = result.packets[0]
        #expect(header.type == .versionNegotiation)
        #expect(header.version == .negotiation)
        #expect(header.dcid == 6..<10)
        #expect(header.scid == 11..<19)
        #expect(header.end == 27)
        #expect(result.paddingBytes == 0)
    }

    @Test func retryFromRFC9001A4() throws {
        // ff 00000001 00 08 f067a5502a4262b5 "token" tag(16): token at 1 + 4 + 1 + 0 + 1 + 8 = 15 ..< 20; 36 bytes.
        let result = try #require(Self.read(RFCVectors.retry))
        #expect(RFCVectors.retry.count == 36)
        #expect(result.packets.count == 1)
        let header = result.packets[0]
        #expect(header.type == .retry)
        #expect(header.dcid == 6..<6)
        #expect(header.scid == 7..<15)
        #expect(header.token == 15..<20)
        #expect(Array(RFCVectors.retry[header.token]) == Array("token".utf8))
        #expect(header.end == 36)
        #expect(!header.truncated)
    }

    @Test func aRetryShorterThanItsTagIsNoPacket() {
        // SCID then 15 bytes: no room for the 16-byte integrity tag.
        let datagram = Array(RFCVectors.retry.prefix(15)) + [UInt8](repeating: 0, count: 15)
        #expect(Self.read(datagram) == nil)
    }

    @Test func v2TypeBits() throws {
        // RFC 9369 §3.2: Initial 0b01, 0-RTT 0b10, Handshake 0b11, Retry 0b00.
        let initial = Self.long(0xd0, version: Self.v2, token: [0x61, 0x62, 0x63])
        let result = try #require(Self.read(initial))
        #expect(result.packets.count == 1)
        let header = result.packets[0]
        #expect(header.type == .initial)
        #expect(header.version == .v2)
        // Token length at 19, token 20..<23, Length at 23, packet number at 24; 1 + 32 bytes after it.
        #expect(header.token == 20..<23)
        #expect(header.pnOffset == 24)
        #expect(header.end == 56)
        #expect(try #require(Self.read(Self.long(0xe0, version: Self.v2))).packets[0].type == .zeroRTT)
        #expect(try #require(Self.read(Self.long(0xf0, version: Self.v2))).packets[0].type == .handshake)
        // 0xc0 in v2 is a Retry: the rest to the end is token and tag.
        let retry = try #require(Self.read(Self.long(0xc0, version: Self.v2)))
        #expect(retry.packets[0].type == .retry)
        #expect(retry.packets[0].token == 19..<(52 - 16))
        // The same bits in v1: 0xd0 is 0-RTT, 0xf0 Retry.
        #expect(try #require(Self.read(Self.long(0xd0))).packets[0].type == .zeroRTT)
        #expect(try #require(Self.read(Self.long(0xf0))).packets[0].type == .retry)
    }

    @Test func aLengthPastTheDatagramIsTruncatedAndCountedToTheEnd() throws {
        // Initial with Length 0x4100 = 256 (2-byte varint) but only 40 bytes follow: 1+4+1+8+1+4+1+2 + 40 = 62.
        let datagram: [UInt8] =
            [0xc0] + Self.v1 + [8] + Self.dcid + [4] + Self.scid + [0, 0x41, 0x00] + [UInt8](repeating: 0xaa, count: 40)
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 1)
        #expect(result.packets[0].truncated)
        #expect(result.packets[0].end == 62)
        #expect(result.packets[0].pnOffset == 22)
        #expect(result.paddingBytes == 0)
    }

    @Test func aLengthTooShortForATagIsTruncated() throws {
        // Length 19: under the 1-byte packet number + 16-byte tag + the 4 bytes header protection samples from.
        let result = try #require(Self.read(Self.long(0xe0, length: 19)))
        #expect(result.packets[0].truncated)
        #expect(result.packets[0].end == 1 + 4 + 1 + 8 + 1 + 4 + 1 + 19)
        #expect(!(try #require(Self.read(Self.long(0xe0, length: 20)))).packets[0].truncated)
    }

    @Test func aSnaplenCutPacketIsTruncated() throws {
        // The UDP payload is 53 bytes, 40 captured.
        let result = try #require(Self.read(Array(Self.initial.prefix(40)), end: 53))
        #expect(result.packets.count == 1)
        #expect(result.packets[0].truncated)
        #expect(result.packets[0].end == 53)
    }

    @Test func unknownVersionFillsTheDatagram() throws {
        let datagram = Self.long(0xc0, version: [0x1a, 0x2a, 0x3a, 0x4a]) + Self.handshake
        let result = try #require(Self.read(datagram))
        #expect(result.packets.count == 1)
        #expect(result.packets[0].version == QUICVersion(rawValue: 0x1a2a_3a4a))
        #expect(result.packets[0].end == datagram.count)
        #expect(!result.packets[0].version.isKnown)
        #expect(result.paddingBytes == 0)
    }

    @Test func shortHeaderNeedsItsDCIDLength() throws {
        // Without a known DCID length a short header is not read.
        #expect(Self.read(Self.oneRTT) == nil)
        let result = try #require(Self.read(Self.oneRTT, shortDCIDLength: 8))
        #expect(result.packets.count == 1)
        #expect(result.packets[0].type == .oneRTT)
        #expect(result.packets[0].dcid == 1..<9)
        #expect(result.packets[0].pnOffset == 9)
        #expect(result.packets[0].end == 29)
        // A DCID longer than the packet: not a packet.
        #expect(Self.read([0x40, 1, 2], shortDCIDLength: 8) == nil)
    }

    @Test func knownVersionsRejectConnectionIDsOver20Bytes() {
        let long21 = [UInt8](repeating: 7, count: 21)
        #expect(Self.read(Self.long(0xe0, dcid: long21)) == nil)
        #expect(Self.read(Self.long(0xe0, scid: long21)) == nil)
        // Unknown versions may use up to 255 (RFC 8999 §5.1).
        #expect(Self.read(Self.long(0xc0, version: [0x1a, 0x2a, 0x3a, 0x4a], dcid: long21))?.packets.count == 1)
    }

    @Test func emptyAndTinyDatagramsAreNoPackets() {
        #expect(Self.read([]) != nil && Self.read([])!.packets.isEmpty)
        #expect(Self.read([0xc0]) == nil)
        #expect(Self.read([0xc0, 0, 0, 0, 1]) == nil)
        #expect(Self.read([0xc0, 0, 0, 0, 1, 8, 1, 2]) == nil)
    }
}
