import Foundation
import Testing

/// Issue 24 item 1: a data segment written after the ACK that covers it (mirror ports, bridges, multi-queue NICs
/// stamp the two directions on different queues). http-segments-late.pcap is http-segments.pcap with frame 8 (server
/// seq 2897, 1 448 body bytes) moved after frame 13, the client's ACK of 4345 (samples/make-late-sample.py). Every
/// byte is in the file, so every record and the connection's accounting must be those of the ordered capture; tshark
/// 4.0 agrees (expected/http-segments-late/ equals expected/http-segments/). Before the late-segment window the hole
/// was given up at the ACK: 1 448 missing bytes, a `gap` flag, and the late segment counted as a retransmission.
@Suite struct LateSegmentTests {
    static let sizes = [
        "connection", "index", "kind", "line_bytes", "header_bytes", "body_bytes", "encoded_body_bytes",
        "decoded_body_bytes", "transfer_bytes", "missing_bytes", "complete", "flags",
    ]

    static func records(_ file: String) throws -> [[String: String]] {
        let result = try Harness.run(["analyze", file, "--messages", "--format", "json"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(file): \(result.stderr)")
        let messages = try Harness.json(result.stdout)["messages"] as? [[String: Any]] ?? []
        return messages.map { record in
            Dictionary(uniqueKeysWithValues: sizes.map { key in (key, "\(record[key] ?? "")") })
        }
    }

    @Test func aSegmentAfterItsACKStillFillsItsHole() throws {
        let ordered = try Self.records("samples/http-segments.pcap")
        let late = try Self.records("samples/http-segments-late.pcap")
        #expect(late.count == 4)
        #expect(late == ordered)
        let connections = try Harness.json(
            try Harness.run(["connections", "samples/http-segments-late.pcap", "--format", "json"]).stdout)
        let connection = try #require((connections["connections"] as? [[String: Any]])?.first)
        let server = try #require(connection["server_to_client"] as? [String: Any])
        #expect(server["missing_bytes"] as? Int == 0)
        #expect(server["retransmitted_bytes"] as? Int == 0)
        #expect(server["delivered_bytes"] as? Int == 13_018)
    }
}
