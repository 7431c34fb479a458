/// Writes JSON with keys in the order given: the report shapes are public contracts, so their
/// field order is fixed by hand rather than by an encoder's sorting.
public struct JSONWriter {
    private var bytes: [UInt8] = []
    private var needsComma = [false]
    private let pretty: Bool
    private var depth = 0

    public var output: String { String(decoding: bytes, as: UTF8.self) }

    public init(pretty: Bool = true) { self.pretty = pretty }

    /// A key quoted once, for fields written thousands of times (one per group or record).
    public struct Key: Sendable {
        fileprivate let quoted: [UInt8]

        public init(_ name: String) {
            var writer = JSONWriter()
            writer.appendQuoted(name)
            quoted = writer.bytes + [UInt8(ascii: ":")]
        }
    }

    public mutating func beginObject(_ key: String? = nil) { open(key, UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray(_ key: String? = nil) { open(key, UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    public mutating func field(_ key: String?, _ value: String?) {
        separator(key)
        if let value { appendQuoted(value) } else { bytes.appendUTF8("null") }
    }

    public mutating func field(_ key: String?, _ value: Int?) {
        separator(key)
        if let value { bytes.appendDecimal(value) } else { bytes.appendUTF8("null") }
    }

    public mutating func field(_ key: String?, _ value: Bool) {
        separator(key)
        bytes.appendUTF8(value ? "true" : "false")
    }

    public mutating func field(_ key: Key, _ value: Int) {
        separator()
        bytes += key.quoted
        if pretty { bytes.append(UInt8(ascii: " ")) }
        bytes.appendDecimal(value)
    }

    public mutating func field(_ key: Key, _ value: Int?) {
        guard let value else {
            separator()
            bytes += key.quoted
            if pretty { bytes.append(UInt8(ascii: " ")) }
            return bytes.appendUTF8("null")
        }
        field(key, value)
    }

    public mutating func field(_ key: Key, _ value: String?) {
        separator()
        bytes += key.quoted
        if pretty { bytes.append(UInt8(ascii: " ")) }
        if let value { appendQuoted(value) } else { bytes.appendUTF8("null") }
    }

    public mutating func field(_ key: Key, _ value: Bool) {
        separator()
        bytes += key.quoted
        if pretty { bytes.append(UInt8(ascii: " ")) }
        bytes.appendUTF8(value ? "true" : "false")
    }

    public mutating func field(_ key: Key, raw: String) {
        separator()
        bytes += key.quoted
        if pretty { bytes.append(UInt8(ascii: " ")) }
        bytes.appendUTF8(raw)
    }

    public mutating func field(_ key: Key, _ values: [String]) {
        separator()
        bytes += key.quoted
        if pretty { bytes.append(UInt8(ascii: " ")) }
        bytes.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.appendUTF8(pretty ? ", " : ",") }
            appendQuoted(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A number already formatted (e.g. exact decimal seconds).
    public mutating func field(_ key: String?, raw: String) {
        separator(key)
        bytes.appendUTF8(raw)
    }

    public mutating func field(_ key: String?, _ values: [String]) {
        separator(key)
        bytes.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.appendUTF8(pretty ? ", " : ",") }
            appendQuoted(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Ends a top-level value with a line feed, so that the next one starts a new line (NDJSON), not an array.
    public mutating func endLine() {
        precondition(depth == 0, "a line ends between top-level values")
        bytes.append(UInt8(ascii: "\n"))
        needsComma[0] = false
    }

    /// Hands what was written so far to `write` once it reaches `count` bytes, keeping the buffer for the rest.
    public mutating func flush(over count: Int, to write: (String) -> Void) {
        bytes.flush(over: count) { write(String(decoding: $0, as: UTF8.self)) }
    }

    public mutating func flush(over count: Int, to write: ByteSink) { bytes.flush(over: count, to: write) }

    private mutating func open(_ key: String?, _ bracket: UInt8) {
        separator(key)
        bytes.append(bracket)
        needsComma.append(false)
        depth += 1
    }

    private mutating func close(_ bracket: UInt8) {
        let hadItems = needsComma.removeLast()
        depth -= 1
        if pretty && hadItems { newline() }
        bytes.append(bracket)
    }

    private mutating func separator(_ key: String? = nil) {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
        if pretty && depth > 0 { newline() }
        if let key {
            appendQuoted(key)
            bytes.appendUTF8(pretty ? ": " : ":")
        }
    }

    private mutating func newline() {
        if depth < Self.indents.count {
            bytes += Self.indents[depth]
        } else {
            bytes.append(UInt8(ascii: "\n"))
            for _ in 0..<depth { bytes.appendUTF8("  ") }
        }
    }

    private static let indents = (0..<8).map { Array(("\n" + String(repeating: "  ", count: $0)).utf8) }

    private mutating func appendQuoted(_ value: String) { bytes.appendJSONString(value) }
}

extension Array where Element == UInt8 {
    /// `value` as a JSON string: quoted, with RFC 8259 §7 escapes.
    mutating func appendJSONString(_ value: String) {
        append(UInt8(ascii: "\""))
        // Native strings are contiguous: read in place (a `var` copy for `withUTF8` cost a retain and release).
        if value.utf8.withContiguousStorageIfAvailable({ appendJSONEscaped($0) }) == nil {
            var value = value
            value.withUTF8 { appendJSONEscaped($0) }
        }
        append(UInt8(ascii: "\""))
    }

    private mutating func appendJSONEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        do {
            // Most keys and values need no escape: copy runs of plain bytes whole.
            var plain = 0
            for i in utf8.indices {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plain..<i]))
                plain = i + 1
                switch byte {
                case UInt8(ascii: "\""): appendUTF8("\\\"")
                case UInt8(ascii: "\\"): appendUTF8("\\\\")
                case UInt8(ascii: "\n"): appendUTF8("\\n")
                case UInt8(ascii: "\r"): appendUTF8("\\r")
                case UInt8(ascii: "\t"): appendUTF8("\\t")
                default:
                    let hex = String(byte, radix: 16)
                    appendUTF8("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                }
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plain...]))
        }
    }
}
