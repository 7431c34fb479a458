@testable import TrafficAggregation
import Foundation
import Testing
import TrafficAnalysis
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// Issue 3's invariant, per connection and direction: the records' transfer bytes + non-HTTP and
/// tunnel bytes + missing bytes = the bytes the reassembler delivered + the holes it reported.
@Suite struct AccountingInvariantTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func captures(in folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".pcap") || $0.hasSuffix(".pcapng") || $0.hasSuffix(".gz") }.sorted()
            .map { folder.appendingPathComponent($0).path }
    }

    // TCP's invariant: QUIC samples have no TCP connection (QUICReportTests checks their conservation).
    static let sampleFiles = captures(in: root.appendingPathComponent("samples")).filter {
        !URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("quic-")
    }
    static let corpusFiles = captures(in: root.appendingPathComponent("../shared/corpus/zeek/traces").standardizedFileURL)

    final class Sums { var bytes = [0, 0] }

    final class Counting: TCPStreamHandler {
        let parser: HTTPConnectionParser
        let sums = Sums()
        var transfer = [0, 0]
        var finished: [HTTPByteCounts] = []
        init(info: TCPConnectionInfo, scratch: DecodingScratch) {
            let sums = self.sums
            parser = HTTPConnectionParser(info: info, scratch: scratch) { record in
                // A request's bytes travel client to server, a response's the other way.
                sums.bytes[record.kind == .request ? 0 : 1] += record.transferBytes
            }
        }
        func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
            parser.receive(bytes, direction: direction, span: WireSpan(time: segment.time, overheadBytes: segment.overheadBytes))
        }
        func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
            parser.skip(byteCount, direction: direction, time: time)
        }
        func finish(time: CaptureTime) {
            parser.finish(time: time)
            transfer = sums.bytes
            finished = [parser.counts(for: .clientToServer), parser.counts(for: .serverToClient)]
        }
    }

    func check(_ path: String) throws {
        let scratch = DecodingScratch()
        var handlers: [Int: Counting] = [:]
        let analysis = try CaptureAnalysis.run(path: path, options: AnalysisOptions()) { info in
            let handler = Counting(info: info, scratch: scratch)
            handlers[info.id] = handler
            return handler
        }
        #expect(!analysis.connections.isEmpty, "\(path): no connections")
        for connection in analysis.connections {
            let handler = try #require(handlers[connection.info.id])
            for direction in Direction.allCases {
                let stats = connection[direction]
                let counts = handler.finished[direction.rawValue]
                let label = "\(path) #\(connection.info.id) \(direction.name)"
                #expect(handler.transfer[direction.rawValue] == counts.messageBytes, "\(label): emitted records")
                #expect(counts.messageBytes + counts.nonHTTPBytes + counts.tunnelBytes == stats.deliveredBytes, "\(label): delivered")
                #expect(counts.missingBytes == stats.missingBytes, "\(label): missing")
                #expect(stats.isConserved, "\(label): packet classes sum to frame bytes")
            }
        }
    }

    @Test(arguments: sampleFiles) func samples(path: String) throws { try check(path) }

    @Test(.enabled(if: !corpusFiles.isEmpty, "../shared/corpus is absent"), arguments: corpusFiles)
    func zeekTraces(path: String) throws { try check(path) }
}
