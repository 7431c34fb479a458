import TrafficAggregation
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// Sits between the session and the HTTP/1 parser of one connection: forwards the streams, joins exchanges,
/// counts the connection's HTTP summary, and hands records to the session layer's `SessionRecords`, which
/// attributes the connection's overhead and passes them on to the report.
final class HTTPConnectionTap: SessionStage {
    /// Owned by the tap (retained once here, released at `finish` or in `deinit`) and called unretained: a
    /// call through an optional `var` retains and releases the parser around it, an atomic pair per segment.
    private var parser: Unmanaged<HTTPConnectionParser>?
    private var joiner = HTTPExchangeJoiner()
    private let builder: ReportBuilder
    private let overhead: OverheadOptions
    private let records: SessionRecords
    private var counts: [HTTPByteCounts] = []
    /// TLS record overhead of stretches in no record (non-HTTP plaintext), per direction.
    private var framingLeft = [0, 0]
    /// Only groups by method or status and record listings show what the joiner fills in.
    private let joins: Bool
    /// Below a decrypting TLS tap: what of each direction reached no plaintext, which the TLS tap sets (and it
    /// counts the connection's missing bytes itself).
    private let decrypted: Bool
    var tlsBelow = TLSBelow()

    struct TLSBelow {
        /// Handshake, change_cipher_spec and alert records.
        var controlBytes = [0, 0]
        /// Captured bytes in no readable record.
        var undecryptedBytes = [0, 0]
        /// Segment header bytes that came with no plaintext (records after the last application data); set
        /// before `finish`, the two above before `connectionEnded`.
        var segmentHeaderBytes = [0, 0]
    }
    /// The TCP handshake, for the records of the connection's first exchange (HAR `connect`). Set by the
    /// session (cleartext); a decrypting TLS tap above this one may set it from its own handshake event.
    var connect: MessageRecord.TimeSpan?
    /// The TLS handshake of a decrypted connection (HAR `ssl`), set by the TLS tap above this one.
    var tlsHandshake: MessageRecord.TimeSpan?

    init(info: TCPConnectionInfo, capture: Int, scratch: DecodingScratch, builder: ReportBuilder,
         overhead: OverheadOptions, limits: HTTPLimits, decrypted: Bool = false) {
        self.builder = builder
        self.overhead = overhead
        self.decrypted = decrypted
        let records = SessionRecords(sink: builder, capture: capture, overhead: overhead)
        self.records = records
        let joins = builder.needsJoinedExchanges
        self.joins = joins
        // The tap owns the parser, which owns this closure: self outlives every call (no checked unowned
        // reference per record).
        let parser = HTTPConnectionParser(info: info, scratch: scratch, limits: limits, decrypted: decrypted) {
            [unowned(unsafe) self] record in
            // Only the first exchange's records carry the handshake (a copy of one or two records a connection).
            if record.index == 1, self.connect != nil || self.tlsHandshake != nil {
                var first = record
                first.connect = self.connect
                first.tlsHandshake = self.tlsHandshake
                self.deliver(first)
            } else {
                self.deliver(record)
            }
        }
        self.parser = Unmanaged.passRetained(parser)
    }

    private func deliver(_ record: MessageRecord) {
        records.emitted(record)
        guard joins else {
            records.take(record)
            return
        }
        var batch: [MessageRecord] = []
        joiner.add(record) { batch.append($0) }
        records.take(batch)
    }

    func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {
        connect = MessageRecord.TimeSpan(start: syn, end: ack)
    }

    deinit { parser?.release() }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        parser?._withUnsafeGuaranteedRef { $0.receive(bytes, direction: direction, span: span) }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser?._withUnsafeGuaranteedRef { $0.skip(byteCount, direction: direction, time: time) }
    }

    func packet(_ event: TCPPacketEvent) { records.note(event) }

    func finish(time: CaptureTime) {
        guard let owned = self.parser else { return }
        // The parser's last use: this local reference now owns it, and frees it when finish returns
        // (a connection's entry can linger in the reassembler for late packets).
        self.parser = nil
        let parser = owned.takeRetainedValue()
        parser.finish(time: time)
        var batch: [MessageRecord] = []
        joiner.flush { batch.append($0) }
        records.take(batch)
        counts = [parser.counts(for: .clientToServer), parser.counts(for: .serverToClient)]
        builder.summary.nonHTTPBytes += counts[0].nonHTTPBytes + counts[1].nonHTTPBytes
        builder.summary.tunnelBytes += counts[0].tunnelBytes + counts[1].tunnelBytes
        // Below TLS the plaintext's missing bytes are estimates (a lost record's size less its overhead): the TLS
        // tap counts the stream's.
        if !decrypted { builder.summary.missingBytes += counts[0].missingBytes + counts[1].missingBytes }
        framingLeft = [parser.unattributedFramingBytes(for: .clientToServer),
                       parser.unattributedFramingBytes(for: .serverToClient)]
        if parser.isHTTP { builder.summary.httpConnections += 1 }
        if parser.speaksHTTP2 {
            builder.summary.http2Connections += 1
        } else if !parser.isHTTP, counts[0].nonHTTPBytes + counts[1].nonHTTPBytes > 0 {
            builder.summary.otherProtocolConnections += 1
        }
        records.streamsEnded(
            tunnelBytes: [counts[0].tunnelBytes, counts[1].tunnelBytes],
            leftoverHeaders: [parser.unattributedSegmentHeaderBytes(for: .clientToServer) + tlsBelow.segmentHeaderBytes[0],
                              parser.unattributedSegmentHeaderBytes(for: .serverToClient) + tlsBelow.segmentHeaderBytes[1]])
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        guard records.count > 0 else {
            builder.summary.nonHTTPFrameBytes += summary.clientToServer.frameBytes + summary.serverToClient.frameBytes
            return
        }
        var unattributed = 0
        for direction in Direction.allCases {
            let d = direction.rawValue
            // Captured payload in no record or tunnel (non-HTTP stretches), and overhead the user did not choose.
            var unanalysed = counts[d].nonHTTPBytes
            if decrypted {
                unanalysed += framingLeft[d] + tlsBelow.undecryptedBytes[d]
                if !overhead.contains(.handshake) { unanalysed += tlsBelow.controlBytes[d] }
            }
            unattributed += summary[direction].unattributedFrameBytes(
                unanalysedBytes: unanalysed, handshake: overhead.contains(.handshake),
                teardown: overhead.contains(.teardown), packets: overhead.contains(.packets))
        }
        if decrypted { records.tlsHandshakeBytes = tlsBelow.controlBytes }
        unattributed += records.connectionEnded(summary)
        builder.summary.unattributedFrameBytes += unattributed
    }
}
