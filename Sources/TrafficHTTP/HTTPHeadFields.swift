/// The few header values a record or the framing needs, gathered as field lines are parsed.
///
/// Values are raw (trimmed) text; `String`s are made only for these names, once per line.
struct HTTPHeadFields {
    /// Field names this parser cares about (RFC 9110 §5.1: case-insensitive).
    enum Name {
        case other, cookie, host, contentType, contentEncoding, transferEncoding, contentLength, upgrade

        static func classify(_ name: UnsafeRawBufferPointer) -> Name {
            // The first letter settles most names (Accept, Date, Server, User-Agent…) before any comparison.
            guard let first = name.first else { return .other }
            switch HTTPBytes.lower(first) {
            case UInt8(ascii: "h"), UInt8(ascii: "c"), UInt8(ascii: "u"), UInt8(ascii: "s"), UInt8(ascii: "t"): break
            default: return .other
            }
            switch name.count {
            case 4: return HTTPBytes.equalsLowercase(name, "host") ? .host : .other
            case 6: return HTTPBytes.equalsLowercase(name, "cookie") ? .cookie : .other
            case 7: return HTTPBytes.equalsLowercase(name, "upgrade") ? .upgrade : .other
            case 10: return HTTPBytes.equalsLowercase(name, "set-cookie") ? .cookie : .other
            case 12: return HTTPBytes.equalsLowercase(name, "content-type") ? .contentType : .other
            case 14: return HTTPBytes.equalsLowercase(name, "content-length") ? .contentLength : .other
            case 16: return HTTPBytes.equalsLowercase(name, "content-encoding") ? .contentEncoding : .other
            case 17: return HTTPBytes.equalsLowercase(name, "transfer-encoding") ? .transferEncoding : .other
            default: return .other
            }
        }
    }

    var target: String?
    var host: String?
    var contentType: String?
    /// First `Content-Encoding` value, as the record reports it.
    var contentEncoding: String?
    /// Every `Content-Encoding` value joined with commas: codings apply in header order (RFC 9110 §8.4).
    var contentEncodingList: String?
    var transferEncoding: String?
    var transferEncodingList: String?
    /// Every `Content-Length` value joined with commas, judged at the end of the head (RFC 9110 §8.6).
    var contentLengthList: String?
    var upgrade: String?

    /// Field lines seen (continuation lines excluded).
    var fieldCount = 0
    /// The field an obs-fold continuation line extends (RFC 9112 §5.2), and whether it was that name's first line.
    var lastName: Name?
    var lastWasFirst = false

    /// Empties the fields in place for the next message. Assigning `HTTPHeadFields()` destroys all nine
    /// optional strings through their type's value witnesses (~290 instructions a message); most are nil.
    mutating func clear() {
        if target != nil { target = nil }
        if host != nil { host = nil }
        if contentType != nil { contentType = nil }
        if contentEncoding != nil { contentEncoding = nil }
        if contentEncodingList != nil { contentEncodingList = nil }
        if transferEncoding != nil { transferEncoding = nil }
        if transferEncodingList != nil { transferEncodingList = nil }
        if contentLengthList != nil { contentLengthList = nil }
        if upgrade != nil { upgrade = nil }
        fieldCount = 0
        lastName = nil
        lastWasFirst = false
    }

    /// Stores the value of a field line whose name was classified as `name`.
    mutating func store(_ name: Name, value: String) {
        lastName = name
        lastWasFirst = false
        switch name {
        case .other, .cookie: return
        case .host:
            if host == nil {
                host = value
                lastWasFirst = true
            }
        case .contentType:
            if contentType == nil {
                contentType = value
                lastWasFirst = true
            }
        case .upgrade:
            if upgrade == nil {
                upgrade = value
                lastWasFirst = true
            }
        case .contentEncoding:
            if contentEncoding == nil {
                contentEncoding = value
                lastWasFirst = true
            }
            contentEncodingList = Self.joined(contentEncodingList, value)
        case .transferEncoding:
            if transferEncoding == nil {
                transferEncoding = value
                lastWasFirst = true
            }
            transferEncodingList = Self.joined(transferEncodingList, value)
        case .contentLength:
            contentLengthList = Self.joined(contentLengthList, value)
        }
    }

    /// Appends an obs-fold continuation to the last field; RFC 9112 §5.2 replaces the fold with one SP.
    mutating func extend(with value: String) {
        guard let name = lastName, !value.isEmpty else { return }
        func fold(_ s: inout String?) { if let v = s { s = v.isEmpty ? value : v + " " + value } }
        switch name {
        case .other, .cookie: return
        case .host: if lastWasFirst { fold(&host) }
        case .contentType: if lastWasFirst { fold(&contentType) }
        case .upgrade: if lastWasFirst { fold(&upgrade) }
        case .contentEncoding:
            if lastWasFirst { fold(&contentEncoding) }
            fold(&contentEncodingList)
        case .transferEncoding:
            if lastWasFirst { fold(&transferEncoding) }
            fold(&transferEncodingList)
        case .contentLength: fold(&contentLengthList)
        }
    }

    private static func joined(_ list: String?, _ value: String) -> String {
        guard let list else { return value }
        return list + "," + value
    }
}
