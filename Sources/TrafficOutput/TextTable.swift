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
    /// Rows drawn under a rule after the body, e.g. totals.
    public var footer: [[String]] = []

    public init(columns: [Column]) { self.columns = columns }

    public func render(width: Int = 80) -> String {
        // Drop optional columns, last-to-drop kept longest, until the minimum layout fits.
        var table = self
        while table.minimumWidth() > width, let drop = table.columns.indices.filter({ table.columns[$0].dropOrder > 0 })
            .max(by: { table.columns[$0].dropOrder < table.columns[$1].dropOrder })
        {
            table.columns.remove(at: drop)
            table.rows = table.rows.map { var row = $0; if drop < row.count { row.remove(at: drop) }; return row }
            table.footer = table.footer.map { var row = $0; if drop < row.count { row.remove(at: drop) }; return row }
        }
        return table.layout(width: width)
    }

    private func naturalWidths() -> [Int] {
        var widths = columns.map { Self.displayWidth($0.title) }
        for rowSet in [rows, footer] {
            for row in rowSet {
                for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], Self.displayWidth(cell)) }
            }
        }
        return widths
    }

    /// The width with shrinkable columns cut to a readable 24: optional columns go before paths get shorter.
    private func minimumWidth() -> Int {
        let widths = zip(columns, naturalWidths()).map { column, natural in
            column.shrinkable ? min(natural, max(24, column.title.count)) : natural
        }
        return widths.reduce(0, +) + 2 * (columns.count - 1)
    }

    /// Display width of a cell: Unicode scalars, which is exact for the ASCII and "…"/"→" this table prints
    /// and far cheaper than counting grapheme clusters for every cell.
    static func displayWidth(_ text: String) -> Int { text.unicodeScalars.count }

    private func layout(width: Int) -> String {
        var widths = columns.map { Self.displayWidth($0.title) }
        for rowSet in [rows, footer] {
            for row in rowSet {
                for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], Self.displayWidth(cell)) }
            }
        }
        // Too wide: take a column at a time off the widest shrinkable column (paths are usually longest).
        var excess = widths.reduce(0, +) + 2 * (columns.count - 1) - width
        while excess > 0 {
            let candidates = columns.indices.filter { columns[$0].shrinkable && widths[$0] > max(8, columns[$0].title.count) }
            guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
            excess -= 1
        }
        var lines: [String] = []
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (i, column) in columns.enumerated() {
                var cell = i < cells.count ? cells[i] : ""
                var cellWidth = Self.displayWidth(cell)
                if cellWidth > widths[i] {
                    cell = Self.shortenMiddle(cell, to: widths[i])
                    cellWidth = Self.displayWidth(cell)
                }
                let padding = String(repeating: " ", count: max(0, widths[i] - cellWidth))
                parts.append(column.alignment == .left ? cell + padding : padding + cell)
            }
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        lines.append(line(columns.map(\.title)))
        lines.append(String(repeating: "─", count: min(width, widths.reduce(0, +) + 2 * (columns.count - 1))))
        lines += rows.map(line)
        if !footer.isEmpty {
            lines.append(String(repeating: "─", count: min(width, widths.reduce(0, +) + 2 * (columns.count - 1))))
            lines += footer.map(line)
        }
        return lines.joined(separator: "\n") + "\n"
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
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var amount = Double(value)
    var unit = 0
    while abs(amount) >= 1024, unit < units.count - 1 {
        amount /= 1024
        unit += 1
    }
    if unit == 0 { return "\(value) B" }
    let tenths = Int((amount * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10)) \(units[unit])"
}
