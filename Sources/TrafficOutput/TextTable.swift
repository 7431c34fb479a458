/// A plain-text table with aligned columns that fits a terminal width by shortening one column
/// in the middle (`/api/very…/long/path`).
public struct TextTable {
    public enum Alignment { case left, right }
    public struct Column {
        public var title: String
        public var alignment: Alignment
        /// The column that gives up width when the table is too wide.
        public var shrinkable: Bool
        /// Columns with a higher number are dropped first when shrinking is not enough; 0 is never dropped.
        public var dropOrder: Int
        public init(_ title: String, _ alignment: Alignment = .right, shrinkable: Bool = false, dropOrder: Int = 0) {
            self.title = title
            self.alignment = alignment
            self.shrinkable = shrinkable
            self.dropOrder = dropOrder
        }
    }

    public var columns: [Column]
    public var rows: [[String]] = []
    /// Rows made on demand, after `rows`: measured in one pass and made again to be written, so that a
    /// report of tens of thousands of groups never holds all its cells at once.
    public var rowSource: (count: Int, row: (Int) -> [String])?
    /// With `rowSource`: widens `widths` (one per column) to the display widths of row `i`'s cells without
    /// making them, so that the measuring pass formats nothing. Must agree with `rowSource` exactly.
    public var rowWidths: ((Int, inout [Int]) -> Void)?
    /// Rows drawn under a rule after the body, e.g. totals.
    public var footer: [[String]] = []

    public init(columns: [Column]) { self.columns = columns }

    public func render(width: Int = 80) -> String {
        var text = ""
        render(width: width) { text += $0 }
        return text
    }

    /// Renders in pieces of about `chunkBytes`, each ending with a line break, so that a large table
    /// never has to be held as one string.
    public func render(width: Int = 80, chunkBytes: Int = 1 << 20, to write: (String) -> Void) {
        // Cells stay where they are: dropping a column only removes its index, since copying every
        // row once per dropped column cost more than the whole layout.
        var visible = Array(columns.indices)
        let natural = naturalWidths()
        // Drop optional columns, last-to-drop kept longest, until the minimum layout fits.
        while minimumWidth(visible, natural) > width, let drop = visible.indices.filter({ columns[visible[$0]].dropOrder > 0 })
            .max(by: { columns[visible[$0]].dropOrder < columns[visible[$1]].dropOrder })
        {
            visible.remove(at: drop)
        }
        layout(visible, widths: visible.map { natural[$0] }, width: width, chunkBytes: chunkBytes, to: write)
    }

    private func naturalWidths() -> [Int] {
        var widths = columns.map { Self.displayWidth($0.title) }
        func measure(_ row: [String]) {
            for (i, cell) in zip(widths.indices, row) { widths[i] = max(widths[i], Self.displayWidth(cell)) }
        }
        if let rowSource, let rowWidths {
            rows.forEach(measure)
            for i in 0..<rowSource.count { rowWidths(i, &widths) }
        } else {
            forEachBodyRow(measure)
        }
        footer.forEach(measure)
        return widths
    }

    private var bodyRowCount: Int { rows.count + (rowSource?.count ?? 0) }

    private func forEachBodyRow(_ body: ([String]) -> Void) {
        rows.forEach(body)
        if let rowSource {
            for i in 0..<rowSource.count { body(rowSource.row(i)) }
        }
    }

    /// The width with shrinkable columns cut to a readable 24: optional columns go before paths get shorter.
    private func minimumWidth(_ visible: [Int], _ natural: [Int]) -> Int {
        let widths = visible.map { i in
            columns[i].shrinkable ? min(natural[i], max(24, columns[i].title.count)) : natural[i]
        }
        return widths.reduce(0, +) + 2 * (visible.count - 1)
    }

