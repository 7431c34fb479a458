@testable import TrafficAggregation
import Foundation
import Testing
@testable import TrafficAnalysis
import TrafficTestSupport
import TrafficWire

/// The sharded path in-process, so that `make test-sanitize` runs it under ThreadSanitizer: worker threads,
/// batch queues and the merge give the same report as one thread.
@Suite struct ParallelAnalysisTests {
    static let samples = AccountingInvariantTests.sampleFiles.filter { !$0.contains("truncated") }

    @Test(arguments: samples)
    func shardsGiveTheSameReport(path: String) throws {
        try Self.expectShardsGiveTheSameReport(path: path)
    }

    /// Zeek's real-world traces (retransmissions, reused ports, packets after a connection closed, captures that
    /// start mid-connection): every packet of a connection follows its first to one shard, however the
    /// connections are placed.
    @Test(.enabled(if: !AccountingInvariantTests.corpusFiles.isEmpty, "../shared/corpus is absent"),
          arguments: AccountingInvariantTests.corpusFiles)
    func corpusShardsGiveTheSameReport(path: String) throws {
        try Self.expectShardsGiveTheSameReport(path: path)
    }

    /// Records listed and overhead attributed: the report of one job, and the same with two, three and four, their
    /// connections placed by load (on a small capture the workers are never behind: all on the workers) and in
    /// turn (the reading thread gets the first, each worker the next: every thread gets some, interleaved).
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
        for placement in [ConnectionPlacement.byLoad, .inTurn] {
            for jobs in [2, 3, 4] {
                options.jobs = jobs
                options.connectionPlacement = placement
                let sharded = try TrafficAnalyzer.analyze(paths: [path], options: options)
                #expect(one.summary == sharded.summary, "\(path) jobs \(jobs) \(placement)")
                #expect(one.groups.map(\.keys) == sharded.groups.map(\.keys), "\(path) jobs \(jobs) \(placement)")
                #expect(one.groups.map(\.totals) == sharded.groups.map(\.totals), "\(path) jobs \(jobs) \(placement)")
                let second = (sharded.messages ?? []).map { "\($0.record.connection)/\($0.record.index)/\($0.record.kind)/\($0.record.wireBytes)" }
                #expect(first == second, "\(path) jobs \(jobs) \(placement)")
            }
        }
        return one
    }

    /// Decrypted captures, whose connections cost more to analyse: the same report with two, three and four jobs
    /// as with one (records listed, overhead attributed), on the reading thread and on workers.
    @Test(arguments: [
        ("samples/https-v12-aes128gcm.pcap", ["samples/https-v12-aes128gcm.keys"]),
        ("samples/http2-tls.pcap", ["samples/http2-tls.keys"]),
        ("samples/https-dsb.pcapng", []),
    ])
    func decryptedShardsGiveTheSameReport(path: String, keys: [String]) throws {
        let one = try Self.expectShardsGiveTheSameReport(path: path, keys: keys)
        #expect(one.summary.tlsDecrypted > 0, "\(path) is decrypted")
    }
}

/// The reading thread's table of which shard each open connection is on (`ConnectionRoutes`).
@Suite struct ConnectionRoutesTests {
    static func endpoint(_ host: UInt32, _ port: UInt16) -> Endpoint {
        Endpoint(address: IPAddress(ipv4: host), port: port)
    }

    /// Inserts, finds and ends against a dictionary, through growth and backward-shift deletion, with hashes
    /// that collide on purpose (four values: long clusters that wrap around the table's end).
    @Test(arguments: [UInt64(4), 1 << 40])
    func agreesWithADictionary(hashes: UInt64) {
        let routes = ConnectionRoutes()
        var model: [UInt16: (shard: Int, last: Int)] = [:]
        var random = SplitMix(state: 7)
        func key(_ port: UInt16) -> RouteKey { RouteKey(Self.endpoint(0x0A00_0001, port), Self.endpoint(0x0A00_0002, 80)) }
        func hash(_ port: UInt16) -> UInt64 { (UInt64(port) &* 0x9E37_79B9_7F4A_7C15) % hashes &* 0xD6E8_FEB8_6659_FD93 }
        for step in 0..<20_000 {
            let port = UInt16(random.next() % 600)
            let (slot, found) = routes.find(key(port), hash: hash(port))
            #expect(found == (model[port] != nil), "step \(step)")
            if found {
                #expect(routes.shard(at: slot) == model[port]!.shard)
                if random.next() % 3 == 0 {
                    // An end notice: from the entry's shard after its last segment (goes), at it (stays) or from
                    // another shard (stays).
                    let entry = model[port]!
                    switch random.next() % 3 {
                    case 0:
                        routes.ended(key(port), hash: hash(port), shard: entry.shard, position: entry.last + 1)
                        model[port] = nil
                    case 1:
                        routes.ended(key(port), hash: hash(port), shard: entry.shard, position: entry.last)
                    default:
                        routes.ended(key(port), hash: hash(port), shard: entry.shard + 1, position: entry.last + 1)
                    }
                } else {
                    routes.setLast(2 * step, at: slot)
                    model[port]!.last = 2 * step
                }
            } else {
                let shard = Int(random.next() % 3)
                routes.insert(key(port), hash: hash(port), shard: shard, last: 2 * step, at: slot)
                model[port] = (shard, 2 * step)
            }
            #expect(routes.count == model.count)
        }
        let entries = routes.entries
        #expect(entries.count == model.count)
        for entry in entries {
            let port = model.keys.first { key($0) == entry.key }
            #expect(port.map { model[$0]?.shard == entry.shard && model[$0]?.last == entry.last } == true)
        }
    }

    /// Both directions of a connection are one key, and a notice finds the entry by the sink's own hash.
    @Test func bothDirectionsAreOneRoute() {
        let client = Self.endpoint(0xC0A8_0001, 51_000), server = Self.endpoint(0x0A00_0001, 443)
        #expect(RouteKey(client, server) == RouteKey(server, client))
        #expect(ShardedSegmentSink.hash(client, server) == ShardedSegmentSink.hash(server, client))
        let routes = ConnectionRoutes()
        let key = RouteKey(server, client), hash = ShardedSegmentSink.hash(server, client)
        let (slot, _) = routes.find(key, hash: hash)
        routes.insert(key, hash: hash, shard: 1, last: 10, at: slot)
        routes.ended(EndedRoute(client: client, server: server, position: 10), shard: 1)
        #expect(routes.count == 1, "a notice at the flow's own last segment: the entry stays")
        routes.ended(EndedRoute(client: client, server: server, position: 11), shard: 1)
        #expect(routes.count == 0)
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
