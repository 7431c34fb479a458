import NIOCore
import NIOHPACK
import PropertyBased
import Testing
import TrafficTestSupport

@testable import TrafficHTTP2

/// NIOHPACK's encoder as the independent oracle: whatever header lists it encodes, over several blocks of one
/// connection, our decoder must give back exactly, with representation sizes that add up to the blocks.
@Suite struct HPACKOracleTests {
    /// A header as the test asked NIOHPACK to encode it.
    struct Header {
        var name: String
        var value: String
        var indexing: HPACKIndexing
    }

    static let commonNames = [
        ":method", ":path", ":authority", ":scheme", ":status", "cookie", "cookie", "cookie", "user-agent", "accept",
        "accept-encoding", "content-type", "content-length", "authorization", "set-cookie", "x-request-id",
        "grpc-timeout", "te", "cache-control", "date", "x-custom-header",
    ]
    static let commonValues = [
        "GET", "POST", "/", "/index.html", "/api/v1/users?id=42", "https", "http", "200", "404", "gzip, deflate",
        "application/json", "no-cache", "",
    ]
    /// Characters of values: ASCII and some multi-octet UTF-8, without combining marks, since NIOHPACK matches
    /// values by String equality, under which two different octet sequences can be equal.
    static let characters: [String] = {
        var characters = (0x20...0x7e).map { String(UnicodeScalar(UInt8($0))) }
        characters += ["\u{0}", "\t", "\u{7f}", "é", "ß", "ÿ", "€", "日", "本", "😀", "Ω"]
        return characters
    }()

    static func randomString(_ rng: inout SplitMix, maxLength: Int) -> String {
        let length = Int.random(in: 0...maxLength, using: &rng)
        return String((0..<length).map { _ in characters.randomElement(using: &rng)! }.joined())
    }

