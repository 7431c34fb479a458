import TrafficAggregation
import TrafficCapture
import TrafficSessions

/// `traffic analyze --format har`: one HAR 1.2 document (http://www.softwareishard.com/blog/har-12-spec/),
/// an entry per exchange, with the sizes of the `--messages` records and timings from packet times.
///
/// Written from the kept records (`TrafficReport.messages`, heads kept with `ReportOptions.keepHeads`) as
/// they are read: records are spooled to sorted runs as connections end and merged here, so neither the
/// records nor the document are ever whole in memory; an entry needs one exchange's records at a time.
/// Entries are in the listing's order (capture, connection, exchange), like `--messages`; HAR viewers
/// order by `startedDateTime` themselves. TLS records without keys are no exchanges and are left out.
///
/// Sizes (README "What is measured"): `headersSize` = line + header bytes, `bodySize` = body bytes as sent
/// (chunk framing included), `content.size` = decoded body bytes (-1 when decoding failed: never a guess),
/// `content.compression` = decoded − encoded, `_transferSize` = transfer bytes. Timings are in
/// milliseconds, exact to the nanosecond (`HARTimings`).
public struct HARDocument {
    public var report: TrafficReport
    public var creatorVersion: String
    /// `--overhead`: write `_wire_bytes` on requests and responses.
    public var overhead = false
    /// `--har-bodies`: write each request's kept body as `postData.text`.
    public var bodies = false

    public init(report: TrafficReport, creatorVersion: String) {
        self.report = report
        self.creatorVersion = creatorVersion
    }

    /// One exchange of the listing: its request and its responses (interim ones first), either may be missing.
    struct Exchange {
        var capture: Int
        var request: MessageRecord?
        var responses: [MessageRecord] = []
    }

    public func write(chunkBytes: Int = 1 << 20, to write: ByteSink) {
        var w = JSONWriter()
        w.beginObject()
        w.beginObject("log")
        w.field("version", "1.2")
        w.beginObject("creator")
        w.field("name", "traffic")
        w.field("version", creatorVersion)
        w.endObject()
        w.beginArray("entries")
        var current: Exchange?
        // Server-pushed streams (HTTP/2) met while `current` was gathered: each is an entry of its own (a pushed
        // stream's `index` is no client ordinal), its records kept together by stream, written after `current`
        // in the order they came: entries stay in the order of their first record.
        var pushed: [Exchange] = []
        func flush() {
            if let exchange = current { entry(exchange, to: &w) }
            for exchange in pushed { entry(exchange, to: &w) }
            current = nil
            pushed.removeAll()
            w.flush(over: chunkBytes, to: write)
        }
        for (capture, record) in report.messages ?? [] where record.kind != .tls && record.kind != .quic {
            if let open = current ?? pushed.first, let first = open.request ?? open.responses.first,
                open.capture != capture || first.connection != record.connection
            {
                flush()
            }
            if let stream = Self.pushedStream(record) {
                if let at = pushed.firstIndex(where: { Self.pushedStream($0.responses[0]) == stream }) {
                    pushed[at].responses.append(record)
                } else {
                    pushed.append(Exchange(capture: capture, responses: [record]))
                }
                continue
            }
            if let open = current, let first = open.request ?? open.responses.first, first.index != record.index {
                flush()
            }
            // Pushed streams listed before this exchange's first record come before it.
            if current == nil, !pushed.isEmpty { flush() }
            if current == nil { current = Exchange(capture: capture) }
            if record.kind == .request {
                // Two requests never share an exchange number; a second one is its own entry all the same.
                if current?.request != nil || current?.responses.isEmpty == false {
                    flush()
                    current = Exchange(capture: capture)
                }
                current?.request = record
            } else {
                current?.responses.append(record)
            }
        }
        flush()
        w.endArray()
        w.endObject()
        w.endObject()
        w.flush(over: 0, to: write)
        emit("\n", to: write)
    }

