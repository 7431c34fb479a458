@testable import TrafficAggregation
import Foundation
import Testing
@testable import TrafficAnalysis
import TrafficReassembly
import TrafficSessions
import TrafficTLS
import TrafficWire
import TrafficCapture
import TrafficCodecs

/// A closed connection lingers in the reassembler for late packets (ten seconds of capture time): a TLS one keeps
/// only its end (the TLS summary, the decryption outcome and counters), not its parser and decryptor (issue 25's
/// memory goal; 17 of 66 MiB on the HTTPS bench), and still reports the same when it ends.
@Suite struct LingeringConnectionTests {
    /// Reads every packet but never finishes: the connections that closed are still in the reassembler.
    final class HoldingSink: SegmentSink {
        let reassembler: TCPReassembler
        init(_ reassembler: TCPReassembler) { self.reassembler = reassembler }
        func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int) {
            reassembler.process(segment, time: time, packetIndex: packetIndex)
        }
        func finish() {}
        var connectionCount: Int { reassembler.connectionCount }
        var anomalies: [Int] { reassembler.anomalies }
    }

    final class Taps { var made: [TLSConnectionTap] = [] }

    @Test(arguments: ["https-v13-aes128gcm", "https-v12-aes128gcm", "https-v12-cbc-sha256"])
    func closedTLSConnectionsKeepOnlyTheirEnd(sample: String) throws {
        let samples = AccountingInvariantTests.root.appendingPathComponent("samples")
        let path = samples.appendingPathComponent("\(sample).pcap").path
        var warnings: [AnalysisWarning] = []
        let decryption = try #require(try TrafficAnalyzer.decryptionContext(
            paths: [], keyLogPaths: [samples.appendingPathComponent("\(sample).keys").path], warnings: &warnings))
        let options = ReportOptions()
        let builder = ReportBuilder(options: options, capturePaths: [path])
        let scratch = DecodingScratch()
        let limits = TrafficAnalyzer.httpLimits(options)
        let pool = HTTPParserPool(scratch: scratch, limits: limits)
        let taps = Taps()
        let stages = TCPSession.Stages(
            [(TLSConnectionParser.detector, { info in
                let tap = TLSConnectionTap(
                    info: info, capture: 0, builder: builder, overhead: .all, decryption: decryption, scratch: scratch,
                    limits: limits, pool: pool)
                taps.made.append(tap)
                return tap
            })],
            fallback: { info in
                HTTPConnectionTap(
                    info: info, capture: 0, scratch: scratch, builder: builder, overhead: .all, limits: limits, pool: pool)
            })
        let reassembler = TCPReassembler(makeHandler: { TCPSession(info: $0, stages: stages) }, connectionEnded: { _ in })
        _ = try CaptureAnalysis.read(path: path, options: AnalysisOptions(), into: HoldingSink(reassembler), progress: nil)
        // Every connection of these samples closed with FIN both ways: each lingers now.
        #expect(!taps.made.isEmpty)
        #expect(reassembler.openConnections == taps.made.count)
        for tap in taps.made { #expect(tap.keepsOnlyItsEnd, "\(sample)") }
        reassembler.finish()
        #expect(builder.summary.tlsConnections == taps.made.count)
        #expect(builder.summary.tlsDecrypted == taps.made.count)
    }
}
