import Testing

@testable import TrafficHTTP3

/// RFC 9204 Appendix B, run in order on one decoder pair (the examples share the table), the encoder bytes and
/// field sections copied from the RFC. The SETTINGS_QPACK_MAX_TABLE_CAPACITY of the examples is 220 (B.2 sets
/// the capacity to it): MaxEntries = 220 / 32 = 6, so Required Insert Counts are encoded modulo 12.
@Suite struct QPACKExampleTests {
    @Test func appendixB() throws {
        let decoder = QPACKDecoder(maxTableCapacity: 220)

        // B.1 Literal Field Line with Name Reference: RIC 0, Base 0, then 0x51 (static, index 1 = :path) and the
        // 11-octet literal value: 1 + 1 + 11 = 13 octets.
        var (outcome, fields) = try decoder.decode(hex("0000 510b 2f69 6e64 6578 2e68 746d 6c"))
        #expect(outcome == .decoded(complete: true))
        #expect(fields == [field(":path", "/index.html", 13)])

        // B.2 Dynamic Table: capacity 220, two inserts with static name references.
        let b2Section = hex("0381 10 11")
        // Before the encoder stream: RIC 2 > 0 inserts, blocked.
        (outcome, fields) = try decoder.decode(b2Section)
        #expect(outcome == .blocked)
        #expect(fields.isEmpty)
        try decoder.feed(hex("3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d c10c 2f73 616d 706c 652f 7061 7468"))
        #expect(decoder.insertCount == 2)
        #expect(decoder.tableCapacity == 220)
        // (10 + 15 + 32) + (5 + 12 + 32) = 57 + 49 = 106.
        #expect(decoder.tableSize == 106)
        // 0x03: RIC 2; 0x81: S = 1, Delta Base 1, Base = 2 - 1 - 1 = 0; post-base indices 0 and 1, one octet each.
        (outcome, fields) = try decoder.decode(b2Section)
        #expect(outcome == .decoded(complete: true))
        #expect(fields == [field(":authority", "www.example.com", 1), field(":path", "/sample/path", 1)])

        // B.3 Speculative Insert: Insert With Literal Name custom-key=custom-value (10 + 12 + 32 = 54).
        try decoder.feed(hex("4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565"))
        #expect(decoder.insertCount == 3)
        #expect(decoder.tableSize == 160)

        // B.4 Duplicate relative index 2 = absolute 3 - 2 - 1 = 0 (:authority=www.example.com, 57): 217.
        try decoder.feed(hex("02"))
        #expect(decoder.insertCount == 4)
        #expect(decoder.tableSize == 217)
        // RIC 4 (encoded 5), Base 4: 0x80 = dynamic 4 - 0 - 1 = 3; 0xc1 = static 1 (:path /); 0x81 = dynamic 2.
        (outcome, fields) = try decoder.decode(hex("0500 80 c1 81"))
        #expect(outcome == .decoded(complete: true))
        #expect(
            fields == [
                field(":authority", "www.example.com", 1), field(":path", "/", 1), field("custom-key", "custom-value", 1),
            ])

        // B.5 Insert with dynamic name reference, relative 1 = absolute 4 - 1 - 1 = 2 (custom-key), value
        // custom-value2: 10 + 13 + 32 = 55; 217 + 55 = 272 > 220 evicts entry 0 (57): 215.
        try decoder.feed(hex("810d 6375 7374 6f6d 2d76 616c 7565 32"))
        #expect(decoder.insertCount == 5)
        #expect(decoder.tableSize == 215)
        // The new entry is absolute 4: RIC 5 (encoded 6), Base 5, 0x80 = 5 - 0 - 1 = 4.
        (outcome, fields) = try decoder.decode(hex("0600 80"))
        #expect(fields == [field("custom-key", "custom-value2", 1)])
        // Entry 0 was evicted: RIC 1 (encoded 2), Base 1, 0x80 = absolute 0.
        #expect(throws: QPACKError.invalidDynamicIndex) { _ = try decoder.decode(hex("0200 80")) }
    }

    /// Static table spot checks against RFC 9204 Appendix A: the first, the last and a few in between.
    @Test(arguments: [
        (0, ":authority", ""), (1, ":path", "/"), (5, "cookie", ""), (14, "set-cookie", ""), (17, ":method", "GET"),
        (25, ":status", "200"), (31, "accept-encoding", "gzip, deflate, br"), (63, ":status", "100"),
        (85, "content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"),
        (98, "x-frame-options", "sameorigin"),
    ])
    func staticTable(index: Int, name: String, value: String) throws {
        // Indexed field line, static: 0b11 + 6-bit index (63 and above continue in a second octet).
        let line: [UInt8] = index < 63 ? [0xc0 | UInt8(index)] : [0xff, UInt8(index - 63)]
        let (_, fields) = try QPACKDecoder(maxTableCapacity: 0).decode([0, 0] + line)
        #expect(fields == [field(name, value, line.count)])
    }
}