    private func entry(_ exchange: Exchange, to w: inout JSONWriter) {
        let response = exchange.responses.last
        guard let first = exchange.request ?? response else { return }
        let timings = HARTimings(request: exchange.request, response: response)
        w.beginObject()
        w.field("startedDateTime", timings.started.harDateTime)
        w.field("time", raw: HARTimings.milliseconds(timings.total))
        request(exchange.request, response: response, to: &w)
        self.response(response, to: &w)
        w.beginObject("cache")
        w.endObject()
        timings.write(to: &w)
        w.field("serverIPAddress", Self.address(first.server))
        w.field("connection", report.captures.count > 1 ? "\(exchange.capture):\(first.connection)" : "\(first.connection)")
        if exchange.request != nil, response == nil { w.field("_incomplete", true) }
        if exchange.request == nil {
            // A server push (HTTP/2) has no request on the wire, but its PUSH_PROMISE named it.
            if let response, Self.pushedStream(response) != nil { w.field("_pushed", true) } else { w.field("_unknown_request", true) }
        }
        if exchange.responses.count > 1 {
            // Interim (1xx) responses: their bytes are in no entry size; count and bytes say what they were.
            let interim = exchange.responses.dropLast()
            w.field("_interim_responses", interim.count)
            w.field("_interim_transfer_bytes", interim.reduce(0) { $0 + $1.transferBytes })
        }
        w.endObject()
    }

    private func request(_ record: MessageRecord?, response: MessageRecord?, to w: inout JSONWriter) {
        w.beginObject("request")
        guard let record else {
            // A response whose request was not captured (the capture started late, or a gap): method and
            // URL unknown, sizes unknown (-1, as HAR says).
            let host = response?.host ?? ""
            if let response, Self.pushedStream(response) != nil {
                // A pushed stream: the method and URL its PUSH_PROMISE gave (on its response record).
                w.field("method", response.method ?? "(unknown)")
                w.field("url", Self.url(response))
            } else {
                w.field("method", "(unknown)")
                w.field("url", "\(Self.scheme(response))://\(host)/(unknown)")
            }
            w.field("httpVersion", response?.version ?? "")
            w.beginArray("cookies")
            w.endArray()
            w.beginArray("headers")
            w.endArray()
            w.beginArray("queryString")
            w.endArray()
            w.field("headersSize", -1)
            w.field("bodySize", -1)
            w.endObject()
            return
        }
        let head = HARHead(record.head)
        w.field("method", record.method ?? "(unknown)")
        w.field("url", Self.url(record))
        w.field("httpVersion", record.version ?? "")
        Self.nameValues("cookies", head.requestCookies.map { ($0.name, $0.value) }, to: &w)
        Self.headers(head, to: &w)
        Self.nameValues("queryString", Self.queryPairs(record.query), to: &w)
        if record.bodyBytes + record.missingBytes > 0 {
            // Bodies are counted, not stored: `text` only with `--har-bodies` (the kept body, de-chunked, its content
            // coding as sent; binary-safe like the headers), else left out (HAR: text and params are alternatives).
            w.beginObject("postData")
            w.field("mimeType", record.contentType ?? "")
            if bodies {
                w.field("text", HARHead.text(record.body[...]))
                if record.flags.contains(.bodyLimit) { w.field("_body_cut", true) }
            }
            w.beginArray("params")
            w.endArray()
            w.endObject()
        }
        w.field("headersSize", record.lineBytes + record.headerBytes)
        w.field("bodySize", record.bodyBytes)
        extras(record, to: &w)
        w.endObject()
    }

    private func response(_ record: MessageRecord?, to w: inout JSONWriter) {
        w.beginObject("response")
        guard let record else {
            // No response was captured: HAR has no "none", so status 0 (what browsers write for a request
            // that got no answer) and sizes unknown; the entry says `_incomplete`.
            w.field("status", 0)
            w.field("statusText", "")
            w.field("httpVersion", "")
            w.beginArray("cookies")
            w.endArray()
            w.beginArray("headers")
            w.endArray()
            w.beginObject("content")
            w.field("size", 0)
            w.field("mimeType", "")
            w.endObject()
            w.field("redirectURL", "")
            w.field("headersSize", -1)
            w.field("bodySize", -1)
            w.endObject()
            return
        }
        let head = HARHead(record.head)
        w.field("status", record.status ?? 0)
        w.field("statusText", head.reasonPhrase)
        w.field("httpVersion", record.version ?? "")
        w.beginArray("cookies")
        for cookie in head.responseCookies {
            w.beginObject()
            w.field("name", cookie.name)
            w.field("value", cookie.value)
            if let path = cookie.path { w.field("path", path) }
            if let domain = cookie.domain { w.field("domain", domain) }
            if let expires = cookie.expires { w.field("_expires_as_sent", expires) }
            if cookie.httpOnly { w.field("httpOnly", true) }
            if cookie.secure { w.field("secure", true) }
            w.endObject()
        }
        w.endArray()
        Self.headers(head, to: &w)
        w.beginObject("content")
        w.field("size", record.decodedBodyBytes ?? -1)
        if let decoded = record.decodedBodyBytes { w.field("compression", decoded - record.encodedBodyBytes) }
        w.field("mimeType", record.contentType ?? "")
        w.endObject()
        w.field("redirectURL", head.values("location").first ?? "")
        w.field("headersSize", record.lineBytes + record.headerBytes)
        w.field("bodySize", record.bodyBytes)
        w.field("_transferSize", record.transferBytes)
        extras(record, to: &w)
        w.endObject()
    }

