/// A cursor over one field section or encoder-stream run that reads QPACK's primitives: prefix integers
/// (RFC 9204 §4.1.1, RFC 7541 §5.1) and string literals whose H bit sits just above an N-bit length prefix
/// (§4.1.2). Every length is checked against the buffer; it never reads past it.
struct QPACKReader {
    /// Borrowed from the caller for the reader's life.
    let bytes: UnsafeRawBufferPointer
    var position = 0
    /// When a string's length is known but its octets are not all here: the offset its end needs (an encoder
    /// instruction split across deliveries waits for that much before it is parsed again).
    var needed = 0

    /// QUIC's largest integer: no QPACK quantity can be larger, and anything beyond is damage.
    static let maxInteger: UInt64 = (1 << 62) - 1

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }
    /// The octet at `position`; the caller checked `isAtEnd`.
    var current: UInt8 { bytes[position] }

    /// An integer whose `prefixBits`-bit prefix is in the current octet (its high bits are the caller's).
    mutating func readInteger(prefixBits: Int) throws(QPACKError) -> Int {
        guard position < bytes.count else { throw .truncated }
        let mask = UInt8((1 << prefixBits) - 1)
        let prefix = bytes[position] & mask
        position += 1
        if prefix < mask { return Int(prefix) }
        var value = UInt64(prefix)
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw .truncated }
            let octet = bytes[position]
            position += 1
            // 7 bits more at `shift`: past 62 bits the value cannot stay below 2^62, whatever the octet says.
            let bits = UInt64(octet & 0x7f)
            guard shift <= 56 || bits == 0 else { throw .integerOverflow }
            if shift <= 56 {
                value += bits << shift
                guard value <= Self.maxInteger else { throw .integerOverflow }
            }
            if octet & 0x80 == 0 { return Int(value) }
            shift += 7
            // Zero continuation octets without end would otherwise loop over the whole buffer harmlessly, but
            // no encoder writes more than 10 octets for a 62-bit value.
            guard shift < 70 else { throw .integerOverflow }
        }
    }

    /// A string literal: the H bit at `1 << prefixBits` of the current octet, a `prefixBits`-bit length, the
    /// octets as sent (still Huffman-coded when `huffman`).
    mutating func readString(prefixBits: Int) throws(QPACKError) -> (huffman: Bool, octets: UnsafeRawBufferPointer) {
        guard position < bytes.count else { throw .truncated }
        let huffman = bytes[position] & UInt8(1 << prefixBits) != 0
        let length = try readInteger(prefixBits: prefixBits)
        guard length <= bytes.count - position else {
            needed = position &+ length
            throw .truncated
        }
        let start = position
        position += length
        return (huffman, UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
    }
}
