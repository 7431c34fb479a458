import Testing
import TrafficCapture
import TrafficHTTP
import TrafficReassembly
import TrafficSessions
import TrafficWire

/// The session layer's seam, without a capture: an HTTP/1 analyzer driven through `TCPSession` with made-up
/// wire spans, directly and as the child of a toy transforming parent, as TLS decryption will drive it.
@Suite struct SessionSeamTests {
    /// 17 + 11 bytes: `GET /a HTTP/1.1\r\n` and `Host: x\r\n\r\n`.
    static let request = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    /// 17 + 22 + 10: `HTTP/1.1 200 OK\r\n`, `Content-Length: 10\r\n\r\n`, ten body bytes.
    static let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789".utf8)

    static let info = TCPConnectionInfo(
        id: 7, client: Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 40000),
        server: Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 80), start: CaptureTime(nanoseconds: 1_000))

    /// What the records say, in emission order.
    final class RecordingSink {
        var records: [MessageRecord] = []
    }

    /// A made-up segment: its time and the header bytes it carries (66: Ethernet, IPv4, TCP with timestamps).
    static func segment(_ n: Int64, overhead: Int = 66) -> TCPSegmentContext {
        TCPSegmentContext(time: CaptureTime(nanoseconds: n * 1_000), frameBytes: 0, headerBytes: overhead)
    }

    /// Feeds `pieces` (direction, bytes) through a session with an HTTP/1 fallback and an optional toy stage.
    static func run(_ pieces: [(Direction, [UInt8])], withToy: Bool = true, gapFirst: Bool = false) -> [MessageRecord] {
        let sink = RecordingSink()
        var detectors: [(detector: ProtocolDetector, make: (TCPConnectionInfo) -> any SessionStage)] = []
        if withToy {
            detectors.append((ToyUnframer.detector, { info in
                ToyUnframer(child: HTTPConnectionParser(info: info) { sink.records.append($0) })
            }))
        }
        let stages = TCPSession.Stages(detectors, fallback: { info in
            HTTPStage(HTTPConnectionParser(info: info) { sink.records.append($0) })
        })
        let session = TCPSession(info: info, stages: stages)
        if gapFirst { session.skip(0, direction: .clientToServer, time: .zero) }
        for (n, (direction, bytes)) in pieces.enumerated() {
            bytes.withUnsafeBytes { session.receive($0, direction: direction, segment: segment(Int64(n + 1))) }
        }
        session.finish(time: CaptureTime(nanoseconds: 99_000))
        return sink.records
    }

    static func expectExchange(_ records: [MessageRecord], requestOverhead: Int, responseOverhead: Int) {
        #expect(records.count == 2)
        let request = records.first { $0.kind == .request }, response = records.first { $0.kind == .response }
        #expect(request?.lineBytes == 17 && request?.headerBytes == 11 && request?.bodyBytes == 0)
        #expect(request?.transferBytes == 28 && request?.path == "/a" && request?.host == "x")
        #expect(response?.lineBytes == 17 && response?.headerBytes == 22 && response?.bodyBytes == 10)
        #expect(response?.decodedBodyBytes == 10 && response?.status == 200)
        #expect(request?.segmentHeaderBytes == requestOverhead)
        #expect(response?.segmentHeaderBytes == responseOverhead)
        #expect(records.allSatisfy { $0.connection == 7 && $0.complete })
    }

    @Test func httpThroughTheSession() {
        // The request in one segment, the response in two: 66 B of headers each.
        let records = Self.run([
            (.clientToServer, Self.request),
            (.serverToClient, Array(Self.response[..<20])), (.serverToClient, Array(Self.response[20...])),
        ])
        Self.expectExchange(records, requestOverhead: 66, responseOverhead: 132)
        #expect(records.first { $0.kind == .response }?.time == CaptureTime(nanoseconds: 2_000))
    }

    /// Fewer than `prefixBytes` bytes first: the session holds them until it can decide, then replays them.
    @Test func shortFirstSegmentsAreHeldAndReplayed() {
        let records = Self.run([
            (.clientToServer, Array(Self.request[..<3])), (.clientToServer, Array(Self.request[3..<5])),
            (.clientToServer, Array(Self.request[5...])), (.serverToClient, Self.response),
        ])
        Self.expectExchange(records, requestOverhead: 3 * 66, responseOverhead: 66)
    }

    /// The same exchange inside the toy framing: the HTTP analyzer below the unframer sees only HTTP bytes and
    /// finds the same sizes; the overhead it is handed is the segments' headers plus the frame headers.
    @Test func childAnalyzerBehindATransformingParent() {
        let client = ToyUnframer.frame(Self.request, pieces: [5, 23])  // 6 + 2 + 5 + 2 + 23 = 38 bytes
        let server = ToyUnframer.frame(Self.response, pieces: [30, 19])  // 6 + 2 + 30 + 2 + 19 = 59 bytes
        let records = Self.run([
            (.clientToServer, Array(client[..<10])), (.clientToServer, Array(client[10...])),
            (.serverToClient, Array(server[..<40])), (.serverToClient, Array(server[40...])),
        ])
        // Two segments and two 2-byte frame headers per side (the 6-byte stream magic is not a message's).
        Self.expectExchange(records, requestOverhead: 2 * 66 + 2 * 2, responseOverhead: 2 * 66 + 2 * 2)
        // Without the toy detector the framed bytes are not HTTP: no record.
        #expect(Self.run([(.clientToServer, client), (.serverToClient, server)], withToy: false).isEmpty)
    }

    /// A gap before anything is known gives the stream to the fallback, which resynchronises.
    @Test func gapBeforeDetectionGoesToTheFallback() {
        let client = ToyUnframer.frame(Self.request, pieces: [28])
        let records = Self.run([(.clientToServer, client)], gapFirst: true)
        #expect(records.isEmpty)
        #expect(Self.run([(.clientToServer, Self.request), (.serverToClient, Self.response)], gapFirst: true).count == 2)
    }
}

