import TrafficAggregation
import TrafficCapture
import TrafficQUIC
import TrafficReassembly
import TrafficWire

/// The result of reading one capture through the capture, wire and reassembly stages.
public struct CaptureAnalysis: Sendable {
    public var summary: CaptureSummary
    /// Every connection, ordered by connection number (empty unless `keepConnections`).
    public var connections: [TCPConnectionSummary] = []
    public var connectionCount = 0
    /// Anomaly counts by stable snake_case name; only non-zero ones.
    public var anomalies: [String: Int] = [:]
    public var warnings: [AnalysisWarning] = []

    /// Reads `path` start to end. `makeHandler` supplies the next stage for each connection.
    /// Throws only when nothing could be read; damage later in the file becomes a warning.
    public static func run(
        path: String, options: AnalysisOptions,
        makeHandler: @escaping TCPReassembler.HandlerFactory = { _ in nil },
        progress: ((Int64, Int64?) -> Void)? = nil, quic: QUICConnectionTable? = nil
    ) throws(CaptureError) -> CaptureAnalysis {
        var connections: [TCPConnectionSummary] = []
        let keep = options.keepConnections
        let reassembler = TCPReassembler(limits: options.reassemblyLimits, makeHandler: makeHandler) { ended in
            if keep { connections.append(ended) }
        }
        var result = try read(
            path: path, options: options, into: LocalSegmentSink(reassembler), progress: progress,
            datagrams: quic.map { table in { table.process($0, time: $1, packetIndex: $2) } })
        if let quic {
            quic.finish()
            result.summary.quicDatagrams -= quic.unconfirmedDatagrams
            result.summary.quicFrameBytes -= quic.unconfirmedFrameBytes
            result.summary.nonTCPPackets += quic.unconfirmedDatagrams
            result.summary.nonTCPFrameBytes += quic.unconfirmedFrameBytes
        }
        result.connections = connections.sorted { $0.info.id < $1.info.id }
        return result
    }

