import TrafficAggregation
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions
import TrafficTLS
import TrafficWire

/// A TLS connection: decrypted with the run's secrets into HTTP records (a `TLSDecryptor` feeding an
/// `HTTPConnectionTap` that never learns its bytes were encrypted), or else two records of kind `tls`, one per
/// direction, named by the SNI and flagged with why they stayed encrypted.
///
/// Without keys the paths stay hidden, but the server name and the byte costs do not (issue 9). The keyless
/// parser counts the record layer either way, for `traffic connections` and the `tls` records.
final class TLSConnectionTap: SessionStage {
    /// Both go at `finish`: a closed connection lingers in the reassembler for late packets (ten seconds of capture
    /// time), and thousands of closed TLS connections kept their parsers (hellos, handshake buffers) and decryptors
    /// (two directions' record state, closures): 17 of the 66 MiB peak on the 256 MiB HTTPS bench (issue 25).
    /// What `connectionEnded` and late packets need is kept in `ended`.
    private var parser: TLSConnectionParser?
    private var decryptor: TLSDecryptor?
    private var ended: Ended?
    /// The HTTP stage under the decryptor, once it made one.
    private let info: TCPConnectionInfo
    private let builder: ReportBuilder
    private let capture: Int
    private let overhead: OverheadOptions

    init(info: TCPConnectionInfo, capture: Int, builder: ReportBuilder, overhead: OverheadOptions,
         decryption: TLSDecryptionContext?, scratch: DecodingScratch, limits: HTTPLimits, pool: HTTPParserPool) {
        self.info = info
        self.builder = builder
        self.capture = capture
        self.overhead = overhead
        parser = TLSConnectionParser(info: info)
        let child = Child()
        self.child = child
        if let decryption {
            let decryptor = TLSDecryptor(context: decryption) {
                let tap = HTTPConnectionTap(
                    info: info, capture: capture, scratch: scratch, builder: builder, overhead: overhead, limits: limits,
                    pool: pool, decrypted: true, start: .detect)
                tap.connect = child.connect
                child.http = tap
                return tap
            }
            // HAR `ssl`: ClientHello to the last handshake record before application data, on the first exchange.
            decryptor.handshakeEnded = { start, end in child.http?.tlsHandshake = MessageRecord.TimeSpan(start: start, end: end) }
            self.decryptor = decryptor
        } else {
            decryptor = nil
        }
    }

    /// A finished connection's TLS facts: the parser's summary and, with keys, the decryptor's outcome and counters.
    private struct Ended {
        var tls: TLSConnectionSummary
        /// Nil without keys.
        var outcome: TLSDecryptionOutcome?
        var failedRecords = 0
        /// Per direction (inline, not arrays: thousands of these linger): the decryptor's accounting that
        /// `connectionEnded` reads, and the plaintext's end, where a late ACK or retransmission maps
        /// (`TLSDecryptor.packet`).
        var controlBytes = PerDirection()
        var undecryptedBytes = PerDirection()
        var plaintextEnd = PerDirection()
    }

    /// The HTTP stage the decryptor made (at most one), and the TCP handshake to give it.
    private final class Child {
        var http: HTTPConnectionTap?
        var connect: MessageRecord.TimeSpan?
    }

    private let child: Child

    func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {
        child.connect = MessageRecord.TimeSpan(start: syn, end: ack)
        child.http?.connect = child.connect
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        parser?.receive(bytes, direction: direction, span: span)
        decryptor?.receive(bytes, direction: direction, span: span)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser?.skip(byteCount, direction: direction, time: time)
        decryptor?.skip(byteCount, direction: direction, time: time)
    }

    func packet(_ event: TCPPacketEvent) {
        if let decryptor {
            decryptor.packet(event)
        } else if let ended, let http = child.http {
            // What the decryptor does once finished: positions past the end map to the end of the plaintext.
            var mapped = event
            let direction = event.kind == .ack ? event.direction.opposite : event.direction
            mapped.streamOffset = Int64(ended.plaintextEnd[direction.rawValue])
            http.packet(mapped)
        }
    }

