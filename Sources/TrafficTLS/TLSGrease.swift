/// GREASE values (RFC 8701): reserved code points clients sprinkle into hellos to keep servers tolerant.
enum TLSGrease {
    /// RFC 8701 §2: versions, cipher suites, extensions, groups and ALPN ids of the form 0x?A?A
    /// with both bytes equal.
    static func contains(_ value: UInt16) -> Bool {
        value & 0x0f0f == 0x0a0a && value >> 8 == value & 0xff
    }

    /// RFC 8701 §2 reserves the two-byte ALPN identifiers {0x?A, 0x?A} as well.
    static func isGreaseALPN(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == 2 && contains(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
    }
}
