/// Reads QUIC's big-endian integers and variable-length integers (RFC 9000 §16) from captured bytes; every read
/// is bounds-checked and returns nil past the end.
struct QUICByteReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    let end: Int

    init(_ bytes: UnsafeRawBufferPointer, from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.position = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var remaining: Int { max(0, end - position) }
    var isAtEnd: Bool { position >= end }

    mutating func byte() -> UInt8? {
        guard position < end else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint32() -> UInt32? {
        guard end - position >= 4 else { return nil }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[position + i]) }
        position += 4
        return value
    }

    /// A variable-length integer: the two high bits of the first byte give its length (1, 2, 4, 8 bytes), so
    /// the value is below 2^62 and never overflows.
    mutating func varint() -> UInt64? {
        guard position < end else { return nil }
        let first = bytes[position]
        let length = 1 << Int(first >> 6)
        guard end - position >= length else { return nil }
        var value = UInt64(first & 0x3f)
        for i in 1..<length { value = value << 8 | UInt64(bytes[position + i]) }
        position += length
        return value
    }

    /// A varint that must fit the bytes left (a length): nil when it is larger.
    mutating func length() -> Int? {
        guard let value = varint(), value <= UInt64(remaining) else { return nil }
        return Int(value)
    }

    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        position += count
        return true
    }
}
