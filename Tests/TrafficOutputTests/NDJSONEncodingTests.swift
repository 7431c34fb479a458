import Foundation
import Testing
import TrafficAggregation
import TrafficCapture
import TrafficSessions
@testable import TrafficOutput

/// The NDJSON record encoder writes into room sized by `tailBound`: its strings must be escaped exactly as the
/// `[UInt8]` writer does, and no record may write past its bound, whatever its texts and numbers.
@Suite struct NDJSONEncodingTests {
    /// `TailWriter.jsonString` against `Array.appendJSONString`, the writer every other JSON output uses.
    static func viaTailWriter(_ text: String) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 2 + 6 * text.utf8.count) { room, count in
            var w = NDJSONRecordWriter.TailWriter(room.baseAddress!)
            w.jsonString(text)
            count = w.count
        }
    }

    static func viaArray(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendJSONString(text)
        return bytes
    }

    @Test func everyByteAtEveryPositionIsEscapedAsBefore() {
        // Every byte value that is ASCII, at every position of texts of 1 to 20 bytes (the 8-byte steps and the
        // tail), in a run of plain letters.
        for length in 1...20 {
            for position in 0..<length {
                for value in UInt8(0)...UInt8(0x7F) {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = value
                    let text = String(decoding: bytes, as: UTF8.self)
                    #expect(Self.viaTailWriter(text) == Self.viaArray(text), "length \(length) at \(position): \(value)")
                }
            }
        }
    }

    /// Both writers share `writeJSONEscape`: its escapes against hand-written RFC 8259 text.
    @Test func escapesAsWrittenByHand() {
        let text = "a\u{0}\u{1}\"\\\n\r\t\u{8}\u{C}\u{1B}\u{1F}\u{7F}z"
        let expected = #""a\u0000\u0001\"\\\n\r\t\u0008\u000c\u001b\u001f"# + "\u{7F}z\""
        #expect(Self.viaTailWriter(text) == Array(expected.utf8))
        #expect(Self.viaArray(text) == Array(expected.utf8))
    }

    @Test func texts() {
        for text in [
            "", "plain", "quote \" and \\ backslash", "\u{0}\u{1}\u{1F}\u{7F}", "tab\tcr\rlf\n", "ünïcödé ✓ 😀",
            String(repeating: "x", count: 1000) + "\"", "\u{1B}[1m", "/a/b?c=d&e=\"f\"",
        ] {
            #expect(Self.viaTailWriter(text) == Self.viaArray(text), "\(text.debugDescription)")
        }
        // Not a native string (bridged or lazily made): the copy path.
        let substring = "xx\"yy".dropFirst()
        #expect(Self.viaTailWriter(String(substring)) == Self.viaArray(String(substring)))
    }

    /// A writer keeps its output buffer from one `write` to the next: each call writes exactly its own lines, a
    /// long batch before a short one included (a buffer not emptied would repeat the first batch's lines).
    @Test func aBufferKeptBetweenWritesHoldsOnlyTheCurrentLines() {
        func lines(_ connections: [Int], path: String) -> StreamedLines {
            var lines = StreamedLines()
            let writer = NDJSONRecordWriter(capturePaths: ["a.pcap"], write: { _ in })
            for (i, connection) in connections.enumerated() {
                let record = MessageRecord(
                    connection: connection, index: i, kind: .request, time: .zero, client: "c", server: "s", host: "h",
                    path: path)
                lines.append(record, capture: 0, stream: writer)
            }
            return lines
        }
        var out: [UInt8] = []
        let writer = NDJSONRecordWriter(capturePaths: ["a.pcap"], write: { out.append(contentsOf: $0) })
        writer.write(lines(Array(1...300), path: "/long"))
        let first = out.count
        writer.write(lines([7], path: "/short"))
        let text = String(decoding: out, as: UTF8.self)
        let written = text.split(separator: "\n")
        #expect(written.count == 301)
        #expect(written.filter { $0.contains("\"path\":\"/short\"") }.count == 1)
        #expect(written.last?.hasPrefix("{\"capture\":\"a.pcap\",\"connection\":7,") == true)
        #expect(written.first?.hasPrefix("{\"capture\":\"a.pcap\",\"connection\":1,") == true)
        // The second call's bytes are one line, ending where the output ends.
        #expect(out[first...].filter { $0 == 0x0A }.count == 1 && out.last == 0x0A)
    }

    /// Records at the edges of every field: each line is valid JSON with the fields given, and within its bound
    /// (the encoder stops with a precondition failure otherwise).
    @Test func recordsAtTheEdgesStayWithinTheirBound() throws {
        let controls = String(decoding: (UInt8(0)..<UInt8(0x20)).map { $0 }, as: UTF8.self)
        var records: [MessageRecord] = []
        var plain = MessageRecord(
            connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")
        plain.decodedBodyBytes = nil
        records.append(plain)
        var extreme = MessageRecord(
            connection: Int.max, index: Int.min, kind: .response, time: CaptureTime(nanoseconds: .min),
            client: controls, server: controls + "\"\\", host: String(repeating: "\u{1F}", count: 300),
            path: String(repeating: "\"", count: 200))
        extreme.method = controls
        extreme.status = .min
        extreme.version = "\\"
        extreme.query = controls
        extreme.lineBytes = .min
        extreme.headerBytes = .min
        extreme.cookieBytes = .min
        extreme.bodyBytes = .min
        extreme.encodedBodyBytes = .min
        extreme.decodedBodyBytes = .min
        extreme.missingBytes = .min
        extreme.contentType = controls
        extreme.contentEncoding = controls
        extreme.transferEncoding = controls
        extreme.tunnelBytes = .min
        extreme.handshakeBytes = .min
        extreme.teardownBytes = .min
        extreme.packetOverheadBytes = .min
        extreme.retransmittedBytes = .min
        extreme.lastByteTime = CaptureTime(nanoseconds: .max)
        extreme.streamID = .min
        extreme.headerDecodedBytes = .min
        extreme.cookieDecodedBytes = .min
        extreme.h2ControlBytes = .min
        extreme.quicOverheadBytes = .min
        extreme.h3ControlBytes = .min
        extreme.quicConnectionBytes = .min
        for anomaly in RecordAnomaly.allCases { extreme.flag(anomaly) }
        records.append(extreme)
        for record in records {
            var tail: [UInt8] = []
            NDJSONRecordWriter.encodeTail(of: record, to: &tail)
            let line = Array("{\"connection\":0".utf8) + tail + Array("}".utf8)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(object["host"] as? String == record.host)
            #expect(object["path"] as? String == record.path)
            #expect(object["client"] as? String == record.client)
            #expect((object["flags"] as? [String])?.count == record.flags.count)
        }
    }
}
