/// An HTML document built as UTF-8 bytes and handed on in pieces (`flush`), so that a page of thousands of
/// rows is never held whole. Text and attribute values go through `text(_:)`, which escapes them: keys come
/// from the wire (hosts, paths) and must never become markup.
package struct HTMLBuffer {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// Markup written as is: only for literals of this module, never for captured values.
    package mutating func raw(_ markup: String) { bytes.appendUTF8(markup) }

    /// Text escaped for an element's content or a quoted attribute value.
    package mutating func text(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&#39;".utf8)
            // Control characters are not allowed in HTML text; a path from a hostile capture may hold them.
            case 0..<0x09, 0x0B, 0x0C, 0x0E..<0x20, 0x7F: bytes.append(contentsOf: "\u{FFFD}".utf8)
            default: bytes.append(byte)
            }
        }
    }

    package mutating func int(_ value: Int) { bytes.appendDecimal(value) }

    /// The notes under a page's header (damage, scope, what was compared), one list item each; nothing when empty.
    package mutating func notes(_ notes: [String]) {
        guard !notes.isEmpty else { return }
        raw("<ul class=\"note\">")
        for note in notes {
            raw("<li>")
            text(note)
            raw("</li>")
        }
        raw("</ul>\n")
    }

    /// A number with at most two decimals (SVG coordinates).
    package mutating func number(_ value: Double) {
        guard value.isFinite else { return bytes.append(UInt8(ascii: "0")) }
        let hundredths = Int((value * 100).rounded())
        if hundredths < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = hundredths.magnitude
        bytes.appendDecimal(Int(magnitude / 100))
        let fraction = Int(magnitude % 100)
        if fraction != 0 {
            bytes.append(UInt8(ascii: "."))
            if fraction < 10 { bytes.append(UInt8(ascii: "0")) }
            bytes.appendDecimal(fraction % 10 == 0 ? fraction / 10 : fraction)
        }
    }

    /// `humanBytes` for the label, the exact count for the tooltip: `<span title="1234 bytes">1.2 KiB</span>`.
    package mutating func bytesLabel(_ value: Int) {
        raw("<span title=\"")
        int(value)
        raw(" bytes\">")
        text(humanBytes(value))
        raw("</span>")
    }

    package mutating func flush(over count: Int, to write: ByteSink) { bytes.flush(over: count, to: write) }
}
