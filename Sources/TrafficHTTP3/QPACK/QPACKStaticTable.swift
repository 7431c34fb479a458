/// The 99 predefined fields of RFC 9204 Appendix A, indices 0…98.
enum QPACKStaticTable {
    static let count = 99

    struct Entry {
        var name: UnsafeRawBufferPointer
        var value: UnsafeRawBufferPointer
    }

    /// Name and value of `index`, 0…98 (the caller checked it).
    @inline(__always)
    static func entry(_ index: Int) -> Entry {
        precondition(index >= 0 && index < count, "QPACK static index \(index) outside 0…98")
        return entries[index]
    }

    // Pointers rather than Strings, so a field can point at them like at any other octets; written once, on
    // first use, into memory that lives as long as the process.
    private nonisolated(unsafe) static let entries: UnsafeMutableBufferPointer<Entry> = {
        let table: [(String, String)] = [
            (":authority", ""), (":path", "/"), ("age", "0"), ("content-disposition", ""), ("content-length", "0"),
            ("cookie", ""), ("date", ""), ("etag", ""), ("if-modified-since", ""), ("if-none-match", ""),
            ("last-modified", ""), ("link", ""), ("location", ""), ("referer", ""), ("set-cookie", ""),
            (":method", "CONNECT"), (":method", "DELETE"), (":method", "GET"), (":method", "HEAD"),
            (":method", "OPTIONS"), (":method", "POST"), (":method", "PUT"), (":scheme", "http"),
            (":scheme", "https"), (":status", "103"), (":status", "200"), (":status", "304"), (":status", "404"),
            (":status", "503"), ("accept", "*/*"), ("accept", "application/dns-message"),
            ("accept-encoding", "gzip, deflate, br"), ("accept-ranges", "bytes"),
            ("access-control-allow-headers", "cache-control"), ("access-control-allow-headers", "content-type"),
            ("access-control-allow-origin", "*"), ("cache-control", "max-age=0"),
            ("cache-control", "max-age=2592000"), ("cache-control", "max-age=604800"), ("cache-control", "no-cache"),
            ("cache-control", "no-store"), ("cache-control", "public, max-age=31536000"), ("content-encoding", "br"),
            ("content-encoding", "gzip"), ("content-type", "application/dns-message"),
            ("content-type", "application/javascript"), ("content-type", "application/json"),
            ("content-type", "application/x-www-form-urlencoded"), ("content-type", "image/gif"),
            ("content-type", "image/jpeg"), ("content-type", "image/png"), ("content-type", "text/css"),
            ("content-type", "text/html; charset=utf-8"), ("content-type", "text/plain"),
            ("content-type", "text/plain;charset=utf-8"), ("range", "bytes=0-"),
            ("strict-transport-security", "max-age=31536000"),
            ("strict-transport-security", "max-age=31536000; includesubdomains"),
            ("strict-transport-security", "max-age=31536000; includesubdomains; preload"),
            ("vary", "accept-encoding"), ("vary", "origin"), ("x-content-type-options", "nosniff"),
            ("x-xss-protection", "1; mode=block"), (":status", "100"), (":status", "204"), (":status", "206"),
            (":status", "302"), (":status", "400"), (":status", "403"), (":status", "421"), (":status", "425"),
            (":status", "500"), ("accept-language", ""), ("access-control-allow-credentials", "FALSE"),
            ("access-control-allow-credentials", "TRUE"), ("access-control-allow-headers", "*"),
            ("access-control-allow-methods", "get"), ("access-control-allow-methods", "get, post, options"),
            ("access-control-allow-methods", "options"), ("access-control-expose-headers", "content-length"),
            ("access-control-request-headers", "content-type"), ("access-control-request-method", "get"),
            ("access-control-request-method", "post"), ("alt-svc", "clear"), ("authorization", ""),
            ("content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"),
            ("early-data", "1"), ("expect-ct", ""), ("forwarded", ""), ("if-range", ""), ("origin", ""),
            ("purpose", "prefetch"), ("server", ""), ("timing-allow-origin", "*"), ("upgrade-insecure-requests", "1"),
            ("user-agent", ""), ("x-forwarded-for", ""), ("x-frame-options", "deny"), ("x-frame-options", "sameorigin"),
        ]
        precondition(table.count == count, "RFC 9204 Appendix A has 99 entries, not \(table.count)")
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