/// An HTTP/1 analyzer as a session's top stage (it hears nothing of packets).
final class HTTPStage: SessionStage {
    let parser: HTTPConnectionParser
    init(_ parser: HTTPConnectionParser) { self.parser = parser }
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        parser.receive(bytes, direction: direction, span: span)
    }
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser.skip(byteCount, direction: direction, time: time)
    }
    func finish(time: CaptureTime) { parser.finish(time: time) }
}

/// A toy transforming analyzer: each direction starts with the magic `TOYFRM`, then frames of a 2-byte
/// big-endian length and that many payload bytes; the payload is the child's stream. Frame headers are the
/// parent's overhead, handed to the child with the payload that follows them, as a TLS analyzer will hand its
/// record headers and tags to the HTTP analyzer it decrypts for.
final class ToyUnframer: SessionStage {
    static let magic = Array("TOYFRM".utf8)
    static let detector = ProtocolDetector(name: "toy") { first, _ in first.elementsEqual(magic) }

    static func frame(_ bytes: [UInt8], pieces: [Int]) -> [UInt8] {
        var out = magic, start = 0
        for count in pieces {
            out += [UInt8(count >> 8), UInt8(count & 0xFF)] + bytes[start..<start + count]
            start += count
        }
        return out
    }

    let child: HTTPConnectionParser
    /// Per direction: magic bytes still to skip, header bytes read of the current frame, payload left in it,
    /// and overhead waiting for the next payload byte.
    private var magicLeft = [6, 6], header: [[UInt8]] = [[], []], left = [0, 0], overhead = [0, 0]

    init(child: HTTPConnectionParser) { self.child = child }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        let d = direction.rawValue
        overhead[d] += span.overheadBytes
        var i = 0
        while i < bytes.count {
            if magicLeft[d] > 0 {
                let n = min(magicLeft[d], bytes.count - i)
                magicLeft[d] -= n
                i += n
            } else if left[d] == 0 {
                header[d].append(bytes[i])
                i += 1
                overhead[d] += 1
                if header[d].count == 2 {
                    left[d] = Int(header[d][0]) << 8 | Int(header[d][1])
                    header[d] = []
                }
            } else {
                let n = min(left[d], bytes.count - i)
                child.receive(
                    UnsafeRawBufferPointer(rebasing: bytes[i..<i + n]), direction: direction,
                    span: WireSpan(time: span.time, overheadBytes: overhead[d]))
                overhead[d] = 0
                left[d] -= n
                i += n
            }
        }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        child.skip(byteCount, direction: direction, time: time)
    }

    func finish(time: CaptureTime) { child.finish(time: time) }
}

/// `SessionRecords` in front of a recording sink: records pass straight through without overhead to
/// attribute; after a protocol switch they wait for the streams' end and carry the tunnel's bytes.
@Suite struct SessionRecordsTests {
    final class RecordingSink: RecordSink {
        var keepsRecords = false
        var added: [MessageRecord] = []
        func add(_ record: MessageRecord, capture: Int) { added.append(record) }
        func addPinned(_ record: MessageRecord, capture: Int) -> Int? {
            added.append(record)
            return added.count - 1
        }
        func addOverhead(_ overhead: RecordOverhead, pin: Int, kind: MessageRecord.Kind) {
            overhead.apply(to: &added[pin])
        }
    }

    static func record(_ kind: MessageRecord.Kind, _ index: Int, flags: [RecordAnomaly] = []) -> MessageRecord {
        var record = MessageRecord(
            connection: 1, index: index, kind: kind, time: .zero, client: "c", server: "s", host: "h", path: "/")
        record.flags = flags
        return record
    }

    @Test func recordsPassStraightThrough() {
        let sink = RecordingSink()
        let records = SessionRecords(sink: sink, capture: 0, overhead: [])
        records.take(Self.record(.request, 1))
        #expect(sink.added.count == 1)
        records.take([Self.record(.response, 1)])
        #expect(sink.added.count == 2 && records.count == 2)
    }

    /// A `101` switches both directions: 7 client and 11 server bytes after it go to the exchange that switched,
    /// each to its side, and nothing is counted before the streams end.
    @Test func tunnelBytesGoToTheExchangeThatSwitched() {
        let sink = RecordingSink()
        let records = SessionRecords(sink: sink, capture: 0, overhead: [])
        records.take([Self.record(.request, 1), Self.record(.response, 1, flags: [.upgrade])])
        #expect(sink.added.isEmpty)
        records.streamsEnded(tunnelBytes: [7, 11], leftoverHeaders: [0, 0])
        #expect(sink.added.map(\.tunnelBytes) == [7, 11])
        #expect(sink.added.map(\.kind) == [.request, .response])
    }

    /// With `--overhead` the records are counted at once (pinned), their overhead when the connection ends.
    @Test func pinnedRecordsAreCountedAtOnce() {
        let sink = RecordingSink()
        let records = SessionRecords(sink: sink, capture: 0, overhead: .packets)
        var request = Self.record(.request, 1)
        request.segmentHeaderBytes = 66
        records.take(request)
        #expect(sink.added.count == 1 && sink.added[0].packetOverheadBytes == 0)
    }
}
