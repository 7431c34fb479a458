/// The few header values a record or the framing needs, gathered as field lines are parsed.
///
/// Values are raw (trimmed) text; `String`s are made only for these names, once per line.
struct HTTPHeadFields {
    /// Field names this parser cares about (RFC 9110 §5.1: case-insensitive).
    enum Name {
        case other, cookie, host, contentType, contentEncoding, transferEncoding, contentLength, upgrade

        /// Classifies by length, then compares whole words: each is loaded unaligned, OR-ed with 0x20 at the
        /// letter positions only, and compared with the lower-case name. `b | 0x20 == l` holds for a letter `l`
        /// exactly when `b` is `l` or its upper case, and `-` is compared as is, so this is the exact
        /// case-insensitive match of RFC 9110 §5.1 (no byte such as CR folds onto `-`), in two or three
        /// compares instead of a loop per byte. Names of 8 bytes or more use overlapping 8-byte words.
        /// The constants are the little-endian words of the names (checked against a byte-by-byte reference in `HTTPHeadFastPathTests`).
        @inline(__always)
        static func classify(_ name: UnsafeRawBufferPointer) -> Name {
            guard let p = name.baseAddress else { return .other }
            switch name.count {
            case 4:
                return word32(p, 0) | 0x2020_2020 == 0x7473_6F68 ? .host : .other  // "host"
            case 6:
                return word32(p, 0) | 0x2020_2020 == 0x6B6F_6F63  // "cook"
                    && word32(p, 2) | 0x2020_2020 == 0x6569_6B6F ? .cookie : .other  // "okie"
            case 7:
                return word32(p, 0) | 0x2020_2020 == 0x7267_7075  // "upgr"
                    && word32(p, 3) | 0x2020_2020 == 0x6564_6172 ? .upgrade : .other  // "rade"
            case 10:
                return word64(p, 0) | 0x2020_2020_0020_2020 == 0x6B6F_6F63_2D74_6573  // "set-cook"
                    && word64(p, 2) | 0x2020_2020_2020_0020 == 0x6569_6B6F_6F63_2D74 ? .cookie : .other  // "t-cookie"
            case 12:
                return word64(p, 0) | 0x0020_2020_2020_2020 == 0x2D74_6E65_746E_6F63  // "content-"
                    && word64(p, 4) | 0x2020_2020_0020_2020 == 0x6570_7974_2D74_6E65 ? .contentType : .other  // "ent-type"
            case 14:
                return word64(p, 0) | 0x0020_2020_2020_2020 == 0x2D74_6E65_746E_6F63  // "content-"
                    && word64(p, 6) | 0x2020_2020_2020_0020 == 0x6874_676E_656C_2D74 ? .contentLength : .other  // "t-length"
            case 16:
                return word64(p, 0) | 0x0020_2020_2020_2020 == 0x2D74_6E65_746E_6F63  // "content-"
                    && word64(p, 8) | 0x2020_2020_2020_2020 == 0x676E_6964_6F63_6E65 ? .contentEncoding : .other  // "encoding"
            case 17:
                return word64(p, 0) | 0x2020_2020_2020_2020 == 0x7265_6673_6E61_7274  // "transfer"
                    && p.load(fromByteOffset: 8, as: UInt8.self) == UInt8(ascii: "-")
                    && word64(p, 9) | 0x2020_2020_2020_2020 == 0x676E_6964_6F63_6E65 ? .transferEncoding : .other  // "encoding"
            default: return .other
            }
        }

        @inline(__always)
        private static func word32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
            UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }

