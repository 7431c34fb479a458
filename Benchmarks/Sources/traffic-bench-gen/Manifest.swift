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
        }
    }

    struct Key: Hashable, Comparable {
        var host: String
        var path: String
        static func < (a: Key, b: Key) -> Bool { (a.host, a.path) < (b.host, b.path) }
    }

    var endpoints: [Key: Totals] = [:]
    var connections = 0

    /// The manifest as JSON, keys in a fixed order and endpoints sorted by host then path.
    func json(
        capture: String, seed: UInt64, targetBytes: Int, fileBytes: Int, packets: Int,
        firstTime: UInt64, lastTime: UInt64, tls: [(String, String)]? = nil
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
        lines.append("  \"totals\": \(object(all, indent: "  ", tls: tls != nil)),")
        lines.append("  \"endpoints\": [")
        let keys = endpoints.keys.sorted()
        for (index, key) in keys.enumerated() {
            let body = object(endpoints[key]!, indent: "    ", host: key.host, path: key.path, tls: tls != nil)
            lines.append("    " + body + (index == keys.count - 1 ? "" : ","))
        }
        lines.append("  ]")
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private func object(_ t: Totals, indent: String, host: String? = nil, path: String? = nil, tls: Bool) -> String {
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
