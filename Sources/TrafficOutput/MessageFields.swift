import TrafficHTTP

/// The record fields in their public order, as CSV cells and JSON values.
enum MessageFields {
    enum Value {
        case text(String?)
        case number(Int?)
        case time(CaptureTimeText)
        case flag(Bool)
        case list([String])
    }

    struct CaptureTimeText {
        var decimal: String
        var iso: String
    }

    static func fields(_ r: HTTPMessageRecord) -> [(String, Value)] {
        [
            ("connection", .number(r.connection)),
            ("index", .number(r.index)),
            ("kind", .text(r.kind.rawValue)),
            ("time", .time(CaptureTimeText(decimal: r.time.decimalString, iso: r.time.iso8601))),
            ("client", .text(r.client)),
            ("server", .text(r.server)),
            ("method", .text(r.method)),
            ("status", .number(r.status)),
            ("version", .text(r.version)),
            ("host", .text(r.host)),
            ("path", .text(r.path)),
            ("query", .text(r.query)),
            ("line_bytes", .number(r.lineBytes)),
            ("header_bytes", .number(r.headerBytes)),
            ("cookie_bytes", .number(r.cookieBytes)),
            ("body_bytes", .number(r.bodyBytes)),
            ("encoded_body_bytes", .number(r.encodedBodyBytes)),
            ("decoded_body_bytes", .number(r.decodedBodyBytes)),
            ("transfer_bytes", .number(r.transferBytes)),
            ("missing_bytes", .number(r.missingBytes)),
            ("content_type", .text(r.contentType)),
            ("content_encoding", .text(r.contentEncoding)),
            ("transfer_encoding", .text(r.transferEncoding)),
            ("complete", .flag(r.complete)),
            ("paired", .flag(r.paired)),
            ("flags", .list(r.flags)),
            ("tunnel_bytes", .number(r.tunnelBytes)),
            ("handshake_bytes", .number(r.handshakeBytes)),
            ("teardown_bytes", .number(r.teardownBytes)),
            ("packet_overhead_bytes", .number(r.packetOverheadBytes)),
            ("retransmitted_bytes", .number(r.retransmittedBytes)),
            ("wire_bytes", .number(r.wireBytes)),
            // TLS without keys (issue 9): null on HTTP records.
            ("direction", .text(r.tls?.direction)),
            ("tls_handshake_bytes", .number(r.tls?.handshakeBytes)),
            ("tls_application_bytes", .number(r.tls?.applicationBytes)),
            ("tls_alert_bytes", .number(r.tls?.alertBytes)),
            ("tls_record_header_bytes", .number(r.tls?.recordHeaderBytes)),
            ("tls_version", .text(r.tls?.version)),
            ("cipher_suite", .text(r.tls?.cipherSuite)),
            ("alpn", .text(r.tls?.alpn)),
            ("alpn_offered", .text(r.tls?.alpnOffered)),
        ]
    }

    static func csvCell(_ value: Value) -> String {
        switch value {
        case .text(let text): return text ?? ""
        case .number(let number): return number.map(String.init) ?? ""
        case .time(let time): return time.iso
        case .flag(let flag): return flag ? "true" : "false"
        case .list(let list): return list.joined(separator: " ")
        }
    }

    static func write(_ value: Value, key: String, to w: inout JSONWriter) {
        switch value {
        case .text(let text): w.field(key, text)
        case .number(let number): w.field(key, number)
        case .time(let time): w.field(key, raw: time.decimal)
        case .flag(let flag): w.field(key, flag)
        case .list(let list): w.field(key, list)
        }
    }
}