    /// Display width of a cell: Unicode scalars, which is exact for the ASCII and "…"/"→" this table prints
    /// and far cheaper than counting grapheme clusters for every cell.
    static func displayWidth(_ text: String) -> Int {
        // Every scalar has exactly one UTF-8 byte that is not a continuation byte (10xxxxxx).
        text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        } ?? text.unicodeScalars.count
    }

    private func layout(_ visible: [Int], widths natural: [Int], width: Int, chunkBytes: Int, to write: (String) -> Void) {
        var widths = natural
        // Too wide: take a column at a time off the widest shrinkable column (paths are usually longest).
        var excess = widths.reduce(0, +) + 2 * (visible.count - 1) - width
        while excess > 0 {
            let candidates = widths.indices.filter {
                columns[visible[$0]].shrinkable && widths[$0] > max(8, columns[visible[$0]].title.count)
            }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
            excess -= 1
        }
        let lineWidth = widths.reduce(0, +) + 2 * (visible.count - 1)
        let spaces = [UInt8](repeating: 0x20, count: widths.max() ?? 0)
        var text: [UInt8] = []
        text.reserveCapacity(min(chunkBytes, (bodyRowCount + footer.count + 2) * (lineWidth + 1)) + 4 * lineWidth)
        func line(_ cells: [String]) {
            let start = text.count
            for (i, column) in visible.enumerated() {
                if i > 0 { text.appendUTF8("  ") }
                var cell = column < cells.count ? cells[column] : ""
                var cellWidth = Self.displayWidth(cell)
                if cellWidth > widths[i] {
                    cell = Self.shortenMiddle(cell, to: widths[i])
                    cellWidth = Self.displayWidth(cell)
                }
                let padding = spaces.prefix(max(0, widths[i] - cellWidth))
                if columns[column].alignment == .left {
                    text.appendUTF8(cell)
                    text += padding
                } else {
                    text += padding
                    text.appendUTF8(cell)
                }
            }
            Self.trimTrailingSpaces(&text, lineStart: start)
            text.append(0x0A)
            text.flush(over: chunkBytes, to: write)
        }
        line(columns.map(\.title))
        let rule = String(repeating: "─", count: min(width, lineWidth)) + "\n"
        text.appendUTF8(rule)
        forEachBodyRow(line)
        if !footer.isEmpty {
            text.appendUTF8(rule)
            footer.forEach(line)
        }
        text.flush(over: 0, to: write)
    }

    /// Removes the spaces that padding left at the end of the line that starts at `lineStart`.
    private static func trimTrailingSpaces(_ text: inout [UInt8], lineStart: Int) {
        var end = text.count
        while end > lineStart, text[end - 1] == 0x20 { end -= 1 }
        guard end < text.count else { return }
        // A space after a non-ASCII scalar can belong to its grapheme cluster (e.g. after a prepended
        // mark), and `hasSuffix(" ")` would keep it: such lines are trimmed by Characters.
        if end > lineStart, text[end - 1] >= 0x80 {
            var line = String(decoding: text[lineStart...], as: UTF8.self)
            while line.hasSuffix(" ") { line.removeLast() }
            text.removeSubrange(lineStart...)
            text.appendUTF8(line)
            return
        }
        text.removeSubrange(end...)
    }

    /// Keeps the start and the end of `text`, which say the most about a path.
    public static func shortenMiddle(_ text: String, to width: Int) -> String {
        guard text.count > width, width >= 3 else { return String(text.prefix(width)) }
        let keep = width - 1
        let head = (keep + 1) / 2
        return String(text.prefix(head)) + "…" + String(text.suffix(keep - head))
    }
}

/// Human units for byte counts: B, KiB, MiB, GiB with one decimal.
public func humanBytes(_ value: Int) -> String {
    let (unit, tenths) = humanBytesParts(value)
    // Concatenated rather than interpolated: these fit in small strings, which then need no allocation.
    if unit == 0 { return String(value) + " B" }
    return String(tenths / 10) + "." + String(abs(tenths % 10)) + " " + byteUnits[unit]
}

/// The display width of `humanBytes(value)`, without making the string (tables measure every cell first).
public func humanBytesWidth(_ value: Int) -> Int {
    let (unit, tenths) = humanBytesParts(value)
    if unit == 0 { return decimalWidth(value) + 2 }
    return decimalWidth(tenths / 10) + 3 + byteUnits[unit].utf8.count
}

/// The unit index, and the amount in that unit in tenths (the value itself for bytes).
private func humanBytesParts(_ value: Int) -> (unit: Int, tenths: Int) {
    var amount = Double(value)
    var unit = 0
    while abs(amount) >= 1024, unit < byteUnits.count - 1 {
        amount /= 1024
        unit += 1
    }
    return (unit, unit == 0 ? value : Int((amount * 10).rounded()))
}

/// The length of `String(value)`.
public func decimalWidth(_ value: Int) -> Int {
    var rest = value.magnitude
    var width = value < 0 ? 2 : 1
    while rest >= 10 {
        rest /= 10
        width += 1
    }
    return width
}

private let byteUnits = ["B", "KiB", "MiB", "GiB", "TiB"]
