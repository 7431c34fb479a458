/// Writes JSON with keys in the order given: the report shapes are public contracts, so their
/// field order is fixed by hand rather than by an encoder's sorting.
public struct JSONWriter {
    private var bytes: [UInt8] = []
    /// Bit `d`: whether the value open at depth `d` (0: the top level) has an item yet, so that the next one
    /// takes a comma. A bit per level instead of a `[Bool]`: every field checked and set its array's
    /// uniqueness, half a million times for a report of 13 000 groups.
    private var hasItems: UInt64 = 0
    /// Levels 64 and deeper (no report nests so deep; kept so that any depth works).
    private var deepHasItems: [Bool] = []
    private let pretty: Bool
    private var depth = 0
    private var room = WritingRoom()

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
        hasItems &= ~1
    }

    /// Hands what was written so far to `write` once it reaches `count` bytes, keeping the buffer for the rest.
    public mutating func flush(over count: Int, to write: (String) -> Void) {
        bytes.flush(over: count) { write(String(decoding: $0, as: UTF8.self)) }
    }

    public mutating func flush(over count: Int, to write: ByteSink) { bytes.flush(over: count, to: write) }

    private mutating func open(_ key: String?, _ bracket: UInt8) {
        separator(key)
        bytes.append(bracket)
        depth += 1
        if depth < 64 { hasItems &= ~(1 << UInt64(depth)) } else { deepHasItems.append(false) }
    }

    private mutating func close(_ bracket: UInt8) {
        let hadItems = depth < 64 ? hasItems & 1 << UInt64(depth) != 0 : deepHasItems.removeLast()
        depth -= 1
        if pretty && hadItems { newline() }
        bytes.append(bracket)
    }

    /// Notes an item of the value open at `depth`; whether it had one already.
    @inline(__always)
    private mutating func noteItem() -> Bool {
        guard depth < 64 else { return noteDeepItem() }
        let bit: UInt64 = 1 << UInt64(depth)
        defer { hasItems |= bit }
        return hasItems & bit != 0
    }

    @inline(never)
    private mutating func noteDeepItem() -> Bool {
        defer { deepHasItems[depth - 64] = true }
        return deepHasItems[depth - 64]
    }

    private mutating func separator(_ key: String? = nil) {
        if noteItem() { bytes.append(UInt8(ascii: ",")) }
        if pretty && depth > 0 { newline() }
        if let key {
            appendQuoted(key)
            bytes.appendUTF8(pretty ? ": " : ":")
        }
    }

    private mutating func newline() {
        let count = 1 + 2 * depth
        if count <= Self.indent.utf8CodeUnitCount {
            bytes.append(contentsOf: UnsafeBufferPointer(start: Self.indent.utf8Start, count: count))
        } else {
            bytes.append(UInt8(ascii: "\n"))
            for _ in 0..<depth { bytes.appendUTF8("  ") }
        }
    }

    /// A line break and the indentation of depth 31 at most, of which a line takes its depth's part: a literal,
    /// read with no lazy initialization (a `static let` of arrays cost a `swift_once` and a retain per line).
    private static var indent: StaticString {
        "\n                                                              "
    }

    private mutating func appendQuoted(_ value: String) { bytes.appendJSONString(value) }
}

/// For writers of many objects of one shape (a report's groups): an object's members written as bytes at
/// once, each with the separator `memberPrefix` made for it beforehand, instead of a call per member.
extension JSONWriter {
    /// What goes between a member's comma and its value in an object whose members are at `depth`: the line
    /// break and indentation (pretty), the quoted name and the colon (and a space, pretty): as `field(_:_:)` writes it.
    func memberPrefix(_ key: Key, depth: Int) -> [UInt8] {
        var prefix: [UInt8] = []
        if pretty && depth > 0 {
            prefix.append(UInt8(ascii: "\n"))
            prefix += repeatElement(UInt8(ascii: " "), count: 2 * depth)
        }
        prefix += key.quoted
        if pretty { prefix.append(UInt8(ascii: " ")) }
        return prefix
    }

    /// The depth of the value open now (0: none).
    var openDepth: Int { depth }

    mutating func appendRaw(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    mutating func appendComma() { bytes.append(UInt8(ascii: ",")) }

    /// How many bytes are written and not yet flushed.
    var byteCount: Int { bytes.count }

    /// Takes back the bytes written from `count` on (not flushed since).
    mutating func removeBytes(from count: Int) { bytes.removeLast(bytes.count - count) }

    /// `field`'s UTF-8 as a JSON string, as `field(_:_:)` writes a `String` decoded from it.
    mutating func appendJSONString(utf8 field: UnsafeRawBufferPointer) { bytes.appendJSONString(utf8: field) }

    /// Appends what `body` writes at the end, at most `maxCount` bytes (it returns how many).
    mutating func appendWritten(maxCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        room.append(to: &bytes, maxCount: maxCount, body)
    }

    /// Notes that the value open now has members (written through `appendRaw` and `appendWritten`): the
    /// next one takes a comma, and closing it breaks the line first.
    mutating func noteMembersWritten() { _ = noteItem() }
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

    /// A field's UTF-8 as `appendJSONString` writes the `String` decoded from it: the bytes as they are when
    /// they are ASCII (nearly every group key), else through the `String` (which repairs bytes that are not
    /// UTF-8, as a decoded key did).
    mutating func appendJSONString(utf8 field: UnsafeRawBufferPointer) {
        let utf8 = field.assumingMemoryBound(to: UInt8.self)
        let plain = PlainBytes.isPlainJSON(field)
        if !plain, utf8.contains(where: { $0 >= 0x80 }) { return appendJSONString(String(decoding: utf8, as: UTF8.self)) }
        append(UInt8(ascii: "\""))
        if plain { append(contentsOf: utf8) } else { appendJSONEscaped(utf8) }
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
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6) { escape in
                    append(contentsOf: UnsafeBufferPointer(rebasing: escape[..<writeJSONEscape(byte, to: escape.baseAddress!)]))
                }
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plain...]))
        }
    }
}

/// The escape of a byte that a JSON string cannot hold as it is (RFC 8259 §7: a quote, a backslash, a control
/// byte), written at `out` (room for 6): `\"`, `\\`, `\n`, `\r`, `\t`, or `\u00XX` in lower-case hex. Its length.
func writeJSONEscape(_ byte: UInt8, to out: UnsafeMutablePointer<UInt8>) -> Int {
    out[0] = UInt8(ascii: "\\")
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"): out[1] = byte
    case UInt8(ascii: "\n"): out[1] = UInt8(ascii: "n")
    case UInt8(ascii: "\r"): out[1] = UInt8(ascii: "r")
    case UInt8(ascii: "\t"): out[1] = UInt8(ascii: "t")
    default:
        let hex = UInt8(ascii: "0")
        func digit(_ value: UInt8) -> UInt8 { value < 10 ? hex + value : UInt8(ascii: "a") + value - 10 }
        out[1] = UInt8(ascii: "u")
        out[2] = hex
        out[3] = hex
        out[4] = digit(byte >> 4)
        out[5] = digit(byte & 0xF)
        return 6
    }
    return 2
}
