/// The generator's ground truth: what it put in the capture, per host and path template.
///
/// Byte fields follow `MessageRecord` in the main package: head bytes are the start line, the
/// header lines and the empty line; body bytes are the body as sent (chunk framing included);
/// encoded bytes are after de-chunking; decoded bytes are after content decoding (gunzip).
/// Cookie bytes are whole `Cookie:`/`Set-Cookie:` lines including their CRLF.
struct Manifest {
    struct Totals {
        var requests = 0
        var responses = 0
        var methods: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var rawPaths: Set<String> = []
        var requestHeadBytes = 0
        var requestBodyBytes = 0
        var requestEncodedBodyBytes = 0
        var requestDecodedBodyBytes = 0
        var requestCookieBytes = 0
        var responseHeadBytes = 0
        var responseBodyBytes = 0
        var responseEncodedBodyBytes = 0
        var responseDecodedBodyBytes = 0
        var responseCookieBytes = 0
        var gzipResponses = 0
        var chunkedMessages = 0
        /// `--tls`: the record bytes beyond the plaintext of the application_data records that carried the
        /// messages (headers, explicit nonces, tags, TLS 1.3 inner types), as `tls_overhead_bytes` counts them.
        var tlsOverheadBytes = 0
        /// `--h2`: decoded header sizes (name + value octets, pseudo-header fields included) and DATA frames.
        var requestHeaderDecodedBytes = 0
        var requestCookieDecodedBytes = 0
        var responseHeaderDecodedBytes = 0
        var responseCookieDecodedBytes = 0
        var requestDataFrames = 0
        var responseDataFrames = 0

        var requestTransferBytes: Int { requestHeadBytes + requestBodyBytes }
        var responseTransferBytes: Int { responseHeadBytes + responseBodyBytes }

        mutating func add(_ other: Totals) {
            requests += other.requests
            responses += other.responses
            for (method, count) in other.methods { methods[method, default: 0] += count }
            for (status, count) in other.statuses { statuses[status, default: 0] += count }
            requestHeadBytes += other.requestHeadBytes
            requestBodyBytes += other.requestBodyBytes
            requestEncodedBodyBytes += other.requestEncodedBodyBytes
            requestDecodedBodyBytes += other.requestDecodedBodyBytes
            requestCookieBytes += other.requestCookieBytes
            responseHeadBytes += other.responseHeadBytes
            responseBodyBytes += other.responseBodyBytes
            responseEncodedBodyBytes += other.responseEncodedBodyBytes
            responseDecodedBodyBytes += other.responseDecodedBodyBytes
            responseCookieBytes += other.responseCookieBytes
            gzipResponses += other.gzipResponses
            chunkedMessages += other.chunkedMessages
            tlsOverheadBytes += other.tlsOverheadBytes
            requestHeaderDecodedBytes += other.requestHeaderDecodedBytes
            requestCookieDecodedBytes += other.requestCookieDecodedBytes
            responseHeaderDecodedBytes += other.responseHeaderDecodedBytes
            responseCookieDecodedBytes += other.responseCookieDecodedBytes
            requestDataFrames += other.requestDataFrames
            responseDataFrames += other.responseDataFrames
        }

        /// An HTTP/2 exchange's record sizes: head bytes are the header block frames as sent (line bytes are 0).
        mutating func addHTTP2(request: HTTP2MessageSizes, response: HTTP2MessageSizes) {
            requestHeadBytes += request.headerBytes
            requestHeaderDecodedBytes += request.headerDecodedBytes
            requestCookieBytes += request.cookieBytes
            requestCookieDecodedBytes += request.cookieDecodedBytes
            requestBodyBytes += request.bodyBytes
            requestDataFrames += request.dataFrames
            responseHeadBytes += response.headerBytes
            responseHeaderDecodedBytes += response.headerDecodedBytes
            responseCookieBytes += response.cookieBytes
            responseCookieDecodedBytes += response.cookieDecodedBytes
            responseBodyBytes += response.bodyBytes
            responseDataFrames += response.dataFrames
        }
    }

    struct Key: Hashable, Comparable {
        var host: String
        var path: String
        static func < (a: Key, b: Key) -> Bool { (a.host, a.path) < (b.host, b.path) }
    }

    var endpoints: [Key: Totals] = [:]
    var connections = 0
    /// `--h2`: what the connections carried besides the records.
    var http2 = HTTP2Totals()

    /// The HTTP/2 capture's totals by connection direction, in the analyzer's vocabulary.
    struct HTTP2Totals {
        var connections = 0
        var streams = 0
        /// Frames by type number: DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY,
        /// WINDOW_UPDATE, CONTINUATION.
        var frames = [Int](repeating: 0, count: 10)
        var clientControlBytes = 0
        var serverControlBytes = 0
        var clientBytes = 0
        var serverBytes = 0

        mutating func add(_ connection: HTTP2Connection) {
            connections += 1
            streams += connection.requests.count
            for (type, count) in connection.frames.enumerated() { frames[type] += count }
            clientControlBytes += connection.clientControlBytes
            serverControlBytes += connection.serverControlBytes
            clientBytes += connection.clientBytes
            serverBytes += connection.serverBytes
        }

        static let frameNames = [
            "DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
            "WINDOW_UPDATE", "CONTINUATION",
        ]
    }

