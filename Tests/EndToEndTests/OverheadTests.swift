import Foundation
import Testing

/// `--overhead`: connection costs attributed to records, and the frame-byte reconciliation.
@Suite struct OverheadTests {
    /// samples/http-ipv6.pcap frame by frame (tshark: frame.len, port, flags, relative seq/ack, tcp.len):
    /// ```
    ///  1  94  c→s  S              handshake, client
    ///  2  94  s→c  SA             handshake, server
    ///  3  86  c→s  A   ack 1      handshake (completes it), client
    ///  4 165  c→s  AP  len 79     GET #1: 86 header bytes + 79 payload
    ///  5  86  s→c  A   ack 80     pure ACK of request 1's bytes, charged to the server side: response 1
    ///  6 862  s→c  AP  len 776    response #1: 86 + 776
    ///  7  86  c→s  A   ack 777    pure ACK of response 1's bytes, charged to the client side: request 1
    ///  8 166  c→s  AP  len 80     GET #2: 86 + 80
    ///  9 249  s→c  AP  len 163    response #2: 86 + 163
    /// 10  86  c→s  AF             teardown, client → last exchange's request
    /// 11  86  s→c  AF             teardown, server → last exchange's response
    /// 12  86  c→s  A   ack 941    ACK of the server's FIN: teardown, client
    /// ```
    @Test func frameByFrameOnTheIPv6Sample() throws {
        let result = try Harness.run(["analyze", "--overhead", "all", "--messages", "--format", "json", "samples/http-ipv6.pcap"])
        let messages = try #require(try Harness.json(result.stdout)["messages"] as? [[String: Any]])
        let expected: [(kind: String, transfer: Int, handshake: Int, teardown: Int, packets: Int)] = [
            ("request", 79, 94 + 86, 0, 86 + 86),  // frames 1+3; frame 4 header + frame 7
            ("response", 776, 94, 0, 86 + 86),  // frame 2; frame 6 header + frame 5
            ("request", 80, 0, 86 + 86, 86),  // frames 10+12; frame 8 header
            ("response", 163, 0, 86, 86),  // frame 11; frame 9 header
        ]
        #expect(messages.count == expected.count)
        for (message, want) in zip(messages, expected) {
            #expect(message["kind"] as? String == want.kind)
            #expect(message["transfer_bytes"] as? Int == want.transfer)
            #expect(message["handshake_bytes"] as? Int == want.handshake)
            #expect(message["teardown_bytes"] as? Int == want.teardown)
            #expect(message["packet_overhead_bytes"] as? Int == want.packets)
            #expect(message["retransmitted_bytes"] as? Int == 0)
            #expect(message["wire_bytes"] as? Int == want.transfer + want.handshake + want.teardown + want.packets)
        }
        // The twelve frames add up to 2146 bytes.
        let total = messages.reduce(0) { $0 + ($1["wire_bytes"] as! Int) }
        #expect(total == 2146)
    }

    @Test func offByDefault() throws {
        let result = try Harness.run(["analyze", "--messages", "--format", "json", "samples/http-ipv6.pcap"])
        let messages = try #require(try Harness.json(result.stdout)["messages"] as? [[String: Any]])
        for message in messages {
            #expect(message["wire_bytes"] as? Int == message["transfer_bytes"] as? Int)
            #expect(message["handshake_bytes"] as? Int == 0 && message["packet_overhead_bytes"] as? Int == 0)
        }
    }

    @Test func retransmissionsCountInFull() throws {
        // The duplicated sample repeats three 1448-byte data segments of the 12 KB response. tshark flags them
        // (`-Y tcp.analysis.retransmission`: frames 8, 14, 15, 1514 bytes each): 3 × 1514 = 4542 frame bytes,
        // 3 × 1448 = 4344 payload bytes.
        let plain = try Harness.json(try Harness.run(["connections", "--format", "json", "samples/http-segments-duplicated.pcap"]).stdout)
        let connection = try #require((plain["connections"] as? [[String: Any]])?.first)
        let down = try #require(connection["server_to_client"] as? [String: Any])
        #expect(down["retransmission_frame_bytes"] as? Int == 4542)
        #expect(down["retransmitted_bytes"] as? Int == 4344)
        let report = try Harness.json(try Harness.run(
            ["analyze", "--overhead", "all", "--format", "json", "samples/http-segments-duplicated.pcap"]).stdout)
        let groups = try #require(report["groups"] as? [[String: Any]])
        #expect(groups.reduce(0) { $0 + ($1["retransmitted_bytes"] as! Int) } == 4542)
    }

    static let everything = Harness.sampleCaptures().map(\.file) + TLSReportTests.captures.map { "samples/" + $0 }
        + Harness.corpusTraces().map { Harness.corpus.appendingPathComponent("traces/\($0)").path }

