/// Rendered output in pieces of UTF-8, each valid only during the call. Reports hand their bytes over as
/// they are: making a String of each piece checked megabytes of our own UTF-8 once more.
public typealias ByteSink = (UnsafeRawBufferPointer) -> Void

/// Hands `text`'s UTF-8 to `write`.
func emit(_ text: String, to write: ByteSink) {
    var text = text
    text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
}

/// Reports are built as UTF-8 bytes: appending to a String updates its counts and flags every time,
/// which dominated rendering reports with tens of thousands of rows.
extension Array where Element == UInt8 {
    mutating func appendUTF8(_ text: String) {
        // Small strings (most cells) have no storage to point at; their bytes are copied without
        // `withUTF8`'s copy of the string into a mutable variable first.
        if text.utf8.withContiguousStorageIfAvailable({ append(contentsOf: $0) }) == nil {
            append(contentsOf: text.utf8)
        }
    }

    /// `String(value)` without the intermediate string.
    mutating func appendDecimal(_ value: Int) {
        withDecimal(value) { digits in for digit in digits { append(digit) } }
    }

    /// Hands the bytes to `write` once there are `count` of them, keeping the buffer for more.
    mutating func flush(over count: Int, to write: ByteSink) {
        guard self.count >= count, !isEmpty else { return }
        withUnsafeBytes(write)
        removeAll(keepingCapacity: true)
    }
}

/// Room that a writer's pieces are written into through a pointer, then appended to its bytes at once: many
/// small pieces (a group's numbers) with one append, where an append each checked the array's capacity and
/// uniqueness every time. Kept from one use to the next: made at the end of the output itself, the room was
/// zero-filled and cut back every time.
struct WritingRoom {
    private var room: [UInt8] = []

    /// Appends to `bytes` what `body` writes, at most `maxCount` bytes (it returns how many).
    mutating func append(to bytes: inout [UInt8], maxCount: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        if room.count < maxCount { room = [UInt8](repeating: 0, count: Swift.max(maxCount, 2 * room.count)) }
        room.withUnsafeMutableBufferPointer { room in
            let written = body(room.baseAddress!)
            precondition(written >= 0 && written <= maxCount, "written within the room asked for")
            bytes.append(contentsOf: UnsafeBufferPointer(start: room.baseAddress!, count: written))
        }
    }
}

/// Calls `body` with the bytes of `String(value)` (built on the stack, no string made).
func withDecimal<R>(_ value: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    // Room for `maxDecimalBytes` on the stack, as before `writeDecimal` (with a temporary allocation instead,
    // NDJSON, which writes 20 numbers per record, was inlined otherwise and cost 3 % more).
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    return withUnsafeMutableBytes(of: &digits) { buffer in
        let count = buffer.withMemoryRebound(to: UInt8.self) { writeDecimal(value, to: $0.baseAddress!) }
        return body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }
}

/// Writes `String(value)` at `out` (room for `maxDecimalBytes`); returns how many bytes it took. The
/// digits are counted first and written from the last, in place (no buffer to copy from), two a step.
@inline(__always)
func writeDecimal(_ value: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
    let count = decimalWidth(value)
    if value < 0 {
        out[0] = UInt8(ascii: "-")
        writeDigits(UInt64(value.magnitude), count: count - 1, to: out + 1)
    } else {
        writeDigits(UInt64(value.magnitude), count: count, to: out)
    }
    return count
}

/// Writes the last `count` decimal digits of `value` at `out`, with leading zeros (a fraction's digits).
@inline(__always)
func writeDigits(_ value: UInt64, count: Int, to out: UnsafeMutablePointer<UInt8>) {
    let pairs = decimalPairs.utf8Start
    var value = value
    var at = count
    while at >= 2 {
        let pair = Int(truncatingIfNeeded: value % 100) &* 2
        value /= 100
        at -= 2
        out[at] = pairs[pair]
        out[at + 1] = pairs[pair + 1]
    }
    if at == 1 { out[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10) }
}

/// "00" to "99" one after the other: the digits of a number's last two decimal places at `2 * (n % 100)`.
/// (A literal: read with no lazy initialization.)
private var decimalPairs: StaticString {
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
}

/// Bytes checked eight at a time: group keys are checked for bytes to escape or quote in every JSON and CSV
/// row, and a test per byte cost more than copying them.
enum PlainBytes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// A high bit in each byte of `word` that is zero (exact as to whether there is one: a borrow only marks
    /// bytes above a zero byte).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highs }

    /// A byte of `word` equal to `byte`.
    @inline(__always)
    private static func has(_ word: UInt64, _ byte: UInt8) -> UInt64 { zeroBytes(word ^ (UInt64(byte) &* ones)) }

    /// Whether the bytes are ASCII and none needs a JSON escape (control bytes, quote, backslash).
    static func isPlainJSON(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        if let base = bytes.baseAddress {
            while i + 8 <= bytes.count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                // A byte below 0x20: as `zeroBytes` with 0x20 for 1 (exact when no byte has its high bit, which is
                // tested alongside).
                let control = (word &- 0x20 &* ones) & ~word & highs
                if word & highs | control | has(word, UInt8(ascii: "\"")) | has(word, UInt8(ascii: "\\")) != 0 { return false }
                i += 8
            }
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte >= 0x80 || byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            i += 1
        }
        return true
    }

    /// Whether the bytes are ASCII and none makes a CSV field quoted (comma, quote, line feed, carriage return).
    static func isPlainCSV(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        if let base = bytes.baseAddress {
            while i + 8 <= bytes.count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if word & highs | has(word, 0x2c) | has(word, 0x22) | has(word, 0x0a) | has(word, 0x0d) != 0 { return false }
                i += 8
            }
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte >= 0x80 || byte == 0x2c || byte == 0x22 || byte == 0x0a || byte == 0x0d { return false }
            i += 1
        }
        return true
    }
}
