#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request line or status line (RFC 9112 §3, §4), recognised from bytes; this is how HTTP is found on any port.
///
/// Beyond the grammar, the leniencies of Zeek's HTTP analyzer that real peers need are accepted, each
/// marked `nonstandard` (flag `nonstandard_start_line`): an HTTP-version in another case (`http/1.1`), a
/// request line without a target (`OPTIONS HTTP/1.1`: target empty), and a request version without its
/// minor digit (`GET / HTTP/1.`). Nothing else loosens: the method is a token, a version is `HTTP/1.`
/// (any case) and a digit, the status code three digits, so binary data does not pass for a start line.
enum HTTPStartLine {
    /// `method SP target SP HTTP/1.x`, or an HTTP/0.9 simple request `GET target` (RFC 1945 §4.1).
    case request(method: String, target: HTTPRequestTarget, version: String, nonstandard: Bool)
    /// `HTTP/1.x SP 3DIGIT [SP reason]`.
    case status(version: String, code: Int, nonstandard: Bool)

    var isNonstandard: Bool {
        switch self {
        case .request(_, _, _, let n), .status(_, _, let n): n
        }
    }

    static let http09 = "HTTP/0.9"

    /// Whether `version` is `http09`, by its bits: a parsed version is `HTTP/1.` and a digit, in some case
    /// (`versionKind`), so `HTTP/0.9` is only ever this literal, whose 8 bytes are a small string's inline
    /// bits. `==` compared the bits too, then called the full comparison for every other version.
    @inline(__always)
    static func isHTTP09(_ version: String) -> Bool { HTTPBytes.sameBits(version, http09) }

    /// What the first bytes of a line, before its end arrives, say about it being a start line.
    enum Sniff { case undecided, viable, rejected }

    /// Early rejection so a non-HTTP stream is not buffered up to `maxLineBytes` waiting for a line end:
    /// a request line starts with a short token and a space, a status line with `HTTP/1.`.
    static func sniff(_ prefix: UnsafeRawBufferPointer, request: Bool, maxMethodBytes: Int) -> Sniff {
        if request {
            for i in 0..<prefix.count {
                let b = prefix[i]
                if b == HTTPBytes.sp { return i > 0 ? .viable : .rejected }
                if !HTTPBytes.isTokenChar(b) || i >= maxMethodBytes { return .rejected }
            }
            return .undecided
        }
        let magic: StaticString = "http/1."
        let n = min(prefix.count, magic.utf8CodeUnitCount)
        for i in 0..<n where HTTPBytes.lower(prefix[i]) != magic.utf8Start[i] { return .rejected }
        return n == magic.utf8CodeUnitCount ? .viable : .undecided
    }

    /// Parses a whole line (line ending removed). Lenient like Zeek: several spaces between parts are
    /// accepted, trailing whitespace is ignored; only HTTP/1.x (and 0.9 requests) are recognised.
    static func parse(_ line: UnsafeRawBufferPointer, request: Bool, maxMethodBytes: Int) -> HTTPStartLine? {
        var end = line.count
        while end > 0, HTTPBytes.isWhitespace(line[end - 1]) { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: line[0..<end])
        return request ? parseRequest(line, maxMethodBytes: maxMethodBytes) : parseStatus(line)
    }

