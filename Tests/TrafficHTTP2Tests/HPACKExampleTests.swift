import Testing

@testable import TrafficHTTP2

/// RFC 7541 Appendix C: every example block, decoded in sequence on one decoder as the RFC does, with the
/// representation bytes of each field counted by hand from the RFC's annotated dumps, and the dynamic table
/// checked both by its size and by referencing its entries from a later block.
@Suite struct HPACKExampleTests {
    /// Decodes `probe` (indexed references) on a copy of `decoder`, so the table is looked at without changing it.
    static func entries(of decoder: HPACKDecoder, _ indices: [UInt8]) -> [DecodedField] {
        var copy = decoder
        return copy.fields(indices.map { 0x80 | $0 })
    }

    // C.1: integers. 10 in a 5-bit prefix is one octet; 1337 takes the prefix (31) and two continuation octets
    // (1306 = 26 + 10·128); 42 at an octet boundary (8-bit prefix) is one octet.
    @Test func integerRepresentationExamples() throws {
        func read(_ bytes: [UInt8], prefixBits: Int) throws -> (Int, Int) {
            try bytes.withUnsafeBytes { raw in
                var reader = HPACKBlockReader(raw)
                return (try reader.readInteger(prefixBits: prefixBits), reader.position)
            }
        }
        #expect(try read([0b1110_1010], prefixBits: 5) == (10, 1))
        #expect(try read([0b0001_1111, 0b1001_1010, 0b0000_1010], prefixBits: 5) == (1337, 3))
        #expect(try read([0b0010_1010], prefixBits: 8) == (42, 1))
    }

