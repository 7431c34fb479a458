import TrafficAggregation
import TrafficCapture
import TrafficAnalysis
import TrafficQUIC
import TrafficReassembly
import TrafficTLS
import TrafficWire

/// Renders `traffic connections`: one row per TCP connection, like `tshark -q -z conv,tcp`.
public struct ConnectionsReport {
    public var analyses: [CaptureAnalysis]
    /// Per capture, the TLS connections' hello fields by connection number.
    public var tls: [[Int: TLSConnectionSummary]] = []
    /// Per capture, the HTTP/2 control bytes (client to server, server to client) of connections that spoke it.
    public var http2ControlBytes: [[Int: [Int]]] = []
    /// Per capture, its QUIC connections (issue 23), in the order they began.
    public var quic: [[QUICConnectionSummary]] = []

    public init(analyses: [CaptureAnalysis]) { self.analyses = analyses }

    public static let schema = "traffic.connections/1"

    /// The direction object's fields, in contract order.
    static func directionFields(_ s: TCPDirectionStats) -> [(name: String, value: Int)] {
        [
            ("packets", s.packets),
            ("frame_bytes", s.frameBytes),
            ("payload_bytes", s.payloadBytes),
            ("delivered_bytes", s.deliveredBytes),
            ("missing_bytes", s.missingBytes),
            ("retransmitted_bytes", s.retransmittedBytes),
            ("handshake_bytes", s.handshakeBytes),
            ("teardown_bytes", s.teardownBytes),
            ("ack_bytes", s.ackBytes),
            // The rest of the packet-class split: frame_bytes = handshake + teardown + ack + data header
            // + data payload + retransmission frame bytes.
            ("data_header_bytes", s.dataHeaderBytes),
            ("data_payload_bytes", s.dataPayloadBytes),
            ("retransmission_frame_bytes", s.retransmissionFrameBytes),
        ]
    }

    private var multipleCaptures: Bool { analyses.count > 1 }

    public func render(_ format: OutputFormat, width: Int = 80, exactBytes: Bool = false) -> String {
        switch format {
        case .json: return json()
        case .csv: return csv()
        case .table: return table(width: width, exactBytes: exactBytes)
        // `traffic connections` refuses html, har and ndjson before it runs; a caller that asks anyway gets the table.
        case .html, .har, .ndjson: return table(width: width, exactBytes: exactBytes)
        }
    }

