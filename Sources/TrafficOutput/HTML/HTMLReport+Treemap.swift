import TrafficAggregation
import TrafficAnalysis

extension HTMLReport {
    /// The treemap's size in SVG units; the page scales it to its width.
    static let treemapWidth = 1000.0
    static let treemapHeight = 420.0

    /// One host (the first group key) and its groups (the other keys), for the treemap.
    struct TreemapHost {
        var name: String
        var bytes = 0
        var leaves: [(label: String, totals: GroupTotals)] = []
    }

    /// Groups by their first key; the "other" row is a host of its own. Order: as the groups came (bytes).
    func treemapHosts(_ rows: Rows) -> [TreemapHost] {
        var hosts: [TreemapHost] = []
        var index: [String: Int] = [:]
        for group in rows.shown where group.totals.totalBytes > 0 {
            let name = group.keys.first ?? ""
            let label = group.keys.count > 1 ? group.keys.dropFirst().joined(separator: " ") : name
            let i = index[name] ?? {
                hosts.append(TreemapHost(name: name))
                index[name] = hosts.count - 1
                return hosts.count - 1
            }()
            hosts[i].bytes &+= group.totals.totalBytes
            hosts[i].leaves.append((label, group.totals))
        }
        if rows.otherCount > 0, rows.other.totalBytes > 0 {
            let name = "(other \(rows.otherCount) groups)"
            hosts.append(TreemapHost(name: name, bytes: rows.other.totalBytes, leaves: [(name, rows.other)]))
        }
        return hosts
    }

    /// Area = total bytes, colour = header share; hover shows the exact numbers, a click zooms into a host.
    /// Leaves' areas are proportional to bytes across the whole map (no padding between hosts, a frame is
    /// drawn over them instead), which the browser test measures.
    func treemap(_ rows: Rows, into html: inout HTMLBuffer) {
        let hosts = treemapHosts(rows)
        html.raw("<section aria-labelledby=\"h-treemap\">\n<h2 id=\"h-treemap\">Bytes by ")
        html.text(report.groupBy.first?.columnName ?? "group")
        if report.groupBy.count > 1 {
            html.raw(" and ")
            html.text(report.groupBy.dropFirst().map(\.columnName).joined(separator: ", "))
        }
        html.raw("</h2>\n")
        guard !hosts.isEmpty else {
            html.raw("<p>No HTTP bytes to draw.</p>\n</section>\n")
            return
        }
        html.raw("<p class=\"note\">Area: total bytes. Colour: share of header and cookie bytes, from ")
        html.raw("<span style=\"color:\(HTMLPage.headerShareColor(0))\">&#9632;</span> 0 % (bodies) to ")
        html.raw("<span style=\"color:\(HTMLPage.headerShareColor(1))\">&#9632;</span> 100 % (headers); the share is ")
        html.raw("also in each tooltip and in the table. Click a host to zoom in.</p>\n")
        html.raw("<div class=\"tm-bar\"><button type=\"button\" id=\"tm-back\" hidden>&#8592; All hosts</button>")
        html.raw("<span id=\"tm-details\" aria-live=\"polite\">Hover or focus a rectangle for its numbers.</span></div>\n")
        html.raw("<svg id=\"treemap\" viewBox=\"0 0 \(Int(Self.treemapWidth)) \(Int(Self.treemapHeight))\" ")
        html.raw("role=\"img\" aria-labelledby=\"tm-title tm-desc\" data-total=\"")
        html.int(hosts.reduce(0) { $0 &+ $1.bytes })
        html.raw("\"><title id=\"tm-title\">Treemap of bytes by group</title><desc id=\"tm-desc\">")
        html.text(hosts.prefix(10).map { "\($0.name): \($0.bytes) bytes" }.joined(separator: "; "))
        html.text(hosts.count > 10 ? "; and \(hosts.count - 10) more." : ".")
        html.raw(" The endpoint table below has every number.</desc>\n")
        let bounds = Treemap.Rect(x: 0, y: 0, width: Self.treemapWidth, height: Self.treemapHeight)
        let hostRects = Treemap.layout(hosts.map(\.bytes), in: bounds)
        html.raw("<g class=\"tm-view\" id=\"tm-all\">\n")
        for (i, host) in hosts.enumerated() {
            let leafRects = Treemap.layout(host.leaves.map(\.totals.totalBytes), in: hostRects[i])
            for (j, (leaf, rect)) in zip(host.leaves, leafRects).enumerated() {
                // The host's largest leaf carries its name, so the overview says whose paths they are.
                let label = j == 0 && leaf.label != host.name ? host.name + " " + leaf.label : leaf.label
                treemapLeaf(host: host.name, label: label, totals: leaf.totals, rect: rect, zoom: "tm-z\(i)", into: &html)
            }
            frame(hostRects[i], label: host.name, into: &html)
        }
        html.raw("</g>\n")
        // One zoomed view per host with more than one leaf: its groups fill the whole map.
        for (i, host) in hosts.enumerated() {
            html.raw("<g class=\"tm-view zoomed\" id=\"tm-z\(i)\" style=\"display:none\">\n")
            let leafRects = Treemap.layout(host.leaves.map(\.totals.totalBytes), in: bounds)
            for (leaf, rect) in zip(host.leaves, leafRects) {
                treemapLeaf(host: host.name, label: leaf.label, totals: leaf.totals, rect: rect, zoom: nil, into: &html)
            }
            html.raw("</g>\n")
        }
        html.raw("</svg>\n</section>\n")
    }

