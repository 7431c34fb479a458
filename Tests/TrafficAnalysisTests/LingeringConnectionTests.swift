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

    /// Reads a sample with its key log through TLS taps whose closed connections linger; `late` is then given to
    /// every tap (a packet after its streams ended) before the reassembler lets go of the connections.
    static func run(_ sample: String, late: TCPPacketEvent? = nil) throws -> (taps: [TLSConnectionTap], report: TrafficReport) {
        let samples = AccountingInvariantTests.root.appendingPathComponent("samples")
        let path = samples.appendingPathComponent("\(sample).pcap").path
        var warnings: [AnalysisWarning] = []
        let decryption = try #require(try TrafficAnalyzer.decryptionContext(
            paths: [], keyLogPaths: [samples.appendingPathComponent("\(sample).keys").path], warnings: &warnings))
        var options = ReportOptions()
        options.overhead = .all
        options.groupBy = [.method]
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
        let reassembler = TCPReassembler(
            makeHandler: { TCPSession(info: $0, stages: stages) }, connectionEnded: { _ in })
        _ = try CaptureAnalysis.read(path: path, options: AnalysisOptions(), into: HoldingSink(reassembler), progress: nil)
        // Every connection of these samples closed with FIN both ways: each lingers now.
        #expect(!taps.made.isEmpty)
        #expect(reassembler.openConnections == taps.made.count)
        for tap in taps.made {
            #expect(tap.keepsOnlyItsEnd, "\(sample)")
            if let late { tap.packet(late) }
        }
        reassembler.finish()
        let report = builder.build(
            captures: [CaptureSummary(path: path, linkType: "EN10MB")], anomalies: [:], warnings: [])
        return (taps.made, report)
    }

    @Test(arguments: ["https-v13-aes128gcm", "https-v12-aes128gcm", "https-v12-cbc-sha256"])
    func closedTLSConnectionsKeepOnlyTheirEnd(sample: String) throws {
        let (taps, report) = try Self.run(sample)
        #expect(report.summary.tlsConnections == taps.count)
        #expect(report.summary.tlsDecrypted == taps.count)
    }

    /// A pure ACK from the client after the streams ended, acknowledging past the server's last byte: as the
    /// decryptor did before it went, it maps to the end of the server's plaintext, and `--overhead packets` gives it
    /// to the exchange it acknowledges, the last one (each sample: one connection, GET, GET, POST), on the side of the
    /// direction that sent it (the request's). Checked to give the same with the decryptor kept (the code before).
    @Test(arguments: ["https-v13-aes128gcm", "https-v12-aes128gcm"])
    func aLateACKStillGoesToTheLastExchange(sample: String) throws {
        let ack = TCPPacketEvent(
            kind: .ack, direction: .clientToServer, frameBytes: 66, streamOffset: 1 << 40, time: CaptureTime(nanoseconds: 1))
        let (_, before) = try Self.run(sample)
        let (taps, after) = try Self.run(sample, late: ack)
        #expect(taps.count == 1)
        func byMethod(_ report: TrafficReport) -> [String: GroupTotals] {
            Dictionary(uniqueKeysWithValues: report.groups.map { ($0.keys.joined(), $0.totals) })
        }
        let (was, now) = (byMethod(before), byMethod(after))
        #expect(Set(now.keys) == ["GET", "POST"])
        #expect(now["POST"]?.request.packetOverheadBytes == (was["POST"]?.request.packetOverheadBytes ?? -1) + 66)
        #expect(now["GET"]?.request.packetOverheadBytes == was["GET"]?.request.packetOverheadBytes)
        #expect(after.totals.response == before.totals.response)
        #expect(after.summary.unattributedFrameBytes == before.summary.unattributedFrameBytes)
    }
}
