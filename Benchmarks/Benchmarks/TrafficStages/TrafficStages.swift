import Benchmark
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions
import TrafficWire

// Per-stage micro-benchmarks: run with `swift package --package-path Benchmarks benchmark`.
//
// Each benchmark does `scaledIterations` (1000) units of work per measured iteration, so the
// starred metrics in the output are per packet, segment or exchange. The malloc counts are the
// point: the in-order paths of wire decoding and reassembly should not allocate per packet.

let benchmarks: @Sendable () -> Void = {
    // Retain counting hooks the Swift runtime; on Linux with Swift 6.3 that crashes (ordo-one/benchmark
    // issue 349) unless the RuntimeInterposer trait is on, and its package is not in our mirror. It first
    // crashed only the HTTP benchmarks, now every one (the same bad pointer in the hook): no retain counts.
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
    let configuration = Benchmark.Configuration(
        metrics: metrics, warmupIterations: 10, scalingFactor: .kilo, maxDuration: .seconds(2),
        maxIterations: 100_000)
    let httpConfiguration = configuration

    // Wire: one full-size Ethernet/IPv4/TCP frame with timestamps (1514 bytes), decoded to a TCPSegment.
    Benchmark("Wire: decode Ethernet/IPv4/TCP 1514-byte frame", configuration: configuration) { benchmark in
        let frame = Fixtures.frame
        var decoder = PacketDecoder(linkType: .ethernet)
        frame.withUnsafeBytes { bytes in
            let packet = CapturedPacket(time: CaptureTime(nanoseconds: 1), bytes: bytes, originalLength: bytes.count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(decoder.decode(packet))
            }
            benchmark.stopMeasurement()
        }
    }

    // Reassembly: the steady state of one established connection receiving in-order full-size
    // segments (alternately each way, as a download's data and its ACK-carrying requests would).
    let stream = InOrderStream()
    Benchmark("Reassembly: in-order 1448-byte segments", configuration: configuration) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            stream.next()
        }
        benchmark.stopMeasurement()
        blackHole(stream.handler.bytes)
    }

    // HTTP: a keep-alive GET and its 2 KiB JSON response (Content-Length), fed in MSS-sized pieces.
    let identity = HTTPStream(response: Fixtures.jsonResponse(chunked: false))
    Benchmark("HTTP: parse GET + 2 KiB JSON response (Content-Length)", configuration: httpConfiguration) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            identity.exchange()
        }
        benchmark.stopMeasurement()
        blackHole(identity.records)
    }

    let chunked = HTTPStream(response: Fixtures.jsonResponse(chunked: true))
    Benchmark("HTTP: parse GET + 2 KiB JSON response (chunked)", configuration: httpConfiguration) { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            chunked.exchange()
        }
        benchmark.stopMeasurement()
        blackHole(chunked.records)
    }
}

/// Counts what the reassembler hands over, without allocating.
final class CountingHandler: TCPStreamHandler {
    var bytes = 0
    var skipped = 0
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        self.bytes &+= bytes.count
    }
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) { skipped &+= byteCount }
    func finish(time: CaptureTime) {}
}

/// One established connection fed in-order data segments, state kept across measured iterations.
///
/// The benchmark runner calls the closure from one thread at a time, hence `@unchecked Sendable`.
final class InOrderStream: @unchecked Sendable {
    let handler = CountingHandler()
    private let reassembler: TCPReassembler
    private let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: 1448, alignment: 8)
    private var client: TCPSegment
    private var server: TCPSegment
    private var time: Int64 = 1_709_294_400_000_000_000
    private var turn = false

    init() {
        let handler = handler
        reassembler = TCPReassembler(makeHandler: { _ in handler }, connectionEnded: { _ in })
        payload.initializeMemory(as: UInt8.self, repeating: 0x41)
        let clientEndpoint = Endpoint(address: IPAddress(ipv4: 0xC612_0001), port: 40000)
        let serverEndpoint = Endpoint(address: IPAddress(ipv4: 0xC613_000A), port: 80)
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        client = TCPSegment(
            source: clientEndpoint, destination: serverEndpoint, sequenceNumber: 1000, acknowledgmentNumber: 0,
            flags: .syn, payloadLength: 0, payload: empty, frameBytes: 74)
        server = TCPSegment(
            source: serverEndpoint, destination: clientEndpoint, sequenceNumber: 5000, acknowledgmentNumber: 1001,
            flags: [.syn, .ack], payloadLength: 0, payload: empty, frameBytes: 74)
        // Handshake, then both sides move to data segments.
        process(client)
        process(server)
        client.sequenceNumber = 1001
        client.acknowledgmentNumber = 5001
        client.flags = .ack
        client.frameBytes = 66
        process(client)
        server.sequenceNumber = 5001
        server.flags = .ack
        for segment in [\InOrderStream.client, \InOrderStream.server] {
            self[keyPath: segment].payload = UnsafeRawBufferPointer(payload)
            self[keyPath: segment].payloadLength = payload.count
            self[keyPath: segment].frameBytes = 1514
        }
    }

    private func process(_ segment: TCPSegment) {
        time += 10_000
        reassembler.process(segment, time: CaptureTime(nanoseconds: time))
    }

    /// Feeds the next in-order segment, alternating directions.
    func next() {
        turn.toggle()
        if turn {
            process(server)
            server.sequenceNumber &+= 1448
            client.acknowledgmentNumber = server.sequenceNumber
        } else {
            process(client)
            client.sequenceNumber &+= 1448
            server.acknowledgmentNumber = client.sequenceNumber
        }
    }
}

