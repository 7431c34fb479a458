import Foundation
import Testing

/// `--format html` from the command line, without a browser (these run everywhere): one self-contained page
/// that loads nothing, the same groups as JSON in its table, the bounded paths, and the commands that have no
/// page refusing it.
@Suite struct HTMLReportCLITests {
    static func page(_ arguments: [String]) throws -> String {
        let result = try Harness.run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout
    }

    @Test func thePageIsSelfContained() throws {
        let html = try Self.page(["analyze", "samples/http-basic.pcap", "--format", "html"])
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("default-src 'none'"))
        // Nothing that would fetch: no src or href attributes, no url(), no @import.
        for needle in [" src=", " href=", "url(", "@import", "http://", "https://"] {
            #expect(!html.contains(needle), "the page contains \(needle)")
        }
    }

    /// The table's rows are the JSON report's groups, in order, with the same totals.
    @Test func tableRowsAreTheJSONGroups() throws {
        let html = try Self.page(["analyze", "samples/http-encodings.pcap", "--format", "html"])
        let json = try Self.page(["analyze", "samples/http-encodings.pcap", "--format", "json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let groups = try #require(report["groups"] as? [[String: Any]])
        let keys = html.components(separatedBy: "<tr data-rank=").dropFirst().map { row in
            String(row.split(separator: "\"", maxSplits: 4, omittingEmptySubsequences: false)[3])
        }
        #expect(keys == groups.map { "\($0["host"]!) \($0["path"]!)".lowercased() })
        let totals = html.components(separatedBy: "<tr data-rank=").dropFirst().map { row in
            // The last data-v of the row is `total`.
            Int(row.components(separatedBy: "data-v=\"").last!.prefix { $0.isNumber })!
        }
        #expect(totals == groups.map { $0["total_bytes"] as! Int })
    }

    @Test func topSumsTheRestInOneRow() throws {
        let html = try Self.page(["analyze", "samples/http-basic.pcap", "--format", "html", "--top", "2"])
        #expect(html.components(separatedBy: "<tr data-rank=").count - 1 == 2)
        #expect(html.components(separatedBy: "<tr class=\"other\"").count - 1 == 1)
        #expect(html.contains("(other: 4 groups)"))
    }

    @Test func theTimelineSwitchesToBytesOverTimeBeyondTheLimit() throws {
        let small = try Self.page(["analyze", "samples/http-basic.pcap", "--format", "html"])
        #expect(small.contains("id=\"waterfall\"") && !small.contains("id=\"bytes-over-time\""))
        let large = try Self.page(["analyze", "samples/http-basic.pcap", "--format", "html", "--timeline-messages", "3"])
        #expect(!large.contains("id=\"waterfall\"") && large.contains("id=\"bytes-over-time\""))
    }

    @Test func checkAndDiffWriteAPageWithTheVerdict() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("html-cli-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(try Harness.run(["baseline", "samples/check-base.pcap", "-o", base]).status == 0)
        let check = try Harness.run(["check", "samples/check-larger.pcap", "--baseline", base, "--format", "html"])
        #expect(check.status == 1)
        #expect(check.stdout.contains("class=\"verdict fail\"") && check.stdout.contains("FAILED"))
        let diff = try Self.page(["diff", base, "samples/check-larger.pcap", "--format", "html"])
        #expect(diff.contains("class=\"verdict info\"") && !diff.contains("<tr class=\"fail\""))
    }

    @Test func connectionsRefusesHTML() throws {
        let result = try Harness.run(["connections", "samples/http-basic.pcap", "--format", "html"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--format html is for analyze, diff and check"))
    }
}
