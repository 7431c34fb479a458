/// A horizontal bar split into named parts, as inline SVG, with a legend that repeats every part in text
/// (name, bytes, share) so the bar reads without colour and a screen reader gets the same numbers.
package struct StackedBar {
    /// One part: `style` is a class of the page's style sheet (`s-body`, …).
    package struct Part {
        package var name: String
        package var style: String
        package var bytes: Int

        package init(_ name: String, _ style: String, _ bytes: Int) {
            self.name = name
            self.style = style
            self.bytes = bytes
        }
    }

    package var parts: [Part]

    package init(_ parts: [Part]) { self.parts = parts }

    package var total: Int { parts.reduce(0) { $0 &+ max(0, $1.bytes) } }

    /// The bar, `width` wide in SVG units; `cssClass` sizes it (`bar`, `rowbar`). Parts ≤ 0 are left out.
    package func svg(width: Double, height: Double, cssClass: String, label: String, into html: inout HTMLBuffer) {
        html.raw("<svg class=\"\(cssClass)\" viewBox=\"0 0 ")
        html.number(width)
        html.raw(" ")
        html.number(height)
        html.raw("\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"")
        html.text(label + ": " + description)
        html.raw("\">")
        let total = Double(self.total)
        var x = 0.0
        if total > 0 {
            for part in parts where part.bytes > 0 {
                let w = Double(part.bytes) / total * width
                html.raw("<rect class=\"\(part.style)\" x=\"")
                html.number(x)
                html.raw("\" y=\"0\" width=\"")
                html.number(w)
                html.raw("\" height=\"")
                html.number(height)
                html.raw("\" data-bytes=\"")
                html.int(part.bytes)
                html.raw("\"><title>")
                html.text("\(part.name): \(part.bytes) bytes (\(Self.percent(part.bytes, of: self.total)))")
                html.raw("</title></rect>")
                x += w
            }
        }
        html.raw("</svg>")
    }

    /// `start lines 1.2 KiB (3.4 %), headers …`: the bar in words.
    package var description: String {
        let total = self.total
        return parts.filter { $0.bytes > 0 }.map { "\($0.name) \($0.bytes) bytes (\(Self.percent($0.bytes, of: total)))" }
            .joined(separator: ", ")
    }

    /// The legend: a swatch, the name, the amount (exact bytes in its tooltip) and the share, per part.
    package func legend(into html: inout HTMLBuffer) {
        let total = self.total
        html.raw("<ul class=\"legend\">")
        for part in parts where part.bytes > 0 {
            html.raw("<li><span class=\"sw \(part.style)\" aria-hidden=\"true\"></span>")
            html.text(part.name)
            html.raw(" ")
            html.bytesLabel(part.bytes)
            html.raw(" <span class=\"muted\">")
            html.text(Self.percent(part.bytes, of: total))
            html.raw("</span></li>")
        }
        html.raw("</ul>\n")
    }

    /// A share with one decimal, `12.5 %`.
    package static func percent(_ part: Int, of total: Int) -> String {
        guard total > 0 else { return "0 %" }
        let tenths = Int((Double(part) / Double(total) * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }
}