/// One HTTP connection parser fed the same request/response pair again and again (keep-alive).
final class HTTPStream: @unchecked Sendable {
    private(set) var records = 0
    private let parser: HTTPConnectionParser
    private let request = Fixtures.request
    private let response: [UInt8]
    private var time: Int64 = 1_709_294_400_000_000_000

    init(response: [UInt8]) {
        self.response = response
        let info = TCPConnectionInfo(
            id: 0, client: Endpoint(address: IPAddress(ipv4: 0xC612_0001), port: 40000),
            server: Endpoint(address: IPAddress(ipv4: 0xC613_000A), port: 80), start: CaptureTime(nanoseconds: time))
        var count = 0
        parser = HTTPConnectionParser(
            info: info,
            emit: { record in
                count += 1
                blackHole(record)
            })
        _ = count
    }

    func exchange() {
        feed(request, .clientToServer)
        feed(response, .serverToClient)
        records &+= 2
    }

    private func feed(_ message: [UInt8], _ direction: Direction) {
        message.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                let end = min(start + 1448, bytes.count)
                time += 10_000
                let span = WireSpan(time: CaptureTime(nanoseconds: time), overheadBytes: 66)
                parser.receive(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), direction: direction, span: span)
                start = end
            }
        }
    }
}

/// Byte-exact inputs shared by the benchmarks.
enum Fixtures {
    /// 02:00:00:00:00:01 > 02:00:c6:12:00:01, 198.19.0.10.80 > 198.18.0.1.40000: Flags [.], seq 1:1449,
    /// ack 1, win 509, options [nop,nop,TS val 1 ecr 1], length 1448 (checksums left zero).
    static let frame: [UInt8] = {
        var bytes: [UInt8] = [
            0x02, 0x00, 0xc6, 0x12, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,  // Ethernet
            0x45, 0x00, 0x05, 0xdc, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00,  // IPv4, total length 1500
            0xc6, 0x13, 0x00, 0x0a, 0xc6, 0x12, 0x00, 0x01,
            0x00, 0x50, 0x9c, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,  // TCP ports, seq, ack
            0x80, 0x10, 0x01, 0xfd, 0x00, 0x00, 0x00, 0x00,  // data offset 8 (32 bytes), ACK, window 509
            0x01, 0x01, 0x08, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,  // NOP, NOP, TS
        ]
        bytes += [UInt8](repeating: 0x41, count: 1448)
        return bytes
    }()

    static let request = Array(
        ("GET /api/v1/users/12345 HTTP/1.1\r\nHost: api.example.com\r\n"
            + "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36\r\n"
            + "Accept: application/json\r\nAccept-Encoding: gzip, deflate, br\r\nAccept-Language: en-US,en;q=0.9\r\n"
            + "Authorization: Bearer 3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n"
            + "Cookie: sid=0123456789abcdef0123456789abcdef; theme=dark\r\n"
            + "X-Request-ID: 0123456789abcdef0123456789abcdef\r\n\r\n").utf8)

    static func jsonResponse(chunked: Bool) -> [UInt8] {
        var body = "{\"items\":["
        var index = 0
        while body.utf8.count < 2000 {
            body += "{\"id\":\(index),\"title\":\"Alpha bravo charlie\",\"price\":1999,\"in_stock\":true},"
            index += 1
        }
        body += "{}]}"
        let head =
            "HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nDate: Fri, 01 Mar 2024 12:00:00 GMT\r\n"
            + "Content-Type: application/json; charset=utf-8\r\nX-Request-ID: 0123456789abcdef0123456789abcdef\r\n"
            + "Connection: keep-alive\r\nKeep-Alive: timeout=75\r\n"
        if chunked {
            let first = body.utf8.prefix(1024)
            let rest = body.utf8.dropFirst(1024)
            return Array((head + "Transfer-Encoding: chunked\r\n\r\n").utf8)
                + Array("400\r\n".utf8) + Array(first) + Array("\r\n".utf8)
                + Array((String(rest.count, radix: 16) + "\r\n").utf8) + Array(rest) + Array("\r\n0\r\n\r\n".utf8)
        }
        return Array((head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
    }
}
