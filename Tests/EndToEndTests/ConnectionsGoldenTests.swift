import Foundation
import Testing

/// `traffic connections` against tshark's per-stream counts (samples/derive-expected.py), on every
/// committed sample and on Zeek's traces when ../shared is present.
@Suite struct ConnectionsGoldenTests {
    static let directions = ["client_to_server", "server_to_client"]
    static let compared = ["packets", "frame_bytes", "payload_bytes"]

    /// Compares every row of an expected `connections.tshark.csv` with the tool's JSON.
    func compare(capture: String, expectedFile: URL) throws {
        let expectedText = try String(contentsOf: expectedFile, encoding: .utf8)
        let expected = Harness.csv(expectedText)
        let result = try Harness.run(["connections", "--format", "json", capture])
        #expect(!result.signalled)
        let json = try Harness.json(result.stdout)
        let connections = try #require(json["connections"] as? [[String: Any]])
        #expect(connections.count == expected.count, "\(capture): connection count")
        for row in expected {
            let id = Int(row["connection"]!)!
            guard let found = connections.first(where: { $0["connection"] as? Int == id }) else {
                Issue.record("\(capture): connection \(id) missing")
                continue
            }
            #expect(found["client"] as? String == row["client"], "\(capture) #\(id) client")
            #expect(found["server"] as? String == row["server"], "\(capture) #\(id) server")
            for direction in Self.directions {
                let object = try #require(found[direction] as? [String: Any])
                for field in Self.compared {
                    #expect(object[field] as? Int == Int(row["\(direction)_\(field)"]!),
                            "\(capture) #\(id) \(direction) \(field)")
                }
            }
        }
    }

    @Test(arguments: Harness.sampleCaptures().map(\.file))
    func samples(capture: String) throws {
        let name = Harness.sampleCaptures().first { $0.file == capture }!.expected
        let folder = Harness.samples.appendingPathComponent("expected/\(name)")
        // IP fragments: tshark counts a fragmented datagram as the one frame that completed it; traffic
        // counts every fragment frame, because each one cost bytes on the wire (see samples/README.md).
        let override = folder.appendingPathComponent("connections.traffic.csv")
        let file = FileManager.default.fileExists(atPath: override.path)
            ? override : folder.appendingPathComponent("connections.tshark.csv")
        try compare(capture: capture, expectedFile: file)
    }

    @Test(.enabled(if: !Harness.corpusTraces().isEmpty, "../shared/corpus is absent"),
          arguments: Harness.corpusTraces())
    func zeekTraces(trace: String) throws {
        let expected = Harness.samples.appendingPathComponent("expected/zeek/\(Harness.corpusName(trace))/connections.tshark.csv")
        try compare(capture: Harness.corpus.appendingPathComponent("traces/\(trace)").path, expectedFile: expected)
    }

    /// Zeek's conn.log counts payload bytes by sequence numbers, so orig_bytes = delivered + missing.
    @Test(.enabled(if: !Harness.corpusTraces().isEmpty, "../shared/corpus is absent"))
    func zeekConnLogPayloadBytes() throws {
        let baselines = Harness.corpus.appendingPathComponent("baselines")
        var checked = 0
        for trace in Harness.corpusTraces() {
            let log = baselines.appendingPathComponent("\(trace)/conn.log")
            guard let text = try? String(contentsOf: log, encoding: .utf8),
                let fieldsLine = text.split(separator: "\n").first(where: { $0.hasPrefix("#fields") })
            else { continue }
            let fields = fieldsLine.split(separator: "\t").dropFirst().map(String.init)
            guard let origIndex = fields.firstIndex(of: "orig_bytes"), let respIndex = fields.firstIndex(of: "resp_bytes")
            else { continue }
            let rows = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: "\t").map(String.init) }
            let result = try Harness.run(["connections", "--format", "json", Harness.corpus.appendingPathComponent("traces/\(trace)").path])
            let connections = try #require(try Harness.json(result.stdout)["connections"] as? [[String: Any]])
            for (row, connection) in zip(rows, connections) {
                let up = connection["client_to_server"] as! [String: Any], down = connection["server_to_client"] as! [String: Any]
                #expect((up["delivered_bytes"] as! Int) + (up["missing_bytes"] as! Int) == Int(row[origIndex]), "\(trace) orig_bytes")
                #expect((down["delivered_bytes"] as! Int) + (down["missing_bytes"] as! Int) == Int(row[respIndex]), "\(trace) resp_bytes")
                checked += 1
            }
        }
        #expect(checked > 0)
    }
}
