import TrafficCapture
import TrafficHTTP
import TrafficReassembly
import TrafficSessions
import TrafficWire

/// One connection's HTTP parser fed by a fuzzer, shared by the HTTP and chunked targets.
///
/// Records are counted, not kept: keeping them would make a long input look like a memory leak.
public final class FuzzTranscript {
    public let parser: HTTPConnectionParser
    private var time = CaptureTime(seconds: 1_700_000_000, nanoseconds: 0)

    public init(limits: HTTPLimits = HTTPLimits()) {
        let info = TCPConnectionInfo(
            id: 0, client: Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 40000),
            server: Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 80), start: time)
        parser = HTTPConnectionParser(info: info, limits: limits) { record in
            fuzzCheck(record.lineBytes >= 0 && record.headerBytes >= 0 && record.bodyBytes >= 0,
                      "negative size in record \(record.index)")
        }
    }

    public func receive(_ bytes: UnsafeRawBufferPointer, _ direction: Direction) {
        time = CaptureTime(nanoseconds: time.nanoseconds + 1000)
        parser.receive(bytes, direction: direction, span: WireSpan(time: time, overheadBytes: 54))
    }

    public func skip(_ count: Int, _ direction: Direction) { parser.skip(count, direction: direction, time: time) }

    /// Finishes the connection and checks the byte-accounting invariant of both directions.
    public func finish() {
        parser.finish(time: time)
        for direction in Direction.allCases {
            let counts = parser.counts(for: direction)
            fuzzCheck(counts.isBalanced, "\(direction) bytes not balanced: \(counts)")
        }
    }
}
