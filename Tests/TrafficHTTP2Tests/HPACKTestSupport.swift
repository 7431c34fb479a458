import Testing

@testable import TrafficHTTP2

/// A field copied out of its `visit` call, so that tests can keep and compare it.
struct DecodedField: Equatable, CustomStringConvertible {
    var name: [UInt8]?
    var value: [UInt8]?
    var representationBytes: Int
    var kind: HPACKField.Kind

    init(_ field: HPACKField) {
        name = field.name.map { Array($0) }
        value = field.value.map { Array($0) }
        representationBytes = field.representationBytes
        kind = field.kind
    }

    init(_ name: String?, _ value: String?, bytes: Int, kind: HPACKField.Kind) {
        self.name = name.map { Array($0.utf8) }
        self.value = value.map { Array($0.utf8) }
        self.representationBytes = bytes
        self.kind = kind
    }

    var description: String {
        let name = self.name.map { String(decoding: $0, as: UTF8.self) } ?? "<unknown>"
        let value = self.value.map { String(decoding: $0, as: UTF8.self) } ?? "<unknown>"
        return "\(name): \(value) (\(representationBytes) B, \(kind))"
    }
}

/// What one block gave: the fields visited, in order, and the error that stopped it, if any.
struct DecodedBlock {
    var fields: [DecodedField] = []
    var error: HPACKError?

    var names: [String?] { fields.map { $0.name.map { String(decoding: $0, as: UTF8.self) } } }
    var representationBytes: Int { fields.reduce(0) { $0 + $1.representationBytes } }
}

extension HPACKDecoder {
    /// Decodes `block` and copies out what it visited, whether or not it threw.
    mutating func run(_ block: [UInt8]) -> DecodedBlock {
        var decoded = DecodedBlock()
        block.withUnsafeBytes { bytes in
            do throws(HPACKError) {
                try decode(block: bytes) { decoded.fields.append(DecodedField($0)) }
            } catch {
                decoded.error = error
            }
        }
        return decoded
    }

    /// Decodes a block that must be well formed and returns its fields.
    mutating func fields(_ block: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [DecodedField] {
        let decoded = run(block)
        #expect(decoded.error == nil, "unexpected \(String(describing: decoded.error))", sourceLocation: sourceLocation)
        return decoded.fields
    }
}

/// Bytes from hex digits; spaces and newlines are ignored, so RFC dumps can be pasted as they are printed.
func hex(_ digits: String) -> [UInt8] {
    let nibbles = digits.utf8.compactMap { c -> UInt8? in
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    precondition(nibbles.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
}

/// The HPACK integer encoding (RFC 7541 §5.1), written independently of the decoder for hostile inputs.
func hpackInteger(_ value: Int, prefixBits: Int, pattern: UInt8) -> [UInt8] {
    let limit = (1 << prefixBits) - 1
    if value < limit { return [pattern | UInt8(value)] }
    var bytes = [pattern | UInt8(limit)]
    var rest = value - limit
    while rest >= 128 {
        bytes.append(UInt8(rest & 0x7f) | 0x80)
        rest >>= 7
    }
    bytes.append(UInt8(rest))
    return bytes
}

/// A raw (not Huffman-coded) string literal (§5.2).
func hpackString(_ octets: [UInt8]) -> [UInt8] {
    hpackInteger(octets.count, prefixBits: 7, pattern: 0) + octets
}

func hpackString(_ string: String) -> [UInt8] { hpackString(Array(string.utf8)) }

/// Octets of the dynamic table size updates that open `block` (§6.3: 001xxxxx and a 5-bit prefix integer),
/// which belong to no field.
func leadingSizeUpdateBytes(_ block: [UInt8]) -> Int {
    var position = 0
    while position < block.count, block[position] & 0xe0 == 0x20 {
        let filled = block[position] & 0x1f == 0x1f
        position += 1
        if filled {
            while position < block.count, block[position] & 0x80 != 0 { position += 1 }
            position += 1
        }
    }
    return min(position, block.count)
}
