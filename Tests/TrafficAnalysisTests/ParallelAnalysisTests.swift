import Foundation
import Testing
import TrafficAnalysis

/// The sharded path in-process, so that `make test-sanitize` runs it under ThreadSanitizer: worker threads,
/// batch queues and the merge give the same report as one thread.
@Suite struct ParallelAnalysisTests {
    static let samples = AccountingInvariantTests.sampleFiles.filter { !$0.contains("truncated") }

    @Test(arguments: samples)
    func shardsGiveTheSameReport(path: String) throws {
        var options = ReportOptions()
        options.keepMessages = true
        options.overhead = .all
        options.jobs = 1
        let one = try TrafficAnalyzer.analyze(paths: [path], options: options)
        options.jobs = 3
        let three = try TrafficAnalyzer.analyze(paths: [path], options: options)
        #expect(one.summary == three.summary, "\(path)")
        #expect(one.groups.map(\.keys) == three.groups.map(\.keys))
        #expect(one.groups.map(\.totals) == three.groups.map(\.totals))
        let first = (one.messages ?? []).map { "\($0.record.connection)/\($0.record.index)/\($0.record.kind)/\($0.record.wireBytes)" }
        let second = (three.messages ?? []).map { "\($0.record.connection)/\($0.record.index)/\($0.record.kind)/\($0.record.wireBytes)" }
        #expect(first == second)
    }
}
