/// Writes JSON with keys in the order given: the report shapes are public contracts, so their
/// field order is fixed by hand rather than by an encoder's sorting.
public struct JSONWriter {
    public private(set) var output = ""
    private var needsComma = [false]
    private let pretty: Bool
    private var depth = 0

    public init(pretty: Bool = true) { self.pretty = pretty }

    public mutating func beginObject(_ key: String? = nil) { open(key, "{") }
    public mutating func endObject() { close("}") }
    public mutating func beginArray(_ key: String? = nil) { open(key, "[") }
    public mutating func endArray() { close("]") }

    public mutating func field(_ key: String?, _ value: String?) {
        separator(key)
        if let value { Self.appendQuoted(value, to: &output) } else { output += "null" }
    }

    public mutating func field(_ key: String?, _ value: Int?) {
        separator(key)
        output += value.map(String.init) ?? "null"
    }

    public mutating func field(_ key: String?, _ value: Bool) {
        separator(key)
        output += value ? "true" : "false"
    }

    /// A number already formatted (e.g. exact decimal seconds).
    public mutating func field(_ key: String?, raw: String) {
        separator(key)
        output += raw
    }

    public mutating func field(_ key: String?, _ values: [String]) {
        separator(key)
        output += "["
        for (i, value) in values.enumerated() {
            if i > 0 { output += pretty ? ", " : "," }
            Self.appendQuoted(value, to: &output)
        }
        output += "]"
    }

    private mutating func open(_ key: String?, _ bracket: String) {
        separator(key)
        output += bracket
        needsComma.append(false)
        depth += 1
    }

    private mutating func close(_ bracket: String) {
        let hadItems = needsComma.removeLast()
        depth -= 1
        if pretty && hadItems { newline() }
        output += bracket
    }

    private mutating func separator(_ key: String?) {
        if needsComma[needsComma.count - 1] { output += "," }
        needsComma[needsComma.count - 1] = true
        if pretty && depth > 0 { newline() }
        if let key {
            Self.appendQuoted(key, to: &output)
            output += pretty ? ": " : ":"
        }
    }

    private mutating func newline() {
        output += "\n" + String(repeating: "  ", count: depth)
    }

    /// RFC 8259 §7 string escaping.
    static func appendQuoted(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