    /// Fields of either side beyond HAR's.
    private func extras(_ record: MessageRecord, to w: inout JSONWriter) {
        if let tls = Self.tlsOverheadBytes(record) { w.field("_tls_overhead_bytes", tls) }
        if overhead { w.field("_wire_bytes", record.wireBytes) }
        if !record.complete { w.field("_missing_bytes", record.missingBytes) }
        if record.flags.contains(.headerLimit) { w.field("_headers_cut", true) }
    }

    /// TLS record overhead of a decrypted message (headers, MACs, padding of its records); nil, and the field
    /// unwritten, for cleartext.
    static func tlsOverheadBytes(_ record: MessageRecord) -> Int? { record.decrypted ? record.tlsOverheadBytes : nil }

    /// The stream of a server-pushed record (flag `pushed`), nil for any other: a pushed stream is an entry of
    /// its own (its `index` is no client ordinal), its records kept together by stream.
    static func pushedStream(_ record: MessageRecord) -> Int? {
        record.flags.contains(.pushed) ? record.streamID ?? -1 : nil
    }

    /// `https` for a message read from decrypted TLS records, else `http`.
    static func scheme(_ record: MessageRecord?) -> String {
        record?.decrypted == true || record?.tlsHandshake != nil ? "https" : "http"
    }

    static func url(_ record: MessageRecord) -> String {
        let scheme = scheme(record)
        // CONNECT's target is an authority (RFC 9110 §9.3.6), the record's host.
        if record.method == "CONNECT" { return "\(scheme)://\(record.host)" }
        let path = record.path.hasPrefix("/") ? record.path : "/" + record.path
        return "\(scheme)://\(record.host)\(path)" + (record.query.map { "?" + $0 } ?? "")
    }

    /// `name=value` pairs of a query as sent (not percent-decoded: the bytes are what was measured).
    static func queryPairs(_ query: String?) -> [(String, String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (String(pair), "") }
            return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
        }
    }

    private static func headers(_ head: HARHead, to w: inout JSONWriter) {
        nameValues("headers", head.fields.map { ($0.name, $0.value) }, to: &w)
    }

    /// HAR's lists of `{"name", "value"}` objects (headers, cookies, query strings).
    private static func nameValues(_ key: String, _ pairs: [(String, String)], to w: inout JSONWriter) {
        w.beginArray(key)
        for (name, value) in pairs {
            w.beginObject()
            w.field("name", name)
            w.field("value", value)
            w.endObject()
        }
        w.endArray()
    }

    /// The address of `ip:port` or `[ipv6]:port`.
    static func address(_ endpoint: String) -> String {
        if endpoint.hasPrefix("["), let close = endpoint.firstIndex(of: "]") {
            return String(endpoint[endpoint.index(after: endpoint.startIndex)..<close])
        }
        guard let colon = endpoint.lastIndex(of: ":") else { return endpoint }
        return String(endpoint[..<colon])
    }
}

extension CaptureTime {
    /// ISO 8601 in UTC with the capture's precision: microseconds for a microsecond capture (libpcap hands
    /// every stamp over in nanoseconds; a multiple of 1000 is written with 6 digits), else nanoseconds.
    var harDateTime: String {
        let full = iso8601
        guard nanoseconds % 1000 == 0 else { return full }
        return String(full.dropLast(4)) + "Z"
    }
}
