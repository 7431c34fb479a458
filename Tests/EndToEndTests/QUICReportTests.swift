import Foundation
import Testing

/// QUIC and HTTP/3 (issue 23): every sample in samples/quic-* (aioquic and Chromium on namespaces, see
/// samples/README.md) against what samples/derive-quic-expected.py derived without our code: its own UDP and QUIC
/// packet walker, Initial and 1-RTT decryption from the key log, HTTP/3 frame and QPACK representation walker with
/// pylsqpack for decoding, cross-checked with tshark 4.0 (packet counts, SNI, ALPN, `follow,quic`) and both
/// peers' qlogs.
@Suite struct QUICReportTests {
    typealias Sample = (file: String, keyLog: String?, expected: String)
    static let samples = Harness.quicSamples()

    static func sample(_ file: String) -> Sample { samples.first { $0.file == file }! }

    static func expected(_ sample: Sample, _ file: String) -> [[String: String]]? {
        (try? String(contentsOf: Harness.samples.appendingPathComponent("expected/\(sample.expected)/\(file)"), encoding: .utf8))
            .map(Harness.csv)
    }

    static func run(_ arguments: [String]) throws -> [String: Any] {
        let result = try Harness.run(arguments + ["--format", "json"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try Harness.json(result.stdout)
    }

    static func keyArguments(_ sample: Sample) -> [String] { sample.keyLog.map { ["--keylog", $0] } ?? [] }

    /// A key log, or secrets in the capture: the HTTP/3 expectations apply.
    static let keyed = samples.filter { expected($0, "messages.csv") != nil }.map(\.file)

    @Test func everySampleIsHere() {
        #expect(Self.samples.count == 11)
        #expect(Self.samples.allSatisfy { Self.expected($0, "connections.csv") != nil })
    }

    /// Without keys: two `quic` records per connection, named by the SNI read from the Initials, sized by the UDP
    /// payload of each direction on every path, with the negotiated version, the ALPN offered and the packets.
    @Test(arguments: samples.map(\.file))
    func keylessRecordsMatchTheDerivation(file: String) throws {
        let sample = Self.sample(file)
        // A pcapng with a secrets block decrypts by itself: strip nothing, just skip its keyless check here
        // (its twin without secrets is checked).
        guard !file.hasSuffix(".pcapng") else { return }
        let json = try Self.run(["analyze", file, "--messages"])
        let messages = try #require(json["messages"] as? [[String: Any]])
        let expected = try #require(Self.expected(sample, "connections.csv"))
        #expect(messages.count == expected.count, "\(file): record count")
        for row in expected {
            let record = messages.first {
                HTTP2ReportTests.text($0["connection"]) == row["connection"] && $0["direction"] as? String == row["direction"]
            }
            guard let record else {
                Issue.record("\(file): no record for \(row["connection"]!) \(row["direction"]!)")
                continue
            }
            let label = "\(file) \(row["connection"]!) \(row["direction"]!)"
            #expect(record["kind"] as? String == "quic", "\(label) kind")
            #expect(record["path"] as? String == "(quic)", "\(label) path")
            #expect(record["client"] as? String == row["client"], "\(label) client")
            #expect(record["server"] as? String == row["server"], "\(label) server")
            #expect(record["host"] as? String == row["sni"], "\(label) host")
            #expect(record["alpn_offered"] as? String == row["alpn_offered"], "\(label) alpn_offered")
            #expect(record["quic_version"] as? String == row["quic_version"], "\(label) quic_version")
            #expect(HTTP2ReportTests.text(record["transfer_bytes"]) == row["udp_payload_bytes"], "\(label) transfer_bytes")
            #expect(HTTP2ReportTests.text(record["quic_packets"]) == row["quic_packets"], "\(label) quic_packets")
        }
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["quic_connections"] as? Int == Set(expected.map { $0["connection"]! }).count, "\(file) quic_connections")
    }

    /// `traffic connections`: datagrams, UDP payload and packets per direction, with and without keys.
    @Test(arguments: samples.map(\.file))
    func connectionsListQUIC(file: String) throws {
        let sample = Self.sample(file)
        let json = try Self.run(["connections", file] + Self.keyArguments(sample))
        let connections = try #require(json["quic_connections"] as? [[String: Any]])
        let expected = try #require(Self.expected(sample, "connections.csv"))
        #expect(connections.count * 2 == expected.count, "\(file): connections")
        for row in expected {
            let c = try #require(connections.first { HTTP2ReportTests.text($0["connection"]) == row["connection"] })
            let d = try #require(c[row["direction"]!] as? [String: Any])
            let label = "\(file) \(row["connection"]!) \(row["direction"]!)"
            #expect(HTTP2ReportTests.text(d["datagrams"]) == row["datagrams"], "\(label) datagrams")
            #expect(HTTP2ReportTests.text(d["udp_payload_bytes"]) == row["udp_payload_bytes"], "\(label) udp_payload_bytes")
            #expect(HTTP2ReportTests.text(d["quic_packets"]) == row["quic_packets"], "\(label) quic_packets")
            #expect(c["sni"] as? String == row["sni"], "\(label) sni")
            #expect(c["version"] as? String == row["quic_version"], "\(label) version")
            if Self.keyed.contains(file) {
                #expect(c["decryption"] as? String == "decrypted", "\(label) decryption")
                // Every UDP payload byte is stream payload, QUIC overhead carried for a stream, or the connection's.
                let parts = ["request_stream_bytes", "unidirectional_stream_bytes", "quic_overhead_bytes", "quic_connection_bytes"]
                let sum = parts.reduce(0) { $0 + (d[$1] as? Int ?? -1_000_000) }
                #expect(String(sum) == row["udp_payload_bytes"], "\(label) parts of the UDP payload")
            }
        }
    }

    static let messageFields = [
        "method", "status", "path", "header_bytes", "header_decoded_bytes", "cookie_bytes", "cookie_decoded_bytes",
        "body_bytes", "encoded_body_bytes", "decoded_body_bytes",
    ]

    /// With keys: each HTTP/3 message, field by field, by stream and kind.
    @Test(arguments: keyed)
    func http3MessagesMatchTheDerivation(file: String) throws {
        let sample = Self.sample(file)
        let json = try Self.run(["analyze", file, "--messages"] + Self.keyArguments(sample))
        let messages = try #require(json["messages"] as? [[String: Any]])
        let expected = try #require(Self.expected(sample, "messages.csv"))
        #expect(messages.count == expected.count, "\(file): message count")
        // A capture with several keyed connections names the connection (stream IDs repeat between them).
        for row in expected {
            let connection = row["connection"] ?? "0"
            let label = "\(file) connection \(connection) stream \(row["stream_id"]!) \(row["kind"]!)"
            let matching = messages.filter {
                HTTP2ReportTests.text($0["connection"]) == connection && HTTP2ReportTests.text($0["stream_id"]) == row["stream_id"]
                    && $0["kind"] as? String == row["kind"]
            }
            guard matching.count == 1, let record = matching.first else {
                Issue.record("\(label): \(matching.count) records")
                continue
            }
            #expect(record["version"] as? String == "HTTP/3", "\(label) version")
            for field in Self.messageFields {
                #expect(HTTP2ReportTests.text(record[field]) == row[field]!, "\(label) \(field)")
            }
            let headerAndBody = (record["header_bytes"] as? Int ?? -1) + (record["body_bytes"] as? Int ?? -1)
            #expect(record["transfer_bytes"] as? Int == headerAndBody, "\(label) transfer_bytes")
        }
        let summary = try #require(json["summary"] as? [String: Any])
        let connections = Set(expected.map { $0["connection"] ?? "0" })
        #expect(summary["quic_decrypted"] as? Int == connections.count, "\(file) quic_decrypted")
        let streams = Set(expected.map { ($0["connection"] ?? "0") + "/" + $0["stream_id"]! })
        #expect(summary["http3_streams"] as? Int == streams.count, "\(file) http3_streams")
    }

    /// With keys and `--overhead all`, per direction: the control and QPACK streams are the derivation's
    /// h3_control_bytes, and the issue's conservation holds: Σ(transfer_bytes + quic_overhead_bytes) +
    /// h3_control_bytes + quic_connection_bytes = the UDP payload; the datagrams' headers are packet overhead, so
    /// nothing of the capture is unattributed.
    @Test(arguments: keyed)
    func everyUDPPayloadByteIsAttributed(file: String) throws {
        let sample = Self.sample(file)
        let json = try Self.run(["analyze", file, "--messages", "--overhead", "all"] + Self.keyArguments(sample))
        let messages = try #require(json["messages"] as? [[String: Any]])
        let expected = try #require(Self.expected(sample, "h3-directions.csv"))
        for row in expected {
            let kind = row["direction"] == "client_to_server" ? "request" : "response"
            let connection = row["connection"] ?? "0"
            let side = messages.filter {
                $0["kind"] as? String == kind && HTTP2ReportTests.text($0["connection"]) == connection
            }
            func sum(_ field: String) -> Int { side.reduce(0) { $0 + ($1[field] as? Int ?? 0) } }
            let label = "\(file) \(connection) \(row["direction"]!)"
            #expect(String(sum("h3_control_bytes")) == row["h3_control_bytes"], "\(label) h3_control_bytes")
            let total = sum("transfer_bytes") + sum("quic_overhead_bytes") + sum("h3_control_bytes") + sum("quic_connection_bytes")
            #expect(String(total) == row["udp_payload_bytes"], "\(label) conservation")
            #expect(side.allSatisfy { ($0["quic_overhead_bytes"] as? Int ?? 0) > 0 }, "\(label) every message paid QUIC")
        }
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["unattributed_frame_bytes"] as? Int == 0, "\(file) unattributed")
        #expect(summary["non_tcp_packets"] as? Int == 0, "\(file) non-TCP")
    }

    /// Other UDP in a capture with QUIC stays other UDP (samples/expected/quic-mixed/other-udp.csv).
    @Test func otherUDPIsNotQUIC() throws {
        let sample = Self.sample("samples/quic-mixed.pcap")
        let json = try Self.run(["analyze", sample.file])
        let other = try #require(Self.expected(sample, "other-udp.csv"))
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["non_tcp_packets"] as? Int == other.count)
        #expect(summary["quic_connections"] as? Int == 3)
    }
}
