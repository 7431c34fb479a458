/// Incremental parser of chunked framing (RFC 9112 §7.1): says which bytes are framing and which are data.
///
/// Chunk-size lines, extensions, the CRLF after each chunk, the last chunk and the trailer section are
/// framing; only chunk data is data. Nothing is buffered: sizes are accumulated digit by digit with
/// overflow checks, extensions and trailer lines are skipped with `memchr`.
struct ChunkedBodyParser {
    /// The outcome of one `consume` call; `end` is the offset just past the bytes it covers.
    enum Step: Equatable {
        case framing(end: Int)
        case data(end: Int)
        /// The trailer section's empty line ended the body.
        case done(end: Int)
        /// The byte at `end - 1` cannot be chunked framing (bad digit, size above 2^63 − 1, missing CRLF).
        case malformed(end: Int)
    }

    private enum State { case size, sizeExtension, data, dataCR, dataLF, trailerLineStart, trailerEmptyCR, trailerLine }

    private var state = State.size
    private var size = 0
    private var sawDigit = false
    /// Data bytes left in the current chunk.
    private(set) var dataRemaining = 0

    /// Consumes from `bytes[start...]` (non-empty) up to the next change between framing and data.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Step {
        if state == .data {
            let n = min(dataRemaining, bytes.count &- start)
            dataRemaining &-= n  // n ≤ dataRemaining, and start + n ≤ bytes.count
            if dataRemaining == 0 { state = .dataCR }
            return .data(end: start &+ n)
        }
        var i = start
        while i < bytes.count {
            let b = bytes[i]
            i += 1
            switch state {
            case .size:
                if let d = Self.hexValue(b) {
                    let (m, o1) = size.multipliedReportingOverflow(by: 16)
                    let (s, o2) = m.addingReportingOverflow(d)
                    if o1 || o2 { return .malformed(end: i) }
                    size = s
                    sawDigit = true
                } else if b == HTTPBytes.lf {
                    if let step = endOfSizeLine(at: i) { return step }
                } else if sawDigit,
                    b == HTTPBytes.sp || b == HTTPBytes.ht || b == UInt8(ascii: ";") || b == HTTPBytes.cr
                {
                    // BWS, then `;name=value` extensions (RFC 9112 §7.1.1): skipped up to the line end.
                    state = .sizeExtension
                } else {
                    return .malformed(end: i)
                }
            case .sizeExtension:
                guard let lf = HTTPBytes.firstLF(in: bytes, from: i - 1) else { return .framing(end: bytes.count) }
                i = lf + 1
                if let step = endOfSizeLine(at: i) { return step }
            case .dataCR:
                if b == HTTPBytes.cr {
                    state = .dataLF
                } else if b == HTTPBytes.lf {
                    state = .size  // bare LF after data: tolerated like llhttp's lenient mode
                } else {
                    return .malformed(end: i)
                }
            case .dataLF:
                guard b == HTTPBytes.lf else { return .malformed(end: i) }
                state = .size
            case .trailerLineStart:
                if b == HTTPBytes.lf { return .done(end: i) }
                state = b == HTTPBytes.cr ? .trailerEmptyCR : .trailerLine
                if state == .trailerLine { i -= 1 }
            case .trailerEmptyCR:
                if b == HTTPBytes.lf { return .done(end: i) }
                state = .trailerLine
                i -= 1
            case .trailerLine:
                guard let lf = HTTPBytes.firstLF(in: bytes, from: i - 1) else { return .framing(end: bytes.count) }
                i = lf + 1
                state = .trailerLineStart
            case .data:
                preconditionFailure("ChunkedBodyParser: data state inside the framing loop")
            }
        }
        return .framing(end: i)
    }

    /// A gap of `count` bytes: absorbed when it lies inside one chunk's data, otherwise framing is lost.
    mutating func absorbGap(_ count: Int) -> Bool {
        guard state == .data, count <= dataRemaining else { return false }
        dataRemaining -= count
        if dataRemaining == 0 { state = .dataCR }
        return true
    }

    /// Whether the parser sits inside chunk data (a gap there loses `min(gap, dataRemaining)` data bytes).
    var isInData: Bool { state == .data }

    private mutating func endOfSizeLine(at end: Int) -> Step? {
        guard sawDigit else { return .malformed(end: end) }
        let chunkSize = size
        size = 0
        sawDigit = false
        if chunkSize == 0 {
            state = .trailerLineStart
            return nil
        }
        dataRemaining = chunkSize
        state = .data
        return .framing(end: end)
    }

    @inline(__always)
    private static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case 0x30...0x39: return Int(b - 0x30)
        case 0x41...0x46: return Int(b - 0x41 + 10)
        case 0x61...0x66: return Int(b - 0x61 + 10)
        default: return nil
        }
    }
}