    func json() -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("schema", Self.schema)
        w.beginArray("connections")
        for (index, analysis) in analyses.enumerated() {
            for c in analysis.connections {
                w.beginObject()
                if multipleCaptures { w.field("capture", analysis.summary.path) }
                w.field("connection", c.info.id)
                w.field("client", c.info.client.description)
                w.field("server", c.info.server.description)
                w.field("start", raw: c.info.start.decimalString)
                w.field("duration", raw: c.duration.decimalString)
                // Outermost first; empty for a plain frame (issue 28).
                w.field("encapsulation", c.info.encapsulation.names)
                for direction in Direction.allCases {
                    w.beginObject(direction.name)
                    for (name, value) in Self.directionFields(c[direction]) { w.field(name, value) }
                    // Issue 22: null unless the connection spoke HTTP/2.
                    w.field("h2_control_bytes", h2Control(capture: index, connection: c.info.id)?[direction.rawValue])
                    w.endObject()
                }
                if let hello = tlsInfo(capture: index, connection: c.info.id) {
                    w.beginObject("tls")
                    w.field("sni", hello.sni)
                    w.field("version", hello.negotiatedVersion?.name)
                    w.field("cipher_suite", hello.cipherSuite?.name)
                    w.field("alpn", hello.selectedALPN)
                    w.field("alpn_offered", hello.offeredALPN)
                    // "decrypted", "no_key", "decrypt_failed", "unsupported_cipher"; null without any secrets.
                    w.field("decryption", hello.decryption?.rawValue)
                    for direction in Direction.allCases {
                        let stats = hello[direction]
                        w.beginObject(direction.name)
                        w.field("record_header_bytes", stats.recordHeaderBytes)
                        w.field("handshake_bytes", stats.handshakeBytes)
                        w.field("application_bytes", stats.applicationBytes)
                        w.field("alert_bytes", stats.alertBytes)
                        w.endObject()
                    }
                    w.endObject()
                } else {
                    w.field("tls", raw: "null")
                }
                w.endObject()
            }
        }
        w.endArray()
        // QUIC connections (issue 23), numbered on their own like tshark's quic.connection.number.
        w.beginArray("quic_connections")
        for (index, analysis) in analyses.enumerated() {
            for q in quicConnections(capture: index) {
                w.beginObject()
                if multipleCaptures { w.field("capture", analysis.summary.path) }
                w.field("connection", q.id)
                w.field("client", q.client.description)
                w.field("server", q.server.description)
                w.field("start", raw: q.start.decimalString)
                w.field("duration", raw: q.duration.decimalString)
                w.field("version", q.version.description)
                w.field("sni", q.serverName)
                w.field("alpn_offered", q.offeredALPN)
                w.field("paths", q.paths)
                w.field("retry", q.sawRetry)
                w.field("version_negotiation", q.sawVersionNegotiation)
                w.field("decryption", q.decryption)
                for direction in Direction.allCases {
                    let stats = q.stats[direction.rawValue]
                    w.beginObject(direction.name)
                    for (name, value) in Self.quicDirectionFields(stats) { w.field(name, value) }
                    w.endObject()
                }
                w.endObject()
            }
        }
        w.endArray()
        w.endObject()
        return w.output + "\n"
    }

    /// A QUIC direction's fields, in contract order.
    static func quicDirectionFields(_ s: QUICDirectionStats) -> [(name: String, value: Int)] {
        [
            ("datagrams", s.datagrams),
            ("frame_bytes", s.frameBytes),
            ("udp_payload_bytes", s.udpPayloadBytes),
            ("quic_packets", s.packets),
            ("padding_bytes", s.paddingBytes),
            ("decrypted_packets", s.decryptedPackets),
            ("undecrypted_packets", s.undecryptedPackets),
            // With keys: STREAM payload delivered once, and what QUIC cost beside it (0 without keys).
            ("request_stream_bytes", s.requestStreamBytes),
            ("unidirectional_stream_bytes", s.unidirectionalStreamBytes),
            ("quic_overhead_bytes", s.streamOverheadBytes),
            ("quic_connection_bytes", s.connectionBytes),
        ]
    }

    func quicConnections(capture: Int) -> [QUICConnectionSummary] { capture < quic.count ? quic[capture] : [] }

    func csv() -> String {
        var w = CSVWriter()
        var header = (multipleCaptures ? ["capture"] : []) + ["connection", "client", "server", "start", "duration"]
        for direction in Direction.allCases {
            header += Self.directionFields(TCPDirectionStats()).map { "\(direction.name)_\($0.name)" }
        }
        header += ["tls_sni", "tls_version", "cipher_suite", "alpn", "encapsulation", "tls_decryption"]
        for direction in Direction.allCases {
            header += ["record_header_bytes", "handshake_bytes", "application_bytes"].map { "tls_\(direction.name)_\($0)" }
        }
        header += Direction.allCases.map { "\($0.name)_h2_control_bytes" }
        // Issue 23: QUIC connections are rows too, after the TCP ones: `transport` tells them apart (their TCP
        // columns are empty; packets, frame and payload bytes are the datagrams').
        header += ["transport", "quic_version"] + Direction.allCases.map { "\($0.name)_quic_packets" }
        w.row(header)
        for (index, analysis) in analyses.enumerated() {
            for c in analysis.connections {
                var row = (multipleCaptures ? [analysis.summary.path] : [])
                    + ["\(c.info.id)", c.info.client.description, c.info.server.description,
                       c.info.start.decimalString, c.duration.decimalString]
                for direction in Direction.allCases { row += Self.directionFields(c[direction]).map { "\($0.value)" } }
                let hello = tlsInfo(capture: index, connection: c.info.id)
                row += [hello?.sni ?? "", hello?.negotiatedVersion?.name ?? "", hello?.cipherSuite?.name ?? "",
                        hello?.selectedALPN ?? "", Self.encapsulationText(c.info.encapsulation),
                        hello?.decryption?.rawValue ?? ""]
                for direction in Direction.allCases {
                    let stats = hello?[direction]
                    row += [stats?.recordHeaderBytes, stats?.handshakeBytes, stats?.applicationBytes].map {
                        $0.map(String.init) ?? ""
                    }
                }
                let control = h2Control(capture: index, connection: c.info.id)
                row += Direction.allCases.map { direction in control.map { String($0[direction.rawValue]) } ?? "" }
                row += ["tcp", "", "", ""]
                w.row(row)
            }
        }
        let tcpFields = Self.directionFields(TCPDirectionStats()).count
        for (index, analysis) in analyses.enumerated() {
            for q in quicConnections(capture: index) {
                var row = (multipleCaptures ? [analysis.summary.path] : [])
                    + ["\(q.id)", q.client.description, q.server.description, q.start.decimalString, q.duration.decimalString]
                for direction in Direction.allCases {
                    let s = q.stats[direction.rawValue]
                    row += ["\(s.datagrams)", "\(s.frameBytes)", "\(s.udpPayloadBytes)"]
                        + Array(repeating: "", count: tcpFields - 3)
                }
                row += [q.serverName ?? "", "", "", "", "", q.decryption ?? ""]
                row += Array(repeating: "", count: 6) + ["", ""]
                row += ["quic", q.version.description] + q.stats.map { "\($0.packets)" }
                w.row(row)
            }
        }
        return w.output
    }

    /// Layers joined with `:` like tshark's `frame.protocols`, outermost first.
    static func encapsulationText(_ encapsulation: Encapsulation) -> String {
        encapsulation.names.joined(separator: ":")
    }

    func table(width: Int, exactBytes: Bool) -> String {
        func bytes(_ value: Int) -> String { exactBytes ? String(value) : humanBytes(value) }
        // The column appears only for captures with tunnels or tags, and is the first to go when narrow.
        let showEncapsulation = analyses.contains { $0.connections.contains { !$0.info.encapsulation.isEmpty } }
        var table = TextTable(columns: [
            .init("#"), .init("client", .left), .init("server", .left),
            .init("pkts →"), .init("bytes →"), .init("pkts ←"), .init("bytes ←"),
            .init("setup+close", dropOrder: 3), .init("missing", dropOrder: 4), .init("duration", dropOrder: 2),
            .init("tls", .left, shrinkable: true, dropOrder: 5),
        ] + (showEncapsulation ? [.init("encapsulation", .left, shrinkable: true, dropOrder: 6)] : []))
        for (index, analysis) in analyses.enumerated() {
            for c in analysis.connections {
                let a = c.clientToServer, b = c.serverToClient
                table.rows.append([
                    "\(c.info.id)", c.info.client.description, c.info.server.description,
                    "\(a.packets)", bytes(a.frameBytes), "\(b.packets)", bytes(b.frameBytes),
                    bytes(a.handshakeBytes + a.teardownBytes + b.handshakeBytes + b.teardownBytes),
                    bytes(a.missingBytes + b.missingBytes), c.duration.secondsText,
                    tlsInfo(capture: index, connection: c.info.id).map {
                        [$0.sni, $0.negotiatedVersion?.name, $0.decryption.map { $0 == .decrypted ? "decrypted" : "not decrypted: \($0.rawValue)" }]
                            .compactMap { $0 }.joined(separator: " ")
                    } ?? "",
                ] + (showEncapsulation ? [Self.encapsulationText(c.info.encapsulation)] : []))
            }
        }
        for index in analyses.indices {
            for q in quicConnections(capture: index) {
                let a = q.stats[0], b = q.stats[1]
                let quicText = ["QUIC \(q.version)", q.serverName, q.decryption.map { $0 == "decrypted" ? "decrypted" : "not decrypted: \($0)" }]
                table.rows.append([
                    "q\(q.id)", q.client.description, q.server.description,
                    "\(a.datagrams)", bytes(a.frameBytes), "\(b.datagrams)", bytes(b.frameBytes), "", "",
                    q.duration.secondsText, quicText.compactMap { $0 }.joined(separator: " "),
                ] + (showEncapsulation ? [""] : []))
            }
        }
        var text = table.render(width: width)
        let count = analyses.reduce(0) { $0 + $1.connections.count }
        let packets = analyses.reduce(0) { $0 + $1.summary.packets }
        text += "\(plural(count, "connection")), \(plural(packets, "packet"))"
        text += "; arrows: → client to server, ← server to client; bytes are frame bytes\n"
        return text
    }

    func h2Control(capture: Int, connection: Int) -> [Int]? {
        capture < http2ControlBytes.count ? http2ControlBytes[capture][connection] : nil
    }

    func tlsInfo(capture: Int, connection: Int) -> TLSConnectionSummary? {
        capture < tls.count ? tls[capture][connection] : nil
    }
}

extension CaptureTime {
    /// `12.345s`: seconds with milliseconds, for durations in tables.
    /// Negative values keep their sign (nothing here produces them, but a formatter must not trap).
    var secondsText: String {
        let milliseconds = nanoseconds.magnitude / 1_000_000
        let fraction = String(milliseconds % 1000)
        return (nanoseconds < 0 ? "-" : "") + "\(milliseconds / 1000)."
            + String(repeating: "0", count: max(0, 3 - fraction.count)) + fraction + "s"
    }
}
