/// Collapses identifier segments of paths so that `/users/123/profile` and `/users/456/profile`
/// form one group, and applies user-given templates such as `/users/{id}/orders/{order}`.
public struct PathNormalizer: Sendable {
    public var collapseIdentifiers: Bool
    public var templates: [[Substring]]

    public init(collapseIdentifiers: Bool, templates: [String] = []) {
        self.collapseIdentifiers = collapseIdentifiers
        self.templates = templates.map { $0.split(separator: "/", omittingEmptySubsequences: false) }
    }

    public var isIdentity: Bool { !collapseIdentifiers && templates.isEmpty }

    public func normalize(_ path: String) -> String {
        if isIdentity { return path }
        if !templates.isEmpty {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false)
            for template in templates where Self.matches(segments, template) {
                return template.joined(separator: "/")
            }
        }
        guard collapseIdentifiers, path.utf8.first == UInt8(ascii: "/") else { return path }
        // One pass over the bytes; a path without identifiers is returned as it is, unallocated.
        var output: [UInt8]? = nil
        let utf8 = path.utf8
        var start = utf8.startIndex
        var index = utf8.startIndex
        while true {
            let atEnd = index == utf8.endIndex
            if atEnd || utf8[index] == UInt8(ascii: "/") {
                let segment = path[start..<index]
                if !segment.isEmpty, Self.isIdentifier(segment) {
                    if output == nil { output = Array(utf8[utf8.startIndex..<start]) }
                    output!.append(contentsOf: "{id}".utf8)
                } else if output != nil {
                    output!.append(contentsOf: utf8[start..<index])
                }
                if atEnd { break }
                output?.append(UInt8(ascii: "/"))
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        return output.map { String(decoding: $0, as: UTF8.self) } ?? path
    }

    static func matches(_ segments: [Substring], _ template: [Substring]) -> Bool {
        guard segments.count == template.count else { return false }
        for (segment, pattern) in zip(segments, template) {
            if pattern.hasPrefix("{") && pattern.hasSuffix("}") {
                if segment.isEmpty { return false }
            } else if segment != pattern {
                return false
            }
        }
        return true
    }

    /// Decimal numbers, UUIDs, long hex strings, long base64/base64url tokens, and ISO dates.
    static func isIdentifier(_ segment: Substring) -> Bool {
        // Short words (`api`, `v1`, `users`) are the common case and never identifiers unless all digits.
        if segment.utf8.count < 10 { return segment.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        let bytes = Array(segment.utf8)
        guard !bytes.isEmpty else { return false }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isHex(_ b: UInt8) -> Bool { isDigit(b) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66) }
        func isLetter(_ b: UInt8) -> Bool { b | 0x20 >= 0x61 && b | 0x20 <= 0x7a }
        if bytes.allSatisfy(isDigit) { return true }
        // UUID: 8-4-4-4-12 hex digits.
        if bytes.count == 36, [8, 13, 18, 23].allSatisfy({ bytes[$0] == 0x2d }),
            bytes.enumerated().allSatisfy({ [8, 13, 18, 23].contains($0.offset) || isHex($0.element) })
        {
            return true
        }
        // Dates: 2024-01-31 or 20240131 (the latter is already all digits).
        if bytes.count == 10, bytes[4] == 0x2d, bytes[7] == 0x2d,
            bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || isDigit($0.element) })
        {
            return true
        }
        if bytes.count >= 16, bytes.allSatisfy(isHex), bytes.contains(where: isDigit) { return true }
        // Tokens: long runs of base64/base64url characters mixing letters and digits.
        let tokenCharacters = bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == 0x2d || $0 == 0x5f || $0 == 0x2b || $0 == 0x3d }
        if bytes.count >= 20, tokenCharacters, bytes.contains(where: isDigit), bytes.contains(where: isLetter) {
            return true
        }
        return false
    }
}
