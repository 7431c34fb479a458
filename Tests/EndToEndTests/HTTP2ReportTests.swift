import Foundation
import Testing

/// HTTP/2 (issue 22): every sample in samples/http2-* (h2c with prior knowledge, h2 over TLS 1.3 and 1.2 with its
/// key log, an h2c upgrade, frame features, gRPC) against what samples/derive-http2-expected.py derived without
/// our code: its own frame walker and HPACK representation walker over the TCP (or decrypted TLS) streams, the
/// Python `hpack` library for decoding, cross-checked with tshark 4.0 per frame (samples/README.md).
@Suite struct HTTP2ReportTests {
    static let samples: [(file: String, keyLog: String?, expected: String)] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Harness.samples.path)) ?? []
        return names.filter {
            $0.hasPrefix("http2-") && $0.hasSuffix(".pcap")
                && FileManager.default.fileExists(
                    atPath: Harness.samples.appendingPathComponent("expected/\($0.dropLast(5))/records.csv").path)
        }.sorted().map { name in
            let base = String(name.dropLast(5))
            let keys = "samples/\(base).keys"
            let hasKeys = FileManager.default.fileExists(atPath: Harness.packageRoot.appendingPathComponent(keys).path)
            return ("samples/" + name, hasKeys ? keys : nil, base)
        }
    }()

    static func sample(_ file: String) -> (file: String, keyLog: String?, expected: String) {
        samples.first { $0.file == file }!
    }

    static func run(_ command: String, _ sample: (file: String, keyLog: String?, expected: String), _ extra: [String])
        throws -> [String: Any]
    {
        let result = try Harness.run(
            [command, sample.file, "--format", "json"] + (sample.keyLog.map { ["--keylog", $0] } ?? []) + extra)
        #expect(result.status == 0, "\(sample.file): \(result.stderr)")
        return try Harness.json(result.stdout)
    }

    static func expected(_ sample: (file: String, keyLog: String?, expected: String), _ file: String) throws
        -> [[String: String]]
    {
        Harness.csv(try String(
            contentsOf: Harness.samples.appendingPathComponent("expected/\(sample.expected)/\(file)"), encoding: .utf8))
    }

    /// A JSON value as the CSV writes it (a JSON number reads as Int and as Bool alike: `complete` is asked for
    /// as Bool by name).
    static func text(_ value: Any?, bool: Bool = false) -> String {
        if bool { return (value as? Bool).map { $0 ? "true" : "false" } ?? "" }
        switch value {
        case let v as Int: return String(v)
        case let v as String: return v
        default: return ""
        }
    }

    static let fields = [
        "index", "version", "method", "host", "path", "query", "status", "line_bytes", "header_bytes",
        "header_decoded_bytes", "cookie_bytes", "cookie_decoded_bytes", "body_bytes", "encoded_body_bytes",
        "decoded_body_bytes", "transfer_bytes", "complete",
    ]

    @Test func everySampleIsHere() {
        #expect(Self.samples.count == 6)
    }

    /// Each record, field by field, in stream order per connection (requests carry their final response's
    /// status in our records, as for HTTP/1; the derivation leaves it empty).
    @Test(arguments: samples.map(\.file))
    func recordsMatchTheDerivation(file: String) throws {
        let sample = Self.sample(file)
        let json = try Self.run("analyze", sample, ["--messages"])
        let messages = try #require(json["messages"] as? [[String: Any]])
        let expected = try Self.expected(sample, "records.csv")
        #expect(messages.count == expected.count, "\(file): record count")
        func key(_ connection: String, _ stream: String, _ kind: String) -> String { "\(connection)/\(stream)/\(kind)" }
        var got: [String: [[String: Any]]] = [:]
        for m in messages {
            got[key(Self.text(m["connection"]), Self.text(m["stream_id"]), Self.text(m["kind"])), default: []].append(m)
        }
        var seen: [String: Int] = [:]
        for row in expected {
            let k = key(row["connection"]!, row["stream_id"]!, row["kind"]!)
            let n = seen[k, default: 0]
            seen[k] = n + 1
            guard let list = got[k], n < list.count else {
                Issue.record("\(file): no record \(k) #\(n)")
                continue
            }
            let record = list[n]
            for field in Self.fields where !(field == "status" && row["kind"] == "request") {
                #expect(Self.text(record[field], bool: field == "complete") == row[field]!, "\(file) \(k) #\(n) \(field)")
            }
            let flags = Set((record["flags"] as? [String] ?? []).filter { $0 == "reset" || $0 == "pushed" })
            #expect(flags == Set(row["flags"]!.split(separator: " ").map(String.init)), "\(file) \(k) flags")
        }
    }

    /// Per connection and direction: `traffic connections` gives the derivation's h2_control_bytes, and
    /// Σ transfer_bytes + h2_control_bytes = the bytes delivered (TCP payload for h2c, plaintext for h2 over TLS),
    /// with nothing non-HTTP; the summary's h2_control_bytes is their sum.
    @Test(arguments: samples.map(\.file))
    func controlBytesConserveEveryByte(file: String) throws {
        let sample = Self.sample(file)
        let connections = try #require(try Self.run("connections", sample, [])["connections"] as? [[String: Any]])
        let analysis = try Self.run("analyze", sample, ["--messages"])
        let messages = try #require(analysis["messages"] as? [[String: Any]])
        let summary = try #require(analysis["summary"] as? [String: Any])
        var total = 0
        for row in try Self.expected(sample, "connections.csv") {
            let label = "\(file) connection \(row["connection"]!) \(row["direction"]!)"
            let connection = try #require(connections.first { Self.text($0["connection"]) == row["connection"] })
            let direction = try #require(connection[row["direction"]!] as? [String: Any])
            let control = Int(row["h2_control_bytes"]!)!
            #expect(direction["h2_control_bytes"] as? Int == control, "\(label) h2_control_bytes")
            total += control
            let kind = row["direction"] == "client_to_server" ? "request" : "response"
            let transfer = messages.filter { Self.text($0["connection"]) == row["connection"] && Self.text($0["kind"]) == kind }
                .reduce(0) { $0 + ($1["transfer_bytes"] as! Int) }
            #expect(transfer + control == Int(row["delivered_bytes"]!), "\(label) conservation")
        }
        #expect(summary["h2_control_bytes"] as? Int == total, "\(file) summary")
        #expect(summary["non_http_bytes"] as? Int == 0, "\(file) non-HTTP")
        #expect(summary["http2_connections"] as? Int == connections.count, "\(file) http2_connections")
    }

    /// With `--overhead all` every control frame rides on a record: the groups' h2_control_bytes add up to the
    /// summary's, and the frame bytes still reconcile with the capture.
    @Test(arguments: samples.map(\.file))
    func overheadAttributesEveryControlByte(file: String) throws {
        let sample = Self.sample(file)
        let json = try Self.run("analyze", sample, ["--overhead", "all"])
        let summary = try #require(json["summary"] as? [String: Any])
        let groups = try #require(json["groups"] as? [[String: Any]])
        let control = groups.reduce(0) { $0 + ($1["h2_control_bytes"] as? Int ?? 0) }
        #expect(control == summary["h2_control_bytes"] as? Int, "\(file) attributed control bytes")
        let wire = groups.reduce(0) { $0 + ($1["wire_bytes"] as! Int) }
        let parts = ["non_http_frame_bytes", "non_tcp_frame_bytes", "unattributed_frame_bytes"].map { summary[$0] as! Int }
        #expect(wire + parts.reduce(0, +) == summary["capture_frame_bytes"] as? Int, "\(file) frame bytes")
        #expect(summary["unattributed_frame_bytes"] as? Int == 0, "\(file) nothing unattributed")
    }

    /// gRPC groups are per RPC method; a pushed response has a null index.
    @Test func grpcGroupsAndPushedIndex() throws {
        let grpc = try Self.run("analyze", Self.sample("samples/http2-grpc.pcap"), [])
        let paths = Set((grpc["groups"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String })
        #expect(paths.allSatisfy { $0.hasPrefix("/traffic.sample.Meter/") } && paths.count == 4, "\(paths)")
        let features = try Self.run("analyze", Self.sample("samples/http2-features.pcap"), ["--messages"])
        let pushed = (features["messages"] as? [[String: Any]] ?? []).filter {
            ($0["flags"] as? [String] ?? []).contains("pushed")
        }
        #expect(pushed.count == 1)
        #expect(pushed.first?["index"] is NSNull)
    }

    /// http2-h2c-prior-dropped.pcap is http2-h2c-prior.pcap without frames 16 and 32 (`editcap … 16 32`), two
    /// 1 448-byte segments of the 200 KiB download on stream 17 (tshark: tcp.seq 4142 and 17174, so stream offsets
    /// 4 141 and 17 173 of the server's stream). Against expected/http2-h2c-prior/frames.csv:
    /// - the first lies inside the DATA frame at 1 245 (payload to 9 446): the framing holds, 1 448 missing bytes;
    /// - the second starts 474 bytes before the end of the DATA frame at 9 446 (payload to 17 647) and covers the
    ///   header of the next one (17 647): those 474 are the record's missing bytes, the framing is lost, and it is
    ///   found again at the next frame header, 25 848, so 25 848 − 18 621 = 7 227 bytes are non-HTTP.
    /// The download's record: body 205 079 − 1 448 − 1 448 − 7 227, missing 1 448 + 474, flag `gap`, not complete;
    /// its data payload is 204 800 less the same bytes, plus the 9 of the one DATA header that was lost within them. Every other record is as in the whole capture: nginx never uses the HPACK table, so the
    /// server's lost table costs no decoded size.
    @Test func lostSegmentsInADownload() throws {
        let result = try Harness.run(["analyze", "samples/http2-h2c-prior-dropped.pcap", "--messages", "--format", "json"])
        let json = try Harness.json(result.stdout)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["non_http_bytes"] as? Int == 7_227)
        #expect(summary["missing_bytes"] as? Int == 2 * 1_448)
        let messages = try #require(json["messages"] as? [[String: Any]])
        let whole = try Self.expected(Self.sample("samples/http2-h2c-prior.pcap"), "records.csv")
        #expect(messages.count == whole.count)
        for row in whole {
            let record = try #require(messages.first {
                Self.text($0["connection"]) == row["connection"] && Self.text($0["stream_id"]) == row["stream_id"]
                    && Self.text($0["kind"]) == row["kind"]
            })
            let label = "\(row["connection"]!)/\(row["stream_id"]!)/\(row["kind"]!)"
            if row["path"] == "/big.bin", row["kind"] == "response" {
                #expect(record["body_bytes"] as? Int == 205_079 - 1_448 - 1_448 - 7_227)
                #expect(record["missing_bytes"] as? Int == 1_448 + 474)
                // No content coding: the decoded size is the data captured, as for HTTP/1 (the hole is missing_bytes).
                #expect(record["complete"] as? Bool == false)
                #expect(record["decoded_body_bytes"] as? Int == record["encoded_body_bytes"] as? Int)
                #expect(record["encoded_body_bytes"] as? Int == 204_800 - 1_448 - 1_448 - 7_227 + 9)
                #expect((record["flags"] as? [String] ?? []).contains("gap"))
                #expect(Self.text(record["header_decoded_bytes"]) == row["header_decoded_bytes"])
                continue
            }
            for field in Self.fields where !(field == "status" && row["kind"] == "request") {
                #expect(Self.text(record[field], bool: field == "complete") == row[field]!, "\(label) \(field)")
            }
        }
    }
}
