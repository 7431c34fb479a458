/// A small HPACK encoder (RFC 7541) for the HTTP/2 capture: what a real client or server would send.
///
/// - A field whose name and value are in the static table or the dynamic table is sent as one indexed
///   representation (§6.1): repeated headers cost a byte or two.
/// - Otherwise a literal with incremental indexing (§6.2.1), its name by index when the name is in a table:
///   the entry is added to the dynamic table (4096 bytes, the SETTINGS_HEADER_TABLE_SIZE default; §4.4
///   eviction), so the next message refers to it.
/// - `Policy.withoutIndexing` (§6.2.2) for values that are new in every message (`x-request-id`): indexing them
///   would only evict useful entries. `Policy.neverIndexed` (§6.2.3) for `authorization` and cookie crumbs
///   under 20 bytes, as nghttp2 does (RFC 7541 §7.1.3).
/// - Strings are Huffman-coded (Appendix B) when that is shorter, as every major implementation does.
///
/// Names must be lower case (RFC 9113 §8.2.1). One encoder per connection direction.
struct HPACKEncoder {
    enum Policy { case index, withoutIndexing, neverIndexed }

    /// RFC 7541 Appendix A (index 1 is the first entry).
    static let staticTable: [(String, String)] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"),
        (":path", "/"), (":path", "/index.html"), (":scheme", "http"),
        (":scheme", "https"), (":status", "200"), (":status", "204"),
        (":status", "206"), (":status", "304"), (":status", "400"),
        (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""),
        ("accept", ""), ("access-control-allow-origin", ""), ("age", ""),
        ("allow", ""), ("authorization", ""), ("cache-control", ""),
        ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""),
        ("content-length", ""), ("content-location", ""), ("content-range", ""),
        ("content-type", ""), ("cookie", ""), ("date", ""),
        ("etag", ""), ("expect", ""), ("expires", ""),
        ("from", ""), ("host", ""), ("if-match", ""),
        ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
        ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""),
        ("location", ""), ("max-forwards", ""), ("proxy-authenticate", ""),
        ("proxy-authorization", ""), ("range", ""), ("referer", ""),
        ("refresh", ""), ("retry-after", ""), ("server", ""),
        ("set-cookie", ""), ("strict-transport-security", ""), ("transfer-encoding", ""),
        ("user-agent", ""), ("vary", ""), ("via", ""),
        ("www-authenticate", ""),
    ]
    /// name + "\u{0}" + value → static index, and name → its first static index.
    private static let staticFields: [String: Int] = {
        var fields: [String: Int] = [:]
        for (offset, entry) in staticTable.enumerated() where fields[entry.0 + "\u{0}" + entry.1] == nil {
            fields[entry.0 + "\u{0}" + entry.1] = offset + 1
        }
        return fields
    }()
    private static let staticNames: [String: Int] = {
        var names: [String: Int] = [:]
        for (offset, entry) in staticTable.enumerated() where names[entry.0] == nil { names[entry.0] = offset + 1 }
        return names
    }()

    let maxTableSize: Int
    /// Dynamic table entries, oldest first from `oldest`; an entry's absolute number is its position in this
    /// array (entries are never moved: evicted ones stay behind `oldest` until compaction).
    private var entries: [(key: String, name: String, size: Int)] = []
    private var oldest = 0
    /// Absolute numbers removed by compaction, so that numbers stay stable.
    private var dropped = 0
    private var tableSize = 0
    /// Latest absolute number of each field (name + NUL + value) and each name in the dynamic table.
    private var fields: [String: Int] = [:]
    private var names: [String: Int] = [:]

    init(maxTableSize: Int = 4096) { self.maxTableSize = maxTableSize }

    /// Appends the representation of one field to `block`; returns its size in bytes.
    @discardableResult
    mutating func encode(_ name: String, _ value: String, policy: Policy = .index, into block: inout [UInt8]) -> Int {
        let start = block.count
        let key = name + "\u{0}" + value
        if policy != .neverIndexed {
            if let index = Self.staticFields[key] {
                Self.integer(index, prefixBits: 7, flags: 0x80, into: &block)
                return block.count - start
            }
            if let absolute = fields[key] {
                Self.integer(dynamicIndex(absolute), prefixBits: 7, flags: 0x80, into: &block)
                return block.count - start
            }
        }
        let nameIndex = Self.staticNames[name] ?? names[name].map { dynamicIndex($0) } ?? 0
        let size = name.utf8.count + value.utf8.count + 32
        let indexing = policy == .index && size <= maxTableSize
        switch (policy, indexing) {
        case (_, true): Self.integer(nameIndex, prefixBits: 6, flags: 0x40, into: &block)
        case (.neverIndexed, _): Self.integer(nameIndex, prefixBits: 4, flags: 0x10, into: &block)
        default: Self.integer(nameIndex, prefixBits: 4, flags: 0x00, into: &block)
        }
        if nameIndex == 0 { Self.string(name, into: &block) }
        Self.string(value, into: &block)
        if indexing { insert(key: key, name: name, size: size) }
        return block.count - start
    }

    /// §2.3.3: the newest entry is 62, older ones count up.
    private func dynamicIndex(_ absolute: Int) -> Int { Self.staticTable.count + dropped + entries.count - absolute }

    private mutating func insert(key: String, name: String, size: Int) {
        while tableSize + size > maxTableSize { evictOldest() }
        let absolute = dropped + entries.count
        entries.append((key, name, size))
        tableSize += size
        fields[key] = absolute
        names[name] = absolute
    }

    private mutating func evictOldest() {
        let entry = entries[oldest]
        let absolute = dropped + oldest
        tableSize -= entry.size
        if fields[entry.key] == absolute { fields[entry.key] = nil }
        if names[entry.name] == absolute { names[entry.name] = nil }
        oldest += 1
        if oldest >= 256, oldest * 2 >= entries.count {
            entries.removeFirst(oldest)
            dropped += oldest
            oldest = 0
        }
    }

    /// §5.1: an integer with an N-bit prefix, `flags` in the bits above it.
    static func integer(_ value: Int, prefixBits: Int, flags: UInt8, into block: inout [UInt8]) {
        let limit = (1 << prefixBits) - 1
        if value < limit {
            block.append(flags | UInt8(value))
            return
        }
        block.append(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            block.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        block.append(UInt8(rest))
    }

    /// §5.2: a string literal, Huffman-coded when that is shorter.
    static func string(_ text: String, into block: inout [UInt8]) {
        var bits = 0
        for byte in text.utf8 { bits += Int(huffman[Int(byte)].length) }
        let huffmanLength = (bits + 7) / 8
        let plainLength = text.utf8.count
        guard huffmanLength < plainLength else {
            integer(plainLength, prefixBits: 7, flags: 0, into: &block)
            block.append(contentsOf: text.utf8)
            return
        }
        integer(huffmanLength, prefixBits: 7, flags: 0x80, into: &block)
        var accumulator: UInt64 = 0
        var pending = 0
        for byte in text.utf8 {
            let code = huffman[Int(byte)]
            accumulator = accumulator << UInt64(code.length) | UInt64(code.bits)
            pending += Int(code.length)
            while pending >= 8 {
                pending -= 8
                block.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
            }
            accumulator &= (1 << UInt64(pending)) - 1
        }
        if pending > 0 {
            // Padded with the most significant bits of EOS: ones (§5.2).
            block.append(UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pending)) | UInt8(0xff >> pending))
        }
    }

    /// RFC 7541 Appendix B: the code of each octet (and EOS, 256), right-aligned, and its length in bits.
    static let huffman: [(bits: UInt32, length: UInt8)] = [
        (0x1ff8, 13), (0x7fffd8, 23), (0xfffffe2, 28), (0xfffffe3, 28), (0xfffffe4, 28), (0xfffffe5, 28),
        (0xfffffe6, 28), (0xfffffe7, 28), (0xfffffe8, 28), (0xffffea, 24), (0x3fff_fffc, 30), (0xfffffe9, 28),
        (0xfffffea, 28), (0x3fff_fffd, 30), (0xfffffeb, 28), (0xfffffec, 28), (0xfffffed, 28), (0xfffffee, 28),
        (0xfffffef, 28), (0xffffff0, 28), (0xffffff1, 28), (0xffffff2, 28), (0x3fff_fffe, 30), (0xffffff3, 28),
        (0xffffff4, 28), (0xffffff5, 28), (0xffffff6, 28), (0xffffff7, 28), (0xffffff8, 28), (0xffffff9, 28),
        (0xffffffa, 28), (0xffffffb, 28), (0x14, 6), (0x3f8, 10), (0x3f9, 10), (0xffa, 12),
        (0x1ff9, 13), (0x15, 6), (0xf8, 8), (0x7fa, 11), (0x3fa, 10), (0x3fb, 10),
        (0xf9, 8), (0x7fb, 11), (0xfa, 8), (0x16, 6), (0x17, 6), (0x18, 6),
        (0x0, 5), (0x1, 5), (0x2, 5), (0x19, 6), (0x1a, 6), (0x1b, 6),
        (0x1c, 6), (0x1d, 6), (0x1e, 6), (0x1f, 6), (0x5c, 7), (0xfb, 8),
        (0x7ffc, 15), (0x20, 6), (0xffb, 12), (0x3fc, 10), (0x1ffa, 13), (0x21, 6),
        (0x5d, 7), (0x5e, 7), (0x5f, 7), (0x60, 7), (0x61, 7), (0x62, 7),
        (0x63, 7), (0x64, 7), (0x65, 7), (0x66, 7), (0x67, 7), (0x68, 7),
        (0x69, 7), (0x6a, 7), (0x6b, 7), (0x6c, 7), (0x6d, 7), (0x6e, 7),
        (0x6f, 7), (0x70, 7), (0x71, 7), (0x72, 7), (0xfc, 8), (0x73, 7),
        (0xfd, 8), (0x1ffb, 13), (0x7fff0, 19), (0x1ffc, 13), (0x3ffc, 14), (0x22, 6),
        (0x7ffd, 15), (0x3, 5), (0x23, 6), (0x4, 5), (0x24, 6), (0x5, 5),
        (0x25, 6), (0x26, 6), (0x27, 6), (0x6, 5), (0x74, 7), (0x75, 7),
        (0x28, 6), (0x29, 6), (0x2a, 6), (0x7, 5), (0x2b, 6), (0x76, 7),
        (0x2c, 6), (0x8, 5), (0x9, 5), (0x2d, 6), (0x77, 7), (0x78, 7),
        (0x79, 7), (0x7a, 7), (0x7b, 7), (0x7ffe, 15), (0x7fc, 11), (0x3ffd, 14),
        (0x1ffd, 13), (0xffffffc, 28), (0xfffe6, 20), (0x3fffd2, 22), (0xfffe7, 20), (0xfffe8, 20),
        (0x3fffd3, 22), (0x3fffd4, 22), (0x3fffd5, 22), (0x7fffd9, 23), (0x3fffd6, 22), (0x7fffda, 23),
        (0x7fffdb, 23), (0x7fffdc, 23), (0x7fffdd, 23), (0x7fffde, 23), (0xffffeb, 24), (0x7fffdf, 23),
        (0xffffec, 24), (0xffffed, 24), (0x3fffd7, 22), (0x7fffe0, 23), (0xffffee, 24), (0x7fffe1, 23),
        (0x7fffe2, 23), (0x7fffe3, 23), (0x7fffe4, 23), (0x1fffdc, 21), (0x3fffd8, 22), (0x7fffe5, 23),
        (0x3fffd9, 22), (0x7fffe6, 23), (0x7fffe7, 23), (0xffffef, 24), (0x3fffda, 22), (0x1fffdd, 21),
        (0xfffe9, 20), (0x3fffdb, 22), (0x3fffdc, 22), (0x7fffe8, 23), (0x7fffe9, 23), (0x1fffde, 21),
        (0x7fffea, 23), (0x3fffdd, 22), (0x3fffde, 22), (0xfffff0, 24), (0x1fffdf, 21), (0x3fffdf, 22),
        (0x7fffeb, 23), (0x7fffec, 23), (0x1fffe0, 21), (0x1fffe1, 21), (0x3fffe0, 22), (0x1fffe2, 21),
        (0x7fffed, 23), (0x3fffe1, 22), (0x7fffee, 23), (0x7fffef, 23), (0xfffea, 20), (0x3fffe2, 22),
        (0x3fffe3, 22), (0x3fffe4, 22), (0x7ffff0, 23), (0x3fffe5, 22), (0x3fffe6, 22), (0x7ffff1, 23),
        (0x3ffffe0, 26), (0x3ffffe1, 26), (0xfffeb, 20), (0x7fff1, 19), (0x3fffe7, 22), (0x7ffff2, 23),
        (0x3fffe8, 22), (0x1ffffec, 25), (0x3ffffe2, 26), (0x3ffffe3, 26), (0x3ffffe4, 26), (0x7ffffde, 27),
        (0x7ffffdf, 27), (0x3ffffe5, 26), (0xfffff1, 24), (0x1ffffed, 25), (0x7fff2, 19), (0x1fffe3, 21),
        (0x3ffffe6, 26), (0x7ffffe0, 27), (0x7ffffe1, 27), (0x3ffffe7, 26), (0x7ffffe2, 27), (0xfffff2, 24),
        (0x1fffe4, 21), (0x1fffe5, 21), (0x3ffffe8, 26), (0x3ffffe9, 26), (0xffffffd, 28), (0x7ffffe3, 27),
        (0x7ffffe4, 27), (0x7ffffe5, 27), (0xfffec, 20), (0xfffff3, 24), (0xfffed, 20), (0x1fffe6, 21),
        (0x3fffe9, 22), (0x1fffe7, 21), (0x1fffe8, 21), (0x7ffff3, 23), (0x3fffea, 22), (0x3fffeb, 22),
        (0x1ffffee, 25), (0x1ffffef, 25), (0xfffff4, 24), (0xfffff5, 24), (0x3ffffea, 26), (0x7ffff4, 23),
        (0x3ffffeb, 26), (0x7ffffe6, 27), (0x3ffffec, 26), (0x3ffffed, 26), (0x7ffffe7, 27), (0x7ffffe8, 27),
        (0x7ffffe9, 27), (0x7ffffea, 27), (0x7ffffeb, 27), (0xffffffe, 28), (0x7ffffec, 27), (0x7ffffed, 27),
        (0x7ffffee, 27), (0x7ffffef, 27), (0x7fffff0, 27), (0x3ffffee, 26), (0x3fff_ffff, 30),
    ]
}
