import Foundation
import Testing

/// HTTPS with keys (issue 21): every sample in samples/https-* decrypted with its key log (or the secrets in the
/// pcapng) against what samples/derive-https-expected.py derived without our code: per message from tshark's
/// decrypted HTTP and an independent parse of `-z follow,tls,raw`; per connection and direction the record
/// bytes by real content type, the plaintext, and the TCP payload.
@Suite struct HTTPSReportTests {
    static let samples = Harness.httpsSamples().filter {
        FileManager.default.fileExists(
            atPath: Harness.samples.appendingPathComponent("expected/\($0.expected)/messages.tshark.csv").path)
    }

    static func analyze(_ sample: (file: String, keyLog: String?, expected: String), _ extra: [String] = [])
        throws -> [String: Any]
    {
        let result = try Harness.run(
            ["analyze", "--messages", "--format", "json", sample.file] + (sample.keyLog.map { ["--keylog", $0] } ?? []) + extra)
        #expect(result.status == 0, "\(sample.file): \(result.stderr)")
        return try Harness.json(result.stdout)
    }

    static func expected(_ sample: (file: String, keyLog: String?, expected: String), _ file: String) throws
        -> [[String: String]]
    {
        Harness.csv(try String(
            contentsOf: Harness.samples.appendingPathComponent("expected/\(sample.expected)/\(file)"), encoding: .utf8))
    }