    // C.2.1: 40 | 0a "custom-key" | 0d "custom-header": 1 + 1 + 10 + 1 + 13 = 26 octets; table size 55.
    @Test func literalWithIndexing() {
        var decoder = HPACKDecoder()
        let block = hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")
        #expect(
            decoder.fields(block) == [
                DecodedField("custom-key", "custom-header", bytes: 26, kind: .incrementalIndexing)
            ])
        #expect(decoder.dynamicTableSize == 55)
        #expect(
            Self.entries(of: decoder, [62]) == [DecodedField("custom-key", "custom-header", bytes: 1, kind: .indexed)])
    }

    // C.2.2: 04 (name index 4, :path) | 0c "/sample/path": 1 + 1 + 12 = 14 octets; the table stays empty.
    @Test func literalWithoutIndexing() {
        var decoder = HPACKDecoder()
        let block = hex("040c 2f73 616d 706c 652f 7061 7468")
        #expect(decoder.fields(block) == [DecodedField(":path", "/sample/path", bytes: 14, kind: .withoutIndexing)])
        #expect(decoder.dynamicTableSize == 0)
        #expect(decoder.run([0x80 | 62]).error == .invalidIndex)
    }

    // C.2.3: 10 | 08 "password" | 06 "secret": 1 + 1 + 8 + 1 + 6 = 17 octets; never indexed, table empty.
    @Test func literalNeverIndexed() {
        var decoder = HPACKDecoder()
        let block = hex("1008 7061 7373 776f 7264 0673 6563 7265 74")
        #expect(decoder.fields(block) == [DecodedField("password", "secret", bytes: 17, kind: .neverIndexed)])
        #expect(decoder.dynamicTableCount == 0)
    }

    // C.2.4: 82, static index 2.
    @Test func indexedField() {
        var decoder = HPACKDecoder()
        #expect(decoder.fields([0x82]) == [DecodedField(":method", "GET", bytes: 1, kind: .indexed)])
        #expect(decoder.dynamicTableCount == 0)
    }

    /// The three requests of C.3 (raw) and C.4 (Huffman): the same fields, differently sized literals.
    @Test(arguments: [
        (
            [
                hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
                hex("8286 84be 5808 6e6f 2d63 6163 6865"),
                hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"),
            ],
            // 41 | 0f "www.example.com" = 17; 58 | 08 "no-cache" = 10; 40 | 0a … | 0c … = 25.
            [17, 10, 25]
        ),
        (
            [
                hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
                hex("8286 84be 5886 a8eb 1064 9cbf"),
                hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"),
            ],
            // 41 | 8c + 12 Huffman octets = 14; 58 | 86 + 6 = 8; 40 | 88 + 8 | 89 + 9 = 20.
            [14, 8, 20]
        ),
    ])
    func requests(blocks: [[UInt8]], literalBytes: [Int]) {
        var decoder = HPACKDecoder()

        let first = decoder.fields(blocks[0])
        #expect(
            first == [
                DecodedField(":method", "GET", bytes: 1, kind: .indexed),
                DecodedField(":scheme", "http", bytes: 1, kind: .indexed),
                DecodedField(":path", "/", bytes: 1, kind: .indexed),
                DecodedField(":authority", "www.example.com", bytes: literalBytes[0], kind: .incrementalIndexing),
            ])
        #expect(first.reduce(0) { $0 + $1.representationBytes } == blocks[0].count)
        // :authority www.example.com = 10 + 15 + 32.
        #expect(decoder.dynamicTableSize == 57)

        let second = decoder.fields(blocks[1])
        #expect(
            second == [
                DecodedField(":method", "GET", bytes: 1, kind: .indexed),
                DecodedField(":scheme", "http", bytes: 1, kind: .indexed),
                DecodedField(":path", "/", bytes: 1, kind: .indexed),
                DecodedField(":authority", "www.example.com", bytes: 1, kind: .indexed),
                DecodedField("cache-control", "no-cache", bytes: literalBytes[1], kind: .incrementalIndexing),
            ])
        #expect(second.reduce(0) { $0 + $1.representationBytes } == blocks[1].count)
        #expect(decoder.dynamicTableSize == 110)

        let third = decoder.fields(blocks[2])
        #expect(
            third == [
                DecodedField(":method", "GET", bytes: 1, kind: .indexed),
                DecodedField(":scheme", "https", bytes: 1, kind: .indexed),
                DecodedField(":path", "/index.html", bytes: 1, kind: .indexed),
                DecodedField(":authority", "www.example.com", bytes: 1, kind: .indexed),
                DecodedField("custom-key", "custom-value", bytes: literalBytes[2], kind: .incrementalIndexing),
            ])
        #expect(third.reduce(0) { $0 + $1.representationBytes } == blocks[2].count)
        #expect(decoder.dynamicTableSize == 164)
        #expect(
            Self.entries(of: decoder, [62, 63, 64]) == [
                DecodedField("custom-key", "custom-value", bytes: 1, kind: .indexed),
                DecodedField("cache-control", "no-cache", bytes: 1, kind: .indexed),
                DecodedField(":authority", "www.example.com", bytes: 1, kind: .indexed),
            ])
        #expect(decoder.run([0x80 | 65]).error == .invalidIndex)
    }

    /// The three responses of C.5 (raw) and C.6 (Huffman), with SETTINGS_HEADER_TABLE_SIZE 256 so that entries
    /// are evicted.
    @Test(arguments: [
        (
            [
                hex(
                    """
                    4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a
                    3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
                    """),
                hex("4803 3330 37c1 c0bf"),
                hex(
                    """
                    88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04
                    677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49
                    553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31
                    """),
            ],
            // First: 48 03 "302" = 5; 58 07 "private" = 9; 61 1d + 29 = 31; 6e 17 + 23 = 25.
            // Second: 48 03 "307" = 5. Third: 61 1d + 29 = 31; 5a 04 "gzip" = 6; 77 38 + 56 = 58.
            [5, 9, 31, 25, 5, 31, 6, 58]
        ),
        (
            [
                hex(
                    """
                    4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e
                    919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3
                    """),
                hex("4883 640e ffc1 c0bf"),
                hex(
                    """
                    88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7
                    821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed
                    4ee5 b106 3d50 07
                    """),
            ],
            // First: 48 82 + 2 = 4; 58 85 + 5 = 7; 61 96 + 22 = 24; 6e 91 + 17 = 19.
            // Second: 48 83 + 3 = 5. Third: 61 96 + 22 = 24; 5a 83 + 3 = 5; 77 ad + 45 = 47.
            [4, 7, 24, 19, 5, 24, 5, 47]
        ),
    ])
    func responses(blocks: [[UInt8]], literalBytes: [Int]) {
        var decoder = HPACKDecoder()
        decoder.setTableSizeLimit(256)
        #expect(decoder.dynamicTableMaxSize == 256)
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT"
        let date2 = "Mon, 21 Oct 2013 20:13:22 GMT"
        let location = "https://www.example.com"
        let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"

        let first = decoder.fields(blocks[0])
        #expect(
            first == [
                DecodedField(":status", "302", bytes: literalBytes[0], kind: .incrementalIndexing),
                DecodedField("cache-control", "private", bytes: literalBytes[1], kind: .incrementalIndexing),
                DecodedField("date", date1, bytes: literalBytes[2], kind: .incrementalIndexing),
                DecodedField("location", location, bytes: literalBytes[3], kind: .incrementalIndexing),
            ])
        #expect(first.reduce(0) { $0 + $1.representationBytes } == blocks[0].count)
        // 42 + 52 + 65 + 63.
        #expect(decoder.dynamicTableSize == 222)

        // :status 307 (42) does not fit beside 222 in 256: the oldest entry, :status 302, goes.
        let second = decoder.fields(blocks[1])
        #expect(
            second == [
                DecodedField(":status", "307", bytes: literalBytes[4], kind: .incrementalIndexing),
                DecodedField("cache-control", "private", bytes: 1, kind: .indexed),
                DecodedField("date", date1, bytes: 1, kind: .indexed),
                DecodedField("location", location, bytes: 1, kind: .indexed),
            ])
        #expect(second.reduce(0) { $0 + $1.representationBytes } == blocks[1].count)
        #expect(decoder.dynamicTableSize == 222)
        #expect(
            Self.entries(of: decoder, [62, 63, 64, 65]).map(\.value) == [
                Array("307".utf8), Array(location.utf8), Array(date1.utf8), Array("private".utf8),
            ])

        let third = decoder.fields(blocks[2])
        #expect(
            third == [
                DecodedField(":status", "200", bytes: 1, kind: .indexed),
                DecodedField("cache-control", "private", bytes: 1, kind: .indexed),
                DecodedField("date", date2, bytes: literalBytes[5], kind: .incrementalIndexing),
                DecodedField("location", location, bytes: 1, kind: .indexed),
                DecodedField("content-encoding", "gzip", bytes: literalBytes[6], kind: .incrementalIndexing),
                DecodedField("set-cookie", cookie, bytes: literalBytes[7], kind: .incrementalIndexing),
            ])
        #expect(third.reduce(0) { $0 + $1.representationBytes } == blocks[2].count)
        // 98 + 52 + 65: set-cookie, content-encoding, date.
        #expect(decoder.dynamicTableSize == 215)
        #expect(
            Self.entries(of: decoder, [62, 63, 64]) == [
                DecodedField("set-cookie", cookie, bytes: 1, kind: .indexed),
                DecodedField("content-encoding", "gzip", bytes: 1, kind: .indexed),
                DecodedField("date", date2, bytes: 1, kind: .indexed),
            ])
        #expect(decoder.run([0x80 | 65]).error == .invalidIndex)
    }
}
