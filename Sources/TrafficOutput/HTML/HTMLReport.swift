import TrafficAggregation
import TrafficAnalysis
import TrafficCapture

/// Renders `traffic analyze --format html`: one self-contained page with a summary, a stacked bar of where
/// the bytes go, a treemap, a sortable and filterable endpoint table and a timeline.
///
/// Bounded: it reads the report's groups once, keeps the first `top` (they come sorted by total bytes) and
/// sums the rest into one "other" row; the timeline comes from `TrafficReport.timeline`, which is bounded
/// itself. Records (`--messages`) are never read. Every number in a chart is a number of the JSON report
/// (exact bytes in tooltips and `data-v` attributes); labels use KiB/MiB.
public struct HTMLReport {
    public var report: TrafficReport
    /// Groups drawn one by one; the rest make the "other" row.
    public var top: Int

    public static let defaultTop = 500

    public init(report: TrafficReport, top: Int? = nil) {
        self.report = report
        self.top = max(1, top ?? Self.defaultTop)
    }

    /// The first `top` groups, and the sum and count of the others.
    struct Rows {
        var shown: [ReportGroup] = []
        var other = GroupTotals()
        var otherCount = 0
    }

    func rows() -> Rows {
        var rows = Rows()
        for group in report.groups {
            if rows.shown.count < top {
                rows.shown.append(group)
            } else {
                rows.other.add(group.totals)
                rows.otherCount += 1
            }
        }
        return rows
    }

    /// Writes the page in pieces of about `chunkBytes`.
    public func write(chunkBytes: Int = 1 << 20, to write: ByteSink) {
        var html = HTMLBuffer()
        let rows = self.rows()
        HTMLPage.begin(title: "traffic report: " + report.captures.map(\.path).joined(separator: ", "), into: &html)
        header(into: &html)
        html.flush(over: chunkBytes, to: write)
        treemap(rows, into: &html)
        html.flush(over: chunkBytes, to: write)
        table(rows, into: &html, chunkBytes: chunkBytes, write: write)
        timeline(into: &html)
        html.raw("<p class=\"note\">Made by <code>traffic analyze --format html</code>. The same numbers as ")
        html.raw("<code>--format json</code>; exact byte counts are in the tooltips.</p>\n")
        HTMLPage.end(into: &html)
        html.flush(over: 0, to: write)
    }

    public func render() -> String {
        var bytes: [UInt8] = []
        write { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
