import TrafficCapture

/// Writes RFC 4180 CSV: CRLF line ends, fields quoted when they hold a comma, quote or line break.
public struct CSVWriter {
    private var bytes: [UInt8] = []
    private var rowStarted = false
    private var room = WritingRoom()

    public var output: String { String(decoding: bytes, as: UTF8.self) }

    public init() {}

    public mutating func row(_ fields: [String]) {
        for field in fields { cell(field) }
        endRow()
    }

    /// Adds one field to the current row; `endRow` ends it.
    public mutating func cell(_ field: String) {
        separate()
        var field = field
        // Bytes, not Characters: the check runs for every cell of every row.
        let plain = field.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 == 0x2c || $0 == 0x22 || $0 == 0x0a || $0 == 0x0d }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if !plain { bytes.appendUTF8("\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"") }
    }

    /// A field's UTF-8 as `cell(_:)` writes the `String` decoded from it: copied as it is when it is ASCII and
    /// needs no quotes (nearly every group key), else through the `String` (quoted as it quotes, and bytes that
    /// are not UTF-8 repaired as a decoded key's were).
    mutating func cell(utf8 field: UnsafeRawBufferPointer) {
        guard PlainBytes.isPlainCSV(field) else { return cell(String(decoding: field, as: UTF8.self)) }
        separate()
        bytes.append(contentsOf: field)
    }

    /// Cells written at once by `body` at the end of the row, at most `maxCount` bytes (it returns how many),
    /// each after a comma unless it starts the row (`rowStarted` tells whether a cell came before).
    mutating func appendCells(maxCount: Int, _ body: (_ out: UnsafeMutablePointer<UInt8>, _ rowStarted: Bool) -> Int) {
        let started = rowStarted
        room.append(to: &bytes, maxCount: maxCount) { body($0, started) }
        rowStarted = true
    }

    /// Where the writing is: what `rollBack(to:)` goes back to.
    var mark: (count: Int, rowStarted: Bool) { (bytes.count, rowStarted) }

    /// Takes back what was written since `mark` (not flushed since).
    mutating func rollBack(to mark: (count: Int, rowStarted: Bool)) {
        bytes.removeLast(bytes.count - mark.count)
        rowStarted = mark.rowStarted
    }

    /// A time as ISO 8601 (no quoting needed: digits and `-:.TZ`).
    mutating func cell(_ time: CaptureTime) {
        separate()
        time.appendISO8601(to: &bytes)
    }

    public mutating func cell(_ number: Int) {
        separate()
        bytes.appendDecimal(number)
    }

    public mutating func endRow() {
        // Two appends, not `appendUTF8` of a string: once per row of every CSV.
        bytes.append(0x0d)
        bytes.append(0x0a)
        rowStarted = false
    }

    /// Hands the rows written so far to `write` once they reach `count` bytes, keeping the buffer for the next ones.
    public mutating func flush(over count: Int, to write: (String) -> Void) {
        bytes.flush(over: count) { write(String(decoding: $0, as: UTF8.self)) }
    }

    public mutating func flush(over count: Int, to write: ByteSink) { bytes.flush(over: count, to: write) }

    private mutating func separate() {
        if rowStarted { bytes.append(0x2c) }
        rowStarted = true
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
