import Testing

@testable import TrafficHTTP2

/// After a gap the dynamic table is unknown: blocks are still walked, sizes as sent stay exact, and what does
/// not depend on the table still decodes.
@Suite struct HPACKBlindTests {
    static let firstRequest = hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d")  // C.3.1
    static let secondRequest = hex("8286 84be 5808 6e6f 2d63 6163 6865")  // C.3.2

    @Test func aGapHidesDynamicReferencesOnly() {
        var decoder = HPACKDecoder()
        _ = decoder.fields(Self.firstRequest)
        decoder.loseState()
        #expect(decoder.isBlind)
        #expect(decoder.blindReason == .stateLost)
        #expect(
            decoder.fields(Self.secondRequest) == [
                DecodedField(":method", "GET", bytes: 1, kind: .indexed),
                DecodedField(":scheme", "http", bytes: 1, kind: .indexed),
                DecodedField(":path", "/", bytes: 1, kind: .indexed),
                // be: dynamic index 62, the :authority the first request added; unknown now, still one octet.
                DecodedField(nil, nil, bytes: 1, kind: .indexed),
                // 58 08 "no-cache": a static name and a literal value.
                DecodedField("cache-control", "no-cache", bytes: 10, kind: .incrementalIndexing),
            ])
        // cache-control was not stored: index 62 is still unknown rather than cache-control.
        #expect(decoder.fields([0xbe]) == [DecodedField(nil, nil, bytes: 1, kind: .indexed)])
        #expect(decoder.dynamicTableCount == 0)
        #expect(decoder.isBlind)
    }

    @Test func aLiteralWithADynamicNameKeepsItsValue() {
        var decoder = HPACKDecoder()
        decoder.loseState()
        // 7e: incremental indexing, name index 62 (dynamic) | 03 "abc". 0e: without indexing, name index 14
        // (:status 500, static) | 03 "204". 1f 2f: never indexed, name index 15 + 47 = 62 | 01 "x".
        let block = [0x7e, 0x03] + Array("abc".utf8) + [0x0e, 0x03] + Array("204".utf8) + [0x1f, 0x2f, 0x01, 0x78]
        #expect(
            decoder.fields(block) == [
                DecodedField(nil, "abc", bytes: 5, kind: .incrementalIndexing),
                DecodedField(":status", "204", bytes: 5, kind: .withoutIndexing),
                DecodedField(nil, "x", bytes: 4, kind: .neverIndexed),
            ])
    }

    @Test func blindDecodingStillRejectsMalformedBlocks() {
        var decoder = HPACKDecoder()
        decoder.loseState()
        // Any dynamic index is possible, but 0 never is, and structure and limits are still known.
        #expect(decoder.run([0x80]).error == .invalidIndex)
        #expect(decoder.run([0x82, 0x20]).error == .tableSizeUpdateAfterField)
        #expect(decoder.run(hex("3fe21f")).error == .tableSizeAboveLimit)
        #expect(decoder.run([0x41, 0x05, 0x61]).error == .truncated)
        // The first reason is kept.
        #expect(decoder.blindReason == .stateLost)
        // A size update within the limit is fine, and the next fields decode.
        #expect(decoder.fields([0x20, 0x82]) == [DecodedField(":method", "GET", bytes: 1, kind: .indexed)])
    }

    @Test func aMalformedBlockMakesTheDecoderBlind() {
        var decoder = HPACKDecoder()
        _ = decoder.fields(Self.firstRequest)
        // 82 is fine and visited, then index 0.
        let decoded = decoder.run([0x82, 0x80])
        #expect(decoded.fields == [DecodedField(":method", "GET", bytes: 1, kind: .indexed)])
        #expect(decoded.error == .invalidIndex)
        #expect(decoder.blindReason == .malformedBlock(.invalidIndex))
        #expect(decoder.fields([0xbe]) == [DecodedField(nil, nil, bytes: 1, kind: .indexed)])
    }

    @Test func aCopyKeepsItsOwnTable() {
        var decoder = HPACKDecoder()
        _ = decoder.fields(Self.firstRequest)
        var copy = decoder
        copy.loseState()
        _ = decoder.fields(Self.secondRequest)
        #expect(decoder.dynamicTableSize == 110)
        #expect(copy.fields([0xbe]) == [DecodedField(nil, nil, bytes: 1, kind: .indexed)])
        #expect(decoder.fields([0xbf]) == [DecodedField(":authority", "www.example.com", bytes: 1, kind: .indexed)])
    }
}
