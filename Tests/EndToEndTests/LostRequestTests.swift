import Foundation
import Testing

/// Issue 24 item 3: pairing by TCP positions. Both captures are made from samples/http-basic.pcap by
/// samples/make-lost-requests.py; the expectations are http-basic's records, derived there from the bytes
/// (samples/README.md), and the frames removed.
@Suite struct LostRequestTests {
    typealias Row = (kind: String, path: String, status: Int?, paired: Bool, flags: [String], bytes: Int)

    func records(_ capture: String, _ extra: [String] = []) throws -> [Row] {
        let result = try Harness.run(["analyze", "--messages", "--format", "json"] + extra + [capture])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try Harness.json(result.stdout)
        let messages = try #require(report["messages"] as? [[String: Any]])
        return messages.map {
            ($0["kind"] as? String ?? "", $0["path"] as? String ?? "", $0["status"] as? Int, $0["paired"] as? Bool ?? false,
             $0["flags"] as? [String] ?? [], $0["transfer_bytes"] as? Int ?? -1)
        }
    }

    /// Frames 13 and 15 (the 133-byte `GET /index.html` answered 304 and the 85-byte `GET /missing.html` answered
    /// 404) are gone: the client's stream has a 218-byte hole. The server's 304 and 404 carry ACKs 386 and 471, no
    /// further than where the next captured request (`GET /account/`, client offset 471) begins: they answer the
    /// lost requests. `/account/`'s 200 carries ACK 594 (past 471): it answers `/account/`, and the two exchanges
    /// after it pair as in the whole capture. Before issue 24 every response after the hole was `(unknown)`.
    @Test func responsesAfterLostRequestsPairWithTheirOwnRequests() throws {
        for jobs in ["1", "2"] {
            let rows = try records("samples/pairing/http-lost-requests.pcap", ["--jobs", jobs])
            let summary = rows.map { "\($0.kind) \($0.path) \($0.status.map(String.init) ?? "-") \($0.paired) \($0.flags) \($0.bytes)" }
            #expect(summary == [
                "request /index.html 200 true [] 83", "response /index.html 200 true [] 776",
                "request /data-20k.bin 200 true [] 85", "response /data-20k.bin 200 true [] 20256",
                "request /index.html 200 true [] 84", "response /index.html 200 true [] 261",
                "request /account/ 200 true [] 123", "response /account/ 200 true [] 396",
                "request /page.html 200 true [] 124", "response /page.html 200 true [] 1976",
                "request /search 200 true [] 106", "response /search 200 true [] 178",
                "response (unknown) 304 false [\"request_lost\"] 180", "response (unknown) 404 false [\"request_lost\"] 308",
            ], "jobs \(jobs)")
        }
        let report = try Harness.json(try Harness.run(["analyze", "--format", "json", "samples/pairing/http-lost-requests.pcap"]).stdout)
        let summary = try #require(report["summary"] as? [String: Any])
        #expect(summary["missing_bytes"] as? Int == 133 + 85)
        #expect(summary["unpaired_responses"] as? Int == 2)
        #expect(summary["unpaired_requests"] as? Int == 0)
    }

    /// Frames 19 and 20 swapped: `GET /page.html` is captured after its response (whose ACK, 718, covers it). Every
    /// byte is there, so every record is http-basic's.
    @Test func aResponseCapturedBeforeItsRequestStillPairs() throws {
        for jobs in ["1", "2"] {
            let swapped = try records("samples/pairing/http-response-first.pcap", ["--jobs", jobs])
            let basic = try records("samples/http-basic.pcap", ["--jobs", jobs])
            #expect(swapped.map { "\($0)" } == basic.map { "\($0)" })
            #expect(swapped.allSatisfy { $0.paired })
        }
    }
}
