/// The frame every HTML report shares: doctype, inline style and script, and nothing fetched from anywhere
/// (a content security policy forbids it, so a page opened from a CI artifact never reaches the network).
package enum HTMLPage {
    /// Opens the document and its `<main>`; `title` is escaped.
    package static func begin(title: String, into html: inout HTMLBuffer) {
        html.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        // default-src 'none': no fonts, images, frames or fetches; the page's own style and script only.
        html.raw("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ")
        html.raw("style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")
        html.raw("<meta name=\"generator\" content=\"traffic\">\n<title>")
        html.text(title)
        html.raw("</title>\n<style>\n")
        html.raw(style)
        html.raw("</style>\n</head>\n<body>\n<main>\n")
    }

    /// Closes what `begin` opened, with the script last so that it finds every element.
    package static func end(into html: inout HTMLBuffer) {
        html.raw("</main>\n<script>\n")
        html.raw(script)
        html.raw("</script>\n</body>\n</html>\n")
    }

    /// A fill colour for a share (0…1) of header and cookie bytes: blue when bodies dominate, through
    /// yellow, to red when the bytes are mostly headers. Every chart also states the share in text.
    package static func headerShareColor(_ share: Double) -> String {
        let s = share.isFinite ? min(1, max(0, share)) : 0
        let hue = Int((210 - 200 * s).rounded())
        return "hsl(\(hue),65%,\(Int((62 - 8 * s).rounded()))%)"
    }
}
