import Foundation
import Testing

/// Issue 27: `--format ndjson` streams one record per line as records complete. Its lines are the records of
/// `--messages --format json` (the same fields, plus `capture`), whatever the number of jobs, checked as
/// multisets by scripts/ndjson-check.py (the order of lines may vary with several jobs).
@Suite struct NDJSONTests {
    func check(_ arguments: [String]) throws -> String {
        let (status, output) = try Harness.runPython("scripts/ndjson-check.py", [Harness.binary.path] + arguments)
        #expect(status == 0, "\(output)")
        return output
    }

    @Test(arguments: ["1", "2", "4"])
    func everySampleListsTheRecordsOfMessagesJSON(jobs: String) throws {
        let captures = MergeTests.allSamples().filter { !$0.contains("random-bytes") && !$0.contains("/empty.pcap") && !$0.contains("radiotap") }
        let output = try check(["--jobs", jobs] + MergeTests.keyLogArguments() + captures)
        #expect(output.contains(" 0 missing, 0 extra"))
    }

    @Test func oneCaptureNamesItselfOnEveryLine() throws {
        let result = try Harness.run(["analyze", "--format", "ndjson", "samples/http-basic.pcap"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 16)
        for line in lines {
            #expect(line.hasPrefix("{\"capture\":\"samples/http-basic.pcap\",\"connection\":0,\"index\":"))
            #expect(line.hasSuffix("}"))
            let object = try Harness.json(String(line))
            // 8 requests and 8 responses of 1 connection; the bytes as the committed --messages expectations say.
            #expect(object["transfer_bytes"] is Int)
        }
        let bytes = try lines.map { try Harness.json(String($0))["transfer_bytes"] as? Int ?? -1 }.reduce(0, +)
        let report = try Harness.json(try Harness.run(["analyze", "--format", "json", "samples/http-basic.pcap"]).stdout)
        let groups = try #require(report["groups"] as? [[String: Any]])
        #expect(bytes == groups.reduce(0) { $0 + ($1["total_bytes"] as? Int ?? 0) })
    }

    @Test func unwritableOutputAndOtherCommandsAreRefused() throws {
        let unwritable = try Harness.run(["analyze", "--format", "ndjson", "-o", "/nonexistent/dir/x.ndjson", "samples/http-basic.pcap"])
        #expect(unwritable.status == 3)
        #expect(unwritable.stderr.contains("cannot write"))
        let connections = try Harness.run(["connections", "--format", "ndjson", "samples/http-basic.pcap"])
        #expect(connections.status == 2)
        let merge = try Harness.run(["merge", "--format", "ndjson", "x.json"])
        #expect(merge.status == 2)
        let unreadable = try Harness.run(["analyze", "--format", "ndjson", "samples/malformed/random-bytes.pcap"])
        #expect(unreadable.status == 3)
        #expect(!unreadable.signalled)
    }
}
