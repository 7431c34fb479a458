/// Builds an HTTP/1.1 start line and header block, counting the cookie lines.
struct MessageHead {
    private(set) var bytes: [UInt8] = []
    private(set) var cookieBytes = 0

    init(_ startLine: String) {
        bytes.reserveCapacity(512)
        bytes.append(contentsOf: startLine.utf8)
        bytes.append(contentsOf: [13, 10])
    }

    mutating func field(_ name: String, _ value: String) {
        let before = bytes.count
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: [58, 32])  // ": "
        bytes.append(contentsOf: value.utf8)
        bytes.append(contentsOf: [13, 10])
        if name == "Cookie" || name == "Set-Cookie" { cookieBytes += bytes.count - before }
    }

    /// Appends the empty line that ends the header block.
    mutating func end() -> [UInt8] {
        bytes.append(contentsOf: [13, 10])
        return bytes
    }
}

/// A message's header fields in HTTP/1.1 order, rendered as an HTTP/1.1 head or as an HTTP/2 field list.
struct FieldList {
    private var items: [(name: String, value: String, http1Only: Bool)] = []

    init() { items.reserveCapacity(16) }

    /// `http1Only`: `Host` (HTTP/2 has `:authority`), connection-specific fields and `Transfer-Encoding`, which
    /// HTTP/2 forbids (RFC 9113 §8.2.2).
    mutating func add(_ name: String, _ value: String, http1Only: Bool = false) {
        items.append((name, value, http1Only))
    }

    /// The start line, the fields and the empty line, and the bytes of the `Cookie`/`Set-Cookie` lines.
    func http1Head(_ startLine: String) -> (bytes: [UInt8], cookieBytes: Int) {
        var head = MessageHead(startLine)
        for item in items { head.field(item.name, item.value) }
        let bytes = head.end()
        return (bytes, head.cookieBytes)
    }

    /// The request's pseudo-header fields in the client's order, then its fields. Browsers send each cookie
    /// crumb as a field of its own (RFC 9113 §8.2.3), which compresses better.
    func http2Request(
        method: String, authority: String, path: String, profile: HTTP2ClientProfile, body: UnsafeRawBufferPointer
    ) -> HTTP2Message {
        var fields: [HTTP2Field] = []
        fields.reserveCapacity(items.count + 6)
        for name in profile.pseudoHeaderOrder {
            switch name {
            case ":method": fields.append(HTTP2Field(name: name, value: method))
            case ":authority": fields.append(HTTP2Field(name: name, value: authority))
            case ":scheme": fields.append(HTTP2Field(name: name, value: "http"))
            default: fields.append(HTTP2Field(name: name, value: path))
            }
        }
        for item in items where !item.http1Only {
            let name = Self.lowercased(item.name)
            if name == "cookie", profile.splitsCookies {
                for crumb in item.value.split(separator: ";") {
                    let value = crumb.hasPrefix(" ") ? String(crumb.dropFirst()) : String(crumb)
                    // nghttp2's rule (RFC 7541 §7.1.3): short crumbs are never indexed.
                    fields.append(
                        HTTP2Field(name: name, value: value, policy: value.utf8.count < 20 ? .neverIndexed : .index))
                }
                continue
            }
            fields.append(HTTP2Field(name: name, value: item.value, policy: Self.policy(name)))
        }
        return HTTP2Message(fields: fields, body: body, cookieName: "cookie")
    }

    func http2Response(status: Int, body: UnsafeRawBufferPointer) -> HTTP2Message {
        var fields = [HTTP2Field(name: ":status", value: String(status))]
        fields.reserveCapacity(items.count + 1)
        for item in items where !item.http1Only {
            let name = Self.lowercased(item.name)
            fields.append(HTTP2Field(name: name, value: item.value, policy: Self.policy(name)))
        }
        return HTTP2Message(fields: fields, body: body, cookieName: "set-cookie")
    }

    /// `authorization` is never indexed (a secret: RFC 7541 §7.1.3); `x-request-id` is new in every message,
    /// so indexing it would only evict useful entries.
    private static func policy(_ name: String) -> HPACKEncoder.Policy {
        switch name {
        case "authorization": .neverIndexed
        case "x-request-id": .withoutIndexing
        default: .index
        }
    }

    private static let lowerCaseNames: [String: String] = {
        var names: [String: String] = [:]
        for name in [
            "User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Content-Type",
            "Content-Length", "Cookie", "X-Request-ID", "Server", "Date", "Content-Encoding", "Vary", "ETag",
            "Cache-Control", "Location", "If-None-Match", "Accept-Ranges", "Content-Disposition", "Set-Cookie",
        ] { names[name] = name.lowercased() }
        return names
    }()

    private static func lowercased(_ name: String) -> String { lowerCaseNames[name] ?? name.lowercased() }
}

/// An IMF-fixdate (RFC 9110 §5.6.7), e.g. `Fri, 01 Mar 2024 12:00:00 GMT`.
func httpDate(secondsSinceEpoch: UInt64) -> String {
    let days = Int(secondsSinceEpoch / 86_400)
    let secondsOfDay = Int(secondsSinceEpoch % 86_400)
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468
    let era = z / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(weekdays[days % 7]), \(two(day)) \(months[month - 1]) \(year) "
        + "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
}
