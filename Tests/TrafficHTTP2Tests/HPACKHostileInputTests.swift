import Testing

@testable import TrafficHTTP2

/// Inputs built to break a decoder: each gives a clear error (or a bounded, blind decode), never a trap.
@Suite struct HPACKHostileInputTests {
    @Test(arguments: [
        // Indexed field, 2^31 = 127 + continuation 0x7fff_ff81: just past the limit.
        ("ff81 ffff ff07", HPACKError.integerOverflow),
        // Far past it.
        ("ffff ffff ffff ff0f", .integerOverflow),
        // A small value padded with continuation zeros to 6 octets.
        ("ff80 8080 8080 00", .integerOverflow),
        // The integer ends with the block.
        ("ff", .truncated),
        ("ff80", .truncated),
        // Index 0 (§6.1), and 62 with an empty dynamic table.
        ("80", .invalidIndex),
        ("be", .invalidIndex),
        // Literal names by index: 62 (incremental, 6-bit prefix), 0x10+... (never indexed, 4-bit prefix).
        ("7e 0161", .invalidIndex),
        ("1f 2f 0161", .invalidIndex),
        // A literal that stops early: the pattern only, a name length past the end, a missing value.
        ("40", .truncated),
        ("4003 6162", .truncated),
        ("4001 61", .truncated),
        ("0f", .truncated),
        // A string length of 2^31-1 (127 + 0x7fff_ff80): a valid integer, but past the block.
        ("407f 80ff ffff 07", .truncated),
        // Huffman: EOS in a name; padding with zeros in a value; 11 bits of padding.
        ("4084 ffff ffff 0161", .invalidHuffman),
        ("4181 18", .invalidHuffman),
        ("4182 1fff", .invalidHuffman),
        // Size update to 4097 above the default limit 4096: 31 + 0x62 + 0x1f·128.
        ("3fe2 1f", .tableSizeAboveLimit),
        // Size update after a field (§4.2).
        ("8220", .tableSizeUpdateAfterField),
        ("20 82 20", .tableSizeUpdateAfterField),
    ])
    func malformedBlock(block: String, error: HPACKError) {
        var decoder = HPACKDecoder()
        #expect(decoder.run(hex(block)).error == error)
        #expect(decoder.isBlind)
        #expect(!error.message.isEmpty)
    }

    @Test func theLargestIntegerIsAccepted() {
        var decoder = HPACKDecoder()
        decoder.setTableSizeLimit(Int(UInt32.max))
        // Size update to 2^31-1: 31 + 0x7fff_ffe0.
        let block = hpackInteger(Int(Int32.max), prefixBits: 5, pattern: 0x20)
        #expect(block == hex("3fe0 ffff ff07"))
        #expect(decoder.run(block).error == nil)
        #expect(decoder.dynamicTableMaxSize == Int(Int32.max))
    }

