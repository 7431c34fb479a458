/// A QUIC variable-length integer (RFC 9000 §16) read one octet at a time, for frame headers and stream types
/// that may be split across deliveries. Values are at most 2^62 − 1 by construction: nothing can overflow.
struct QUICVarint {
    private var value: UInt64 = 0
    /// Octets still to read of the current integer; 0 before its first octet.
    private var left = 0
    /// Octets of the integer read so far.
    private(set) var count = 0

    /// Feeds one octet; returns the integer when it is complete.
    @inline(__always)
    mutating func feed(_ octet: UInt8) -> UInt64? {
        if left == 0 {
            // The two high bits of the first octet give the length: 1, 2, 4 or 8 octets.
            left = 1 << Int(octet >> 6)
            value = UInt64(octet & 0x3f)
            count = 1
        } else {
            value = value << 8 | UInt64(octet)
            count += 1
        }
        left -= 1
        if left == 0 {
            count = 0
            return value
        }
        return nil
    }

    var isEmpty: Bool { left == 0 }

    /// Reads a whole varint at `offset` if it is there: (value, length).
    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (UInt64, Int)? {
        guard offset < bytes.count else { return nil }
        let length = 1 << Int(bytes[offset] >> 6)
        guard bytes.count - offset >= length else { return nil }
        var value = UInt64(bytes[offset] & 0x3f)
        for i in 1..<length { value = value << 8 | UInt64(bytes[offset + i]) }
        return (value, length)
    }
}