    /// The manifest as JSON, keys in a fixed order and endpoints sorted by host then path.
    func json(
        capture: String, seed: UInt64, targetBytes: Int, fileBytes: Int, packets: Int,
        firstTime: UInt64, lastTime: UInt64, tls: [(String, String)]? = nil, http2: Bool = false,
        quic: [(String, String)]? = nil
    ) -> String {
        var all = Totals()
        for totals in endpoints.values { all.add(totals) }
        var lines: [String] = ["{"]
        lines.append("  \"generator\": \"traffic-bench-gen\",")
        lines.append("  \"capture\": \(quoted(capture)),")
        lines.append("  \"seed\": \(seed),")
        lines.append("  \"target_bytes\": \(targetBytes),")
        lines.append("  \"file_bytes\": \(fileBytes),")
        lines.append("  \"packets\": \(packets),")
        lines.append("  \"connections\": \(connections),")
        lines.append("  \"first_packet_us\": \(firstTime),")
        lines.append("  \"last_packet_us\": \(lastTime),")
        lines.append("  \"link_type\": \"EN10MB\",")
        lines.append("  \"tcp_mss_payload\": \(FrameBuilder.mss),")
        if let tls {
            // `--tls`: what the capture's TLS layer holds; the key log's path is relative to the manifest's.
            lines.append("  \"tls\": {" + tls.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "},")
        }
        if let quic {
            // `--quic`: the expected QUIC and HTTP/3 totals; the records' sizes are in "totals" and the groups.
            lines.append("  \"quic\": {" + quic.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "},")
        } else if http2 {
            // `--h2`: the expected HTTP/2 totals (the records' header and DATA frame bytes are in "totals").
            let h = self.http2
            let frames = zip(HTTP2Totals.frameNames, h.frames).map { "\(quoted($0)): \($1)" }.joined(separator: ", ")
            let fields = [
                "\"connections\": \(h.connections)", "\"streams\": \(h.streams)",
                "\"request_records\": \(all.requests)", "\"response_records\": \(all.responses)",
                "\"header_bytes\": \(all.requestHeadBytes + all.responseHeadBytes)",
                "\"header_decoded_bytes\": \(all.requestHeaderDecodedBytes + all.responseHeaderDecodedBytes)",
                "\"data_frame_bytes\": \(all.requestBodyBytes + all.responseBodyBytes)",
                "\"data_payload_bytes\": \(all.requestEncodedBodyBytes + all.responseEncodedBodyBytes)",
                "\"h2_control_bytes\": \(h.clientControlBytes + h.serverControlBytes)",
                "\"client_to_server_h2_control_bytes\": \(h.clientControlBytes)",
                "\"server_to_client_h2_control_bytes\": \(h.serverControlBytes)",
                "\"client_to_server_bytes\": \(h.clientBytes)", "\"server_to_client_bytes\": \(h.serverBytes)",
                "\"frames\": {\(frames)}",
            ]
            lines.append("  \"http2\": {" + fields.joined(separator: ", ") + "},")
        }
        lines.append("  \"totals\": \(object(all, indent: "  ", tls: tls != nil, http2: http2)),")
        lines.append("  \"endpoints\": [")
        let keys = endpoints.keys.sorted()
        for (index, key) in keys.enumerated() {
            let body = object(
                endpoints[key]!, indent: "    ", host: key.host, path: key.path, tls: tls != nil, http2: http2)
            lines.append("    " + body + (index == keys.count - 1 ? "" : ","))
        }
        lines.append("  ]")
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private func object(
        _ t: Totals, indent: String, host: String? = nil, path: String? = nil, tls: Bool, http2: Bool = false
    ) -> String {
        var fields: [String] = []
        if let host { fields.append("\"host\": \(quoted(host))") }
        if let path { fields.append("\"path\": \(quoted(path))") }
        let methods = t.methods.keys.sorted().map { "\(quoted($0)): \(t.methods[$0]!)" }.joined(separator: ", ")
        let statuses = t.statuses.keys.sorted().map { "\"\($0)\": \(t.statuses[$0]!)" }.joined(separator: ", ")
        fields += [
            "\"requests\": \(t.requests)", "\"responses\": \(t.responses)",
            "\"methods\": {\(methods)}", "\"statuses\": {\(statuses)}",
            "\"distinct_paths\": \(t.rawPaths.count)",
            "\"request_transfer_bytes\": \(t.requestTransferBytes)",
            "\"request_head_bytes\": \(t.requestHeadBytes)",
            "\"request_cookie_bytes\": \(t.requestCookieBytes)",
            "\"request_body_bytes\": \(t.requestBodyBytes)",
            "\"request_encoded_body_bytes\": \(t.requestEncodedBodyBytes)",
            "\"request_decoded_body_bytes\": \(t.requestDecodedBodyBytes)",
            "\"response_transfer_bytes\": \(t.responseTransferBytes)",
            "\"response_head_bytes\": \(t.responseHeadBytes)",
            "\"response_cookie_bytes\": \(t.responseCookieBytes)",
            "\"response_body_bytes\": \(t.responseBodyBytes)",
            "\"response_encoded_body_bytes\": \(t.responseEncodedBodyBytes)",
            "\"response_decoded_body_bytes\": \(t.responseDecodedBodyBytes)",
            "\"gzip_responses\": \(t.gzipResponses)",
            "\"chunked_messages\": \(t.chunkedMessages)",
        ]
        if tls { fields.append("\"tls_overhead_bytes\": \(t.tlsOverheadBytes)") }
        if http2 {
            fields += [
                "\"request_header_decoded_bytes\": \(t.requestHeaderDecodedBytes)",
                "\"request_cookie_decoded_bytes\": \(t.requestCookieDecodedBytes)",
                "\"response_header_decoded_bytes\": \(t.responseHeaderDecodedBytes)",
                "\"response_cookie_decoded_bytes\": \(t.responseCookieDecodedBytes)",
                "\"request_data_frames\": \(t.requestDataFrames)",
                "\"response_data_frames\": \(t.responseDataFrames)",
            ]
        }
        if host == nil { fields.removeAll { $0.hasPrefix("\"distinct_paths\"") } }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
