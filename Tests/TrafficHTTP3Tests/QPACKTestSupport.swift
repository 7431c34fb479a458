import TrafficHTTP2

@testable import TrafficHTTP3

/// Bytes from a hex string (spaces allowed), as the RFC's examples print them.
func hex(_ s: String) -> [UInt8] {
    let digits = Array(s.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") })
    precondition(digits.count % 2 == 0, "odd hex")
    func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
    return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

/// One visited field, copied out of the visit.
struct DecodedField: Equatable, CustomStringConvertible {
    var name: [UInt8]?
    var value: [UInt8]?
    var representationBytes: Int
    var description: String {
        "\(name.map { String(decoding: $0, as: UTF8.self) } ?? "?"): \(value.map { String(decoding: $0, as: UTF8.self) } ?? "?") (\(representationBytes))"
    }
}

extension QPACKDecoder {
    func feed(_ bytes: [UInt8]) throws(QPACKError) {
        let result = bytes.withUnsafeBytes { b in Result { () throws(QPACKError) in try readEncoderStream(b) } }
        try result.get()
    }

    func decode(_ section: [UInt8], force: Bool = false) throws(QPACKError) -> (Outcome, [DecodedField]) {
        var fields: [DecodedField] = []
        let result = section.withUnsafeBytes { b in
            Result { () throws(QPACKError) in
                try decode(section: b, force: force) { f in
                    fields.append(
                        DecodedField(
                            name: f.name.map { Array($0) }, value: f.value.map { Array($0) },
                            representationBytes: f.representationBytes))
                }
            }
        }
        return (try result.get(), fields)
    }
}

func field(_ name: String, _ value: String, _ bytes: Int) -> DecodedField {
    DecodedField(name: Array(name.utf8), value: Array(value.utf8), representationBytes: bytes)
}
