import TrafficAggregation
import TrafficAnalysis
import TrafficCapture

extension HTMLReport {
    /// The title, the facts of the run, and the bar of where the bytes go.
    func header(into html: inout HTMLBuffer) {
        let s = report.summary
        html.raw("<header>\n<h1>traffic report</h1>\n<p class=\"muted\">")
        html.text(report.captures.map(\.path).joined(separator: ", "))
        html.raw("</p>\n<dl class=\"facts\">\n")
        fact("Captures", String(s.captures), into: &html)
        let starts = report.captures.compactMap(\.firstPacket), ends = report.captures.compactMap(\.lastPacket)
        if let start = starts.min(), let end = ends.max() {
            fact("From", Self.shortTime(start), into: &html)
            fact("To", Self.shortTime(end), into: &html)
        }
        // Spans add up over captures, as in the table's footer and the JSON summary's duration.
        fact(s.captures > 1 ? "Capture spans (sum)" : "Capture span", Self.seconds(s.durationNanoseconds), into: &html)
        fact("Connections", "\(s.connections) (\(s.httpConnections) HTTP, \(s.tlsConnections) TLS)", into: &html)
        fact("Requests", String(s.requests), into: &html)
        fact("Responses", String(s.responses), into: &html)
        fact("Groups", String(report.groups.count), into: &html)
        html.raw("<div><dt>HTTP bytes</dt><dd>")
        html.bytesLabel(report.totals.totalBytes)
        html.raw("</dd></div>\n</dl>\n</header>\n")

        html.raw("<section aria-labelledby=\"h-where\">\n<h2 id=\"h-where\">Where the bytes go</h2>\n")
        let bar = StackedBar(Self.whereParts(report.totals, nonHTTPBytes: s.nonHTTPBytes, h2ControlBytes: s.h2ControlBytes))
        bar.svg(width: 1000, height: 22, cssClass: "bar", label: "Where the bytes go", into: &html)
        bar.legend(into: &html)
        var notes: [String] = []
        if s.missingBytes > 0 { notes.append("\(s.missingBytes) bytes were never captured (gaps)") }
        if s.incompleteMessages > 0 { notes.append("\(s.incompleteMessages) messages were cut short") }
        if s.decodeErrors > 0 { notes.append("\(s.decodeErrors) bodies could not be decoded") }
        for note in s.scopeNotes { notes.append("not analysed: " + note.message) }
        for capture in report.captures { if let damage = capture.damage { notes.append("\(capture.path): \(damage.reason) at byte \(damage.offset)") } }
        html.notes(notes)
        html.raw("</section>\n")
    }

    private func fact(_ name: String, _ value: String, into html: inout HTMLBuffer) {
        html.raw("<div><dt>")
        html.text(name)
        html.raw("</dt><dd>")
        html.text(value)
        html.raw("</dd></div>\n")
    }

    /// `2026-11-21 05:57:32.621 UTC`: the ISO time to the millisecond, short enough for a fact box.
    static func shortTime(_ time: CaptureTime) -> String {
        let iso = time.iso8601
        guard iso.count >= 23 else { return iso }
        return String(iso.prefix(23).map { $0 == "T" ? " " : $0 }) + " UTC"
    }

    /// `12.345 s`.
    static func seconds(_ nanoseconds: Int64) -> String {
        let millis = nanoseconds / 1_000_000
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }

    /// The run's bytes by kind: start lines, headers without cookies, cookies, bodies as sent, TLS records
    /// (encrypted, unseen inside), tunnels, connection overhead (`--overhead`), HTTP/2 control frames (all of
    /// them, from the summary: attributed to records with `--overhead` or not), and streams that were not HTTP.
    static func whereParts(_ t: GroupTotals, nonHTTPBytes: Int, h2ControlBytes: Int = 0) -> [StackedBar.Part] {
        var parts = rowParts(t)
        let tunnel = t.request.tunnelBytes &+ t.response.tunnelBytes
        let overhead = [t.request, t.response].reduce(0) {
            $0 &+ $1.handshakeBytes &+ $1.teardownBytes &+ $1.packetOverheadBytes &+ $1.retransmittedBytes
        }
        parts.append(StackedBar.Part("tunnels", "s-tunnel", tunnel))
        parts.append(StackedBar.Part("TCP/IP overhead", "s-overhead", overhead))
        parts.append(StackedBar.Part("HTTP/2 control frames", "s-h2", h2ControlBytes))
        parts.append(StackedBar.Part("not HTTP", "s-nonhttp", nonHTTPBytes))
        return parts
    }

    /// A group's transfer bytes split: start lines, headers (without cookie lines), cookie lines, bodies as
    /// sent, and TLS record bytes (what is left of `transfer_bytes`).
    static func rowParts(_ t: GroupTotals) -> [StackedBar.Part] {
        let line = t.request.lineBytes &+ t.response.lineBytes
        let cookie = t.request.cookieBytes &+ t.response.cookieBytes
        let header = t.request.headerBytes &+ t.response.headerBytes &- cookie
        let body = t.request.bodyBytes &+ t.response.bodyBytes
        let tls = t.totalBytes &- line &- header &- cookie &- body
        return [
            StackedBar.Part("start lines", "s-line", line), StackedBar.Part("headers", "s-header", header),
            StackedBar.Part("cookies", "s-cookie", cookie), StackedBar.Part("bodies as sent", "s-body", body),
            StackedBar.Part("TLS records", "s-tls", tls),
        ]
    }

    /// Header bytes (cookie lines are among them) over all bytes of a group: the treemap's colour.
    static func headShare(_ t: GroupTotals) -> Double {
        let total = t.totalBytes
        guard total > 0 else { return 0 }
        return Double(t.request.headerBytes &+ t.response.headerBytes) / Double(total)
    }
}