    static func randomHeader(_ rng: inout SplitMix, history: [Header]) -> Header {
        // Repeats, so that the dynamic table is used and evicted.
        if !history.isEmpty, Int.random(in: 0..<10, using: &rng) < 4 {
            var header = history.randomElement(using: &rng)!
            if Bool.random(using: &rng) { header.indexing = .indexable }
            return header
        }
        let name: String
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<6: name = commonNames.randomElement(using: &rng)!
        // Lowercase tokens only: NIOHPACK matches names against its table case-insensitively and skips
        // non-ASCII octets when comparing ("nß" matches "nXn"), so other names would come back as another name.
        // It also writes an empty name as name index 0 without a string. Names of any octets are tested in
        // HPACKHuffmanTests instead.
        default:
            name = String(
                (0..<Int.random(in: 1...20, using: &rng)).map { _ in
                    "abcdefghijklmnopqrstuvwxyz0123456789-_.".randomElement(using: &rng)!
                })
        }
        let value: String
        switch Int.random(in: 0..<20, using: &rng) {
        case 0..<6: value = commonValues.randomElement(using: &rng)!
        case 6..<8: value = "crumb\(Int.random(in: 0..<5, using: &rng))=\(randomString(&rng, maxLength: 8))"
        // Long enough for multi-octet length integers, and to evict whole small tables.
        case 8: value = randomString(&rng, maxLength: 3000)
        default: value = randomString(&rng, maxLength: 40)
        }
        let indexing: HPACKIndexing =
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: .nonIndexable
            case 1: .neverIndexed
            default: .indexable
            }
        return Header(name: name, value: value, indexing: indexing)
    }

    static func encode(_ headers: [Header], with encoder: inout HPACKEncoder) throws -> [UInt8] {
        try encoder.beginEncoding(allocator: ByteBufferAllocator())
        for header in headers {
            switch header.indexing {
            case .indexable: try encoder.append(header: header.name, value: header.value)
            case .nonIndexable: try encoder.appendNonIndexed(header: header.name, value: header.value)
            case .neverIndexed: try encoder.appendNeverIndexed(header: header.name, value: header.value)
            }
        }
        var buffer = try encoder.endEncoding()
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    static func kindMatches(_ kind: HPACKField.Kind, _ indexing: HPACKIndexing) -> Bool {
        switch indexing {
        case .indexable: kind == .indexed || kind == .incrementalIndexing
        case .nonIndexable: kind == .withoutIndexing
        case .neverIndexed: kind == .neverIndexed
        }
    }

    @Test func decodesWhatNIOHPACKEncodes() async {
        await propertyCheck(count: 250, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let huffman = Bool.random(using: &rng)
            // SETTINGS_HEADER_TABLE_SIZE of the decoding side; below the initial 4096, the encoder must announce a
            // smaller table in its first block (§4.2).
            let limit = [4096, 4096, 0, 100, 256, 1024, 65536].randomElement(using: &rng)!
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: huffman)
            var decoder = HPACKDecoder()
            decoder.setTableSizeLimit(limit)
            if limit < 4096 { try encoder.setDynamicTableSize(limit) }
            // A second decoder that loses its state after a random block: it must still walk every block.
            var blind = HPACKDecoder()
            blind.setTableSizeLimit(limit)
            let blindAfter = Int.random(in: 0..<4, using: &rng)

            var history: [Header] = []
            for blockNumber in 0..<Int.random(in: 1...10, using: &rng) {
                if blockNumber > 0, Int.random(in: 0..<5, using: &rng) == 0 {
                    try encoder.setDynamicTableSize(Int.random(in: 0...limit, using: &rng))
                }
                let headers = (0..<Int.random(in: 0...24, using: &rng)).map { _ in
                    Self.randomHeader(&rng, history: history)
                }
                history += headers
                let block = try Self.encode(headers, with: &encoder)
                let context = "seed \(seed), block \(blockNumber), huffman \(huffman), limit \(limit)"

                let decoded = decoder.run(block)
                #expect(decoded.error == nil, "\(context)")
                #expect(decoded.fields.count == headers.count, "\(context)")
                for (field, header) in zip(decoded.fields, headers) {
                    #expect(field.name == Array(header.name.utf8), "\(context)")
                    #expect(field.value == Array(header.value.utf8), "\(context)")
                    #expect(Self.kindMatches(field.kind, header.indexing), "\(context): \(field.kind)")
                }
                #expect(decoded.representationBytes == block.count - leadingSizeUpdateBytes(block), "\(context)")
                #expect(decoder.dynamicTableSize == encoder.dynamicTableSize, "\(context)")
                #expect(!decoder.isBlind, "\(context)")

                if blockNumber == blindAfter { blind.loseState() }
                let walked = blind.run(block)
                #expect(walked.error == nil, "\(context)")
                #expect(walked.fields.map(\.representationBytes) == decoded.fields.map(\.representationBytes))
                for (field, header) in zip(walked.fields, headers) {
                    #expect(field.name == nil || field.name == Array(header.name.utf8), "\(context)")
                    #expect(field.value == nil || field.value == Array(header.value.utf8), "\(context)")
                    #expect((field.name == nil) == (field.value == nil) || field.kind != .indexed, "\(context)")
                }
            }
        }
    }

    /// Random octets, alone or after valid blocks: any outcome but a trap, and a block that decodes accounts
    /// for every octet.
    @Test func randomBlocksNeverTrap() async {
        await propertyCheck(count: 2000, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            var decoder = HPACKDecoder(limits: HPACKLimits(maxStoredTableBytes: Int.random(in: 0...8192, using: &rng)))
            decoder.setTableSizeLimit([0, 4096, Int(UInt32.max)].randomElement(using: &rng)!)
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let block = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                }
                let decoded = decoder.run(block)
                if decoded.error == nil {
                    #expect(decoded.representationBytes + leadingSizeUpdateBytes(block) == block.count, "seed \(seed)")
                } else {
                    #expect(decoder.isBlind, "seed \(seed)")
                }
            }
        }
    }

    /// Valid blocks with octets flipped, inserted or cut: whatever the decoder makes of them, it does not trap, and
    /// a block it accepts is accounted for to the octet.
    @Test func damagedBlocksNeverTrap() async {
        await propertyCheck(count: 500, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: Bool.random(using: &rng))
            var decoder = HPACKDecoder(limits: HPACKLimits(maxStoredTableBytes: Int.random(in: 0...8192, using: &rng)))
            var history: [Header] = []
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let headers = (0..<Int.random(in: 1...12, using: &rng)).map { _ in
                    Self.randomHeader(&rng, history: history)
                }
                history += headers
                var block = try Self.encode(headers, with: &encoder)
                for _ in 0..<Int.random(in: 1...3, using: &rng) where !block.isEmpty {
                    let at = Int.random(in: 0..<block.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: block[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                    case 1: block.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                    default: block.removeSubrange(at...)
                    }
                }
                let decoded = decoder.run(block)
                if decoded.error == nil {
                    #expect(decoded.representationBytes + leadingSizeUpdateBytes(block) == block.count, "seed \(seed)")
                }
            }
        }
    }
}
