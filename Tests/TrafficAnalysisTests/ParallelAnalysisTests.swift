@testable import TrafficAggregation
import Foundation
import Testing
@testable import TrafficAnalysis
import TrafficWire

/// The sharded path in-process, so that `make test-sanitize` runs it under ThreadSanitizer: worker threads,
/// batch queues and the merge give the same report as one thread.
@Suite struct ParallelAnalysisTests {
    static let samples = AccountingInvariantTests.sampleFiles.filter { !$0.contains("truncated") }

    @Test(arguments: samples)
    func shardsGiveTheSameReport(path: String) throws {
        try Self.expectShardsGiveTheSameReport(path: path)
    }

    /// Records listed and overhead attributed: the report of one job, and the same with two, three and four (two
    /// jobs: the reading thread keeps some connections; four: it keeps none unless decrypting, `localShare`).
    /// Returns the one-job report.
    @discardableResult
    static func expectShardsGiveTheSameReport(path: String, keys: [String] = []) throws -> TrafficReport {
        var options = ReportOptions()
        options.keepMessages = true
        options.overhead = .all
        options.analysis.keyLogPaths = keys
        options.jobs = 1
        let one = try TrafficAnalyzer.analyze(paths: [path], options: options)
        let first = (one.messages ?? []).map { "\($0.record.connection)/\($0.record.index)/\($0.record.kind)/\($0.record.wireBytes)" }
        for jobs in [2, 3, 4] {
            options.jobs = jobs
            let sharded = try TrafficAnalyzer.analyze(paths: [path], options: options)
            #expect(one.summary == sharded.summary, "\(path) jobs \(jobs)")
            #expect(one.groups.map(\.keys) == sharded.groups.map(\.keys))
            #expect(one.groups.map(\.totals) == sharded.groups.map(\.totals))
            let second = (sharded.messages ?? []).map { "\($0.record.connection)/\($0.record.index)/\($0.record.kind)/\($0.record.wireBytes)" }
            #expect(first == second, "\(path) jobs \(jobs)")
        }
        return one
    }

    /// The reading thread's share of the hash buckets: 20 % with two jobs, none with more; with a sixth of the
    /// reading cost (decrypting), 45 % with two jobs, 26.7 % with three, 17.5 % with four, none from eleven on.
    @Test func readingThreadShare() {
        #expect(ShardedSegmentSink.localShare(shards: 2) == 1024 * 8 / 40)
        #expect(ShardedSegmentSink.localShare(shards: 3) == 0)
        #expect(ShardedSegmentSink.localShare(shards: 4) == 0)
        #expect(ShardedSegmentSink.localShare(shards: 256) == 0)
        let decrypting = 0.1
        #expect(ShardedSegmentSink.localShare(shards: 2, readingCost: decrypting) == 1024 * 18 / 40)
        #expect(ShardedSegmentSink.localShare(shards: 3, readingCost: decrypting) == 1024 * 16 / 60)
        #expect(ShardedSegmentSink.localShare(shards: 4, readingCost: decrypting) == 1024 * 14 / 80)
        #expect(ShardedSegmentSink.localShare(shards: 10, readingCost: decrypting) == 1024 * 2 / 200)
        #expect(ShardedSegmentSink.localShare(shards: 11, readingCost: decrypting) == 0)
        #expect(ShardedSegmentSink.localShare(shards: 256, readingCost: decrypting) == 0)
    }

    /// r from the options: a sixth when decrypting or inflating every gzip body, two thirds when records are
    /// made for a stream or a list, the factors multiplied.
    @Test func readingCostFromOptions() {
        var options = ReportOptions()
        #expect(abs(ShardedSegmentSink.readingCost(options: options, decrypting: false) - 0.6) < 1e-12)
        #expect(abs(ShardedSegmentSink.readingCost(options: options, decrypting: true) - 0.1) < 1e-12)
        options.verifyDecoding = true
        #expect(abs(ShardedSegmentSink.readingCost(options: options, decrypting: false) - 0.1) < 1e-12)
        #expect(abs(ShardedSegmentSink.readingCost(options: options, decrypting: true) - 0.6 / 36) < 1e-12)
        options.verifyDecoding = false
        options.keepMessages = true
        #expect(abs(ShardedSegmentSink.readingCost(options: options, decrypting: false) - 0.4) < 1e-12)
        #expect(ShardedSegmentSink.localShare(shards: 2, readingCost: 0.4) == 1024 * 12 / 40)
    }

