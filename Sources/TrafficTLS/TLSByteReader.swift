/// A bounds-checked cursor over a handshake message body: every read returns nil past the end.
///
/// Lengths read from the wire are checked against what is left before any slice is taken, so a
/// malformed hello ends the parse instead of trapping.
struct TLSByteReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int
    let end: Int

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        offset = 0
        end = bytes.count
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset == end }

    mutating func readUInt8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// The next `count` bytes, or nil if fewer remain.
    mutating func readBytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// A sub-reader over a vector with a one-byte length prefix (RFC 8446 §3.4 `<0..2^8-1>`).
    mutating func readVector8() -> TLSByteReader? {
        guard let length = readUInt8(), let body = readBytes(Int(length)) else { return nil }
        return TLSByteReader(body)
    }

    /// A sub-reader over a vector with a two-byte length prefix (`<0..2^16-1>`).
    mutating func readVector16() -> TLSByteReader? {
        guard let length = readUInt16(), let body = readBytes(Int(length)) else { return nil }
        return TLSByteReader(body)
    }

    mutating func skip(_ count: Int) -> Bool { readBytes(count) != nil }
}
