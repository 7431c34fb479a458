import Foundation
import Testing

/// Whether the HAR checks can run: python3 with jsonschema and haralyzer (`make deps` installs both).
enum HARTools {
    static let available = Harness.pythonCanImport("jsonschema, haralyzer")
}

/// `traffic analyze --format har` (issue 29).
@Suite struct HARExportTests {
    /// Captures `traffic` refuses (exit 3), so they have no HAR: not pcap at all, or an unsupported link type.
    static let unreadable: Set<String> = ["empty.pcap", "random-bytes.pcap", "linktype-radiotap.pcap"]

    static func captures() throws -> [String] {
        let files = FileManager.default
        let top = try files.contentsOfDirectory(atPath: Harness.samples.path)
            .filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".pcap.gz") }
            .map { "samples/\($0)" }
        let malformed = try files.contentsOfDirectory(atPath: Harness.samples.appendingPathComponent("malformed").path)
            .filter { ($0.hasSuffix(".pcap") || $0.hasSuffix(".pcap.gz")) && !unreadable.contains($0) }
            .map { "samples/malformed/\($0)" }
        return (top + malformed).sorted()
    }

    static func runCheck(_ extra: [String]) throws -> (status: Int32, output: String) {
        try Harness.runPython(
            "scripts/har-check.py",
            ["--traffic", Harness.binary.path,
             "--schema", Harness.packageRoot.appendingPathComponent("Tests/Schemas/har-1.2.schema.json").path]
                + extra.map { "--extra=\($0)" } + (try captures()))
    }

    /// Every sample: valid against the HAR 1.2 schema written from the spec (Tests/Schemas), loaded by haralyzer,
    /// and entry by entry equal to the `--messages` records (sizes, status, method, URL, mime type, missing
    /// bytes), also with `--overhead all` and two worker threads (`scripts/har-check.py`).
    @Test(
        .enabled(if: HARTools.available, "python3 with jsonschema and haralyzer is missing: run `make deps`"),
        arguments: [[], ["--overhead=all", "--jobs=2"]])
    func samplesAreValidHARThatHaralyzerReadsWithTheRecordsSizes(_ extra: [String]) throws {
        let (status, output) = try Self.runCheck(extra)
        let failures = output.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(status == 0, "har-check.py exited \(status):\n\(output)")
        let passed = output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
        #expect(passed.count == (try Self.captures()).count, "\(output)")
    }

    static func har(_ capture: String, _ extra: [String] = []) throws -> [[String: Any]] {
        let result = try Harness.run(["analyze", "--format", "har"] + extra + [capture])
        #expect(result.status == 0, "\(result.stderr)")
        let log = try #require(try Harness.json(result.stdout)["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "traffic")
        return try #require(log["entries"] as? [[String: Any]])
    }

    static func timings(_ entry: [String: Any]) -> [String: Double] {
        (entry["timings"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }

    /// Timings by hand from the packet times of samples/http-basic.pcap
    /// (`tshark -r samples/http-basic.pcap -T fields -e frame.time_epoch -e tcp.flags -e tcp.len`; times
    /// are 1795240650.351xxx s, written below as µs after .351000):
    ///   1  059  SYN        2  075  SYN-ACK    3  091  ACK (handshake complete)
    ///   4  179  83 B request 1 (one segment)          6  274  776 B response 1 (one segment)
    ///   8  374  85 B request 2                        9  410  20256 B response 2 (one segment)
    ///  21 1021  106 B request 8                      22 1046  178 B response 8
    /// Entry 1: connect = 091 − 059 = 32 µs = 0.032 ms; send = 0 (first = last byte, frame 4); wait = 274 − 179 =
    /// 95 µs = 0.095 ms; receive = 0; time = 0.032 + 0.095 = 0.127 ms; started at the SYN, 05:57:30.351059Z
    /// (1795240650 s = 2026-11-21T05:57:30Z). Entry 2 reuses the connection: connect −1, wait = 410 − 374 =
    /// 0.036 ms, started at its request, 351374. Entry 8: wait = 1046 − 1021 = 0.025 ms.
    /// HTTPS decrypted with its key log (issue 21), timings by hand from samples/https-v12-aes128gcm.pcap
    /// (`tshark -T fields -e frame.number -e frame.time_epoch`, times 1795624126.6xxxxx s; records per frame in
    /// samples/expected/https-v12-aes128gcm/records.csv): 1 SYN .635736, 3 ACK .635765, 4 ClientHello .637570,
    /// 9 the server's change_cipher_spec + Finished .639590 (the last handshake record before application data),
    /// 10 request 1 .640924, 11 response 1 .641057. ssl = 9 − 4 = 2.020 ms; connect = 9 − 1 = 3.854 ms (HAR 1.2:
    /// `ssl` is part of `connect`); wait = 11 − 10 = 0.133 ms. Record overhead: 5 + 8 (explicit nonce) + 16 (tag).
    @Test func httpsTimingsAndOverheadByHand() throws {
        let entries = try Self.har("samples/https-v12-aes128gcm.pcap", ["--keylog", "samples/https-v12-aes128gcm.keys"])
        try #require(entries.count == 3)
        let first = Self.timings(entries[0])
        #expect(first["ssl"] == 2.02 && first["connect"] == 3.854 && first["wait"] == 0.133)
        #expect(Self.timings(entries[1])["ssl"] == -1)
        let request = try #require(entries[0]["request"] as? [String: Any])
        #expect((request["url"] as? String)?.hasPrefix("https://https.example.test:8443/") == true)
        #expect(entries.allSatisfy { ($0["response"] as? [String: Any])?["_tls_overhead_bytes"] as? Int == 29 })
    }

    /// `--har-bodies`: the POST of samples/https-v12-aes128gcm.pcap as tshark shows it decrypted
    /// (`-o tls.keylog_file:… -Y http.request.method==POST -e http.file_data`), and the 100 000-byte binary upload
    /// of samples/http-netns.pcap (not UTF-8: one ISO-8859-1 character per byte, HARHead's binary-safe rule).
    /// Without the flag there is no `text`.
    @Test func requestBodiesOnlyWhenAsked() throws {
        let keys = ["--keylog", "samples/https-v12-aes128gcm.keys"]
        func post(_ entries: [[String: Any]]) -> [String: Any]? {
            entries.compactMap { ($0["request"] as? [String: Any])?["postData"] as? [String: Any] }.first
        }
        let with = try Self.har("samples/https-v12-aes128gcm.pcap", keys + ["--har-bodies"])
        #expect(post(with)?["text"] as? String
            == "name=traffic&lang=swift&comment=sizes+every+HTTP+message+exactly%2C+also+inside+TLS")
        #expect(post(try Self.har("samples/https-v12-aes128gcm.pcap", keys))?["text"] == nil)
        let upload = try #require(post(try Self.har("samples/http-netns.pcap", ["--har-bodies"]))?["text"] as? String)
        #expect(upload.unicodeScalars.count == 100_000)
        let refused = try Harness.run(["analyze", "--har-bodies", "samples/http-basic.pcap"])
        #expect(refused.status == 64 || refused.status == 2)
    }

    @Test func httpBasicTimingsByHand() throws {
        let entries = try Self.har("samples/http-basic.pcap")
        try #require(entries.count == 8)
        let first = Self.timings(entries[0])
        #expect(first["connect"] == 0.032 && first["send"] == 0 && first["wait"] == 0.095 && first["receive"] == 0)
        #expect(first["ssl"] == -1 && first["dns"] == -1 && first["blocked"] == -1)
        #expect((entries[0]["time"] as? NSNumber)?.doubleValue == 0.127)
        #expect(entries[0]["startedDateTime"] as? String == "2026-11-21T05:57:30.351059Z")
        #expect(entries[0]["serverIPAddress"] as? String == "127.0.0.1")
        #expect(entries[0]["connection"] as? String == "0")
        let second = Self.timings(entries[1])
        #expect(second["connect"] == -1 && second["wait"] == 0.036 && second["send"] == 0 && second["receive"] == 0)
        #expect(entries[1]["startedDateTime"] as? String == "2026-11-21T05:57:30.351374Z")
        #expect(Self.timings(entries[7])["wait"] == 0.025)
    }

    /// A response in many segments (samples/http-segments.pcap, same tshark fields; 1795240656.414xxx s, µs):
    ///   1 035 SYN, 3 070 ACK; 4 111 86 B request; 6 237 first of the response's 1448 B segments …
    ///  19 262 its last (658 B). connect = 070 − 035 = 0.035 ms, send 0, wait = 237 − 111 = 0.126 ms,
    /// receive = 262 − 237 = 0.025 ms, time = 0.186 ms. The `--messages` records carry the same instants.
    @Test func segmentedResponseTimingsByHand() throws {
        let entries = try Self.har("samples/http-segments.pcap")
        try #require(entries.count == 2)
        let t = Self.timings(entries[0])
        #expect(t["connect"] == 0.035 && t["send"] == 0 && t["wait"] == 0.126 && t["receive"] == 0.025)
        #expect((entries[0]["time"] as? NSNumber)?.doubleValue == 0.186)
        let result = try Harness.run(["analyze", "--messages", "--format", "json", "samples/http-segments.pcap"])
        let messages = try #require(try Harness.json(result.stdout)["messages"] as? [[String: Any]])
        let response = try #require(messages.first { $0["kind"] as? String == "response" })
        #expect((response["first_byte_time"] as? NSNumber)?.stringValue == "1795240656.414237")
        #expect((response["last_byte_time"] as? NSNumber)?.stringValue == "1795240656.414262")
        let csv = try Harness.run(["analyze", "--messages", "--format", "csv", "samples/http-segments.pcap"])
        let row = try #require(Harness.csv(csv.stdout).first { $0["kind"] == "response" })
        #expect(row["first_byte_time"] == "2026-11-21T05:57:36.414237000Z")
        #expect(row["last_byte_time"] == "2026-11-21T05:57:36.414262000Z")
    }

    /// Headers are the ones sent, in order, with the request's cookies split into pairs (samples/http-basic.pcap's
    /// requests are curl's: Host, User-Agent, Accept; headersSize = 83 = its one segment).
    @Test func headersAsSent() throws {
        let entries = try Self.har("samples/http-basic.pcap")
        let request = try #require(entries.first?["request"] as? [String: Any])
        let headers = try #require(request["headers"] as? [[String: String]])
        #expect(headers.map { $0["name"] ?? "" } == ["Host", "User-Agent", "Accept"])
        #expect(headers.first?["value"] == "127.0.0.1")
        #expect(request["headersSize"] as? Int == 83 && request["bodySize"] as? Int == 0)
        let response = try #require(entries.first?["response"] as? [String: Any])
        #expect(response["statusText"] as? String == "OK")
        // 776 B in frame 6 = 261 B of head + 515 B of body.
        #expect(response["headersSize"] as? Int == 261 && response["bodySize"] as? Int == 515)
        #expect(response["_transferSize"] as? Int == 776)
    }

    /// Groups' wait statistics from the same hand count (samples/http-basic.pcap, µs after .351000): the three
    /// /index.html exchanges wait 274 − 179 = 95, 489 − 473 = 16 and 553 − 537 = 16 µs: median (nearest rank 2
    /// of 3) 16 µs, p95 (rank 3) 95 µs, both exact (below 16 µs buckets are exact; the maximum is kept). /search
    /// waits 1046 − 1021 = 25 µs. JSON and CSV carry them as decimal seconds; the table with --timings in ms.
    @Test func groupWaitStatisticsByHand() throws {
        let json = try Harness.json(try Harness.run(["analyze", "--format", "json", "samples/http-basic.pcap"]).stdout)
        let groups = try #require(json["groups"] as? [[String: Any]])
        let index = try #require(groups.first { $0["path"] as? String == "/index.html" })
        #expect((index["wait_median_seconds"] as? NSNumber)?.doubleValue == 0.000016)
        #expect((index["wait_p95_seconds"] as? NSNumber)?.doubleValue == 0.000095)
        let csv = Harness.csv(try Harness.run(["analyze", "--format", "csv", "samples/http-basic.pcap"]).stdout)
        let search = try #require(csv.first { $0["path"] == "/search" })
        #expect(search["wait_median_seconds"] == "0.000025000" && search["wait_p95_seconds"] == "0.000025000")
        let table = try Harness.run(["analyze", "--timings", "--width", "200", "samples/http-basic.pcap"]).stdout
        #expect(table.contains("wait p50") && table.contains("0.016 ms  0.095 ms"))
        #expect(!(try Harness.run(["analyze", "--width", "200", "samples/http-basic.pcap"]).stdout.contains("wait p50")))
    }

    /// `--format har` is for analyze only.
    @Test func connectionsRefusesHAR() throws {
        let result = try Harness.run(["connections", "--format", "har", "samples/http-basic.pcap"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--format har is for analyze"))
    }
}
