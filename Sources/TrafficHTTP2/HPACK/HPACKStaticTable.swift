/// The 61 predefined fields of RFC 7541 Appendix A, indices 1…61 of the HPACK index space (§2.3.3).
enum HPACKStaticTable {
    /// Entries of the table, index 1 first.
    static let count = 61

    /// Name and value octets of one entry.
    struct Entry {
        var name: UnsafeRawBufferPointer
        var value: UnsafeRawBufferPointer
    }

    /// Name and value of index `index`, 1…61.
    @inline(__always)
    static func entry(_ index: Int) -> Entry {
        precondition(index >= 1 && index <= count, "static table index \(index) outside 1…61")
        return entries[index - 1]
    }

    // Pointers rather than Strings, so a field can point at them like at any other octets. They are written once,
    // on first use, into memory that lives as long as the process; nothing writes them after that.
    private nonisolated(unsafe) static let entries: UnsafeMutableBufferPointer<Entry> = {
        let table: [(String, String)] = [
            (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
            (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
            (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
            ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
            ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""),
            ("cache-control", ""), ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""),
            ("content-length", ""), ("content-location", ""), ("content-range", ""), ("content-type", ""),
            ("cookie", ""), ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
            ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
            ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""),
            ("proxy-authenticate", ""), ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""),
            ("retry-after", ""), ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""),
            ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
        ]
        precondition(table.count == count, "RFC 7541 Appendix A has 61 entries, not \(table.count)")
        let octets = table.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: octets, alignment: 1)
        let entries = UnsafeMutableBufferPointer<Entry>.allocate(capacity: count)
        var offset = 0
        func place(_ string: String) -> UnsafeRawBufferPointer {
            let bytes = Array(string.utf8)
            let start = offset
            storage[start..<(start + bytes.count)].copyBytes(from: bytes)
            offset += bytes.count
            return UnsafeRawBufferPointer(rebasing: storage[start..<offset])
        }
        for (i, (name, value)) in table.enumerated() {
            entries.initializeElement(at: i, to: Entry(name: place(name), value: place(value)))
        }
        return entries
    }()
}
