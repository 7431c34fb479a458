import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly

/// Sits between the reassembler and the HTTP parser of one connection: forwards the streams, joins
/// exchanges, and when the connection ends hands its records and byte counts to the report.
final class HTTPConnectionTap: TCPStreamHandler {
    private var parser: HTTPConnectionParser?
    private var joiner = HTTPExchangeJoiner()
    private let builder: ReportBuilder
    private let capture: Int
    /// The last record that switched protocols: tunnel bytes belong to its host and path.
    private var tunnelOwner: HTTPMessageRecord?

    private let info: TCPConnectionInfo
    private let scratch: DecodingScratch

    init(info: TCPConnectionInfo, capture: Int, scratch: DecodingScratch, builder: ReportBuilder) {
        self.builder = builder
        self.capture = capture
        self.info = info
        self.scratch = scratch
    }

    /// The parser is made on the first byte or gap: a connection that never carries data (a SYN flood
    /// holds the reassembler's whole table of them) then costs no parser, about 4 KiB less per entry.
    private func makeParser() -> HTTPConnectionParser {
        if let parser { return parser }
        let parser = HTTPConnectionParser(info: info, scratch: scratch) { [unowned self] record in
            if record.flags.contains("upgrade") || record.flags.contains("tunnel") { tunnelOwner = record }
            joiner.add(record) { builder.add($0, capture: capture) }
        }
        self.parser = parser
        return parser
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, segment: TCPSegmentContext) {
        makeParser().receive(bytes, direction: direction, segment: segment)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        makeParser().skip(byteCount, direction: direction, time: time)
    }

    func finish(time: CaptureTime) {
        // Nothing was ever received: no record, no bytes to count.
        guard let parser else { return }
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
        self.parser = nil
    }
}