    /// Issue 6's equation, on every sample and corpus trace, for several choices of overhead.
    @Test(arguments: everything)
    func conservation(capture: String) throws {
        for overhead in [["--overhead", "all"], ["--overhead", "handshake,packets"], []] {
            let result = try Harness.run(["analyze", "--format", "json"] + overhead + [capture])
            let json = try Harness.json(result.stdout)
            let summary = try #require(json["summary"] as? [String: Any])
            let groups = try #require(json["groups"] as? [[String: Any]])
            let wire = groups.reduce(0) { $0 + ($1["wire_bytes"] as! Int) }
            let parts = wire + (summary["non_http_frame_bytes"] as! Int) + (summary["non_tcp_frame_bytes"] as! Int)
                + (summary["unattributed_frame_bytes"] as! Int)
            #expect(parts == summary["capture_frame_bytes"] as? Int, "\(capture) \(overhead)")
            #expect(summary["capture_frame_bytes"] as? Int == summary["bytes"] as? Int)
        }
    }

    /// Without `--messages` a record is counted when it is complete and its overhead when its connection
    /// ends; with it, records are held whole until then. Both paths must give the same groups and summary.
    @Test(arguments: everything)
    func countingAtOnceEqualsHoldingWholeRecords(capture: String) throws {
        for overhead in ["all", "handshake,teardown", "packets"] {
            let arguments = ["analyze", "--format", "json", "--overhead", overhead, capture]
            let atOnce = try Harness.json(try Harness.run(arguments).stdout)
            let held = try Harness.json(try Harness.run(arguments + ["--messages"]).stdout)
            for key in ["groups", "summary"] {
                let a = try #require(atOnce[key] as? NSObject), b = try #require(held[key] as? NSObject)
                #expect(a.isEqual(b), "\(capture) --overhead \(overhead): \(key)")
            }
        }
    }

    /// On our own samples everything is attributed: no byte is left over.
    @Test(arguments: Harness.sampleCaptures().map(\.file).filter { !$0.contains("truncated") })
    func samplesLeaveNothingUnattributed(capture: String) throws {
        let json = try Harness.json(try Harness.run(["analyze", "--overhead", "all", "--format", "json", capture]).stdout)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["unattributed_frame_bytes"] as? Int == 0, "\(capture)")
        // And the capture's frame bytes are tshark's: the sum over its connections plus nothing else.
        let name = Harness.sampleCaptures().first { $0.file == capture }!.expected
        let rows = Harness.csv(try String(contentsOf: Harness.samples.appendingPathComponent(
            "expected/\(name)/connections.tshark.csv"), encoding: .utf8))
        let tshark = rows.reduce(0) { $0 + Int($1["client_to_server_frame_bytes"]!)! + Int($1["server_to_client_frame_bytes"]!)! }
        if !capture.contains("ipfrag") { #expect(summary["capture_frame_bytes"] as? Int == tshark, "\(capture)") }
    }
}

/// The gzip trailer shortcut against full inflation, on every sample and corpus trace.
@Suite struct VerifyDecodingTests {
    @Test(arguments: OverheadTests.everything)
    func shortcutEqualsFullDecoding(capture: String) throws {
        let fast = try Harness.run(["analyze", "--messages", "--format", "csv", capture])
        let full = try Harness.run(["analyze", "--messages", "--format", "csv", "--verify-decoding", capture])
        #expect(fast.status == full.status)
        #expect(fast.stdout == full.stdout, "\(capture)")
    }
}

/// `--jobs`: sharding connections over threads changes nothing in the output.
@Suite struct ParallelRunTests {
    @Test(arguments: OverheadTests.everything)
    func sameOutputOnAnyNumberOfWorkers(capture: String) throws {
        let arguments = ["analyze", "--messages", "--format", "json", "--overhead", "all", capture]
        let one = try Harness.run(arguments + ["--jobs", "1"])
        for jobs in ["2", "3"] {
            let many = try Harness.run(arguments + ["--jobs", jobs])
            #expect(many.stdout == one.stdout, "\(capture) --jobs \(jobs)")
            #expect(many.stderr == one.stderr)
        }
    }
}

/// `--groups-in-memory`: groups written to a temporary file and read back as the report is written (the
/// table from two readers, one from the middle) change nothing in any format.
@Suite struct SpilledGroupsRunTests {
    @Test(arguments: OverheadTests.everything)
    func writingGroupsOutChangesNothing(capture: String) throws {
        for arguments in [["--format", "table"], ["--format", "csv"], ["--format", "json", "--overhead", "all"],
            ["--format", "json", "--group-by", "host,method,status"], ["--format", "table", "--top", "3", "--sort", "cookies"]]
        {
            let inMemory = try Harness.run(["analyze", "--jobs", "2"] + arguments + [capture])
            for budget in ["1", "2"] {
                let spilled = try Harness.run(["analyze", "--jobs", "2", "--groups-in-memory", budget] + arguments + [capture])
                #expect(spilled.status == inMemory.status)
                #expect(spilled.stdout == inMemory.stdout, "\(capture) \(arguments) --groups-in-memory \(budget)")
                #expect(spilled.stderr == inMemory.stderr)
            }
        }
    }
}