    func finish(time: CaptureTime) {
        guard let parser else { return }
        parser.finish(time: time)
        var ended = Ended(tls: parser.summary)
        if let decryptor {
            if let http = child.http {
                http.tlsBelow.segmentHeaderBytes = PerDirection(decryptor.pendingOverheadBytes(.clientToServer),
                                                                decryptor.pendingOverheadBytes(.serverToClient))
            }
            decryptor.finish(time: time)
            ended.outcome = decryptor.outcome
            ended.failedRecords = decryptor.failedRecordCount
            for direction in Direction.allCases {
                let d = direction.rawValue, accounting = decryptor.accounting(direction)
                ended.controlBytes[d] = accounting.controlBytes
                ended.undecryptedBytes[d] = accounting.undecryptedBytes
                ended.plaintextEnd[d] = decryptor.plaintextEnd(direction)
            }
        }
        self.ended = ended
        self.parser = nil
        decryptor = nil
    }

    /// Finished, and holding only what `connectionEnded` and late packets need (tests).
    var keepsOnlyItsEnd: Bool { ended != nil && parser == nil && decryptor == nil }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        guard let ended else { preconditionFailure("a TLS connection ended unfinished (\(info.id))") }
        let tls = ended.tls
        builder.summary.tlsConnections += 1
        if tls.selectedALPN == "h2" { builder.summary.tlsHTTP2Connections += 1 }
        let outcome = ended.outcome ?? .noKey
        switch outcome {
        case .decrypted: builder.summary.tlsDecrypted += 1
        case .noKey: builder.summary.tlsNoKey += 1
        case .decryptFailed: builder.summary.tlsDecryptFailed += 1
        case .unsupportedCipher: builder.summary.tlsUnsupportedCipher += 1
        }
        // A child is made when keys are found; it holds the connection only if a record verified with them.
        if ended.outcome == .decrypted, let http = child.http {
            builder.summary.tlsFailedRecords += ended.failedRecords
            builder.summary.missingBytes += tls.clientToServer.missingBytes + tls.serverToClient.missingBytes
            http.tlsBelow.controlBytes = ended.controlBytes
            http.tlsBelow.undecryptedBytes = ended.undecryptedBytes
            builder.summary.tlsUndecryptedBytes += ended.undecryptedBytes[0] + ended.undecryptedBytes[1]
            http.connectionEnded(summary)
            return
        }
        var unattributed = 0
        for direction in Direction.allCases {
            let stats = summary[direction]
            let bytes = tls[direction]
            var record = MessageRecord(
                connection: info.id, index: 1, kind: .tls, time: info.start, client: info.client.description,
                server: info.server.description, host: tls.sni ?? Self.hostText(info.server), path: "(tls)")
            var fields = MessageRecord.TLSBytes(direction: direction.name)
            fields.handshakeBytes = bytes.handshakeBytes
            fields.applicationBytes = bytes.applicationBytes
            fields.alertBytes = bytes.alertBytes
            fields.otherBytes = bytes.otherRecordBytes
            fields.recordHeaderBytes = bytes.recordHeaderBytes
            fields.version = tls.negotiatedVersion?.name
            fields.cipherSuite = tls.cipherSuite?.name
            fields.alpn = tls.selectedALPN
            fields.alpnOffered = tls.offeredALPN.isEmpty ? nil : tls.offeredALPN.joined(separator: ",")
            record.tls = fields
            record.version = fields.version
            record.missingBytes = bytes.missingBytes
            record.complete = bytes.missingBytes == 0
            record.paired = true
            record.flags = tls.flags
            if outcome != .decrypted, let reason = RecordAnomaly(rawValue: outcome.rawValue) { record.flag(reason) }
            // Whole-connection costs: each direction's frames go to that direction's record.
            if overhead.contains(.handshake) { record.handshakeBytes = stats.handshakeBytes }
            if overhead.contains(.teardown) { record.teardownBytes = stats.teardownBytes }
            if overhead.contains(.packets) {
                record.packetOverheadBytes = stats.dataHeaderBytes - stats.undeliveredHeaderBytes + stats.ackBytes
                record.retransmittedBytes = stats.retransmissionFrameBytes + stats.repeatedPayloadBytes
            }
            unattributed += stats.unattributedFrameBytes(
                unanalysedBytes: bytes.nonTLSBytes, handshake: overhead.contains(.handshake),
                teardown: overhead.contains(.teardown), packets: overhead.contains(.packets))
            builder.add(record, capture: capture)
        }
        builder.summary.unattributedFrameBytes += unattributed
        builder.summary.missingBytes += tls.clientToServer.missingBytes + tls.serverToClient.missingBytes
    }

    /// The server address as a host name stands in when there is no SNI: `10.0.0.1`, `[::1]`.
    static func hostText(_ endpoint: Endpoint) -> String {
        endpoint.address.isIPv6 ? "[\(endpoint.address)]" : "\(endpoint.address)"
    }
}
