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
        withDecimal(value) { append(contentsOf: $0) }
    }

    /// Hands the bytes to `write` once there are `count` of them, keeping the buffer for more.
    mutating func flush(over count: Int, to write: ByteSink) {
        guard self.count >= count, !isEmpty else { return }
        withUnsafeBytes(write)
        removeAll(keepingCapacity: true)
    }
}

/// Calls `body` with the bytes of `String(value)` (built on the stack, no string made).
func withDecimal<R>(_ value: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    var magnitude = value.magnitude
    // Room for a sign and the 20 digits of UInt64.max; digits come out last first.
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    return withUnsafeMutableBytes(of: &digits) { buffer in
        var start = buffer.count
        repeat {
            start -= 1
            buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if value < 0 {
            start -= 1
            buffer[start] = UInt8(ascii: "-")
        }
        return body(UnsafeRawBufferPointer(rebasing: buffer[start...]))
    }
}