    @Test(arguments: samples.map(\.file))
    func messagesMatchTheDecryptedCapture(file: String) throws {
        let sample = Self.samples.first { $0.file == file }!
        let json = try Self.analyze(sample)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["tls_decrypted"] as? Int == summary["tls_connections"] as? Int, "\(file): every connection decrypted")
        let messages = try #require(json["messages"] as? [[String: Any]])
        let expected = try Self.expected(sample, "messages.tshark.csv")
        #expect(messages.count == expected.count, "\(file): record count")
        MessagesGoldenTests.expect(messages, match: expected, label: file)
        for record in messages {
            #expect((record["tls_overhead_bytes"] as? Int ?? 0) > 0, "\(file) \(record["path"] ?? "") tls_overhead_bytes")
        }
    }

    /// Σ(transfer_bytes + tls_overhead_bytes) + handshake/change_cipher_spec/alert records + non-HTTP = TCP payload,
    /// and Σ tls_overhead_bytes = the application records' bytes beyond their plaintext, per connection and direction.
    @Test(arguments: samples.map(\.file))
    func tlsOverheadConservesEveryByte(file: String) throws {
        let sample = Self.samples.first { $0.file == file }!
        let json = try Self.analyze(sample)
        let messages = try #require(json["messages"] as? [[String: Any]])
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["non_http_bytes"] as? Int == 0, "\(file): plaintext is all HTTP")
        for row in try Self.expected(sample, "tls-records.csv") {
            let kind = row["direction"] == "client_to_server" ? "request" : "response"
            let records = messages.filter { String($0["connection"] as! Int) == row["connection"]! && $0["kind"] as? String == kind }
            let transfer = records.reduce(0) { $0 + ($1["transfer_bytes"] as! Int) }
            let overhead = records.reduce(0) { $0 + ($1["tls_overhead_bytes"] as! Int) }
            let label = "\(file) connection \(row["connection"]!) \(row["direction"]!)"
            #expect(transfer == Int(row["application_plaintext_bytes"]!), "\(label) plaintext")
            #expect(overhead == Int(row["tls_overhead_bytes"]!), "\(label) tls_overhead_bytes")
            let control = Int(row["handshake_record_bytes"]!)! + Int(row["alert_record_bytes"]!)!
            let incomplete = Int(row["incomplete_record_bytes"] ?? "0") ?? 0
            #expect(transfer + overhead + control + incomplete == Int(row["tcp_payload_bytes"]!), "\(label) conservation")
        }
    }

    /// With `--overhead all` the groups' wire bytes and the unattributed frame bytes still add up to the capture,
    /// the TLS handshake records riding on each connection's first exchange.
    @Test(arguments: samples.map(\.file))
    func frameBytesReconcileWithOverhead(file: String) throws {
        let sample = Self.samples.first { $0.file == file }!
        let json = try Self.analyze(sample, ["--overhead", "all"])
        let summary = try #require(json["summary"] as? [String: Any])
        let groups = try #require(json["groups"] as? [[String: Any]])
        let wire = groups.reduce(0) { $0 + ($1["wire_bytes"] as! Int) }
        let parts = ["non_http_frame_bytes", "non_tcp_frame_bytes", "unattributed_frame_bytes"].map { summary[$0] as! Int }
        #expect(wire + parts.reduce(0, +) == summary["capture_frame_bytes"] as? Int, "\(file)")
        let handshake = groups.reduce(0) { $0 + ($1["tls_handshake_bytes"] as! Int) }
        let expected = try Self.expected(sample, "tls-records.csv").reduce(0) {
            $0 + Int($1["handshake_record_bytes"]!)! + Int($1["alert_record_bytes"]!)!
        }
        #expect(handshake == expected, "\(file) tls_handshake_bytes")
    }

    @Test func withoutTheKeyLogTheConnectionStaysEncryptedAndSaysWhy() throws {
        let result = try Harness.run(["analyze", "--format", "json", "--messages", "samples/https-v12-aes128gcm.pcap"])
        let json = try Harness.json(result.stdout)
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.map { $0["kind"] as? String } == ["tls", "tls"])
        #expect(messages.allSatisfy { ($0["flags"] as? [String])?.contains("no_key") == true })
        #expect(result.stderr.contains("1 of 1 TLS connection not decrypted: 1 no key; give the secrets with --keylog FILE"))
    }

    /// The key log's master secret has one digit changed (samples/README.md): no record verifies.
    @Test(arguments: [("samples/https-v12-aes128gcm.pcap", "samples/https-v12-aes128gcm.wrong.keys")])
    func wrongSecretsAreDecryptFailed(capture: String, keys: String) throws {
        guard FileManager.default.fileExists(atPath: Harness.packageRoot.appendingPathComponent(keys).path) else { return }
        let result = try Harness.run(["analyze", "--format", "json", "--messages", capture, "--keylog", keys])
        #expect(result.status == 0)
        let json = try Harness.json(result.stdout)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["tls_decrypt_failed"] as? Int == 1)
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.allSatisfy { ($0["flags"] as? [String])?.contains("decrypt_failed") == true })
        #expect(result.stderr.contains("not decrypted: 1 decrypt_failed"))
    }

    /// Only SERVER_TRAFFIC_SECRET_0 is wrong: the handshake and the client's side decrypt; the server's 5 records
    /// after its Finished do not (keylogs.csv), and the responses they held are missing, not invented.
    @Test func aWrongSecretForOneDirectionLosesOnlyItsRecords() throws {
        let result = try Harness.run(["analyze", "--format", "json", "--messages", "samples/https-v13-aes128gcm.pcap",
                                      "--keylog", "samples/https-v13-aes128gcm.wrong.keys"])
        #expect(result.status == 0)
        let json = try Harness.json(result.stdout)
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["tls_decrypted"] as? Int == 1)
        #expect(summary["tls_failed_records"] as? Int == 5)
        #expect(result.stderr.contains("5 TLS records of decrypted connections did not verify"))
        let messages = try #require(json["messages"] as? [[String: Any]])
        let expected = try Self.expected(Self.samples.first { $0.file == "samples/https-v13-aes128gcm.pcap" }!, "messages.tshark.csv")
        // The requests are all there, exactly.
        let requests = messages.filter { $0["kind"] as? String == "request" }
        #expect(requests.map { $0["transfer_bytes"] as? Int } == expected.filter { $0["kind"] == "request" }.map { Int($0["transfer_bytes"]!) })
        #expect(messages.filter { $0["kind"] as? String == "response" }.allSatisfy { ($0["transfer_bytes"] as? Int ?? 0) == 0 })
    }

    @Test func keysForOtherConnectionsAreNoKey() throws {
        let keys = "samples/https-v12-aes128gcm.other.keys"
        guard FileManager.default.fileExists(atPath: Harness.packageRoot.appendingPathComponent(keys).path) else { return }
        let result = try Harness.run(["analyze", "--format", "json", "samples/https-v12-aes128gcm.pcap", "--keylog", keys])
        let summary = try #require(try Harness.json(result.stdout)["summary"] as? [String: Any])
        #expect(summary["tls_no_key"] as? Int == 1)
        #expect(summary["tls_decrypted"] as? Int == 0)
    }

    @Test func aTruncatedKeyLogDecryptsWhatItHasAndCountsItsBadLines() throws {
        let keys = "samples/https-v13-psk.truncated.keys"
        guard FileManager.default.fileExists(atPath: Harness.packageRoot.appendingPathComponent(keys).path) else { return }
        let result = try Harness.run(["analyze", "--format", "json", "samples/https-v13-psk.pcap", "--keylog", keys])
        #expect(result.status == 0)
        #expect(result.stderr.contains("key log line"), "\(result.stderr)")
        let summary = try #require(try Harness.json(result.stdout)["summary"] as? [String: Any])
        #expect(summary["tls_connections"] as? Int == 2)
        #expect((summary["tls_decrypted"] as! Int) < 2)
    }

    @Test func aMissingKeyLogIsAnInputError() throws {
        let result = try Harness.run(["analyze", "samples/https-v12-aes128gcm.pcap", "--keylog", "/nonexistent/keys.log"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("/nonexistent/keys.log"))
        #expect(!result.signalled)
    }

    @Test func jobsDoNotChangeTheResult() throws {
        let keys = ["--keylog", "samples/https-v12-resumed-ticket.keys"]
        let one = try Harness.run(["analyze", "--format", "json", "--messages", "--jobs", "1", "samples/https-v12-resumed-ticket.pcap"] + keys)
        let two = try Harness.run(["analyze", "--format", "json", "--messages", "--jobs", "2", "samples/https-v12-resumed-ticket.pcap"] + keys)
        #expect(one.stdout == two.stdout)
    }

    @Test func connectionsSayWhetherEachWasDecrypted() throws {
        let result = try Harness.run(["connections", "--format", "json", "samples/https-v12-aes128gcm.pcap",
                                      "--keylog", "samples/https-v12-aes128gcm.keys"])
        let json = try Harness.json(result.stdout)
        let connection = try #require((json["connections"] as? [[String: Any]])?.first)
        let tls = try #require(connection["tls"] as? [String: Any])
        #expect(tls["decryption"] as? String == "decrypted")
        let expected = try Self.expected(Self.samples.first { $0.file == "samples/https-v12-aes128gcm.pcap" }!, "tls-records.csv")
        for row in expected {
            let side = try #require(tls[row["direction"]!] as? [String: Any])
            #expect(side["handshake_bytes"] as? Int == Int(row["handshake_record_bytes"]!))
            #expect(side["application_bytes"] as? Int == Int(row["application_record_bytes"]!))
            #expect(side["record_header_bytes"] as? Int == 5 * Int(row["records"]!)!)
        }
    }
}
