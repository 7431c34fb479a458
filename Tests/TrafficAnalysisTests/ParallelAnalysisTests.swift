@testable import TrafficAggregation
import Foundation
import Testing
@testable import TrafficAnalysis
@testable import TrafficReassembly
import TrafficTestSupport
@testable import TrafficWire
import TrafficCapture

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
    /// `limits`: the reassembler's, for the whole run.
    @discardableResult
    static func expectShardsGiveTheSameReport(
        path: String, keys: [String] = [], limits: TCPReassemblyLimits = TCPReassemblyLimits()
    ) throws -> TrafficReport {
        var options = ReportOptions()
        options.keepMessages = true
        options.overhead = .all
        options.analysis.keyLogPaths = keys
        options.analysis.reassemblyLimits = limits
        options.jobs = 1
        let one = try TrafficAnalyzer.analyze(paths: [path], options: options)
        let first = (one.messages ?? []).map { "\($0.record.connection)/\($0.record.index)/\($0.record.kind)/\($0.record.wireBytes)" }
        for placement in [ConnectionPlacement.byLoad, .inTurn] {
            for jobs in [2, 3, 4] {
                options.jobs = jobs
                options.connectionPlacement = placement
                let sharded = try TrafficAnalyzer.analyze(paths: [path], options: options)
                #expect(one.summary == sharded.summary, "\(path) jobs \(jobs) \(placement)")
                #expect(one.anomalies == sharded.anomalies, "\(path) jobs \(jobs) \(placement)")
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

/// The connection cap (`TCPReassemblyLimits.maxConnections`) holds for the run, whichever thread a connection is
/// placed on: with as many connections open as the cap, one job evicts none, and neither do two to four, however
/// they are placed (by load, a small capture's connections would all go to an idle worker, whose share of the cap
/// is half or less).
@Suite struct ConnectionCapTests {
    @Test func shardsStayWithinTheCapOfOneReassembler() throws {
        let connections = 10
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cap-\(UUID().uuidString).pcap").path
        try ConcurrentConnectionsCapture.bytes(connections: connections).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = ReportOptions()
        options.jobs = 1
        options.analysis.reassemblyLimits.maxConnections = connections - 1
        let over = try TrafficAnalyzer.analyze(paths: [path], options: options)
        #expect((over.anomalies["connection_evicted"] ?? 0) > 0, "one more connection than the cap evicts")
        var limits = TCPReassemblyLimits()
        limits.maxConnections = connections
        let one = try ParallelAnalysisTests.expectShardsGiveTheSameReport(path: path, limits: limits)
        #expect(one.anomalies["connection_evicted"] ?? 0 == 0)
        // Hand-counted: a request is 44 bytes (`GET /item/N HTTP/1.1` 22 with CRLF, the Host line 20, the blank
        // line 2), a response 40 (status line 17, Content-Length 19, blank line 2, body 2).
        #expect(one.summary.requests == connections && one.summary.responses == connections)
        #expect(one.summary.unpairedRequests == 0 && one.summary.unpairedResponses == 0)
        #expect(one.groups.map(\.totals.request.bytes).reduce(0, +) == 44 * connections)
        #expect(one.groups.map(\.totals.response.bytes).reduce(0, +) == 40 * connections)
    }

    /// Every shard at its cap: a new connection goes to the shard least over it, the reading thread's (its
    /// reassembler evicts at once, so it is never over; a worker's ends reach the routes only with its batches),
    /// and that reassembler evicts its least recently active connection, as one reassembler would have.
    /// Six connections' SYNs, 1 ms apart, on three shards with a cap of one each, placed in turn: A→0, B→1, C→2,
    /// then D, E and F on shard 0, each evicting the one before it (A, D, E); B, C and F end at the finish.
    @Test func connectionsOverEveryCapGoToTheShardLeastOverIt() {
        final class Log: @unchecked Sendable {
            let lock = NSLock()
            var lines: [String] = []
            func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        }
        let log = Log()
        var limits = TCPReassemblyLimits()
        limits.maxConnections = 1
        let sink = ShardedSegmentSink(shards: 3, placement: .inTurn, connectionCaps: [1, 1, 1]) { shard, routeEnded in
            TCPReassembler(
                limits: limits,
                makeHandler: { info in
                    log.add("\(shard) made \(info.client.port)")
                    return nil
                },
                connectionEnded: { summary in
                    routeEnded(summary.info)
                    log.add("\(shard) ended \(summary.info.client.port)\(summary.evicted ? " evicted" : "")")
                })
        }
        let server = Endpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80)
        let names: [UInt16: String] = [40_000: "A", 40_001: "B", 40_002: "C", 40_003: "D", 40_004: "E", 40_005: "F"]
        for (index, port) in names.keys.sorted().enumerated() {
            let client = Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: port)
            let segment = TCPSegment(
                source: client, destination: server, sequenceNumber: 1_000, acknowledgmentNumber: 0, flags: .syn,
                payloadLength: 0, payload: UnsafeRawBufferPointer(start: nil, count: 0), frameBytes: 54)
            sink.process(segment, time: CaptureTime(nanoseconds: Int64(index + 1) * 1_000_000), packetIndex: index)
        }
        sink.finish()
        func named(_ line: String) -> String {
            var words = line.split(separator: " ").map(String.init)
            words[2] = names[UInt16(words[2])!]!
            return words.joined(separator: " ")
        }
        let lines = log.lines.map(named)
        #expect(lines.filter { $0.contains("made") }.sorted() == [
            "0 made A", "0 made D", "0 made E", "0 made F", "1 made B", "2 made C",
        ])
        // Shard 0's own order: each new connection evicts the one before it.
        #expect(lines.filter { $0.hasPrefix("0 ") } == [
            "0 made A", "0 made D", "0 ended A evicted", "0 made E", "0 ended D evicted", "0 made F",
            "0 ended E evicted", "0 ended F",
        ])
        #expect(lines.filter { $0.hasPrefix("1 ") || $0.hasPrefix("2 ") }.sorted() == [
            "1 ended B", "1 made B", "2 ended C", "2 made C",
        ])
        #expect(sink.anomalies[TCPAnomaly.connectionEvicted.rawValue] == 3)
    }
}

