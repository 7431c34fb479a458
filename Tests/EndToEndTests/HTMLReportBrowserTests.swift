import Foundation
import Testing

/// Whether the browser check can run: Debian's chromium and Playwright for Python (`make deps` installs both).
enum BrowserTools {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static let playwright = Harness.pythonCanImport("playwright.sync_api")

    static var available: Bool { chromium != nil && playwright }
}

/// `--format html` in a real browser: every sample's report, a failing check and a diff, opened in headless
/// chromium by `scripts/html-report-check.py` (console errors, network requests, table = JSON groups, sorting,
/// filtering, treemap areas within a pixel of their bytes, zoom, print, non-blank screenshots).
@Suite(.enabled(if: BrowserTools.available, "chromium or Playwright is missing: run `make deps` (apt chromium, pip playwright)"))
struct HTMLReportBrowserTests {
    @Test func samplesRenderAndBehaveInChromium() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("traffic-html-\(getpid())")
        defer { try? FileManager.default.removeItem(at: out) }
        let (status, output) = try Harness.runPython(
            "scripts/html-report-check.py", ["--traffic", Harness.binary.path, "--out", out.path])
        let failures = output.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(status == 0, "html-report-check.py exited \(status):\n\(output)")
        // Every sample was checked: one `ok` line per capture, plus the bounded run (--top 2), the check and the diff page.
        let samples = try FileManager.default.contentsOfDirectory(atPath: Harness.samples.path).filter { $0.hasSuffix(".pcap") }
        let passed = output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
        #expect(passed.count == samples.count + 3, "\(passed.count) checks passed for \(samples.count) samples:\n\(output)")
    }
}
