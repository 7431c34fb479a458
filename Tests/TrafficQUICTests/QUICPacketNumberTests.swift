import Testing

@testable import TrafficQUIC

/// RFC 9000 §17.1 and Appendix A.3: the full packet number from its truncated encoding and the largest one
/// received so far. The candidate lies in the window (expected − window/2, expected + window/2], where
/// expected = largest + 1.
@Suite struct QUICPacketNumberTests {
    static func decode(_ largest: Int64, _ truncated: UInt64, bits: Int) -> UInt64 {
        QUICConnection.decodePacketNumber(largest: largest, truncated: truncated, bits: bits)
    }

    @Test func rfc9000AppendixA3Example() {
        // "if the highest successfully authenticated packet had a packet number of 0xa82f30ea, then a packet
        // containing a 16-bit value of 0x9b32 will be decoded as 0xa82f9b32."
        #expect(Self.decode(0xa82f_30ea, 0x9b32, bits: 16) == 0xa82f_9b32)
    }

    @Test func firstPacketWithNoneBefore() {
        // largest −1: expected 0, window 256, half 128. Truncated 0 → 0.
        #expect(Self.decode(-1, 0, bits: 8) == 0)
        // Truncated 0xff: candidate 0xff > 0 + 128, but 0xff < window so it cannot go down → 0xff.
        #expect(Self.decode(-1, 0xff, bits: 8) == 0xff)
        // The RFC 9001 A.2 client Initial: packet number 2 in 4 bytes.
        #expect(Self.decode(-1, 2, bits: 32) == 2)
        // RFC 9001 A.5: 654360564 = 0x2700bff4 sent as 0x00bff4 (24 bits) is decoded as 0xbff4 = 49140 when
        // nothing came before: expected 0, candidate 0x00bff4 ≤ 0 + 2^23.
        #expect(Self.decode(-1, 0x00bff4, bits: 24) == 49140)
    }

    @Test func wrapsUpPastTheWindow() {
        // largest 0x1fe: expected 0x1ff; truncated 0x02 (8 bits): candidate (0x1ff & ~0xff) | 0x02 = 0x102;
        // 0x102 ≤ 0x1ff − 0x80 = 0x17f → + 0x100 = 0x202.
        #expect(Self.decode(0x1fe, 0x02, bits: 8) == 0x202)
        // 32 bits: largest 0xfffffffe, expected 0xffffffff; truncated 1 → candidate 1 ≤ 0xffffffff − 2^31 →
        // 1 + 2^32 = 0x1_0000_0001.
        #expect(Self.decode(0xffff_fffe, 1, bits: 32) == 0x1_0000_0001)
    }

    @Test func wrapsDownForALatePacket() {
        // largest 0x200: expected 0x201; truncated 0xfe: candidate 0x200 | 0xfe = 0x2fe > 0x201 + 0x80 = 0x281
        // and ≥ 0x100 → 0x2fe − 0x100 = 0x1fe.
        #expect(Self.decode(0x200, 0xfe, bits: 8) == 0x1fe)
        // 16 bits: largest 0x12345, expected 0x12346; truncated 0xfffe: candidate 0x1fffe > 0x12346 + 0x8000
        // → 0x1fffe − 0x10000 = 0xfffe.
        #expect(Self.decode(0x12345, 0xfffe, bits: 16) == 0xfffe)
    }

    @Test func windowEdges() {
        // largest 0x17f: expected 0x180, half 0x80. Truncated 0x00: candidate 0x100 = expected − half, which
        // the RFC moves up (candidate <= expected − half) → 0x200 = expected + half, the window's top.
        #expect(Self.decode(0x17f, 0x00, bits: 8) == 0x200)
        // Truncated 0x01: candidate 0x101 > expected − half: stays 0x101, the window's bottom.
        #expect(Self.decode(0x17f, 0x01, bits: 8) == 0x101)
        // Truncated 0x80: candidate 0x180 = expected.
        #expect(Self.decode(0x17f, 0x80, bits: 8) == 0x180)
    }

    @Test func neverPastTwoToThe62() {
        // largest 2^62 − 2: expected 2^62 − 1; truncated 0 (8 bits): candidate 2^62 − 256 is ≤ expected − 128
        // but not < 2^62 − 256, so it is not moved up past the largest packet number.
        let top: UInt64 = 1 << 62
        #expect(Self.decode(Int64(top - 2), 0, bits: 8) == top - 256)
        // Truncated 0xff: candidate 2^62 − 1 = expected.
        #expect(Self.decode(Int64(top - 2), 0xff, bits: 8) == top - 1)
    }
}
