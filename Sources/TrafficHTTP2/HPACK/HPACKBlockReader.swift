/// A cursor over one header block that reads the primitives of its representations: integers (RFC 7541 §5.1)
/// and string literals (§5.2). It checks every length against the block; it never reads past it.
struct HPACKBlockReader {
    /// The block; borrowed from the caller of `HPACKDecoder.decode(block:visit:)`.
    let block: UnsafeRawBufferPointer
    /// Offset of the next unread octet.
    var position = 0

    /// The largest integer accepted. §5.1 leaves the limit to the decoder; every HPACK integer that HTTP/2 needs
    /// (indices, lengths, table sizes) fits in 31 bits, so anything beyond is an attack or damage.
    static let maxInteger = Int(Int32.max)

    init(_ block: UnsafeRawBufferPointer) {
        self.block = block
    }

    var isAtEnd: Bool { position >= block.count }

    /// The octet at `position`, which the caller knows is in the block.
    var current: UInt8 { block[position] }

    /// Reads an integer whose `prefixBits`-bit prefix starts in the current octet (the caller has read the
    /// representation's pattern from its high bits and checked that the octet exists).
    @inline(__always)
    mutating func readInteger(prefixBits: Int) throws(HPACKError) -> Int {
        let mask = (1 << prefixBits) - 1
        let prefix = Int(block[position]) & mask
        position += 1
        if prefix < mask { return prefix }
        return try readContinuation(adding: prefix)
    }

    /// The continuation octets of an integer that filled its prefix: 7 bits each, least significant first.
    private mutating func readContinuation(adding prefix: Int) throws(HPACKError) -> Int {
        var value = UInt64(prefix)
        var shift: UInt64 = 0
        // 5 octets carry 35 bits, enough for any value up to 2^31-1; a sixth (or zero padding that makes one
        // necessary) is an overlong encoding.
        for _ in 0..<5 {
            guard position < block.count else { throw .truncated }
            let octet = block[position]
            position += 1
            value += UInt64(octet & 0x7f) << shift
            guard value <= UInt64(Self.maxInteger) else { throw .integerOverflow }
            if octet & 0x80 == 0 { return Int(value) }
            shift += 7
        }
        throw .integerOverflow
    }

    /// Reads a string literal's header (H bit and length) and returns its octets as sent, still Huffman-coded
    /// when `huffman` is set.
    @inline(__always)
    mutating func readString() throws(HPACKError) -> (huffman: Bool, octets: UnsafeRawBufferPointer) {
        guard position < block.count else { throw .truncated }
        let huffman = block[position] & 0x80 != 0
        let length = try readInteger(prefixBits: 7)
        guard length <= block.count - position else { throw .truncated }
        let start = position
        position += length
        return (huffman, UnsafeRawBufferPointer(rebasing: block[start..<position]))
    }
}
