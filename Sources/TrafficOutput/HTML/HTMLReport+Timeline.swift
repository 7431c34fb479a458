import TrafficAggregation
import TrafficAnalysis
import TrafficCapture
import TrafficSessions

extension HTMLReport {
    static let timelineWidth = 1000.0
    /// The waterfall's label column.
    static let waterfallLabelWidth = 220.0
    static let waterfallRowHeight = 16.0
    /// Hosts drawn apart in bytes over time; the rest are one "other" band.
    static let timelineHosts = 8

    /// A waterfall of every message when the report kept them all, else bytes over time by host.
    func timeline(into html: inout HTMLBuffer) {
        guard let timeline = report.timeline, timeline.messageCount > 0 else { return }
        html.raw("<section aria-labelledby=\"h-timeline\">\n<h2 id=\"h-timeline\">Timeline</h2>\n")
        if timeline.isComplete, !timeline.events.isEmpty {
            waterfall(timeline, into: &html)
        } else {
            html.raw("<p class=\"note\">")
            html.int(timeline.messageCount)
            html.raw(" messages: more than the ")
            html.int(timeline.eventLimit)
            html.raw(" a waterfall shows, so bytes per ")
            html.int(Int(timeline.bucketSeconds))
            html.raw(" s by host instead.</p>\n")
            bytesOverTime(timeline, into: &html)
        }
        html.raw("</section>\n")
    }

    /// One exchange of the waterfall: its request and response, either possibly absent.
    private struct Exchange {
        var request: ReportTimeline.Event?
        var response: ReportTimeline.Event?
        var other: [ReportTimeline.Event] = []
        var start: CaptureTime { [request?.time, response?.time, other.first?.time].compactMap { $0 }.min() ?? .zero }
        var end: CaptureTime { [request?.time, response?.time, other.last?.time].compactMap { $0 }.max() ?? .zero }
    }

    /// A row per connection, a bar per exchange from its request to its response, like a browser's network
    /// panel. Only start times are known (a record's time is its first byte's packet), so a bar spans from
    /// the request's first byte to the response's first byte: the wait, not the download.
    private func waterfall(_ timeline: ReportTimeline, into html: inout HTMLBuffer) {
        struct Connection {
            var capture: Int
            var number: Int
            var host: String
            var exchanges: [Int: Exchange] = [:]
        }
        var connections: [Connection] = []
        var index: [Int64: Int] = [:]
        for event in timeline.events {
            let id = Int64(event.capture) << 40 | Int64(event.connection & 0xFF_FFFF_FFFF)
            let i = index[id] ?? {
                connections.append(Connection(capture: event.capture, number: event.connection, host: event.host))
                index[id] = connections.count - 1
                return connections.count - 1
            }()
            var exchange = connections[i].exchanges[event.index] ?? Exchange()
            switch event.kind {
            case .request: exchange.request = event
            case .response: exchange.response = event
            case .tls, .quic: exchange.other.append(event)
            }
            connections[i].exchanges[event.index] = exchange
        }
        let first = timeline.events.first!.time, last = timeline.events.last!.time
        let span = Double(first.duration(to: last).nanoseconds)
        let plot = Self.timelineWidth - Self.waterfallLabelWidth - 10
        func x(_ t: CaptureTime) -> Double {
            Self.waterfallLabelWidth + (span > 0 ? Double(first.duration(to: t).nanoseconds) / span * plot : 0)
        }
        let height = Double(connections.count) * Self.waterfallRowHeight + 24
        html.raw("<p class=\"note\">Every message (")
        html.int(timeline.messageCount)
        html.raw("), a row per TCP connection, over ")
        html.text(Self.seconds(first.duration(to: last).nanoseconds))
        html.raw(" from ")
        html.text(first.iso8601)
        html.raw(". A bar runs from a request's first packet to its response's first packet; ")
        html.raw("<span class=\"sw s-req\"></span> request, <span class=\"sw s-resp\"></span> response.</p>\n")
        html.raw("<svg class=\"waterfall\" id=\"waterfall\" viewBox=\"0 0 \(Int(Self.timelineWidth)) ")
        html.number(height)
        html.raw("\" role=\"img\" aria-label=\"Waterfall of ")
        html.int(timeline.messageCount)
        html.raw(" messages on ")
        html.int(connections.count)
        html.raw(" connections\">\n")
        for (row, connection) in connections.enumerated() {
            let y = Double(row) * Self.waterfallRowHeight
            html.raw("<text x=\"2\" y=\"")
            html.number(y + 12)
            html.raw("\">")
            html.text(TextTable.shortenMiddle("#\(connection.number) \(connection.host)", to: 32))
            html.raw("</text>\n")
            for key in connection.exchanges.keys.sorted() {
                let exchange = connection.exchanges[key]!
                let x0 = x(exchange.start), x1 = max(x(exchange.end), x0 + 3)
                var tip = "connection \(connection.number) exchange \(key)"
                if let r = exchange.request {
                    tip += ": \(r.method ?? "") \(r.host)\(r.path), request \(r.bytes) bytes at +"
                        + Self.seconds(first.duration(to: r.time).nanoseconds)
                }
                if let r = exchange.response {
                    tip += "; response \(r.status.map(String.init) ?? "") \(r.bytes) bytes at +"
                        + Self.seconds(first.duration(to: r.time).nanoseconds)
                }
                for r in exchange.other { tip += "; TLS \(r.bytes) bytes at +" + Self.seconds(first.duration(to: r.time).nanoseconds) }
                html.raw("<g class=\"wf-exchange\"><title>")
                html.text(tip)
                html.raw("</title>")
                let style = exchange.response != nil || exchange.request == nil ? "s-resp" : "s-req"
                bar(x: x0, y: y + 3, width: x1 - x0, height: Self.waterfallRowHeight - 6, style: style, into: &html)
                if exchange.request != nil {
                    bar(x: x0, y: y + 3, width: 3, height: Self.waterfallRowHeight - 6, style: "s-req", into: &html)
                }
                html.raw("</g>\n")
            }
        }
        axis(y: height - 20, from: first, to: last, left: Self.waterfallLabelWidth, into: &html)
        html.raw("</svg>\n")
    }