        @inline(__always)
        private static func word64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
            UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }

    }

    /// The request target, split at the start line (RFC 9112 §3.2).
    var target: HTTPRequestTarget?
    var host: String?
    /// `host` as `HTTPTarget.normalizedHost` makes it (nil when `host` is nil or empty): kept in step with
    /// `host`, so a keep-alive connection repeating its `Host` reuses the last one instead of normalising.
    var normalizedHost: String?
    var contentType: String?
    /// First `Content-Encoding` value, as the record reports it.
    var contentEncoding: String?
    /// Every `Content-Encoding` value joined with commas: codings apply in header order (RFC 9110 §8.4).
    var contentEncodingList: String?
    var transferEncoding: String?
    var transferEncodingList: String?
    /// Every `Content-Length` value joined with commas, judged at the end of the head (RFC 9110 §8.6);
    /// nil while the only line so far is held in `contentLengthValue`.
    var contentLengthList: String?
    /// The common case, a single `Content-Length` line of 1 to 18 plain digits (no overflow possible),
    /// kept as its value and digit count instead of a string (-1: none); a second line or an obs-fold
    /// turns it back into the list text (`spellContentLength`).
    var contentLengthValue = -1
    var contentLengthDigits = 0
    var upgrade: String?

    /// Field lines seen (continuation lines excluded).
    var fieldCount = 0
    /// The field an obs-fold continuation line extends (RFC 9112 §5.2), and whether it was that name's first line.
    var lastName: Name?
    var lastWasFirst = false

    /// What the `Content-Length` lines say, from `contentLengthValue` and `contentLengthList`: static, as
    /// the caller reads the two stored properties in place (a computed property of `HTTPHeadFields` held by
    /// a class copies the whole struct first, retaining each of its strings).
    static func contentLength(value: Int, list: String?) -> HTTPBodyFraming.ContentLength {
        value >= 0 ? .valid(value) : HTTPBodyFraming.contentLength(list)
    }

    /// Empties the fields in place for the next message. Assigning `HTTPHeadFields()` destroys all nine
    /// optional strings through their type's value witnesses (~290 instructions a message); most are nil.
    ///
    /// `keepingTarget`: the caller assigns `target` right after (a request's start line), which then releases
    /// the old one: clearing it first cost a second outlined destruction, of the nil.
    mutating func clear(keepingTarget: Bool = false) {
        if !keepingTarget, target != nil { target = nil }
        if host != nil { host = nil }
        if normalizedHost != nil { normalizedHost = nil }
        if contentType != nil { contentType = nil }
        if contentEncoding != nil { contentEncoding = nil }
        if contentEncodingList != nil { contentEncodingList = nil }
        if transferEncoding != nil { transferEncoding = nil }
        if transferEncodingList != nil { transferEncodingList = nil }
        if contentLengthList != nil { contentLengthList = nil }
        contentLengthValue = -1
        contentLengthDigits = 0
        if upgrade != nil { upgrade = nil }
        fieldCount = 0
        lastName = nil
        lastWasFirst = false
    }

    /// Stores the first `Host` line's value with its normalised form (`HTTPTarget.normalizedHost`, nil for
    /// an empty value); a later `Host` line is ignored, as by `store`.
    /// The values are consumed: moved in, not retained again (the caller's were the retains they need).
    mutating func storeHost(_ value: consuming String, normalized: consuming String?) {
        lastName = .host
        lastWasFirst = false
        guard host == nil else { return }
        host = value
        normalizedHost = normalized
        lastWasFirst = true
    }

    /// Stores a `Content-Length` value given as bytes: a first line of plain digits as a number, anything
    /// else as text (`store`).
    mutating func storeContentLength(_ value: UnsafeRawBufferPointer) {
        if contentLengthValue < 0, contentLengthList == nil, let n = Self.plainDigits(value) {
            contentLengthValue = n
            contentLengthDigits = value.count
            lastName = .contentLength
            lastWasFirst = false
            return
        }
        store(.contentLength, value: HTTPBytes.string(value))
    }

    /// The value of 1 to 18 ASCII digits, else nil.
    private static func plainDigits(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for b in bytes {
            let d = b &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            value = value &* 10 &+ Int(d)
        }
        return value
    }

    /// Turns a `contentLengthValue` back into the text of its line (leading zeros included) in
    /// `contentLengthList`, before another line or a fold is added to it.
    private mutating func spellContentLength() {
        guard contentLengthValue >= 0 else { return }
        let digits = String(contentLengthValue)
        contentLengthList = String(repeating: "0", count: max(0, contentLengthDigits - digits.utf8.count)) + digits
        contentLengthValue = -1
        contentLengthDigits = 0
    }

    /// Stores the value of a field line whose name was classified as `name`. `value` is consumed: moved into
    /// its field, not retained again and released by the caller.
    mutating func store(_ name: Name, value: consuming String) {
        lastName = name
        lastWasFirst = false
        switch name {
        case .other, .cookie: return
        case .host:
            if host == nil {
                host = value
                normalizedHost = value.isEmpty ? nil : HTTPTarget.normalizedHost(value, defaultPort: "80")
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
            spellContentLength()
            contentLengthList = Self.joined(contentLengthList, value)
        }
    }

    /// Appends an obs-fold continuation to the last field; RFC 9112 §5.2 replaces the fold with one SP.
    mutating func extend(with value: String) {
        guard let name = lastName, !value.isEmpty else { return }
        func fold(_ s: inout String?) { if let v = s { s = v.isEmpty ? value : v + " " + value } }
        switch name {
        case .other, .cookie: return
        case .host:
            if lastWasFirst {
                fold(&host)
                normalizedHost = host.flatMap { $0.isEmpty ? nil : HTTPTarget.normalizedHost($0, defaultPort: "80") }
            }
        case .contentType: if lastWasFirst { fold(&contentType) }
        case .upgrade: if lastWasFirst { fold(&upgrade) }
        case .contentEncoding:
            if lastWasFirst { fold(&contentEncoding) }
            fold(&contentEncodingList)
        case .transferEncoding:
            if lastWasFirst { fold(&transferEncoding) }
            fold(&transferEncodingList)
        case .contentLength:
            spellContentLength()
            fold(&contentLengthList)
        }
    }

    private static func joined(_ list: String?, _ value: String) -> String {
        guard let list else { return value }
        return list + "," + value
    }
}