    @Test func sizeUpdatesOpenABlock() {
        var decoder = HPACKDecoder()
        // Two updates (§4.2: the smallest, then the final one) and then fields.
        #expect(decoder.fields([0x20, 0x3f, 0xe1, 0x1f, 0x82]).count == 1)
        #expect(decoder.dynamicTableMaxSize == 4096)
        // Shrinking evicts: C.3.1 adds 57 octets; a maximum of 56 drops the entry.
        _ = decoder.fields(hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"))
        #expect(decoder.dynamicTableSize == 57)
        _ = decoder.fields([0x3f, 0x19])
        #expect(decoder.dynamicTableMaxSize == 56)
        #expect(decoder.dynamicTableCount == 0)
    }

    @Test func loweringTheSettingEvicts() {
        var decoder = HPACKDecoder()
        _ = decoder.fields(hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"))
        decoder.setTableSizeLimit(100)
        #expect(decoder.dynamicTableMaxSize == 100)
        #expect(decoder.dynamicTableCount == 1)
        decoder.setTableSizeLimit(50)
        #expect(decoder.dynamicTableCount == 0)
        // Raising it does not grow the table: only the encoder's size update does.
        decoder.setTableSizeLimit(8192)
        #expect(decoder.dynamicTableMaxSize == 50)
        #expect(decoder.run(hpackInteger(8192, prefixBits: 5, pattern: 0x20)).error == nil)
        #expect(decoder.run(hpackInteger(8193, prefixBits: 5, pattern: 0x20)).error == .tableSizeAboveLimit)
    }

    // §4.4: an entry larger than the table empties it and is not added; that is no error.
    @Test func anEntryLargerThanTheTableEmptiesIt() {
        var decoder = HPACKDecoder()
        _ = decoder.fields(hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"))
        let value = [UInt8](repeating: 0x61, count: 5000)
        let block = [0x40] + hpackString("x-big") + hpackString(value)
        let fields = decoder.fields(block)
        #expect(fields.count == 1 && fields[0].value == value)
        #expect(decoder.dynamicTableCount == 0)
        #expect(!decoder.isBlind)
    }

    // §4.4: a new entry may name an entry its insertion evicts; the name must survive.
    @Test func anEntryMayNameTheEntryItEvicts() {
        var decoder = HPACKDecoder()
        // Maximum size 60: one entry at a time.
        _ = decoder.fields([0x3f, 0x1d])
        _ = decoder.fields([0x40] + hpackString("x-name") + hpackString("one"))  // 6 + 3 + 32 = 41
        // 7e: incremental, name index 62 (x-name), value "two" evicts x-name: one.
        #expect(
            decoder.fields([0x7e] + hpackString("two")) == [
                DecodedField("x-name", "two", bytes: 5, kind: .incrementalIndexing)
            ])
        #expect(decoder.fields([0xbe]) == [DecodedField("x-name", "two", bytes: 1, kind: .indexed)])
        #expect(decoder.dynamicTableCount == 1)
    }

    /// SETTINGS_HEADER_TABLE_SIZE 2^32-1, a size update to 2^31-1, then large entries: the table grows to the
    /// storage limit, then the decoder goes blind instead of storing more; fields are still all visited.
    @Test func tableSizeAbuseStaysWithinTheStorageLimit() {
        var decoder = HPACKDecoder(limits: HPACKLimits(maxStoredTableBytes: 1 << 20))
        decoder.setTableSizeLimit(Int(UInt32.max))
        let value = [UInt8](repeating: 0x7a, count: 300_000)
        var block = hpackInteger(Int(Int32.max), prefixBits: 5, pattern: 0x20)
        for i in 0..<3 { block += [0x40] + hpackString("x-\(i)") + hpackString(value) }
        _ = decoder.fields(block)
        #expect(decoder.dynamicTableCount == 3)
        #expect(!decoder.isBlind)
        // The fourth would make 4 × 300 035 > 1 MiB.
        let fourth = decoder.fields([0x40] + hpackString("x-3") + hpackString(value))
        #expect(fourth.count == 1 && fourth[0].value == value)
        #expect(decoder.isBlind)
        #expect(decoder.blindReason == .tableAboveStorageLimit)
        #expect(decoder.dynamicTableSize == 0)
        #expect(decoder.fields([0xbe]) == [DecodedField(nil, nil, bytes: 1, kind: .indexed)])
    }

    /// Empty entries cost 32 each (§4.1): a flood of them hits the storage limit too, rather than growing the
    /// entry index without bound.
    @Test func aFloodOfEmptyEntriesIsBounded() {
        var decoder = HPACKDecoder(limits: HPACKLimits(maxStoredTableBytes: 64 * 1024))
        decoder.setTableSizeLimit(Int(UInt32.max))
        var block = hpackInteger(Int(Int32.max), prefixBits: 5, pattern: 0x20)
        // 40 00 00: a literal with an empty name and value, 3 octets.
        for _ in 0..<3000 { block += [0x40, 0x00, 0x00] }
        let decoded = decoder.run(block)
        #expect(decoded.error == nil)
        #expect(decoded.fields.count == 3000)
        #expect(decoded.representationBytes == 3000 * 3)
        #expect(decoder.blindReason == .tableAboveStorageLimit)
    }

    /// Thousands of references to a 4 KiB entry decode to hundreds of megabytes, which are only visited.
    @Test func aBlockThatDecodesToMegabytes() {
        var decoder = HPACKDecoder()
        decoder.setTableSizeLimit(8192)
        let value = [UInt8](repeating: 0x76, count: 4096)
        _ = decoder.fields([0x3f, 0xe1, 0x3f] + [0x40] + hpackString("x-big") + hpackString(value))
        #expect(decoder.dynamicTableCount == 1)
        let references = 100_000
        let block = [UInt8](repeating: 0xbe, count: references)
        var visited = 0
        var decodedOctets = 0
        block.withUnsafeBytes { bytes in
            do throws(HPACKError) {
                try decoder.decode(block: bytes) { field in
                    visited += 1
                    decodedOctets += (field.name?.count ?? 0) + (field.value?.count ?? 0)
                }
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect(visited == references)
        #expect(decodedOctets == references * (5 + 4096))
        // No field was copied anywhere: the scratch buffer was never needed.
        #expect(decoder.scratchCapacity == 0)
    }

    /// A huge Huffman literal needs scratch memory for its block only.
    @Test func aHugeLiteralDoesNotPinScratchMemory() {
        var decoder = HPACKDecoder()
        // 'a' is 00011: 8 of them in 5 octets; 200 000 octets of code decode to 320 000 'a's.
        let code = [UInt8]([0x18, 0xc6, 0x31, 0x8c, 0x63].repeated(40_000))
        let block = [0x00] + hpackString("x-huge") + hpackInteger(code.count, prefixBits: 7, pattern: 0x80) + code
        let fields = decoder.fields(block)
        #expect(fields.first?.value?.count == 320_000)
        #expect(fields.first?.value?.allSatisfy { $0 == 0x61 } == true)
        #expect(decoder.scratchCapacity <= HPACKDecoder.keptScratchBytes)
        // Ordinary strings keep theirs.
        _ = decoder.fields(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"))
        #expect(decoder.scratchCapacity > 0 && decoder.scratchCapacity <= HPACKDecoder.keptScratchBytes)
    }
}

extension Array {
    fileprivate func repeated(_ times: Int) -> [Element] { (0..<times).flatMap { _ in self } }
}