/// A raw-IP pcap (LINKTYPE_RAW) of `connections` HTTP/1.1 connections open at once: every handshake, then every
/// exchange, then every close, 1 ms apart.
enum ConcurrentConnectionsCapture {
    static func bytes(connections: Int) -> Data {
        var file = Data()
        func le32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { file.append(contentsOf: $0) } }
        func le16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { file.append(contentsOf: $0) } }
        le32(0xA1B2_C3D4); le16(2); le16(4); le32(0); le32(0); le32(65_535); le32(101)
        var time: UInt32 = 0
        func packet(_ client: Int, toServer: Bool, seq: UInt32, ack: UInt32, flags: UInt8, payload: [UInt8] = []) {
            let clientIP: [UInt8] = [10, 0, 0, 1], serverIP: [UInt8] = [10, 0, 0, 2]
            let clientPort = UInt16(40_000 + client), serverPort: UInt16 = 80
            var ip: [UInt8] = [0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0]
            let total = UInt16(40 + payload.count)
            ip[2] = UInt8(total >> 8); ip[3] = UInt8(total & 0xFF)
            ip += toServer ? clientIP + serverIP : serverIP + clientIP
            let sum = ~ip.withUnsafeBytes { Checksum.sum($0) }
            ip[10] = UInt8(sum >> 8 & 0xFF); ip[11] = UInt8(sum & 0xFF)
            func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
            func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            var tcp = toServer ? be16(clientPort) + be16(serverPort) : be16(serverPort) + be16(clientPort)
            tcp += be32(seq) + be32(ack) + [0x50, flags] + be16(65_535) + [0, 0, 0, 0]
            let frame = ip + tcp + payload
            time += 1_000
            le32(time / 1_000_000); le32(time % 1_000_000); le32(UInt32(frame.count)); le32(UInt32(frame.count))
            file.append(contentsOf: frame)
        }
        let syn: UInt8 = 0x02, ack: UInt8 = 0x10, psh: UInt8 = 0x08, fin: UInt8 = 0x01
        let clientISN: UInt32 = 1_000, serverISN: UInt32 = 5_000
        let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
        func request(_ i: Int) -> [UInt8] { Array("GET /item/\(i) HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8) }
        for i in 0..<connections {
            packet(i, toServer: true, seq: clientISN, ack: 0, flags: syn)
            packet(i, toServer: false, seq: serverISN, ack: clientISN + 1, flags: syn | ack)
            packet(i, toServer: true, seq: clientISN + 1, ack: serverISN + 1, flags: ack)
        }
        for i in 0..<connections {
            let sent = UInt32(request(i).count)
            packet(i, toServer: true, seq: clientISN + 1, ack: serverISN + 1, flags: psh | ack, payload: request(i))
            packet(i, toServer: false, seq: serverISN + 1, ack: clientISN + 1 + sent, flags: psh | ack, payload: response)
        }
        for i in 0..<connections {
            let c = clientISN + 1 + UInt32(request(i).count), s = serverISN + 1 + UInt32(response.count)
            packet(i, toServer: true, seq: c, ack: s, flags: fin | ack)
            packet(i, toServer: false, seq: s, ack: c + 1, flags: fin | ack)
            packet(i, toServer: true, seq: c + 1, ack: s + 1, flags: ack)
        }
        return file
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
        func key(_ port: UInt16) -> RouteKey { RouteKey(Self.endpoint(0x0A00_0001, port), Self.endpoint(0x0A00_0002, 80)) }
        func hash(_ port: UInt16) -> UInt64 { (UInt64(port) &* 0x9E37_79B9_7F4A_7C15) % hashes &* 0xD6E8_FEB8_6659_FD93 }
        // The client (10.0.0.1) is the key's lower endpoint: its third word holds the port.
        let routes = ConnectionRoutes(shards: 4) { hash(UInt16(truncatingIfNeeded: $0.low.2)) }
        #expect(key(443).low.2 == 443)
        var model: [UInt16: (shard: Int, last: Int)] = [:]
        var random = SplitMix(state: 7)
        for step in 0..<20_000 {
            let port = UInt16(random.next() % 600)
            let (slot, found) = routes.find(key(port))
            #expect(found == (model[port] != nil), "step \(step)")
            if found {
                #expect(routes.shard(at: slot) == model[port]!.shard)
                if random.next() % 3 == 0 {
                    // An end notice: from the entry's shard after its last segment (goes), at it (stays) or from
                    // another shard (stays).
                    let entry = model[port]!
                    switch random.next() % 3 {
                    case 0:
                        routes.ended(key(port), shard: entry.shard, position: entry.last + 1)
                        model[port] = nil
                    case 1:
                        routes.ended(key(port), shard: entry.shard, position: entry.last)
                    default:
                        routes.ended(key(port), shard: entry.shard + 1, position: entry.last + 1)
                    }
                } else {
                    routes.setLast(2 * step, at: slot)
                    model[port]!.last = 2 * step
                }
            } else {
                let shard = Int(random.next() % 3)
                routes.insert(key(port), shard: shard, last: 2 * step, at: slot)
                model[port] = (shard, 2 * step)
            }
            #expect(routes.count == model.count)
            if step % 97 == 0 {
                for shard in 0..<4 { #expect(routes.openCount(shard) == model.values.filter { $0.shard == shard }.count) }
            }
        }
        let entries = routes.entries
        #expect(entries.count == model.count)
        for entry in entries {
            let port = model.keys.first { key($0) == entry.key }
            #expect(port.map { model[$0]?.shard == entry.shard && model[$0]?.last == entry.last } == true)
        }
    }

    /// Both directions of a connection are one key with one hash, and a notice finds the entry by it.
    @Test func bothDirectionsAreOneRoute() {
        let client = Self.endpoint(0xC0A8_0001, 51_000), server = Self.endpoint(0x0A00_0001, 443)
        #expect(RouteKey(client, server) == RouteKey(server, client))
        let routes = ConnectionRoutes(shards: 4)
        #expect(routes.hash(RouteKey(client, server)) == routes.hash(RouteKey(server, client)))
        let (slot, _) = routes.find(RouteKey(server, client))
        routes.insert(RouteKey(server, client), shard: 1, last: 10, at: slot)
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
