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
    private let parser: TLSConnectionParser
    private let decryptor: TLSDecryptor?
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
        parser.receive(bytes, direction: direction, span: span)
        decryptor?.receive(bytes, direction: direction, span: span)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser.skip(byteCount, direction: direction, time: time)
        decryptor?.skip(byteCount, direction: direction, time: time)
    }

    func packet(_ event: TCPPacketEvent) { decryptor?.packet(event) }

    func finish(time: CaptureTime) {
        if !parser.isFinished { parser.finish(time: time) }
        if let decryptor, let http = child.http {
            http.tlsBelow.segmentHeaderBytes = PerDirection(decryptor.pendingOverheadBytes(.clientToServer),
                                                            decryptor.pendingOverheadBytes(.serverToClient))
        }
        decryptor?.finish(time: time)
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        let tls = parser.summary
        builder.summary.tlsConnections += 1
        if tls.selectedALPN == "h2" { builder.summary.tlsHTTP2Connections += 1 }
        let outcome = decryptor?.outcome ?? .noKey
        switch outcome {
        case .decrypted: builder.summary.tlsDecrypted += 1
        case .noKey: builder.summary.tlsNoKey += 1
        case .decryptFailed: builder.summary.tlsDecryptFailed += 1
        case .unsupportedCipher: builder.summary.tlsUnsupportedCipher += 1
        }
        // A child is made when keys are found; it holds the connection only if a record verified with them.
        if let decryptor, outcome == .decrypted, let http = child.http {
            builder.summary.tlsFailedRecords += decryptor.failedRecordCount
            builder.summary.missingBytes += tls.clientToServer.missingBytes + tls.serverToClient.missingBytes
            for direction in Direction.allCases {
                let accounting = decryptor.accounting(direction)
                http.tlsBelow.controlBytes[direction.rawValue] = accounting.controlBytes
                http.tlsBelow.undecryptedBytes[direction.rawValue] = accounting.undecryptedBytes
                builder.summary.tlsUndecryptedBytes += accounting.undecryptedBytes
            }
            decryptor.connectionEnded(summary)
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
