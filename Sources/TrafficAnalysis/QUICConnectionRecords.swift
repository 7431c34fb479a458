import TrafficAggregation
import TrafficCodecs
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

extension QUICConnectionRecords {
    /// The HTTP/3 stage over a connection whose streams decrypt.
    static func consumer(
        for connection: QUICConnection, capture: Int, builder: ReportBuilder, scratch: DecodingScratch,
        options: ReportOptions
    ) -> QUICStreamConsumer? {
        nil
    }
}
