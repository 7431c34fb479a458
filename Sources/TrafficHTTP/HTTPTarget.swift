/// A request target as the start line gave it (RFC 9112 §3.2), split once from the line's bytes.
///
/// A struct of plain fields, not an enum with payloads: inside `HTTPStartLine` a nested payload enum made
/// every start line's destruction go through generic value witnesses.
struct HTTPRequestTarget: Equatable {
    /// Origin form (`/path?query#fragment`), by far the commonest: `text` is the path and `query` the
    /// query (nil without `?`), the fragment dropped, exactly as `HTTPTarget.resolve` splits it. Any other
    /// form (absolute, authority, `*`, empty): `text` is the target as sent, resolved by `HTTPTarget.resolve`.
    var isOriginForm: Bool
    var text: String
    var query: String?

    static func origin(path: String, query: String?) -> HTTPRequestTarget {
        HTTPRequestTarget(isOriginForm: true, text: path, query: query)
    }

    static func other(_ text: String) -> HTTPRequestTarget {
        HTTPRequestTarget(isOriginForm: false, text: text, query: nil)
    }

    /// The target as text (the fragment of an origin-form target is gone): for tests.
    var joined: String { query.map { text + "?" + $0 } ?? text }
}

/// Host, path and query of a request, from its target (RFC 9112 §3.2) and `Host` field.
package struct HTTPTarget: Equatable {
    package var host: String
    package var path: String
    package var query: String?

    package init(host: String, path: String, query: String?) {
        self.host = host
        self.path = path
        self.query = query
    }

    /// - An absolute-form target (`http://h:8080/p?q`) wins over `Host` (RFC 9112 §3.2.2).
    /// - CONNECT's authority-form target is both host and path (tshark's `http.request.uri` shows it so);
    ///   an origin-form CONNECT target (`/`) is resolved like any other request's.
    /// - `OPTIONS *` has path `*`.
    /// - Without either, the host is `defaultHost` (the server address).
    /// Hosts are lower-cased and lose the scheme's default port (80, or 443 for https).
    package static func resolve(method: String?, target: String?, hostField: String?, defaultHost: String) -> HTTPTarget
    {
        var host: String? = nil
        if let h = hostField, !h.isEmpty { host = normalizedHost(h, defaultPort: "80") }
        return resolve(method: method, target: target, normalizedHost: host, defaultHost: defaultHost)
    }

    /// `resolve` for a target the start line split already (`HTTPRequestTarget`): origin form, the
    /// commonest, needs nothing more. `normalizedHost` is the `Host` field's (nil when absent or empty).
    static func resolve(
        method: String?, target: HTTPRequestTarget?, normalizedHost host: String?, defaultHost: String
    ) -> HTTPTarget {
        guard let target else { return HTTPTarget(host: host ?? defaultHost, path: "/", query: nil) }
        if target.isOriginForm { return HTTPTarget(host: host ?? defaultHost, path: target.text, query: target.query) }
        return resolve(method: method, target: target.text, normalizedHost: host, defaultHost: defaultHost)
    }

    private static func resolve(
        method: String?, target: String?, normalizedHost hostField: String?, defaultHost: String
    )
        -> HTTPTarget
    {
        var host = hostField
        guard let target else { return HTTPTarget(host: host ?? defaultHost, path: "/", query: nil) }
        // Only an authority-form target (`host:port`, RFC 9112 §3.2.3) names CONNECT's host; an origin-form
        // one (`CONNECT / HTTP/1.1`, invalid, in Zeek's methods.pcap) falls through to `Host` like any
        // other request instead of making `/` the host.
        if method == "CONNECT", target.utf8.first != UInt8(ascii: "/") {
            return HTTPTarget(host: normalizedHost(target, defaultPort: "80"), path: target, query: nil)
        }
        // Origin form (`/path?query`), by far the commonest: split on bytes, no string searching.
        if target.utf8.first == UInt8(ascii: "/") { return originForm(target, host: host ?? defaultHost) }
        var rest = target[...]
        if let schemeEnd = target.firstRange(of: "://"), schemeEnd.lowerBound > target.startIndex,
            target[..<schemeEnd.lowerBound].allSatisfy(isSchemeChar)
        {
            let scheme = target[..<schemeEnd.lowerBound].lowercased()
            let afterScheme = target[schemeEnd.upperBound...]
            let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
            var authority = afterScheme[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            if !authority.isEmpty {
                host = normalizedHost(String(authority), defaultPort: scheme == "https" ? "443" : "80")
            }
            rest = afterScheme[authorityEnd...]
            if rest.isEmpty || rest.first == "?" { rest = "/" + rest }
        }
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        var path = rest
        var query: Substring? = nil
        if let q = rest.firstIndex(of: "?") {
            path = rest[..<q]
            query = rest[rest.index(after: q)...]
        }
        return HTTPTarget(host: host ?? defaultHost, path: String(path), query: query.map(String.init))
    }

    private static func originForm(_ target: String, host: String) -> HTTPTarget {
        // Byte offsets of `?` and `#` first (String indices are slow to walk); most targets have neither
        // and are the path as they are, without a copy.
        var end = -1
        var question = -1
        let scanned: Void? = target.utf8.withContiguousStorageIfAvailable { bytes in
            for (i, byte) in bytes.enumerated() {
                if byte == UInt8(ascii: "#") {
                    end = i
                    break
                }
                if byte == UInt8(ascii: "?"), question < 0 { question = i }
            }
        }
        guard scanned != nil else { return slowOriginForm(target, host: host) }
        if end < 0 {
            if question < 0 { return HTTPTarget(host: host, path: target, query: nil) }
            end = target.utf8.count
        }
        let utf8 = target.utf8
        let endIndex = utf8.index(utf8.startIndex, offsetBy: end)
        guard question >= 0, question < end else {
            return HTTPTarget(host: host, path: String(target[..<endIndex]), query: nil)
        }
        let questionIndex = utf8.index(utf8.startIndex, offsetBy: question)
        return HTTPTarget(
            host: host, path: String(target[..<questionIndex]),
            query: String(target[utf8.index(after: questionIndex)..<endIndex]))
    }

    private static func slowOriginForm(_ target: String, host: String) -> HTTPTarget {
        let utf8 = target.utf8
        var end = utf8.endIndex
        var question: String.Index?
        for i in utf8.indices {
            let byte = utf8[i]
            if byte == UInt8(ascii: "#") {
                end = i
                break
            }
            if byte == UInt8(ascii: "?"), question == nil { question = i }
        }
        guard let question, question < end else { return HTTPTarget(host: host, path: String(target[..<end]), query: nil) }
        return HTTPTarget(
            host: host, path: String(target[..<question]), query: String(target[utf8.index(after: question)..<end]))
    }

    /// Lower-cases and drops an empty or default port (`Example.COM:80` → `example.com`, `[::1]:80` → `[::1]`).
    package static func normalizedHost(_ raw: String, defaultPort: String) -> String {
        // The common case, a lower-case name without a port, needs no work.
        let plain = raw.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 == UInt8(ascii: ":") || ($0 >= 0x41 && $0 <= 0x5a) || $0 >= 0x80 }
        }
        if plain == true { return raw }
        let host = raw.lowercased()
        let portSeparator: String.Index?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return host }
            let after = host.index(after: close)
            portSeparator = after < host.endIndex && host[after] == ":" ? after : nil
        } else {
            // One colon separates a port; several would be an unbracketed IPv6 literal: leave it.
            let colons = host.indices.filter { host[$0] == ":" }
            portSeparator = colons.count == 1 ? colons[0] : nil
        }
        guard let separator = portSeparator else { return host }
        let port = host[host.index(after: separator)...]
        if port.isEmpty || port == defaultPort { return String(host[..<separator]) }
        return host
    }

    private static func isSchemeChar(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "+" || c == "-" || c == ".")
    }
}
