import TrafficAggregation
import TrafficCapture
import TrafficHTTP
import TrafficReassembly
import TrafficSessions
import TrafficTLS
import TrafficWire

/// Turns a TLS connection into two records of kind `tls`, one per direction, named by the SNI.
///
/// Without keys the paths stay hidden, but the server name and the byte costs do not (issue 9). A
/// decrypting stage would sit between this tap's parser and an HTTP parser; until then, nothing is decrypted.
final class TLSConnectionTap: SessionStage {
    private let parser: TLSConnectionParser
    private let info: TCPConnectionInfo
    private let builder: ReportBuilder
    private let capture: Int
    private let overhead: OverheadOptions

    init(info: TCPConnectionInfo, capture: Int, builder: ReportBuilder, overhead: OverheadOptions) {
        self.info = info
        self.builder = builder
        self.capture = capture
        self.overhead = overhead
        parser = TLSConnectionParser(info: info)
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        parser.receive(bytes, direction: direction, span: span)
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser.skip(byteCount, direction: direction, time: time)
    }

    func finish(time: CaptureTime) {
        if !parser.isFinished { parser.finish(time: time) }
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        let tls = parser.summary
        builder.summary.tlsConnections += 1
        if tls.selectedALPN == "h2" { builder.summary.tlsHTTP2Connections += 1 }
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