    private static func parseRequest(_ line: UnsafeRawBufferPointer, maxMethodBytes: Int) -> HTTPStartLine? {
        guard let base = line.baseAddress else { return nil }
        let count = line.count
        var i = 0
        // `GET ` and `POST ` (most requests) with one compare each: their method is a literal at once, with no
        // token loop and no `methodString` lookup.
        // (A flag, not an optional literal, which cost a release per request; the method's length tells which.)
        var known = false
        if count >= 5 {
            switch UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)) {
            case 0x2054_4547:  // "GET "
                i = 3
                known = true
            case 0x5453_4F50 where base.load(fromByteOffset: 4, as: UInt8.self) == HTTPBytes.sp:  // "POST "
                i = 4
                known = true
            default: break
            }
        }
        if !known {
            while i < count, HTTPBytes.isTokenChar(base.load(fromByteOffset: i, as: UInt8.self)) { i += 1 }
        }
        guard i > 0, i <= maxMethodBytes, i < count, line[i] == HTTPBytes.sp else { return nil }
        let method = UnsafeRawBufferPointer(rebasing: line[0..<i])
        while i < count, line[i] == HTTPBytes.sp { i += 1 }
        let targetStart = i
        var targetEnd = count
        var version: String? = nil
        var nonstandard = false
        if count - targetStart >= 9, line[count - 9] == HTTPBytes.sp,
            let standard = standardVersion(UnsafeRawBufferPointer(rebasing: line[(count - 8)...]))
        {
            // The common line ends in ` HTTP/1.1` or ` HTTP/1.0`: that space is the last one, as the general
            // search below would find, without walking back to it or judging the version byte by byte.
            version = standard
            targetEnd = count - 9
            while targetEnd > targetStart, line[targetEnd - 1] == HTTPBytes.sp { targetEnd -= 1 }
        } else {
            // The version is the last space-separated part; a target with no version is HTTP/0.9.
            var lastSpace = count - 1
            while lastSpace >= targetStart, line[lastSpace] != HTTPBytes.sp { lastSpace -= 1 }
            if lastSpace >= targetStart {
                let v = UnsafeRawBufferPointer(rebasing: line[(lastSpace + 1)...])
                guard let odd = versionKind(v, request: true) else { return nil }
                version = Self.versionString(v, nonstandard: odd)
                nonstandard = odd
                targetEnd = lastSpace
                while targetEnd > targetStart, line[targetEnd - 1] == HTTPBytes.sp { targetEnd -= 1 }
            } else if targetStart < count,
                let odd = versionKind(UnsafeRawBufferPointer(rebasing: line[targetStart...]), request: true)
            {
                // `OPTIONS HTTP/1.1`: a request line without a target (Zeek logs an empty uri).
                let v = UnsafeRawBufferPointer(rebasing: line[targetStart...])
                version = Self.versionString(v, nonstandard: odd)
                nonstandard = true
                targetEnd = targetStart
            }
        }
        guard targetEnd > targetStart || version != nil else { return nil }
        let target = UnsafeRawBufferPointer(rebasing: line[targetStart..<targetEnd])
        // One pass over the target: no control character or HT may be in it (the line would be no start
        // line), and an origin-form target is split at its first `#` (a fragment, never sent by a browser
        // but kept out of the path) and the first `?` before it (RFC 9112 §3.2.1: absolute-path ["?" query]).
        var question = -1
        var fragment = -1
        let targetCount = target.count
        var j = 0
        // A word at a time while 8 bytes remain: most words of a path hold none of those bytes.
        while j &+ 8 <= targetCount {
            if Self.mayNeedLook(
                UInt64(littleEndian: base.loadUnaligned(fromByteOffset: targetStart &+ j, as: UInt64.self)))
            {
                for k in j..<(j &+ 8) {
                    guard
                        Self.look(
                            base.load(fromByteOffset: targetStart &+ k, as: UInt8.self), at: k, &question, &fragment)
                    else { return nil }
                }
            }
            j &+= 8
        }
        if j < targetCount, targetCount >= 8 {
            // The last bytes as the target's last word, overlapping bytes already looked at: only a flagged word
            // has its new bytes looked at one by one.
            if !Self.mayNeedLook(
                UInt64(littleEndian: base.loadUnaligned(fromByteOffset: targetStart &+ targetCount &- 8, as: UInt64.self)))
            {
                j = targetCount
            }
        }
        while j < targetCount {
            guard Self.look(base.load(fromByteOffset: targetStart &+ j, as: UInt8.self), at: j, &question, &fragment)
            else { return nil }
            j &+= 1
        }
        if version == nil {
            // RFC 1945 §4.1: a Simple-Request is only ever `GET` with an absolute path.
            guard HTTPBytes.equalsLowercase(method, "get"), method[0] == UInt8(ascii: "G"),
                target[0] == UInt8(ascii: "/")
            else { return nil }
        }
        return .request(
            method: known ? (method.count == 3 ? "GET" : "POST") : Self.methodString(method),
            target: splitTarget(target, question: question, fragment: fragment), version: version ?? http09,
            nonstandard: nonstandard)
    }

    /// Whether the 8 bytes of `word` may hold a control character, DEL, `?` or `#` (SWAR: a byte below 0x20
    /// leaves its high bit set in `word - 0x20…` where it was clear; a byte equal to `c` is a zero byte of
    /// `word ^ c…`). Never false when one is there; a false alarm only costs the byte-by-byte look.
    @inline(__always)
    private static func mayNeedLook(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroByte(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & high }
        let controls = (word &- ones &* 0x20) & ~word & high
        return controls | zeroByte(word ^ (ones &* 0x7F)) | zeroByte(word ^ (ones &* 0x3F))
            | zeroByte(word ^ (ones &* 0x23))
            != 0
    }

    /// One target byte at `index`: false for a control character (HT included) or DEL, which no start line
    /// holds; else notes the first `?` and `#`.
    @inline(__always)
    private static func look(_ b: UInt8, at index: Int, _ question: inout Int, _ fragment: inout Int) -> Bool {
        // Every byte that needs a look is below `@` or DEL: one compare passes letters.
        guard b < 0x40 || b == 0x7F else { return true }
        if b < 0x20 || b == 0x7F { return false }
        if b == UInt8(ascii: "?") {
            if question < 0 { question = index }
        } else if b == UInt8(ascii: "#") {
            if fragment < 0 { fragment = index }
        }
        return true
    }

    /// The strings of a target whose first `?` and `#` are at `question` and `fragment` (-1: none). Both
    /// are ASCII, never inside a UTF-8 sequence, so making the parts from bytes equals splitting the
    /// (repaired) string of the whole target, as `HTTPTarget.resolve` does.
    private static func splitTarget(_ target: UnsafeRawBufferPointer, question: Int, fragment: Int) -> HTTPRequestTarget
    {
        guard let first = target.first, first == UInt8(ascii: "/") else {
            return .other(target.isEmpty ? "" : HTTPBytes.string(target))
        }
        let end = fragment >= 0 ? fragment : target.count
        guard question >= 0, question < end else {
            return .origin(path: HTTPBytes.string(UnsafeRawBufferPointer(rebasing: target[0..<end])), query: nil)
        }
        return .origin(
            path: HTTPBytes.string(UnsafeRawBufferPointer(rebasing: target[0..<question])),
            query: HTTPBytes.string(UnsafeRawBufferPointer(rebasing: target[(question + 1)..<end])))
    }

    /// `HTTP/1.1` or `HTTP/1.0` exactly (upper case), as literals; nil for anything else, left to `versionKind`.
    @inline(__always)
    private static func standardVersion(_ v: UnsafeRawBufferPointer) -> String? {
        let word = UInt64(littleEndian: v.baseAddress!.loadUnaligned(as: UInt64.self))
        switch word {
        case 0x312E_312F_5054_5448: return "HTTP/1.1"  // "HTTP/1.1"
        case 0x302E_312F_5054_5448: return "HTTP/1.0"  // "HTTP/1.0"
        default: return nil
        }
    }

    private static func parseStatus(_ line: UnsafeRawBufferPointer) -> HTTPStartLine? {
        guard line.count >= 12, line[8] == HTTPBytes.sp else { return nil }
        let v = UnsafeRawBufferPointer(rebasing: line[0..<8])
        // `HTTP/1.1` and `HTTP/1.0` with one word compare; any other version is judged by `versionKind`.
        let standard = standardVersion(v)
        guard let odd = standard != nil ? false : versionKind(v, request: false) else { return nil }
        var i = 8
        while i < line.count, line[i] == HTTPBytes.sp { i += 1 }
        guard i + 3 <= line.count else { return nil }
        var code = 0
        for j in i..<(i + 3) {
            let d = line[j] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            code = code * 10 + Int(d)
        }
        guard code >= 100, i + 3 == line.count || HTTPBytes.isWhitespace(line[i + 3]) else { return nil }
        return .status(version: standard ?? versionString(v, nonstandard: odd), code: code, nonstandard: odd)
    }

    /// The common methods and versions as string literals: nothing to validate or allocate, and literals
    /// are never reference counted, however often records copy them.
    private static func methodString(_ bytes: UnsafeRawBufferPointer) -> String {
        func matches(_ literal: StaticString) -> Bool {
            memcmp(bytes.baseAddress!, literal.utf8Start, literal.utf8CodeUnitCount) == 0
        }
        switch bytes.count {
        case 3:
            if matches("GET") { return "GET" }
            if matches("PUT") { return "PUT" }
        case 4:
            if matches("POST") { return "POST" }
            if matches("HEAD") { return "HEAD" }
        case 5: if matches("PATCH") { return "PATCH" }
        case 6: if matches("DELETE") { return "DELETE" }
        case 7:
            if matches("OPTIONS") { return "OPTIONS" }
            if matches("CONNECT") { return "CONNECT" }
        default: break
        }
        return HTTPBytes.string(bytes)
    }

    /// `bytes` passed `versionKind`: the common versions as literals; a nonstandard one as sent.
    private static func versionString(_ bytes: UnsafeRawBufferPointer, nonstandard: Bool) -> String {
        if nonstandard { return HTTPBytes.string(bytes) }
        switch bytes[7] {
        case UInt8(ascii: "1"): return "HTTP/1.1"
        case UInt8(ascii: "0"): return "HTTP/1.0"
        default: return HTTPBytes.string(bytes)
        }
    }

    /// nil when `v` is no version; false for `HTTP/1.` DIGIT (RFC 9112 §2.3 with the major version this
    /// parser understands); true (nonstandard) for the same in another case, or, in a request line,
    /// `HTTP/1.` without the minor digit (Zeek's methods.pcap: Google's front end answered such requests).
    static func versionKind(_ v: UnsafeRawBufferPointer, request: Bool) -> Bool? {
        let magic: StaticString = "HTTP/1."
        guard v.count == 8 || (request && v.count == 7) else { return nil }
        var nonstandard = v.count == 7
        for i in 0..<7 where v[i] != magic.utf8Start[i] {
            guard HTTPBytes.lower(v[i]) == HTTPBytes.lower(magic.utf8Start[i]) else { return nil }
            nonstandard = true
        }
        if v.count == 8, v[7] &- UInt8(ascii: "0") >= 10 { return nil }
        return nonstandard
    }
}
