import Foundation
import Testing

/// HTTPS without keys: `tls` records against tshark's record-layer fields (samples/derive-tls-expected.py).
@Suite struct TLSReportTests {
    static let captures = ((try? FileManager.default.contentsOfDirectory(atPath: Harness.samples.path)) ?? [])
        .filter { $0.hasPrefix("tls-") && $0.hasSuffix(".pcap") }.sorted()

    @Test(arguments: captures)
    func recordsMatchTshark(capture: String) throws {
        let name = String(capture.dropLast(5))
        let expected = Harness.csv(try String(
            contentsOf: Harness.samples.appendingPathComponent("expected/\(name)/tls.tshark.csv"), encoding: .utf8))
        let result = try Harness.run(["analyze", "--messages", "--format", "json", "samples/\(capture)"])
        let json = try Harness.json(result.stdout)
        let messages = try #require(json["messages"] as? [[String: Any]])
        #expect(messages.count == expected.count)
        for row in expected {
            let label = "\(capture) #\(row["connection"]!) \(row["direction"]!)"
            guard let record = messages.first(where: {
                String($0["connection"] as! Int) == row["connection"]! && $0["direction"] as? String == row["direction"]!
            }) else {
                Issue.record("\(label) missing")
                continue
            }
            #expect(record["kind"] as? String == "tls", "\(label)")
            #expect(record["path"] as? String == "(tls)", "\(label)")
            #expect(record["host"] as? String == row["sni"], "\(label) host = SNI")
            #expect(record["tls_version"] as? String == row["tls_version"], "\(label) version")
            #expect(record["cipher_suite"] as? String == row["cipher_suite"], "\(label) cipher")
            #expect((record["alpn"] as? String ?? "") == row["alpn"], "\(label) alpn")
            for field in ["tls_handshake_bytes", "tls_application_bytes", "tls_alert_bytes", "tls_record_header_bytes",
                          "transfer_bytes"] {
                #expect(record[field] as? Int == Int(row[field]!), "\(label) \(field)")
            }
        }
        let summary = try #require(json["summary"] as? [String: Any])
        #expect(summary["tls_connections"] as? Int == Set(expected.map { $0["connection"]! }).count)
        #expect(summary["tls_decrypted"] as? Int == 0)
        #expect(summary["requests"] as? Int == 0, "TLS bytes are not requests")
        let groups = try #require(json["groups"] as? [[String: Any]])
        let sent = expected.filter { $0["direction"] == "client_to_server" }.reduce(0) { $0 + Int($1["transfer_bytes"]!)! }
        #expect(groups.reduce(0) { $0 + ($1["request_bytes"] as! Int) } == sent)
    }
}
