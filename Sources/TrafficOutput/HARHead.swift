/// A message's head as kept in its record (`MessageRecord.head`: the start line, then the field lines, each
/// ended by one LF), taken apart for HAR: the reason phrase, the fields as sent, and their cookies.
///
/// Binary-safe: a value that is valid UTF-8 is written as it is; one that is not is read as ISO-8859-1
/// (a byte per character), as browsers read header bytes (RFC 9110 §5.5 allows only visible US-ASCII but
/// servers send more), so no byte is lost or replaced and nothing traps on garbage.
struct HARHead {
    struct Field {
        var name: String
        var value: String
    }

    /// The start line: `GET /a HTTP/1.1` or `HTTP/1.1 200 OK`; empty when no head was kept.
    var startLine = ""
    var fields: [Field] = []

    init(_ head: [UInt8]) {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { return }
        startLine = Self.text(first)
        for line in lines.dropFirst() {
            // obs-fold (RFC 9112 §5.2): a line starting with whitespace continues the previous value; the
            // fold is replaced by one space, as the parser does for the values it keeps.
            if let byte = line.first, byte == 0x20 || byte == 0x09 {
                guard !fields.isEmpty else { continue }
                let more = Self.text(Self.trimmed(line))
                if !more.isEmpty { fields[fields.count - 1].value += (fields[fields.count - 1].value.isEmpty ? "" : " ") + more }
                continue
            }
            // A line without a colon is a malformed field (flag `malformed_header`): kept with an empty value
            // so the header list stays what was sent.
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                fields.append(Field(name: Self.text(line), value: ""))
                continue
            }
            fields.append(Field(
                name: Self.text(line[line.startIndex..<colon]), value: Self.text(Self.trimmed(line[(colon + 1)...]))))
        }
    }

    /// The reason phrase of a status line (`OK` in `HTTP/1.1 200 OK`); empty when there is none.
    var reasonPhrase: String {
        let parts = startLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? String(parts[2]) : ""
    }

    /// Values of every field named `name` (case-insensitive), in order.
    func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// Cookies of `Cookie` fields (RFC 6265 §4.2.1: `name=value` pairs separated by `;`).
    var requestCookies: [Field] {
        values("cookie").flatMap { line in
            line.split(separator: ";").compactMap { pair -> Field? in
                let text = pair.trimmingSpaces
                guard !text.isEmpty else { return nil }
                guard let equals = text.firstIndex(of: "=") else { return Field(name: "", value: String(text)) }
                return Field(name: String(text[..<equals]).trimmingSpacesString, value: String(text[text.index(after: equals)...]).trimmingSpacesString)
            }
        }
    }

    /// A `Set-Cookie` field (RFC 6265 §4.1.1): the cookie and its attributes.
    struct SetCookie {
        var name: String
        var value: String
        var path: String?
        var domain: String?
        var expires: String?
        var httpOnly = false
        var secure = false
    }

    var responseCookies: [SetCookie] {
        values("set-cookie").map { line in
            var parts = line.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpacesString }
            let pair = parts.isEmpty ? "" : parts.removeFirst()
            let equals = pair.firstIndex(of: "=")
            var cookie = SetCookie(
                name: equals.map { String(pair[..<$0]).trimmingSpacesString } ?? "",
                value: equals.map { String(pair[pair.index(after: $0)...]).trimmingSpacesString } ?? pair)
            for attribute in parts {
                let key = attribute.split(separator: "=", maxSplits: 1).first.map { $0.lowercased() } ?? ""
                let value = attribute.firstIndex(of: "=").map { String(attribute[attribute.index(after: $0)...]) }
                switch key.trimmingSpacesString {
                case "path": cookie.path = value
                case "domain": cookie.domain = value
                case "expires": cookie.expires = value
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let b = slice.first, b == 0x20 || b == 0x09 { slice.removeFirst() }
        while let b = slice.last, b == 0x20 || b == 0x09 || b == 0x0D { slice.removeLast() }
        return slice
    }

    /// UTF-8 when the bytes are; else ISO-8859-1, a character per byte.
    ///
    /// ASCII, nearly every head, is made with `String(decoding:as:)` from the bytes' buffer, which gives the same
    /// string: `String(validating:as:)` on an `ArraySlice` is not specialized and looked up its generic metadata
    /// for every field (2 % of a `--format har` run).
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBufferPointer { buffer in
            var high: UInt8 = 0
            for b in buffer { high |= b }
            if high < 0x80 { return String(decoding: buffer, as: UTF8.self) }
            if let utf8 = String(validating: buffer, as: UTF8.self) { return utf8 }
            return String(String.UnicodeScalarView(buffer.map { Unicode.Scalar($0) }))
        }
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: SubSequence {
        var s = self[...]
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }

    fileprivate var trimmingSpacesString: String { String(trimmingSpaces) }
}
