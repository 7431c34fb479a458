import Foundation
import Testing

/// Issue 27: reports of disjoint captures merge exactly. `traffic merge` of one report per capture must give
/// the bytes `traffic analyze` gives over all the captures in one run: JSON, CSV and the table, on every
/// sample (keyed, HTTP/2, QUIC, tunnels, damaged captures included) and every corpus trace.
@Suite final class MergeTests {
    let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("traffic-merge-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Every capture under samples/ (top level, tunnels, pairing, malformed), as paths from the package root.
    static func allSamples() -> [String] {
        var paths: [String] = []
        for folder in ["samples", "samples/tunnels", "samples/pairing", "samples/malformed"] {
            let names = (try? FileManager.default.contentsOfDirectory(
                atPath: Harness.packageRoot.appendingPathComponent(folder).path)) ?? []
            for name in names.sorted() where name.hasSuffix(".pcap") || name.hasSuffix(".pcapng") || name.hasSuffix(".gz") {
                paths.append(folder + "/" + name)
            }
        }
        return paths
    }

    /// The samples' own key logs (not the deliberately wrong or foreign ones), given to every run alike.
    static func keyLogArguments() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Harness.samples.path)) ?? []
        return names.filter { $0.hasSuffix(".keys") && !$0.hasSuffix(".wrong.keys") && !$0.hasSuffix(".other.keys") }
            .sorted().flatMap { ["--keylog", "samples/" + $0] }
    }

    /// Analyses each capture alone into a JSON report (captures that cannot be read at all are left out, as
    /// one run would refuse them), then compares `merge` of the reports with one `analyze` over the captures.
    func expectMergeEqualsOneRun(_ captures: [String], _ options: [String]) throws {
        var reports: [String] = []
        var readable: [String] = []
        for (index, capture) in captures.enumerated() {
            let report = path("report-\(index).json")
            let result = try Harness.run(["analyze", "--format", "json", "-o", report] + options + [capture])
            #expect(!result.signalled, "\(capture)")
            guard result.status == 0 else { continue }
            reports.append(report)
            readable.append(capture)
        }
        #expect(readable.count >= 2, "at least two captures to merge")
        for format in ["json", "csv", "table"] {
            let one = try Harness.run(["analyze", "--format", format, "--bytes"] + options + readable)
            #expect(one.status == 0, "\(one.stderr)")
            let merged = try Harness.run(["merge", "--format", format, "--bytes"] + reports)
            #expect(merged.status == 0, "\(merged.stderr)")
            #expect(merged.stdout == one.stdout, "merge --format \(format) differs from one analyze over \(readable.count) captures")
        }
        // A merged report merges again: merging is associative, so a reduce may combine partial results in any tree.
        let half = reports.count / 2
        let left = path("left.json"), right = path("right.json")
        #expect(try Harness.run(["merge", "--format", "json", "-o", left] + reports[..<half]).status == 0)
        #expect(try Harness.run(["merge", "--format", "json", "-o", right] + reports[half...]).status == 0)
        let tree = try Harness.run(["merge", "--format", "json", left, right])
        let flat = try Harness.run(["merge", "--format", "json"] + reports)
        #expect(tree.status == 0 && tree.stdout == flat.stdout, "merge of merged halves differs")
    }

    @Test func mergeOfEverySampleEqualsOneRun() throws {
        try expectMergeEqualsOneRun(Self.allSamples(), Self.keyLogArguments())
    }

    @Test func mergeWithOverheadPerCaptureAndStatusGroupsEqualsOneRun() throws {
        try expectMergeEqualsOneRun(
            Self.allSamples(),
            Self.keyLogArguments() + ["--overhead", "all", "--per-capture", "--group-by", "host,method,status"])
    }

    @Test(.enabled(if: !Harness.corpusTraces().isEmpty, "../shared/corpus is absent"))
    func mergeOfEveryCorpusTraceEqualsOneRun() throws {
        let traces = Harness.corpusTraces().map { Harness.corpus.appendingPathComponent("traces").appendingPathComponent($0).path }
        try expectMergeEqualsOneRun(traces, [])
        try expectMergeEqualsOneRun(traces, ["--normalize-paths", "--group-by", "host,path,status"])
    }

    @Test func reportsOfOtherSettingsAreRefused() throws {
        let plain = path("plain.json"), normalized = path("normalized.json"), overhead = path("overhead.json")
        #expect(try Harness.run(["analyze", "--format", "json", "-o", plain, "samples/http-basic.pcap"]).status == 0)
        #expect(try Harness.run(
            ["analyze", "--format", "json", "--normalize-paths", "-o", normalized, "samples/http-pipelined.pcap"]).status == 0)
        #expect(try Harness.run(
            ["analyze", "--format", "json", "--overhead", "handshake", "-o", overhead, "samples/http-pipelined.pcap"]).status == 0)
        let grouping = try Harness.run(["merge", plain, normalized])
        #expect(grouping.status == 3)
        #expect(grouping.stderr == "traffic: \(normalized): grouped or counted differently from \(plain) (--normalize-paths on vs off); "
            + "reports merge only when made with the same settings\n")
        let counting = try Harness.run(["merge", plain, overhead])
        #expect(counting.status == 3)
        #expect(counting.stderr.contains("(--overhead handshake vs none)"))
        // Not a report: a baseline, a cut file, a capture.
        let baseline = path("baseline.json")
        #expect(try Harness.run(["baseline", "samples/http-basic.pcap", "-o", baseline]).status == 0)
        let notReport = try Harness.run(["merge", baseline])
        #expect(notReport.status == 3)
        #expect(notReport.stderr.contains("not a report of `traffic analyze --format json`"))
        let text = try String(contentsOfFile: plain, encoding: .utf8)
        let cut = path("cut.json")
        try String(text.prefix(text.count / 2)).write(toFile: cut, atomically: true, encoding: .utf8)
        let cutResult = try Harness.run(["merge", plain, cut])
        #expect(cutResult.status == 3)
        #expect(cutResult.stderr.contains("cut short"))
        let capture = try Harness.run(["merge", "samples/http-basic.pcap"])
        #expect(capture.status == 3)
        #expect(!capture.signalled)
        #expect(try Harness.run(["merge", path("absent.json")]).status == 3)
    }

    /// `baseline` and `check` take merged reports in place of captures, with the same result.
    @Test func baselineAndCheckAcceptMergedReports() throws {
        let captures = ["samples/http-basic.pcap", "samples/http-pipelined.pcap", "samples/http-encodings.pcap"]
        var reports: [String] = []
        for (i, capture) in captures.enumerated() {
            let report = path("n\(i).json")
            #expect(try Harness.run(["analyze", "--format", "json", "--normalize-paths", "-o", report, capture]).status == 0)
            reports.append(report)
        }
        let merged = path("merged.json")
        #expect(try Harness.run(["merge", "--format", "json", "-o", merged] + reports).status == 0)
        let fromCaptures = path("from-captures.json"), fromReport = path("from-report.json")
        #expect(try Harness.run(["baseline", "-o", fromCaptures] + captures).status == 0)
        #expect(try Harness.run(["baseline", "-o", fromReport, merged]).status == 0)
        #expect(try String(contentsOfFile: fromCaptures, encoding: .utf8) == String(contentsOfFile: fromReport, encoding: .utf8))
        let checkCaptures = try Harness.run(["check", "--baseline", fromCaptures] + captures)
        let checkReport = try Harness.run(["check", "--baseline", fromCaptures, merged])
        #expect(checkCaptures.status == 0 && checkReport.status == 0, "\(checkReport.stderr)")
        #expect(checkReport.stdout.contains("PASSED"))
        // A report grouped otherwise is refused with the reason, not compared.
        let plain = path("plain.json")
        #expect(try Harness.run(["analyze", "--format", "json", "-o", plain, captures[0]]).status == 0)
        let refused = try Harness.run(["check", "--baseline", fromCaptures, plain])
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("grouped differently from the baseline (--normalize-paths on vs off)"))
        let mixed = try Harness.run(["check", "--baseline", fromCaptures, plain, captures[0]])
        #expect(mixed.status == 3)
        #expect(mixed.stderr.contains("not both"))
    }
}
