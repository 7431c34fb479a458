extension ContentCoding {
    /// Parses a `Content-Encoding` value (RFC 9110 §8.4) into codings in the order they were applied.
    ///
    /// Case-insensitive; optional whitespace and empty list elements are tolerated (RFC 9110 §5.6.1),
    /// so "" gives []. `x-gzip` is `gzip` (§8.4.1.3). Returns nil for any unknown coding (e.g.
    /// `compress`): the body then cannot be decoded. `identity` entries are kept.
    public static func parse(contentEncoding value: some StringProtocol) -> [ContentCoding]? {
        // One exact lower-case token is what servers send nearly always: no splitting.
        switch value {
        case "gzip": return [.gzip]
        case "br": return [.brotli]
        case "zstd": return [.zstd]
        case "deflate": return [.deflate]
        default: break
        }
        var codings: [ContentCoding] = []
        for element in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            // Trim OWS (space, tab); a generic UTF8View is only forward-iterable.
            let trimmed = element.drop(while: isSpace)
            var end = trimmed.startIndex
            var index = trimmed.startIndex
            while index != trimmed.endIndex {
                if !isSpace(trimmed[index]) { end = trimmed.index(after: index) }
                index = trimmed.index(after: index)
            }
            let token = trimmed[..<end]
            if token.isEmpty { continue }
            guard let coding = named(token) else { return nil }
            codings.append(coding)
        }
        return codings
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static let names: [(name: String, coding: ContentCoding)] = [
        ("gzip", .gzip), ("x-gzip", .gzip), ("br", .brotli), ("zstd", .zstd),
        ("deflate", .deflate), ("identity", .identity),
    ]

    private static func named(_ token: some Collection<UInt8>) -> ContentCoding? {
        for (name, coding) in names where name.utf8.count == token.count {
            // ASCII lowercase: token bytes are compared after folding A-Z.
            let matches = zip(name.utf8, token).allSatisfy { expected, byte in
                expected == (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            if matches { return coding }
        }
        return nil
    }
}
