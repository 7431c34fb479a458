/// `--quic`: QPACK field sections (RFC 9204 §4.5) with the static table only, as a stack that never uses the dynamic
/// table (SETTINGS_QPACK_MAX_TABLE_CAPACITY 0 on the peer's side) sends them: Required Insert Count 0, Base 0, then
/// per field an indexed field line when the static table has the name and value, a literal with a static name
/// reference when it has the name, else a literal with a literal name. Strings are Huffman-coded when shorter
/// (the HPACK code, RFC 9204 §4.1.2); `authorization` and short cookie crumbs set the N (never-indexed) bit.
enum QPACKFieldEncoder {
    /// RFC 9204 Appendix A, indices 0…98.
    static let staticTable: [(String, String)] = [
        (":authority", ""), (":path", "/"), ("age", "0"), ("content-disposition", ""), ("content-length", "0"),
        ("cookie", ""), ("date", ""), ("etag", ""), ("if-modified-since", ""), ("if-none-match", ""),
        ("last-modified", ""), ("link", ""), ("location", ""), ("referer", ""), ("set-cookie", ""),
        (":method", "CONNECT"), (":method", "DELETE"), (":method", "GET"), (":method", "HEAD"),
        (":method", "OPTIONS"), (":method", "POST"), (":method", "PUT"), (":scheme", "http"), (":scheme", "https"),
        (":status", "103"), (":status", "200"), (":status", "304"), (":status", "404"), (":status", "503"),
        ("accept", "*/*"), ("accept", "application/dns-message"), ("accept-encoding", "gzip, deflate, br"),
        ("accept-ranges", "bytes"), ("access-control-allow-headers", "cache-control"),
        ("access-control-allow-headers", "content-type"), ("access-control-allow-origin", "*"),
        ("cache-control", "max-age=0"), ("cache-control", "max-age=2592000"), ("cache-control", "max-age=604800"),
        ("cache-control", "no-cache"), ("cache-control", "no-store"), ("cache-control", "public, max-age=31536000"),
        ("content-encoding", "br"), ("content-encoding", "gzip"), ("content-type", "application/dns-message"),
        ("content-type", "application/javascript"), ("content-type", "application/json"),
        ("content-type", "application/x-www-form-urlencoded"), ("content-type", "image/gif"),
        ("content-type", "image/jpeg"), ("content-type", "image/png"), ("content-type", "text/css"),
        ("content-type", "text/html; charset=utf-8"), ("content-type", "text/plain"),
        ("content-type", "text/plain;charset=utf-8"), ("range", "bytes=0-"),
        ("strict-transport-security", "max-age=31536000"),
        ("strict-transport-security", "max-age=31536000; includesubdomains"),
        ("strict-transport-security", "max-age=31536000; includesubdomains; preload"), ("vary", "accept-encoding"),
        ("vary", "origin"), ("x-content-type-options", "nosniff"), ("x-xss-protection", "1; mode=block"),
        (":status", "100"), (":status", "204"), (":status", "206"), (":status", "302"), (":status", "400"),
        (":status", "403"), (":status", "421"), (":status", "425"), (":status", "500"), ("accept-language", ""),
        ("access-control-allow-credentials", "FALSE"), ("access-control-allow-credentials", "TRUE"),
        ("access-control-allow-headers", "*"), ("access-control-allow-methods", "get"),
        ("access-control-allow-methods", "get, post, options"), ("access-control-allow-methods", "options"),
        ("access-control-expose-headers", "content-length"), ("access-control-request-headers", "content-type"),
        ("access-control-request-method", "get"), ("access-control-request-method", "post"), ("alt-svc", "clear"),
        ("authorization", ""), ("content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"),
        ("early-data", "1"), ("expect-ct", ""), ("forwarded", ""), ("if-range", ""), ("origin", ""),
        ("purpose", "prefetch"), ("server", ""), ("timing-allow-origin", "*"), ("upgrade-insecure-requests", "1"),
        ("user-agent", ""), ("x-forwarded-for", ""), ("x-frame-options", "deny"), ("x-frame-options", "sameorigin"),
    ]

