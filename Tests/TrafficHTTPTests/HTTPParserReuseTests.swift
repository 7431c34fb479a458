import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficWire

@testable import TrafficHTTP

/// A finished connection parser set back with `retire` and `reuse` (the per-shard pool of the analysis) must read the next
/// connection exactly as a new parser does: same records, field for field, and the same counts.
@Suite("HTTP connection parser reuse")
struct HTTPParserReuseTests {
    static let fixtures = anomalyFixtures + exchangeFixtures + framingFixtures + midMessageFixtures + leniencyFixtures

    /// Everything a run leaves: every record in full (`dump` prints every stored property) and the parser's
    /// per-direction results.
    struct Outcome: Equatable {
        var records: [String]
        var counts: [HTTPByteCounts]
        var headers: [Int]
        var framing: [Int]
        var isHTTP: Bool
        var speaksHTTP2: Bool
    }

    static func info(id: Int, clientPort: UInt16, server: Endpoint) -> TCPConnectionInfo {
        TCPConnectionInfo(
            id: id, client: Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: clientPort), server: server,
            start: CaptureTime(nanoseconds: Int64(id) * 1_000_000))
    }

    /// Feeds `fixture` to `parser` (byte by byte when `bytewise`: lines then span deliveries) and finishes it.
    static func feed(_ parser: HTTPConnectionParser, _ fixture: HTTPFixture, bytewise: Bool = false) {
        for (i, event) in fixture.events.enumerated() {
            let time = FixtureRunner.time(i)
            switch event {
            case .gap(let direction, let n):
                parser.skip(n, direction: direction, time: time)
            case .data(let direction, let bytes):
                let span = WireSpan(time: time, overheadBytes: 54, framingBytes: 5, acknowledged: Int64(i))
                bytes.withUnsafeBytes { all in
                    if bytewise {
                        for k in all.indices {
                            parser.receive(UnsafeRawBufferPointer(rebasing: all[k..<(k + 1)]), direction: direction, span: span)
                        }
                    } else {
                        parser.receive(all, direction: direction, span: span)
                    }
                }
            }
        }
        parser.finish(time: FixtureRunner.time(fixture.events.count))
    }

    static func outcome(_ records: [MessageRecord], _ parser: HTTPConnectionParser) -> Outcome {
        Outcome(
            records: records.map { record in
                var text = ""
                dump(record, to: &text)
                return text
            },
            counts: Direction.allCases.map { parser.counts(for: $0) },
            headers: Direction.allCases.map { parser.unattributedSegmentHeaderBytes(for: $0) },
            framing: Direction.allCases.map { parser.unattributedFramingBytes(for: $0) },
            isHTTP: parser.isHTTP, speaksHTTP2: parser.speaksHTTP2)
    }

    /// `fixture` read by a new parser.
    static func fresh(_ fixture: HTTPFixture, info: TCPConnectionInfo, decrypted: Bool) -> Outcome {
        var records: [MessageRecord] = []
        let parser = HTTPConnectionParser(info: info, limits: fixture.limits, decrypted: decrypted) {
            records.append($0)
        }
        feed(parser, fixture)
        return outcome(records, parser)
    }

    /// `fixture` read by a parser that first read `before` (another connection, maybe to another server or
    /// decrypted) and was then reused for `info`.
    static func reused(
        after before: HTTPFixture, bytewise: Bool, _ fixture: HTTPFixture, info: TCPConnectionInfo, decrypted: Bool,
        previous: TCPConnectionInfo, previousDecrypted: Bool
    ) -> Outcome {
        var records: [MessageRecord] = []
        var collecting = false
        let parser = HTTPConnectionParser(info: previous, limits: fixture.limits, decrypted: previousDecrypted) {
            if collecting { records.append($0) }
        }
        feed(parser, before, bytewise: bytewise)
        #expect(parser.isReusable)
        parser.retire()
        parser.reuse(info: info, decrypted: decrypted)
        collecting = true
        feed(parser, fixture)
        return outcome(records, parser)
    }

    @Test(arguments: fixtures)
    func reusedParserReadsLikeANewOne(_ fixture: HTTPFixture) {
        let server = fixture.serverEndpoint
        let other = Endpoint(address: IPAddress(ipv4: 0x0A00_0003), port: 8080)
        let info = Self.info(id: 12, clientPort: 50_001, server: server)
        for decrypted in [false, true] {
            let expected = Self.fresh(fixture, info: info, decrypted: decrypted)
            for (n, before) in Self.fixtures.enumerated() {
                // The same server (its texts are kept) or another; the same `decrypted` or not; whole deliveries
                // or byte by byte before (a line buffer left grown).
                let previous = Self.info(id: 11, clientPort: 50_000, server: n % 2 == 0 ? server : other)
                let got = Self.reused(
                    after: before, bytewise: n % 3 == 0, fixture, info: info, decrypted: decrypted,
                    previous: previous, previousDecrypted: n % 4 < 2 ? decrypted : !decrypted)
                #expect(got == expected, "after \"\(before.name)\", decrypted \(decrypted)")
                if got != expected { return }
            }
        }
    }

    /// A parser that took an h2c upgrade keeps its HTTP/2 stage: it is not reused.
    @Test func upgradedParserIsNotReusable() {
        let info = Self.info(id: 1, clientPort: 50_000, server: Endpoint(address: IPAddress(ipv4: 0x0A00_0002), port: 80))
        let parser = HTTPConnectionParser(info: info) { _ in }
        #expect(!parser.isReusable)
        final class Sink: StreamAnalyzer {
            func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {}
            func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {}
            func finish(time: CaptureTime) {}
        }
        parser.upgradeToHTTP2 = { _ in Sink() }
        Self.feed(
            parser,
            HTTPFixture(
                "h2c",
                [
                    .c("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n\r\n"),
                    .s("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"),
                ], []))
        #expect(!parser.isReusable)
    }
}
