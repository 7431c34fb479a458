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
import TrafficHTTP2

/// A closed connection lingers in the reassembler for late packets (ten seconds of capture time): a TLS one keeps
/// only its end (the TLS summary, the decryption outcome and counters), not its parser and decryptor (issue 25's
/// memory goal; 17 of 66 MiB on the HTTPS bench), and still reports the same when it ends. A cleartext one without
/// `--overhead` keeps a `FinishedHTTPConnection` instead of its tap and records.
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

    // MARK: Cleartext HTTP taps

    /// The tap as it was before it could stand down: forwards everything, and `lingeringStage` stays nil.
    final class Whole: SessionStage {
        let tap: HTTPConnectionTap
        init(_ tap: HTTPConnectionTap) { self.tap = tap }
        func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
            tap.receive(bytes, direction: direction, span: span)
        }
        func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
            tap.skip(byteCount, direction: direction, time: time)
        }
        func finish(time: CaptureTime) { tap.finish(time: time) }
        func packet(_ event: TCPPacketEvent) { tap.packet(event) }
        func connectionEnded(_ summary: TCPConnectionSummary) { tap.connectionEnded(summary) }
        func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) { tap.handshakeCompleted(syn: syn, ack: ack) }
    }

    final class MadeTaps {
        struct Weak { weak var tap: HTTPConnectionTap? }
        var taps: [Weak] = []
    }

    /// Reads a sample through the analyzer's cleartext stages (HTTP/2 by its preface, else HTTP/1; no TLS stage, so
    /// a TLS connection is one that makes no record) with default options. `standDown` false wraps every tap in
    /// `Whole`. Returns how many taps were freed while their connections lingered, and the report.
    static func runCleartext(_ sample: String, standDown: Bool) throws
        -> (taps: Int, freedWhileLingering: Int, lingering: Int, report: TrafficReport)
    {
        let path = AccountingInvariantTests.root.appendingPathComponent("samples/\(sample).pcap").path
        let options = ReportOptions()
        let builder = ReportBuilder(options: options, capturePaths: [path])
        let scratch = DecodingScratch()
        let limits = TrafficAnalyzer.httpLimits(options)
        let pool = HTTPParserPool(scratch: scratch, limits: limits)
        let made = MadeTaps()
        func make(_ info: TCPConnectionInfo, _ start: HTTPConnectionTap.Start) -> any SessionStage {
            let tap = HTTPConnectionTap(
                info: info, capture: 0, scratch: scratch, builder: builder, overhead: options.overhead, limits: limits,
                pool: pool, start: start)
            made.taps.append(MadeTaps.Weak(tap: tap))
            return standDown ? tap : Whole(tap)
        }
        let stages = TCPSession.Stages(
            [(HTTP2ConnectionParser.detector, { make($0, .http2) })], fallback: { make($0, .http1) })
        let reassembler = TCPReassembler(
            makeHandler: { TCPSession(info: $0, stages: stages) }, connectionEnded: { _ in })
        let analysis = try CaptureAnalysis.read(
            path: path, options: AnalysisOptions(), into: HoldingSink(reassembler), progress: nil)
        let lingering = reassembler.openConnections
        let freed = made.taps.filter { $0.tap == nil }.count
        reassembler.finish()
        let report = builder.build(
            captures: [CaptureSummary(path: path, linkType: "EN10MB")], anomalies: [:], warnings: [])
        // Issue 6's equation against the capture's own frame lengths (libpcap's, not the stages'): every frame
        // byte is in a record, non-HTTP, non-TCP or unattributed.
        let summary = report.summary
        let recorded = report.totals.request.wireBytes + report.totals.response.wireBytes
        #expect(recorded + summary.nonHTTPFrameBytes + analysis.summary.nonTCPFrameBytes + summary.unattributedFrameBytes
            == analysis.summary.frameBytes, "\(sample)")
        return (made.taps.count, freed, lingering, report)
    }

    /// Every connection of these samples closes with FIN both ways before the capture ends: each tap is freed while
    /// its connection still lingers, and the report (summary, groups) is the one the taps kept whole give. Among
    /// them: HTTP/1 keep-alive, pipelining, `100 Continue` and a close-delimited body, a segment captured after the
    /// ACK that covers it, HTTP/2 by prior knowledge and after an h2c upgrade, and TLS (no record: all frames
    /// non-HTTP).
    @Test(arguments: [
        "http-basic", "http-pipelined", "http-encodings", "http-netns", "http-segments-late", "http2-h2c-prior",
        "http2-h2c-upgrade", "https-v13-aes128gcm",
    ])
    func closedCleartextConnectionsKeepOnlyTheirEnd(sample: String) throws {
        let slim = try Self.runCleartext(sample, standDown: true)
        let whole = try Self.runCleartext(sample, standDown: false)
        #expect(slim.taps > 0)
        #expect(slim.lingering == slim.taps)
        #expect(slim.freedWhileLingering == slim.taps)
        #expect(whole.freedWhileLingering == 0)
        #expect(slim.report.summary == whole.report.summary)
        #expect(slim.report.totals == whole.report.totals)
        let groups = { (report: TrafficReport) in report.groups.map { ($0.keys, $0.totals) } }
        #expect(groups(slim.report).map(\.0) == groups(whole.report).map(\.0))
        #expect(groups(slim.report).map(\.1) == groups(whole.report).map(\.1))
        // What the stand-in counts at the end is there to count.
        #expect(slim.report.summary.unattributedFrameBytes + slim.report.summary.nonHTTPFrameBytes > 0)
        if sample.hasPrefix("https") {
            #expect(slim.report.summary.nonHTTPFrameBytes > 0)
            #expect(slim.report.summary.unattributedFrameBytes == 0)
        } else {
            #expect(slim.report.summary.unattributedFrameBytes > 0)
        }
    }
}
