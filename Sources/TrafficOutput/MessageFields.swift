import TrafficCapture
import TrafficHTTP
import TrafficSessions

/// The record fields in their public order, as CSV cells and JSON values.
enum MessageFields {
    enum Value {
        case text(String?)
        case number(Int?)
        /// Formatted only as the one format needs it: CSV prints ISO 8601, JSON decimal seconds.
        case time(CaptureTime?)
        case flag(Bool)
        case list([String])
    }

    static func fields(_ r: MessageRecord) -> [(String, Value)] {
        var fields: [(String, Value)] = []
        forEach(r) { fields.append(($0, $1)) }
        return fields
    }

    /// The fields one by one: a list of them per record cost more than writing them.
    static func forEach(_ r: MessageRecord, _ body: (String, Value) -> Void) {
        body("connection", .number(r.connection))
        // A pushed stream (HTTP/2 server push) has no client ordinal: null.
        body("index", .number(r.flags.contains(.pushed) ? nil : r.index))
        body("kind", .text(r.kind.rawValue))
        body("time", .time(r.time))
        body("client", .text(r.client))
        body("server", .text(r.server))
        body("method", .text(r.method))
        body("status", .number(r.status))
        body("version", .text(r.version))
        body("host", .text(r.host))
        body("path", .text(r.path))
        body("query", .text(r.query))
        body("line_bytes", .number(r.lineBytes))
        body("header_bytes", .number(r.headerBytes))
        body("cookie_bytes", .number(r.cookieBytes))
        body("body_bytes", .number(r.bodyBytes))
        body("encoded_body_bytes", .number(r.encodedBodyBytes))
        body("decoded_body_bytes", .number(r.decodedBodyBytes))
        body("transfer_bytes", .number(r.transferBytes))
        body("missing_bytes", .number(r.missingBytes))
        body("content_type", .text(r.contentType))
        body("content_encoding", .text(r.contentEncoding))
        body("transfer_encoding", .text(r.transferEncoding))
        body("complete", .flag(r.complete))
        body("paired", .flag(r.paired))
        body("flags", .list(r.flags.map(\.name)))
        body("tunnel_bytes", .number(r.tunnelBytes))
        body("handshake_bytes", .number(r.handshakeBytes))
        body("teardown_bytes", .number(r.teardownBytes))
        body("packet_overhead_bytes", .number(r.packetOverheadBytes))
        body("retransmitted_bytes", .number(r.retransmittedBytes))
        body("wire_bytes", .number(r.wireBytes))
        // TLS without keys (issue 9): null on HTTP records.
        body("direction", .text(r.tls?.direction ?? r.quic?.direction))
        // On a decrypted message: the connection's TLS handshake records it carries (`--overhead handshake`).
        body("tls_handshake_bytes", .number(r.tls?.handshakeBytes ?? (r.decrypted ? r.tlsHandshakeBytes : nil)))
        body("tls_application_bytes", .number(r.tls?.applicationBytes))
        body("tls_alert_bytes", .number(r.tls?.alertBytes))
        body("tls_record_header_bytes", .number(r.tls?.recordHeaderBytes))
        body("tls_version", .text(r.tls?.version))
        body("cipher_suite", .text(r.tls?.cipherSuite))
        body("alpn", .text(r.tls?.alpn))
        body("alpn_offered", .text(r.tls?.alpnOffered ?? r.quic?.alpnOffered))
        // Decrypted HTTPS (issue 21): null on cleartext records and on `tls` records.
        body("tls_overhead_bytes", .number(r.decrypted ? r.tlsOverheadBytes : nil))
        // Issue 29: when the message's first and last bytes were captured (HAR's send and receive). A TLS
        // record spans a whole connection direction: no last byte time is kept for it (null).
        body("first_byte_time", .time(r.time))
        body("last_byte_time", .time(r.kind == .tls || r.kind == .quic ? nil : r.lastByteTime))
        // HTTP/2 (issue 22): the stream; the header block's and the cookie fields' sizes after HPACK decoding
        // (`header_bytes` and `cookie_bytes` are as sent), null for HTTP/1 and where HPACK state was lost; the
        // control frames attributed to this record with `--overhead` (0 otherwise; part of `wire_bytes`).
        body("stream_id", .number(r.streamID))
        body("header_decoded_bytes", .number(r.headerDecodedBytes))
        body("cookie_decoded_bytes", .number(r.cookieDecodedBytes))
        body("h2_control_bytes", .number(r.h2ControlBytes))
        // QUIC (issue 23): on `quic` records the negotiated version and the packets (null elsewhere); on HTTP/3
        // records what QUIC added to carry the message, and with `--overhead` the connection's control streams
        // and packets without request-stream bytes (0 for TCP; all three are part of `wire_bytes`).
        body("quic_version", .text(r.quic?.version))
        body("quic_packets", .number(r.quic?.packets))
        body("quic_overhead_bytes", .number(r.quicOverheadBytes))
        body("h3_control_bytes", .number(r.h3ControlBytes))
        body("quic_connection_bytes", .number(r.quicConnectionBytes))
    }

    static func csvCell(_ value: Value) -> String {
        switch value {
        case .text(let text): return text ?? ""
        case .number(let number): return number.map(String.init) ?? ""
        case .time(let time): return time?.iso8601 ?? ""
        case .flag(let flag): return flag ? "true" : "false"
        case .list(let list): return list.joined(separator: " ")
        }
    }

    static func writeCell(_ value: Value, to w: inout CSVWriter) {
        switch value {
        case .number(let number?): w.cell(number)
        case .time(let time?): w.cell(time)
        default: w.cell(csvCell(value))
        }
    }

    /// The JSON keys in field order, quoted once: a listing writes them for every record.
    static let jsonKeys: [JSONWriter.Key] = fields(MessageRecord(
        connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")).map { JSONWriter.Key($0.0) }

    /// Every field of `r` into `w`'s open object.
    static func writeJSON(_ r: MessageRecord, to w: inout JSONWriter) {
        var i = 0
        forEach(r) { _, value in
            write(value, key: jsonKeys[i], to: &w)
            i += 1
        }
    }

    static func write(_ value: Value, key: JSONWriter.Key, to w: inout JSONWriter) {
        switch value {
        case .text(let text): w.field(key, text)
        case .number(let number): w.field(key, number)
        case .time(let time?): w.field(key, raw: time.decimalString)
        case .time(nil): w.field(key, Int?.none)
        case .flag(let flag): w.field(key, flag)
        case .list(let list): w.field(key, list)
        }
    }
}
