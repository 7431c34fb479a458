import TrafficAggregation
import TrafficCodecs
import TrafficHTTP3
import TrafficCapture
import TrafficQUIC
import TrafficReassembly
import TrafficSessions

/// A QUIC connection that ended becomes records: two of kind `quic`, one per direction, named by the SNI of its
/// first ClientHello (issue 23), unless its streams were decrypted into HTTP/3 records.
enum QUICConnectionRecords {
    static func add(
        _ connection: QUICConnection, capture: Int, builder: ReportBuilder, overhead: OverheadOptions
    ) {
        builder.summary.quicConnections += 1
        if connection.decrypted, let tap = connection.streamConsumer as? HTTP3ConnectionTap {
            builder.summary.quicDecrypted += 1
            builder.summary.http3Streams += tap.parser.streamCount
            tap.release(connection, capture: capture, builder: builder, overhead: overhead)
            return
        }
        var unattributed = 0
        for direction in Direction.allCases {
            let stats = connection.stats[direction.rawValue]
            var record = MessageRecord(
                connection: connection.id, index: 1, kind: .quic, time: connection.start,
                client: connection.client.description, server: connection.server.description,
                host: connection.serverName ?? TLSConnectionTap.hostText(connection.server), path: "(quic)")
            var fields = MessageRecord.QUICBytes(direction: direction.name)
            fields.udpPayloadBytes = stats.udpPayloadBytes
            fields.datagrams = stats.datagrams
            fields.packets = stats.packets
            fields.version = connection.version.description
            fields.alpnOffered = connection.offeredALPN.isEmpty ? nil : connection.offeredALPN.joined(separator: ",")
            record.quic = fields
            record.version = "QUIC"
            record.paired = true
            record.lastByteTime = connection.lastTime
            if !connection.sawClientHello { record.flag(.noClientHello) }
            if connection.sawVersionNegotiation { record.flag(.versionNegotiation) }
            if connection.sawRetry { record.flag(.retry) }
            if connection.paths > 1 { record.flag(.migrated) }
            if connection.hasSecrets { record.flag(.decryptFailed) } else { record.flag(.noKey) }
            // Ethernet, IP and UDP headers of the direction's datagrams: packet overhead, as for TCP.
            let headers = stats.frameBytes - stats.udpPayloadBytes
            if overhead.contains(.packets) { record.packetOverheadBytes = headers } else { unattributed += headers }
            builder.add(record, capture: capture)
        }
        builder.summary.unattributedFrameBytes += unattributed
    }
}

/// The HTTP/3 stage of one decrypted QUIC connection and the records it made: with `--overhead`, the first
/// exchange's records wait for the connection's end, when its control streams and packets without request-stream
/// bytes are known (as a TCP connection's handshake goes on its first exchange).
final class HTTP3ConnectionTap: QUICStreamConsumer {
    let parser: HTTP3ConnectionParser
    private let held: Held

    private final class Held {
        var records: [MessageRecord] = []
    }

    init(for connection: QUICConnection, capture: Int, builder: ReportBuilder, scratch: DecodingScratch, options: ReportOptions) {
        let info = TCPConnectionInfo(
            id: connection.id, client: connection.client, server: connection.server, start: connection.start,
            firstPacket: connection.firstPacket)
        let holding = !options.overhead.isEmpty
        let held = Held()
        self.held = held
        parser = HTTP3ConnectionParser(
            info: info, host: connection.serverName ?? TLSConnectionTap.hostText(connection.server), scratch: scratch,
            limits: HTTP3Limits(http: TrafficAnalyzer.httpLimits(options))
        ) { record in
            if holding, record.index == 1 { held.records.append(record) } else { builder.add(record, capture: capture) }
        }
    }

    func receive(stream: UInt64, direction: Direction, bytes: UnsafeRawBufferPointer, time: CaptureTime) {
        parser.receive(stream: stream, direction: direction, bytes: bytes, time: time)
    }
    func end(stream: UInt64, direction: Direction, time: CaptureTime) { parser.end(stream: stream, direction: direction, time: time) }
    func skip(stream: UInt64, direction: Direction, byteCount: Int, time: CaptureTime) {
        parser.skip(stream: stream, direction: direction, byteCount: byteCount, time: time)
    }
    func reset(stream: UInt64, direction: Direction, time: CaptureTime) { parser.reset(stream: stream, direction: direction, time: time) }
    func addOverhead(stream: UInt64, direction: Direction, bytes: Int) {
        parser.addOverhead(stream: stream, direction: direction, bytes: bytes)
    }
    func finish(time: CaptureTime) { parser.finish(time: time) }

    /// The connection ended (`parser` finished): the held records get the connection's own bytes per direction,
    /// the request of the first exchange what the client sent, its response what the server sent.
    func release(_ connection: QUICConnection, capture: Int, builder: ReportBuilder, overhead: OverheadOptions) {
        var unattributed = 0
        for direction in Direction.allCases {
            let d = direction.rawValue
            let stats = connection.stats[d]
            let control = parser.controlBytes[d] + parser.unparsedBytes[d]
            let own = stats.connectionBytes + parser.lateOverheadBytes[d]
            let headers = stats.frameBytes - stats.udpPayloadBytes
            let kind: MessageRecord.Kind = direction == .clientToServer ? .request : .response
            if !overhead.isEmpty, let i = held.records.firstIndex(where: { $0.kind == kind }) ?? held.records.indices.first {
                held.records[i].h3ControlBytes += control
                held.records[i].quicConnectionBytes += own
                if overhead.contains(.packets) {
                    held.records[i].packetOverheadBytes += headers
                } else {
                    unattributed += headers
                }
            } else {
                unattributed += control + own + headers
            }
        }
        for record in held.records { builder.add(record, capture: capture) }
        held.records = []
        builder.summary.unattributedFrameBytes += unattributed
    }
}

extension QUICConnectionRecords {
    /// The HTTP/3 stage over a connection whose streams decrypt.
    static func consumer(
        for connection: QUICConnection, capture: Int, builder: ReportBuilder, scratch: DecodingScratch,
        options: ReportOptions
    ) -> QUICStreamConsumer? {
        HTTP3ConnectionTap(for: connection, capture: capture, builder: builder, scratch: scratch, options: options)
    }
}