    private func treemapLeaf(
        host: String, label: String, totals t: GroupTotals, rect: Treemap.Rect, zoom: String?, into html: inout HTMLBuffer
    ) {
        guard rect.area > 0 else { return }
        let share = Self.headShare(t)
        let name = label == host || label.hasPrefix(host + " ") ? label : host + " " + label
        let tip = name + ": \(t.totalBytes) bytes (request \(t.request.bytes), response "
            + "\(t.response.bytes)); \(t.requests) requests; headers and cookies \(Int((share * 100).rounded())) %"
        html.raw("<rect class=\"tm-leaf\" tabindex=\"0\"")
        Self.geometry(rect, into: &html)
        html.raw("\" fill=\"\(HTMLPage.headerShareColor(share))\" data-bytes=\"")
        html.int(t.totalBytes)
        html.raw("\" data-tip=\"")
        html.text(tip)
        if let zoom { html.raw("\" data-zoom=\"\(zoom)") }
        html.raw("\"><title>")
        html.text(tip)
        html.raw("</title></rect>\n")
        // Labels only where they fit (about 6.5 units a character at 11 px).
        if rect.width >= 48, rect.height >= 16 {
            let characters = Int((rect.width - 6) / 6.5)
            html.raw("<text x=\"")
            html.number(rect.x + 3)
            html.raw("\" y=\"")
            html.number(rect.y + 13)
            html.raw("\">")
            html.text(TextTable.shortenMiddle(label, to: characters))
            // The second line only whole: the amount with the header share, or the amount alone.
            let long = humanBytes(t.totalBytes) + " · hdr \(Int((share * 100).rounded())) %"
            let line = long.count <= characters ? long : humanBytes(t.totalBytes)
            if rect.height >= 30, line.count <= characters {
                html.raw("<tspan x=\"")
                html.number(rect.x + 3)
                html.raw("\" dy=\"14\">")
                html.text(line)
                html.raw("</tspan>")
            }
            html.raw("</text>\n")
        }
    }

    /// The outline of a host over its leaves, with its name when it fits.
    private func frame(_ rect: Treemap.Rect, label: String, into html: inout HTMLBuffer) {
        guard rect.area > 0 else { return }
        html.raw("<rect class=\"tm-host-frame\"")
        Self.geometry(rect, into: &html)
        html.raw("\"/>\n")
    }

    /// ` x="…" y="…" width="…" height="…`: a rectangle's attributes, the last one left open for what follows.
    private static func geometry(_ rect: Treemap.Rect, into html: inout HTMLBuffer) {
        html.raw(" x=\"")
        html.number(rect.x)
        html.raw("\" y=\"")
        html.number(rect.y)
        html.raw("\" width=\"")
        html.number(rect.width)
        html.raw("\" height=\"")
        html.number(rect.height)
    }
}
