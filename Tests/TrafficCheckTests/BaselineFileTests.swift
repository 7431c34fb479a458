import Foundation
import Testing
@testable import TrafficCheck

@Suite struct BaselineFileTests {
    static func baseline() -> Baseline {
        var settings = GroupingSettings()
        settings.pathTemplates = ["/users/{id}"]
        return Baseline(settings: settings, snapshot: Fixtures.snapshot([
            ("/b", Fixtures.counts(requests: 3, requestBytes: 301, responseBytes: 2000, responseDecoded: 1500)),
            ("/a", Fixtures.counts(requestCookies: 40)),
        ]))
    }

    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("baseline-\(UUID().uuidString).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func roundTrips() throws {
        let path = try write(Self.baseline().json())
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try Baseline.load(path: path) == Self.baseline())
    }

    @Test func isSortedWithFixedDecimals() {
        let json = Self.baseline().json()
        #expect(json.range(of: "\"path\": \"/a\"")!.lowerBound < json.range(of: "\"path\": \"/b\"")!.lowerBound)
        #expect(json.contains("\"request_bytes\": 100.3,"))  // 301 / 3 = 100.333…
        #expect(json.contains("\"response_bytes\": 666.7,"))
        #expect(json.hasPrefix("{\n  \"schema\": \"traffic.baseline/1\",\n"))
    }

    @Test(arguments: [
        ("", "corrupt baseline: the file is empty"),
        ("{\"schema\": \"traffic.baseline/1\", \"groups\": [", "corrupt baseline: not valid JSON"),
        ("[1, 2]", "corrupt baseline: not a JSON object"),
        ("{\"groups\": []}", "corrupt baseline: no \"schema\""),
        ("{\"schema\": \"traffic.baseline/2\"}", "unknown schema 'traffic.baseline/2'; this traffic reads traffic.baseline/1"),
        ("{\"schema\": \"traffic.report/1\", \"groups\": []}", "a traffic analyze report, not a baseline"),
        ("{\"schema\": \"traffic.baseline/1\", \"group_by\": [\"host\"], \"groups\": [{\"host\": \"a\"}]}",
         "corrupt baseline: groups[0].requests must be a whole number"),
        ("{\"schema\": \"traffic.baseline/1\", \"group_by\": [\"planet\"], \"groups\": []}",
         "\"group_by\" has the unknown field 'planet'"),
    ])
    func rejects(text: String, message: String) throws {
        let path = try write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try Baseline.load(path: path)
        } throws: { error in
            let description = (error as? CheckInputError)?.description ?? ""
            return description.hasPrefix(path + ": ") && description.contains(message)
        }
    }

    @Test func missingFile() {
        #expect(throws: CheckInputError.unreadable(path: "/no/such/baseline.json", what: "baseline", reason: "No such file or directory")) {
            try Baseline.load(path: "/no/such/baseline.json")
        }
    }
}
