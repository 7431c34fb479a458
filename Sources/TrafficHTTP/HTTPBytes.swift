#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level helpers for scanning HTTP text without making `String`s.
enum HTTPBytes {
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let sp: UInt8 = 0x20
    static let ht: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// Index of the first `byte` in `bytes[start...]`, found with `memchr` (vectorised by libc).
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress else { return nil }
        guard let hit = memchr(base + start, Int32(byte), bytes.count &- start) else { return nil }  // start < count
        return UnsafeRawPointer(hit) - base
    }

    /// Index of the first `:` in `bytes`: a field line's name end (RFC 9112 §5.1). Names are short, so the
    /// first 16 bytes are searched a word at a time (SWAR: a `:` is a zero byte of `word ^ 0x3A3A…`, and the
    /// lowest flagged byte is exactly the first one, as no borrow reaches below it), the rest with `memchr`.
    @inline(__always)
    static func firstColon(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let ones: UInt64 = 0x0101_0101_0101_0101
        var i = 0
        while i < 16, i &+ 8 <= bytes.count {
            let v =
                UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ (ones &* UInt64(colon))
            let zero = (v &- ones) & ~v & (ones &* 0x80)
            if zero != 0 { return i &+ zero.trailingZeroBitCount &>> 3 }
            i &+= 8
        }
        return firstIndex(of: colon, in: bytes, from: i)
    }

    /// `firstColon(in:)` for a `content` whose memory may be read `readable` bytes far (a field line inside
    /// its segment, the bytes after it included): with 16 of them, the first 16 bytes are compared at once
    /// (SSE2 `pcmpeqb`), which finds the name end of all but long names in about half the instructions of the
    /// two SWAR words. A colon found past `content`'s end means none is in it. Spelled with the mask's two
    /// words: `any(_:)` on the mask was not vectorised (a generic `SIMD.min` call, lane by lane).
    @inline(__always)
    static func firstColon(in content: UnsafeRawBufferPointer, readable: Int) -> Int? {
        guard readable >= 16, let base = content.baseAddress else { return firstColon(in: content) }
        let hits = base.loadUnaligned(as: SIMD16<UInt8>.self) .== SIMD16<UInt8>(repeating: colon)
        let words = unsafeBitCast(hits, to: SIMD2<UInt64>.self)
        let low = words[0]
        let high = words[1]
        guard low | high != 0 else {
            return content.count > 16 ? firstIndex(of: colon, in: content, from: 16) : nil
        }
        let index = low != 0 ? low.trailingZeroBitCount &>> 3 : 8 &+ high.trailingZeroBitCount &>> 3
        return index < content.count ? index : nil
    }

    /// Index of the first LF in `bytes[start...]`.
    @inline(__always)
    static func firstLF(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        firstIndex(of: lf, in: bytes, from: start)
    }

    /// RFC 9110 §5.6.2 `tchar`.
    @inline(__always)
    static func isTokenChar(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    /// Control characters other than HT: never valid inside a start line.
    @inline(__always)
    static func isControl(_ b: UInt8) -> Bool { (b < 0x20 && b != ht) || b == 0x7F }

    @inline(__always)
    static func isWhitespace(_ b: UInt8) -> Bool { b == sp || b == ht }

    @inline(__always)
    static func lower(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b }

    /// `bytes` without leading and trailing SP/HT (RFC 9110 §5.5: OWS around field values). Inlined: it runs
    /// for every kept field value, mostly with one leading space to drop.
    @inline(__always)
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Case-insensitive comparison with a lower-case ASCII literal.
    static func equalsLowercase(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count == count else { return false }
        guard let base = bytes.baseAddress else { return true }
        let expected = literal.utf8Start
        // Runs for most field lines of every message: raw loads, and case folding only on a mismatch.
        for i in 0..<count {
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            let e = expected[i]
            if b != e, !(e >= 0x61 && e <= 0x7A && b == e &- 0x20) { return false }
        }
        return true
    }

    /// A `String` of the bytes; invalid UTF-8 becomes U+FFFD. Made once per kept value.
    /// Whether `bytes[start...]` begins with the first line of the HTTP/2 connection preface,
    /// `PRI * HTTP/2.0` (RFC 9113 §3.4): a method no HTTP/1 server accepts, sent only by HTTP/2 clients.
    static func isHTTP2Preface(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        let preface: StaticString = "PRI * HTTP/2.0"
        guard start >= 0, bytes.count - start >= preface.utf8CodeUnitCount else { return false }
        for i in 0..<preface.utf8CodeUnitCount where bytes[start + i] != preface.utf8Start[i] { return false }
        return true
    }

    static func string(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Whether `a` and `b` are the same string value bit for bit (the same storage, or the same small string):
    /// then they are equal. Different bits say nothing (equal text may be stored twice).
    @inline(__always)
    static func sameBits(_ a: String, _ b: String) -> Bool {
        withUnsafeBytes(of: a) { x in
            withUnsafeBytes(of: b) { y in
                x.loadUnaligned(as: UInt64.self) == y.loadUnaligned(as: UInt64.self)
                    && x.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                        == y.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }
}