    private static let fields: [String: Int] = {
        var fields: [String: Int] = [:]
        for (index, entry) in staticTable.enumerated() where fields[entry.0 + "\u{0}" + entry.1] == nil {
            fields[entry.0 + "\u{0}" + entry.1] = index
        }
        return fields
    }()

    private static let names: [String: Int] = {
        var names: [String: Int] = [:]
        for (index, entry) in staticTable.enumerated() where names[entry.0] == nil { names[entry.0] = index }
        return names
    }()

    /// Appends the field section prefix (Required Insert Count 0, Base 0).
    static func prefix(into block: inout [UInt8]) { block += [0, 0] }

    /// Appends one field line; returns its bytes.
    @discardableResult
    static func encode(_ name: String, _ value: String, neverIndexed: Bool, into block: inout [UInt8]) -> Int {
        let before = block.count
        if !neverIndexed, let index = fields[name + "\u{0}" + value] {
            HPACKEncoder.integer(index, prefixBits: 6, flags: 0xc0, into: &block)  // 11T…: indexed, static
        } else if let index = names[name] {
            // 01NT…: literal with a static name reference.
            HPACKEncoder.integer(index, prefixBits: 4, flags: 0x50 | (neverIndexed ? 0x20 : 0), into: &block)
            string(value, prefixBits: 7, flags: 0, into: &block)
        } else {
            // 001NH…: literal with a literal name (H and the length in the same byte), then the value.
            string(name, prefixBits: 3, flags: 0x20 | (neverIndexed ? 0x10 : 0), into: &block)
            string(value, prefixBits: 7, flags: 0, into: &block)
        }
        return block.count - before
    }

    /// A string literal whose H bit sits just above a `prefixBits` length prefix (RFC 9204 §4.1.2).
    static func string(_ text: String, prefixBits: Int, flags: UInt8, into block: inout [UInt8]) {
        var bits = 0
        for byte in text.utf8 { bits += Int(HPACKEncoder.huffman[Int(byte)].length) }
        let huffmanLength = (bits + 7) / 8
        let plainLength = text.utf8.count
        guard huffmanLength < plainLength else {
            HPACKEncoder.integer(plainLength, prefixBits: prefixBits, flags: flags, into: &block)
            block.append(contentsOf: text.utf8)
            return
        }
        HPACKEncoder.integer(huffmanLength, prefixBits: prefixBits, flags: flags | UInt8(1 << prefixBits), into: &block)
        var accumulator: UInt64 = 0
        var pending = 0
        for byte in text.utf8 {
            let code = HPACKEncoder.huffman[Int(byte)]
            accumulator = accumulator << UInt64(code.length) | UInt64(code.bits)
            pending += Int(code.length)
            while pending >= 8 {
                pending -= 8
                block.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
            }
            accumulator &= (1 << UInt64(pending)) - 1
        }
        if pending > 0 {
            block.append(UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pending)) | UInt8(0xff >> pending))
        }
    }
}

/// QUIC variable-length integers (RFC 9000 §16).
enum QUICVarint {
    static func length(_ value: Int) -> Int { value < 64 ? 1 : value < 16384 ? 2 : value < 1 << 30 ? 4 : 8 }

    static func append(_ value: Int, into bytes: inout [UInt8]) {
        switch length(value) {
        case 1: bytes.append(UInt8(value))
        case 2: bytes += [0x40 | UInt8(value >> 8), UInt8(value & 0xff)]
        case 4: bytes += [0x80 | UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        default:
            bytes.append(0xc0 | UInt8(value >> 56))
            for shift in stride(from: 48, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
    }

    /// Always two bytes (the Length field of long headers, written before the length is known).
    static func append2(_ value: Int, into bytes: inout [UInt8]) {
        precondition(value < 16384)
        bytes += [0x40 | UInt8(value >> 8), UInt8(value & 0xff)]
    }
}