    private func bar(x: Double, y: Double, width: Double, height: Double, style: String, into html: inout HTMLBuffer) {
        html.raw("<rect class=\"\(style)\" x=\"")
        html.number(x)
        html.raw("\" y=\"")
        html.number(y)
        html.raw("\" width=\"")
        html.number(width)
        html.raw("\" height=\"")
        html.number(height)
        html.raw("\"/>")
    }

    /// A baseline with the start and end offsets.
    private func axis(y: Double, from first: CaptureTime, to last: CaptureTime, left: Double, into html: inout HTMLBuffer) {
        html.raw("<line class=\"gap\" x1=\"")
        html.number(left)
        html.raw("\" x2=\"")
        html.number(Self.timelineWidth - 10)
        html.raw("\" y1=\"")
        html.number(y)
        html.raw("\" y2=\"")
        html.number(y)
        html.raw("\"/><text x=\"")
        html.number(left)
        html.raw("\" y=\"")
        html.number(y + 14)
        html.raw("\">+0 s</text><text text-anchor=\"end\" x=\"")
        html.number(Self.timelineWidth - 10)
        html.raw("\" y=\"")
        html.number(y + 14)
        html.raw("\">+")
        html.text(Self.seconds(first.duration(to: last).nanoseconds))
        html.raw("</text>\n")
    }

    /// Stacked columns of bytes per time bucket, one band per top host and one for the others.
    private func bytesOverTime(_ timeline: ReportTimeline, into html: inout HTMLBuffer) {
        var byHost: [String: Int] = [:]
        for (key, bytes) in timeline.bytesByHostAndTime { byHost[key.host, default: 0] &+= bytes }
        let top = byHost.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(Self.timelineHosts)
        var band: [String: Int] = [:]
        for (i, host) in top.enumerated() { band[host.key] = i }
        let bands = top.count + (byHost.count > top.count ? 1 : 0)
        var columns: [Int64: [Int]] = [:]
        for (key, bytes) in timeline.bytesByHostAndTime {
            columns[key.start, default: Array(repeating: 0, count: bands)][band[key.host] ?? bands - 1] &+= bytes
        }
        let starts = columns.keys.sorted()
        guard let firstStart = starts.first, let lastStart = starts.last else { return }
        let width = timeline.bucketSeconds
        let slots = Double((lastStart - firstStart) / width + 1)
        let peak = Double(columns.values.map { $0.reduce(0, &+) }.max() ?? 1)
        let plotHeight = 240.0, left = 60.0
        let slotWidth = (Self.timelineWidth - left - 10) / slots
        let names = top.map(\.key) + (bands > top.count ? ["other hosts"] : [])
        let palette = ["#0969da", "#1a7f37", "#bf8700", "#cf222e", "#8250df", "#1b7c83", "#953800", "#6e7781", "#afb8c1"]
        html.raw("<ul class=\"legend\">")
        for (i, name) in names.enumerated() {
            html.raw("<li><span class=\"sw\" style=\"background:\(palette[i % palette.count])\"></span>")
            html.text(name)
            html.raw(" ")
            html.bytesLabel(i < top.count ? top[top.startIndex + i].value : byHost.values.reduce(0, &+) - top.reduce(0) { $0 &+ $1.value })
            html.raw("</li>")
        }
        html.raw("</ul>\n<svg class=\"waterfall\" id=\"bytes-over-time\" viewBox=\"0 0 \(Int(Self.timelineWidth)) ")
        html.int(Int(plotHeight) + 30)
        html.raw("\" role=\"img\" aria-label=\"Bytes per \(width) s by host; the legend gives each host's total\">\n")
        for start in starts {
            let values = columns[start]!
            let x = left + Double((start - firstStart) / width) * slotWidth
            var y = plotHeight
            var tip = CaptureTime(nanoseconds: start &* 1_000_000_000).iso8601 + " (+\(start - firstStart) s):"
            for (i, bytes) in values.enumerated() where bytes > 0 { tip += " \(names[i]) \(bytes) bytes;" }
            html.raw("<g><title>")
            html.text(tip)
            html.raw("</title>")
            for (i, bytes) in values.enumerated() where bytes > 0 {
                let h = Double(bytes) / peak * plotHeight
                y -= h
                html.raw("<rect x=\"")
                html.number(x)
                html.raw("\" y=\"")
                html.number(y)
                html.raw("\" width=\"")
                html.number(max(1, slotWidth - 1))
                html.raw("\" height=\"")
                html.number(h)
                html.raw("\" fill=\"\(palette[i % palette.count])\"/>")
            }
            html.raw("</g>\n")
        }
        html.raw("<text x=\"2\" y=\"12\">")
        html.text(humanBytes(Int(peak)))
        html.raw("</text>")
        axis(
            y: plotHeight + 2, from: CaptureTime(nanoseconds: firstStart &* 1_000_000_000),
            to: CaptureTime(nanoseconds: (lastStart &+ width) &* 1_000_000_000), left: left, into: &html)
        html.raw("</svg>\n")
    }
}