    /// The reading loop shared by single-threaded and sharded runs: capture → wire → `sink`.
    static func read(
        path: String, options: AnalysisOptions, into sink: some SegmentSink, progress: ((Int64, Int64?) -> Void)?,
        datagrams: ((UDPDatagram, CaptureTime, Int) -> Bool)? = nil
    ) throws(CaptureError) -> CaptureAnalysis {
        let file = try CaptureFile(path: path)
        if let filter = options.filter { try file.setFilter(filter) }
        var summary = CaptureSummary(path: path, linkType: file.linkType.description)
        var decoder = PacketDecoder(linkType: file.linkType)
        decoder.verifyChecksums = options.verifyChecksums
        var fragmentFrames = 0, fragmentBytes = 0
        var sinceProgress = 0
        var previous = CaptureTime(nanoseconds: .min)
        var earliest = CaptureTime(nanoseconds: .max), latest = CaptureTime(nanoseconds: .min)
        // The common frame's segment is decoded into this one place and handed on from it (`decodeCommonTCP`).
        let nowhere = Endpoint(address: IPAddress(ipv4: 0), port: 0)
        var segment = TCPSegment(
            source: nowhere, destination: nowhere, sequenceNumber: 0, acknowledgmentNumber: 0, flags: [], payloadLength: 0,
            payload: UnsafeRawBufferPointer(start: nil, count: 0), frameBytes: 0)
        /// Every frame but the common one (`decodeCommonTCP`), off the loop's common path.
        func decodeOther(_ packet: CapturedPacket) {
            switch decoder.decode(packet) {
            case .tcp(let segment):
                // Fragment frames held earlier are now part of this segment's frame bytes.
                if segment.frameCount > 1 {
                    fragmentFrames -= segment.frameCount - 1
                    fragmentBytes -= segment.frameBytes - packet.originalLength
                }
                sink.process(segment, time: packet.time, packetIndex: summary.packets)
            case .udp(let datagram):
                // QUIC is found by content on any port; other UDP is counted, not analysed.
                if let datagrams, datagrams(datagram, packet.time, summary.packets) {
                    summary.quicDatagrams += 1
                    summary.quicFrameBytes += packet.originalLength
                } else {
                    summary.nonTCPPackets += 1
                    summary.nonTCPFrameBytes += packet.originalLength
                }
            case .nonTCP:
                summary.nonTCPPackets += 1
                summary.nonTCPFrameBytes += packet.originalLength
            case .fragmentHeld:
                fragmentFrames += 1
                fragmentBytes += packet.originalLength
            case .malformed:
                summary.undecodedPackets += 1
                summary.undecodedFrameBytes += packet.originalLength
            }
        }
        let damage = file.readPackets { packet in
            summary.packets += 1
            summary.frameBytes += packet.originalLength
            let time = packet.time
            if time < previous { summary.backwardTimestamps += 1 }
            previous = time
            if time < earliest { earliest = time }
            if time > latest { latest = time }
            if decoder.decodeCommonTCP(packet, into: &segment) {
                sink.process(segment, time: time, packetIndex: summary.packets)
            } else {
                decodeOther(packet)
            }
            if let progress {
                sinceProgress += 1
                if sinceProgress == 4096 {
                    sinceProgress = 0
                    progress(file.compressedBytesRead, file.fileSize)
                }
            }
        }
        sink.finish()
        if summary.packets > 0 {
            summary.firstPacket = earliest
            summary.lastPacket = latest
        }
        // Fragments of datagrams that never completed carried no analysable TCP.
        summary.undecodedPackets += fragmentFrames
        summary.undecodedFrameBytes += fragmentBytes
        summary.damage = damage
        for kind in Encapsulation.Kind.allCases where decoder.count(of: kind) > 0 {
            summary.encapsulatedPackets[kind.name] = decoder.count(of: kind)
        }

        var result = CaptureAnalysis(summary: summary)
        result.connectionCount = sink.connectionCount
        for anomaly in WireAnomaly.allCases where decoder.count(of: anomaly) > 0 {
            result.anomalies[anomaly.name] = decoder.count(of: anomaly)
        }
        let tcpAnomalies = sink.anomalies
        for anomaly in TCPAnomaly.allCases where tcpAnomalies[anomaly.rawValue] > 0 {
            result.anomalies[anomaly.name] = tcpAnomalies[anomaly.rawValue]
        }
        if let damage { result.warnings.append(AnalysisWarning(capture: path, message: damage.description)) }
        if summary.backwardTimestamps > 0 {
            result.anomalies["timestamp_backwards"] = summary.backwardTimestamps
            let count = summary.backwardTimestamps
            result.warnings.append(AnalysisWarning(
                capture: path,
                message: "\(count) packet\(count == 1 ? " is" : "s are") timestamped earlier than the packet before "
                    + "(files joined out of order, or a damaged record?); the capture span runs from the earliest "
                    + "to the latest timestamp"))
        }
        let badChecksums = decoder.count(of: .badIPChecksum) + decoder.count(of: .badTCPChecksum)
        if badChecksums > 0 {
            result.warnings.append(AnalysisWarning(
                capture: path,
                message: "\(badChecksums) bad checksums (bad_ip_checksum=\(decoder.count(of: .badIPChecksum)), "
                    + "bad_tcp_checksum=\(decoder.count(of: .badTCPChecksum))); the frames were still analysed — "
                    + "a capture taken on the sending host shows unfilled checksums when the NIC computes them"))
        }
        if summary.undecodedPackets > 0 {
            let names = Set(WireAnomaly.allCases.map(\.name))
            let detail = result.anomalies.filter { names.contains($0.key) }.map { "\($0.key)=\($0.value)" }.sorted()
            result.warnings.append(AnalysisWarning(
                capture: path,
                message: "\(summary.undecodedPackets) packets could not be decoded (\(detail.joined(separator: ", ")))"))
        }
        return result
    }
}
