import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly

/// Sits between the reassembler and the HTTP parser of one connection: forwards the streams, joins
/// exchanges, and when the connection ends hands its records and byte counts to the report.
final class HTTPConnectionTap: TCPStreamHandler {
    private var parser: HTTPConnectionParser!
    private var joiner = HTTPExchangeJoiner()
    private let builder: ReportBuilder
    private let capture: Int
    /// The last record that switched protocols: tunnel bytes belong to its host and path.
    private var tunnelOwner: HTTPMessageRecord?

    init(info: TCPConnectionInfo, capture: Int, scratch: DecodingScratch, builder: ReportBuilder) {
        self.builder = builder
        self.capture = capture
        parser = HTTPConnectionParser(info: info, scratch: scratch) { [unowned self] record in
            if record.flags.contains("upgrade") || record.flags.contains("tunnel") { tunnelOwner = record }
            joiner.add(record) { builder.add($0, capture: capture) }
        }
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        parser.receive(bytes, direction: direction, segment: segment)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser.skip(byteCount, direction: direction, time: time)
    }

    func finish(time: CaptureTime) {
        parser.finish(time: time)
        joiner.flush { builder.add($0, capture: capture) }
        let up = parser.counts(for: .clientToServer), down = parser.counts(for: .serverToClient)
        builder.summary.nonHTTPBytes += up.nonHTTPBytes + down.nonHTTPBytes
        builder.summary.tunnelBytes += up.tunnelBytes + down.tunnelBytes
        builder.summary.missingBytes += up.missingBytes + down.missingBytes
        if parser.isHTTP { builder.summary.httpConnections += 1 }
        if let owner = tunnelOwner, up.tunnelBytes + down.tunnelBytes > 0 {
            builder.addTunnel(requestSide: up.tunnelBytes, responseSide: down.tunnelBytes, like: owner, capture: capture)
        }
        parser = nil
    }
}