    /// Decrypted captures, whose reading thread keeps a larger share of the connections: the same report with
    /// two, three and four jobs as with one (records listed, overhead attributed).
    @Test(arguments: [
        ("samples/https-v12-aes128gcm.pcap", ["samples/https-v12-aes128gcm.keys"]),
        ("samples/http2-tls.pcap", ["samples/http2-tls.keys"]),
        ("samples/https-dsb.pcapng", []),
    ])
    func decryptedShardsGiveTheSameReport(path: String, keys: [String]) throws {
        let one = try Self.expectShardsGiveTheSameReport(path: path, keys: keys)
        #expect(one.summary.tlsDecrypted > 0, "\(path) is decrypted")
    }

    /// The samples above put connections on both sides of the change: with two jobs, one whose hash bucket the
    /// reading thread analyses only when decrypting (between the cleartext and the decrypting share), one it
    /// analyses either way, and one a worker gets either way. Without this the comparison above might never run
    /// a decrypted connection on the reading thread.
    @Test func decryptedSamplesCoverBothThreads() throws {
        func endpoint(_ text: String) -> Endpoint {
            let parts = text.split(separator: ":")
            let octets = parts[0].split(separator: ".").map { UInt32($0)! }
            return Endpoint(address: IPAddress(ipv4: octets.reduce(0) { $0 << 8 | $1 }), port: UInt16(parts[1])!)
        }
        var buckets: [UInt64] = []
        for (path, keys) in [
            ("samples/https-v12-aes128gcm.pcap", ["samples/https-v12-aes128gcm.keys"]),
            ("samples/http2-tls.pcap", ["samples/http2-tls.keys"]), ("samples/https-dsb.pcapng", []),
        ] {
            var options = ReportOptions()
            options.keepMessages = true
            options.analysis.keyLogPaths = keys
            let report = try TrafficAnalyzer.analyze(paths: [path], options: options)
            for entry in report.messages ?? [] where entry.record.index == 1 && entry.record.kind == .request {
                let hash = ShardedSegmentSink.hash(endpoint(entry.record.client), endpoint(entry.record.server))
                buckets.append(hash % 1024)
            }
        }
        let cleartext = ShardedSegmentSink.localShare(shards: 2)
        let decrypting = ShardedSegmentSink.localShare(shards: 2, readingCost: 0.1)
        #expect(buckets.count == 4)
        #expect(buckets.contains { $0 >= cleartext && $0 < decrypting }, "\(buckets)")
        #expect(buckets.contains { $0 < cleartext }, "\(buckets)")
        #expect(buckets.contains { $0 >= decrypting }, "\(buckets)")
    }
}

/// `--messages` records written to a temporary file in sorted runs and merged when read: the same list, in
/// the same order, as sorting them all in memory, on one thread and on three, read once or twice.
@Suite struct SpilledMessagesTests {
    static func dump(_ list: MessageList?) -> [String] {
        (list ?? []).map { entry in
            "\(entry.capture) " + Mirror(reflecting: entry.record).children.map { "\($0.label ?? "?")=\($0.value)" }
                .joined(separator: " ") + " tls=\(String(describing: entry.record.tls))"
        }
    }

    @Test(arguments: ParallelAnalysisTests.samples)
    func runsMergeIntoTheInMemoryOrder(path: String) throws {
        var options = ReportOptions()
        options.keepMessages = true
        options.overhead = .all
        options.jobs = 1
        let inMemory = try TrafficAnalyzer.analyze(paths: [path], options: options)
        #expect(inMemory.warnings.isEmpty)
        let expected = Self.dump(inMemory.messages)
        for (jobs, runLength) in [(1, 1), (1, 3), (3, 2), (3, 7)] {
            options.jobs = jobs
            options.messageRunLength = runLength
            let spilled = try TrafficAnalyzer.analyze(paths: [path], options: options)
            #expect(spilled.messages?.count == expected.count)
            #expect(Self.dump(spilled.messages) == expected, "\(path) jobs \(jobs) runs of \(runLength)")
            #expect(Self.dump(spilled.messages) == expected, "read twice")
        }
    }

    /// No temporary file can be made: the records stay in memory, the list is the same, and a warning says so.
    @Test func anUnwritableDirectoryKeepsRecordsInMemory() throws {
        let path = ParallelAnalysisTests.samples[0]
        var options = ReportOptions()
        options.keepMessages = true
        let expected = Self.dump(try TrafficAnalyzer.analyze(paths: [path], options: options).messages)
        options.messageRunLength = 2
        options.messageSpoolDirectory = "/nonexistent/traffic-test"
        for jobs in [1, 3] {
            options.jobs = jobs
            let report = try TrafficAnalyzer.analyze(paths: [path], options: options)
            #expect(Self.dump(report.messages) == expected)
            #expect(report.warnings.map(\.description)
                == ["warning: --messages: cannot create a temporary file in /nonexistent/traffic-test; records are kept in memory"])
        }
    }
}
