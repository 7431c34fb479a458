/// The Internet checksum (RFC 1071): a ones'-complement sum of 16-bit words, folded to 16 bits.
/// A header with a correct checksum sums to 0xffff.
enum Checksum {
    static func sum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var sum: UInt64 = 0
        var i = 0
        while i + 1 < bytes.count {
            sum &+= UInt64(bytes[i]) << 8 | UInt64(bytes[i + 1])
            i += 2
        }
        if i < bytes.count { sum &+= UInt64(bytes[i]) << 8 }  // an odd byte is padded with zero
        while sum > 0xffff { sum = (sum & 0xffff) + (sum >> 16) }
        return UInt32(sum)
    }

    static func add(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var sum = a + b
        while sum > 0xffff { sum = (sum & 0xffff) + (sum >> 16) }
        return sum
    }
}
