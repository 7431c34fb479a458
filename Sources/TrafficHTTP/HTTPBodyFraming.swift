import TrafficSessions
/// How a message body is delimited (RFC 9112 §6.3), decided once the head is complete.
enum HTTPBodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
    /// The body ends when the connection closes (RFC 9112 §6.3 item 8).
    case untilClose

    /// What `Content-Length` says: RFC 9110 §8.6 allows a list of identical values.
    enum ContentLength: Equatable { case absent, valid(Int), malformed }

    /// Parses the comma-joined values of every `Content-Length` line. Leading zeros are fine; a sign, a
    /// non-digit, an empty list, differing values or a value above `Int.max` (2^63 − 1) are malformed.
    static func contentLength(_ list: String?) -> ContentLength {
        guard let list else { return .absent }
        if let single = singleLength(list) { return .valid(single) }
        var result: Int? = nil
        for element in list.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            var digits = element[...]
            while let f = digits.first, HTTPBytes.isWhitespace(f) { digits = digits.dropFirst() }
            while let l = digits.last, HTTPBytes.isWhitespace(l) { digits = digits.dropLast() }
            if digits.isEmpty { continue }  // `5,` or `, 5`: lenient, like tshark
            var value = 0
            for b in digits {
                let d = b &- UInt8(ascii: "0")
                guard d < 10 else { return .malformed }
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(Int(d))
                guard !o1, !o2 else { return .malformed }
                value = s
            }
            if let r = result, r != value { return .malformed }
            result = value
        }
        guard let result else { return .malformed }
        return .valid(result)
    }

    /// The common case, one plain run of at most 18 digits (no overflow possible), without splitting.
    private static func singleLength(_ list: String) -> Int? {
        list.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
            var value = 0
            for b in bytes {
                let d = b &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                value = value * 10 + Int(d)
            }
            return value
        } ?? nil
    }

    /// Whether `chunked` is the last transfer coding (RFC 9112 §6.3 items 3 and 4).
    static func isChunkedLast(_ list: String) -> Bool {
        if list == "chunked" { return true }
        let last = list.utf8.split(separator: UInt8(ascii: ",")).last { element in
            element.contains { !HTTPBytes.isWhitespace($0) }
        }
        guard let last else { return false }
        var token = last[...]
        while let f = token.first, HTTPBytes.isWhitespace(f) { token = token.dropFirst() }
        while let l = token.last, HTTPBytes.isWhitespace(l) { token = token.dropLast() }
        guard token.count == 7 else { return false }
        return zip(token, "chunked".utf8).allSatisfy { HTTPBytes.lower($0) == $1 }
    }

    /// Request framing (RFC 9112 §6.3 items 3–7). A malformed `Content-Length` gives no body: a server
    /// would answer 400 and close, so the bytes after the head are not trusted as a body; they are
    /// resynchronised over (non-HTTP bytes) until the next request line.
    ///
    /// Only what `Content-Length` says and the coding list are passed: copying the whole `HTTPHeadFields`
    /// retains every string in it.
    static func forRequest(
        contentLength length: ContentLength, transferEncoding: String?, record: inout MessageRecord
    ) -> HTTPBodyFraming {
        if let te = transferEncoding {
            if length != .absent { record.flag(.teAndCL) }
            if isChunkedLast(te) { return .chunked }
            // Item 4: a request whose last coding is not chunked has no determinable length; the
            // only safe reading is that the rest of the client stream is its body.
            record.flag(.malformedLength)
            return .untilClose
        }
        switch length {
        case .absent, .valid(0): return .none
        case .valid(let n): return .length(n)
        case .malformed:
            record.flag(.malformedLength)
            return .none
        }
    }

    /// `method == "HEAD"`, length and first byte first: `==` calls the out-of-line string comparison whenever the
    /// bits differ (every GET and POST, once a response). A method is a token (ASCII).
    @inline(__always)
    static func isHEAD(_ method: String) -> Bool {
        method.utf8.count == 4 && method.utf8.first == UInt8(ascii: "H") && method == "HEAD"
    }

    /// Response framing (RFC 9112 §6.3 items 1–8) given the method of the request it answers
    /// (`GET` when unknown). A malformed `Content-Length` makes the body close-delimited, as Zeek and
    /// tshark do: nothing after it can be trusted to be a new response.
    static func forResponse(
        status: Int, requestMethod: String, contentLength length: ContentLength, transferEncoding: String?,
        record: inout MessageRecord
    ) -> HTTPBodyFraming {
        if status < 200 || status == 204 || status == 304 || isHEAD(requestMethod) { return .none }
        if status < 300, HTTPConnectionParser.isCONNECT(requestMethod) { return .none }
        if let te = transferEncoding {
            if length != .absent { record.flag(.teAndCL) }
            return isChunkedLast(te) ? .chunked : .untilClose
        }
        switch length {
        case .absent: return .untilClose
        case .valid(0): return .none
        case .valid(let n): return .length(n)
        case .malformed:
            record.flag(.malformedLength)
            return .untilClose
        }
    }
}
