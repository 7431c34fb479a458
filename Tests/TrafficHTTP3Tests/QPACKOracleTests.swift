import Testing

@testable import TrafficHTTP3

struct QPACKOracleCase: Sendable {
    var maxTableCapacity: Int
    var request: Bool
    var setup: String
    var sections: [QPACKOracleSection]
}

struct QPACKOracleSection: Sendable {
    var encoderStream: String
    var section: String
    var fields: [(String, String)]
    var representationBytes: [Int]
    var cookieBytes: Int
    var cookieDecodedBytes: Int
}

/// pylsqpack's encoder as the oracle (QPACKOracleFixtures.swift, made by make-qpack-fixtures.py): every section
/// decodes to the fields ls-qpack encoded, with the representation sizes the script's walker found; a section is
/// blocked exactly when its encoder-stream bytes are not read yet and it needs them.
@Suite struct QPACKOracleTests {
    @Test(arguments: QPACKOracleFixtures.cases.indices)
    func decodesLikeLSQPACK(caseIndex: Int) throws {
        let c = QPACKOracleFixtures.cases[caseIndex]
        let decoder = QPACKDecoder(maxTableCapacity: c.maxTableCapacity)
        try decoder.feed(hex(c.setup))
        for s in c.sections {
            let section = hex(s.section)
            let encoder = hex(s.encoderStream)
            let ric = try #require(try section.withUnsafeBytes { try decoder.requiredInsertCount($0) })
            let (early, earlyFields) = try decoder.decode(section)
            if ric > decoder.insertCount {
                #expect(early == .blocked)
                #expect(earlyFields.isEmpty)
            }
            // The encoder bytes split in two at a varying point: instructions cut across deliveries.
            let cut = encoder.count / 3
            try decoder.feed(Array(encoder[..<cut]))
            try decoder.feed(Array(encoder[cut...]))
            let (outcome, fields) = try decoder.decode(section)
            #expect(outcome == .decoded(complete: true))
            let expected = zip(s.fields, s.representationBytes).map { pair in
                DecodedField(name: hex(pair.0.0), value: hex(pair.0.1), representationBytes: pair.1)
            }
            #expect(fields == expected)
            let cookie = c.request ? Array("cookie".utf8) : Array("set-cookie".utf8)
            #expect(fields.filter { $0.name == cookie }.reduce(0) { $0 + $1.representationBytes } == s.cookieBytes)
            #expect(
                fields.filter { $0.name == cookie }.reduce(0) { $0 + $1.name!.count + $1.value!.count }
                    == s.cookieDecodedBytes)
        }
    }
}
