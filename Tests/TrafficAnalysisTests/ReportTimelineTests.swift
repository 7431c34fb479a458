@testable import TrafficAggregation
import Testing
import TrafficAnalysis
import TrafficCapture

/// The HTML report's timeline: bounded, complete when small, the same on one thread and on three, and
/// accounting for every byte of the groups.
@Suite struct ReportTimelineTests {
    static func analyze(_ path: String, jobs: Int, eventLimit: Int = 3000) throws -> TrafficReport {
        var options = ReportOptions()
        options.collectTimeline = true
        options.timelineEventLimit = eventLimit
        options.keepMessages = true
        options.jobs = jobs
        return try TrafficAnalyzer.analyze(paths: [path], options: options)
    }

    static func describe(_ t: ReportTimeline) -> [String] {
        t.events.map { "\($0.capture)/\($0.connection)/\($0.index)/\($0.kind)/\($0.time.nanoseconds)/\($0.bytes)" }
            + t.bytesByHostAndTime.map { "\($0.key.host)@\($0.key.start)=\($0.value)" }.sorted()
    }

    @Test(arguments: ParallelAnalysisTests.samples)
    func shardsGiveTheSameTimelineAndEveryByte(path: String) throws {
        let one = try Self.analyze(path, jobs: 1), three = try Self.analyze(path, jobs: 3)
        let a = try #require(one.timeline), b = try #require(three.timeline)
        #expect(Self.describe(a) == Self.describe(b), "\(path)")
        #expect(a.messageCount == (one.messages ?? []).reduce(0) { n, _ in n + 1 })
        #expect(a.bytesByHostAndTime.values.reduce(0, +) == one.totals.totalBytes)
        if a.isComplete { #expect(a.events.count == a.messageCount) }
    }

    /// With a limit below the message count the waterfall keeps the earliest messages, in time order.
    @Test func aSmallLimitKeepsTheEarliestMessages() throws {
        let path = ParallelAnalysisTests.samples.first { $0.hasSuffix("http-basic.pcap") }!
        let full = try #require(try Self.analyze(path, jobs: 1).timeline)
        let cut = try #require(try Self.analyze(path, jobs: 3, eventLimit: 5).timeline)
        #expect(!cut.isComplete)
        #expect(cut.events.count == 5)
        #expect(cut.events == Array(full.events.prefix(5)))
        #expect(cut.events.map(\.time) == cut.events.map(\.time).sorted())
    }

    @Test func offUnlessAsked() throws {
        let path = ParallelAnalysisTests.samples.first { $0.hasSuffix("http-basic.pcap") }!
        #expect(try TrafficAnalyzer.analyze(paths: [path], options: ReportOptions()).timeline == nil)
    }
}
