import TrafficAggregation
import TrafficConcurrency

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
    /// report of tens of thousands of groups never holds all its cells at once. `row(i, shown, &cells)`
    /// fills `cells` (one per column, emptied and reused from row to row); a column whose `shown` is false
    /// may be left empty (it was dropped to fit the width, and formatting its numbers would be wasted).
    public var rowSource: (count: Int, row: (_ index: Int, _ shown: [Bool], _ cells: inout Cells) -> Void)?
    /// With `rowSource`: widens `widths` (one per column) to the display widths of row `i`'s cells without
    /// making them, so that the measuring pass formats nothing. Must agree with `rowSource` exactly.
    public var rowWidths: ((Int, inout [Int]) -> Void)?
    /// With `rowSource`, instead of `rowWidths`: passes that each widen `widths` by a part of the rows (the
    /// parts together cover every row once, in any order), run side by side, each on a thread of its own
    /// but the first. Rows read back from a file in sorted runs are measured run by run, unmerged.
    public var rowWidthParts: [(inout [Int]) -> Void]?
    /// Whether `rowSource` and `rowWidths` may be called from two threads at once: a large table is then
    /// measured and made in two halves side by side (the second half held as bytes until the first is out).
    public var rowsOnTwoThreads = false
    /// Fewer rows than this are not worth a thread.
    public static let twoThreadRows = 4096
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
        render(width: width, chunkBytes: chunkBytes, toBytes: { write(String(decoding: $0, as: UTF8.self)) })
    }

    /// `render(width:chunkBytes:to:)` with the pieces as bytes. Returns the indices of the columns shown
    /// (the others were dropped to fit `width`), so that a legend can explain just those.
    @discardableResult
    public func render(width: Int = 80, chunkBytes: Int = 1 << 20, toBytes write: ByteSink) -> [Int] {
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
        return visible
    }

    private func naturalWidths() -> [Int] {
        var widths = columns.map { Self.displayWidth($0.title) }
        func measure(_ row: [String]) {
            for (i, cell) in zip(widths.indices, row) { widths[i] = max(widths[i], Self.displayWidth(cell)) }
        }
        if rowSource != nil, let parts = rowWidthParts, let first = parts.first {
            rows.forEach(measure)
            let others = parts.dropFirst().map { part in
                let half = Half(widths)
                let thread = WorkerThread { part(&half.widths) }
                thread.start()
                return (thread, half)
            }
            first(&widths)
            for (thread, half) in others {
                thread.join()
                for i in widths.indices { widths[i] = max(widths[i], half.widths[i]) }
            }
        } else if let rowSource, let rowWidths {
            rows.forEach(measure)
            let count = rowSource.count
            if rowsOnTwoThreads, count >= Self.twoThreadRows {
                let half = Half(widths)
                let thread = WorkerThread { for i in count / 2..<count { rowWidths(i, &half.widths) } }
                thread.start()
                for i in 0..<count / 2 { rowWidths(i, &widths) }
                thread.join()
                for i in widths.indices { widths[i] = max(widths[i], half.widths[i]) }
            } else {
                for i in 0..<count { rowWidths(i, &widths) }
            }
        } else {
            forEachBodyRow(shown: columns.map { _ in true }) { cells in
                for i in 0..<min(widths.count, cells.count) {
                    widths[i] = max(widths[i], cells.width(i))
                }
            }
        }
        footer.forEach(measure)
        return widths
    }

    private var bodyRowCount: Int { rows.count + (rowSource?.count ?? 0) }

    private func forEachBodyRow(shown: [Bool], _ body: (Cells) -> Void) {
        var cells = Cells()
        for row in rows {
            cells.set(row)
            body(cells)
        }
        if let rowSource { forEachSourceRow(0..<rowSource.count, shown: shown, body) }
    }

    /// Rows `range` of `rowSource`, made one at a time into one reused `Cells`.
    private func forEachSourceRow(_ range: Range<Int>, shown: [Bool], _ body: (Cells) -> Void) {
        guard let rowSource else { return }
        var cells = Cells()
        for i in range {
            cells.removeAll()
            rowSource.row(i, shown, &cells)
            body(cells)
        }
    }

    /// The cells of one row as UTF-8 bytes in one buffer: keys are copied in and numbers written as digits,
    /// with no String made per cell (a table of tens of thousands of groups spent most of its time there).
    /// The bytes and the cells' ends live in buffers of their own, grown by hand: numbers are written
    /// straight into them, where appending to arrays cost a generic append and a uniqueness check per
    /// cell (more than formatting the number). Copies share the buffers until one of them changes.
    public struct Cells {
        fileprivate var storage = Storage()

        public init() {}

        public var count: Int { storage.cellCount }

        /// Makes the buffers this value's own before a change (a copy made with `body(cells)` keeps its cells).
        private mutating func unique() -> Storage {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }

        public mutating func append(_ text: String) {
            // Small strings (most cells) have no storage to point at: this copies their bytes without
            // `withUTF8`'s copy of the string into a mutable variable first.
            if text.utf8.withContiguousStorageIfAvailable({ append(utf8: UnsafeRawBufferPointer($0)) }) == nil {
                var text = text
                text.withUTF8 { append(utf8: UnsafeRawBufferPointer($0)) }
            }
        }

        /// A cell of UTF-8 bytes as they are (a key read back from a temporary file, written from a `String`).
        package mutating func append(utf8 text: UnsafeRawBufferPointer) {
            let storage = unique()
            let at = storage.reserve(text.count)
            if let source = text.baseAddress, !text.isEmpty { at.update(from: source.assumingMemoryBound(to: UInt8.self), count: text.count) }
            storage.end(at + text.count, width: TextTable.displayWidth(UnsafeBufferPointer(start: at, count: text.count)))
        }

        /// A cell per field of a key as `GroupKeyBytes` (its fields' UTF-8 bytes as they are); a damaged key
        /// adds the fields before the damage (its reading fails the report). The buffers are made this
        /// value's own once for the key, not once per field.
        package mutating func append(keyFields key: UnsafeRawBufferPointer) {
            let storage = unique()
            GroupKeyBytes.forEachField(key) { field in
                let at = storage.reserve(field.count)
                if let source = field.baseAddress, !field.isEmpty {
                    at.update(from: source.assumingMemoryBound(to: UInt8.self), count: field.count)
                }
                storage.end(at + field.count, width: TextTable.displayWidth(UnsafeBufferPointer(start: at, count: field.count)))
            }
        }

        public mutating func append(decimal value: Int) {
            let storage = unique()
            let at = storage.reserve(maxDecimalBytes)
            let count = writeDecimal(value, to: at)
            storage.end(at + count, width: count)
        }

        /// `humanBytes(value)`.
        public mutating func append(humanBytes value: Int) {
            let storage = unique()
            let at = storage.reserve(maxHumanBytes)
            let count = writeHumanBytes(value, to: at)
            storage.end(at + count, width: count)
        }

        /// A cell per value: the first `decimalCount` as `append(decimal:)`, the others as
        /// `append(humanBytes:)` (or decimals when `exact`), and an empty cell for a column whose `shown` is
        /// false (the cell's column: `count` when it is appended). One reservation for them all: a table
        /// appends ten numbers per row, tens of thousands of rows.
        mutating func append(numbers values: UnsafeBufferPointer<Int>, decimalCount: Int, exact: Bool, shown: [Bool]) {
            let storage = unique()
            _ = storage.reserve(values.count * max(maxDecimalBytes, maxHumanBytes), cells: values.count)
            var at = storage.bytes + storage.byteCount
            for i in values.indices {
                let count: Int
                if !shown[storage.cellCount] {
                    count = 0
                } else if i < decimalCount || exact {
                    count = writeDecimal(values[i], to: at)
                } else {
                    count = writeHumanBytes(values[i], to: at)
                }
                at += count
                storage.end(at, width: count)
            }
        }

        public mutating func appendEmpty() {
            let storage = unique()
            storage.end(storage.reserve(0), width: 0)
        }

        mutating func removeAll() {
            let storage = unique()
            storage.byteCount = 0
            storage.cellCount = 0
        }

        mutating func set(_ texts: [String]) {
            removeAll()
            for text in texts { append(text) }
        }

        /// Where cell `i`'s bytes are (empty past the last cell).
        func range(_ i: Int) -> Range<Int> {
            guard i < storage.cellCount else { return storage.byteCount..<storage.byteCount }
            return (i == 0 ? 0 : storage.ends[i - 1])..<storage.ends[i]
        }

        /// Calls `body` with cell `i`'s bytes (empty past the last cell).
        func withCell<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            let range = range(i)
            return body(UnsafeBufferPointer(start: storage.bytes + range.lowerBound, count: range.count))
        }

        /// Cell `i`'s display width (`displayWidth` of its bytes, worked out as it was added: a number's is
        /// its length).
        func width(_ i: Int) -> Int { i < storage.cellCount ? storage.widths[i] : 0 }

        /// Every cell's bytes, one after the other.
        fileprivate var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage.bytes, count: storage.byteCount) }

        fileprivate final class Storage {
            var bytes: UnsafeMutablePointer<UInt8>
            var byteCount = 0
            var byteCapacity: Int
            /// Where each cell ends in `bytes`, and its display width.
            var ends: UnsafeMutablePointer<Int>
            var widths: UnsafeMutablePointer<Int>
            var cellCount = 0
            var cellCapacity: Int

            init(byteCapacity: Int = 256, cellCapacity: Int = 16) {
                self.byteCapacity = byteCapacity
                self.cellCapacity = cellCapacity
                bytes = .allocate(capacity: byteCapacity)
                ends = .allocate(capacity: cellCapacity)
                widths = .allocate(capacity: cellCapacity)
            }

            deinit {
                bytes.deallocate()
                ends.deallocate()
                widths.deallocate()
            }

            func copy() -> Storage {
                let copy = Storage(byteCapacity: byteCapacity, cellCapacity: cellCapacity)
                copy.bytes.update(from: bytes, count: byteCount)
                copy.ends.update(from: ends, count: cellCount)
                copy.widths.update(from: widths, count: cellCount)
                copy.byteCount = byteCount
                copy.cellCount = cellCount
                return copy
            }

            /// Room for `count` more bytes and `cells` more cell ends: where the bytes go.
            @inline(__always)
            func reserve(_ count: Int, cells: Int = 1) -> UnsafeMutablePointer<UInt8> {
                if count > byteCapacity - byteCount || cells > cellCapacity - cellCount { grow(count, cells: cells) }
                return bytes + byteCount
            }

            private func grow(_ count: Int, cells: Int) {
                if count > byteCapacity - byteCount {
                    let capacity = max(2 * byteCapacity, byteCount + count)
                    let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
                    grown.update(from: bytes, count: byteCount)
                    bytes.deallocate()
                    bytes = grown
                    byteCapacity = capacity
                }
                if cells > cellCapacity - cellCount {
                    let capacity = max(2 * cellCapacity, cellCount + cells)
                    let grownEnds = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
                    grownEnds.update(from: ends, count: cellCount)
                    ends.deallocate()
                    ends = grownEnds
                    let grownWidths = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
                    grownWidths.update(from: widths, count: cellCount)
                    widths.deallocate()
                    widths = grownWidths
                    cellCapacity = capacity
                }
            }

            /// Ends the current cell at `end` (within the room `reserve` gave); `width` is its display width.
            @inline(__always)
            func end(_ end: UnsafeMutablePointer<UInt8>, width: Int) {
                byteCount = end - bytes
                ends[cellCount] = byteCount
                widths[cellCount] = width
                cellCount += 1
            }
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
        text.utf8.withContiguousStorageIfAvailable(displayWidth) ?? text.unicodeScalars.count
    }

    static func displayWidth(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        // Every scalar has exactly one UTF-8 byte that is not a continuation byte (10xxxxxx). They are
        // counted eight at a time: bit 7 set where bit 6, shifted up into its place, is clear.
        guard let base = bytes.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        // Cells are nearly always ASCII: one pass of ORs tells so, without counting bits (a popcount per
        // word is a dozen instructions on the baseline x86-64 this is built for).
        var high: UInt64 = 0
        var i = 0
        while i + 8 <= bytes.count {
            high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(base[i])
            i += 1
        }
        if high & 0x8080_8080_8080_8080 == 0 { return bytes.count }
        var continuation = 0
        i = 0
        while i + 8 <= bytes.count {
            let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            continuation += (x & ~(x << 1) & 0x8080_8080_8080_8080).nonzeroBitCount
            i += 8
        }
        while i < bytes.count {
            if base[i] & 0xC0 == 0x80 { continuation += 1 }
            i += 1
        }
        return bytes.count - continuation
    }

    private func layout(_ visible: [Int], widths natural: [Int], width: Int, chunkBytes: Int, to write: ByteSink) {
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
        let writer = LineWriter(
            visible: visible, widths: widths, left: visible.map { columns[$0].alignment == .left })
        var text: [UInt8] = []
        text.reserveCapacity(min(chunkBytes, (bodyRowCount + footer.count + 2) * (lineWidth + 1)) + 4 * lineWidth)
        func line(_ cells: Cells) {
            writer.write(cells, into: &text)
            text.flush(over: chunkBytes, to: write)
        }
        var cells = Cells()
        func line(_ texts: [String]) {
            cells.set(texts)
            line(cells)
        }
        line(columns.map(\.title))
        let rule = String(repeating: "─", count: min(width, lineWidth)) + "\n"
        text.appendUTF8(rule)
        var shown = columns.map { _ in false }
        for column in visible { shown[column] = true }
        if rowsOnTwoThreads, let rowSource, rowSource.count >= Self.twoThreadRows {
            rows.forEach(line)
            let count = rowSource.count
            let half = Half([])
            let secondWriter = LineWriter(visible: visible, widths: widths, left: writer.left)
            let thread = WorkerThread {
                forEachSourceRow(count / 2..<count, shown: shown) { secondWriter.write($0, into: &half.bytes) }
            }
            thread.start()
            forEachSourceRow(0..<count / 2, shown: shown, line)
            thread.join()
            text.flush(over: 0, to: write)
            half.bytes.flush(over: 0, to: write)
        } else {
            forEachBodyRow(shown: shown, line)
        }
        if !footer.isEmpty {
            text.appendUTF8(rule)
            footer.forEach(line)
        }
        text.flush(over: 0, to: write)
    }

    /// Writes one line of cells padded to the layout's widths (a value with the layout, not a closure
    /// over it: rows are written tens of thousands of times). A line is put together in `line` with plain
    /// copies and then appended once: appending cell by cell and space by space to the text cost more than
    /// formatting the numbers.
    private struct LineWriter {
        let visible: [Int]
        let widths: [Int]
        let left: [Bool]
        let line = LineBuffer()
        /// Padding and separators of a line at most: every cell padded to its width, or cut with a 3-byte
        /// ellipsis, fits in this and the cells' bytes.
        let padBound: Int

        init(visible: [Int], widths: [Int], left: [Bool]) {
            self.visible = visible
            self.widths = widths
            self.left = left
            padBound = widths.reduce(0, +) + 5 * visible.count
        }

        func write(_ cells: Cells, into text: inout [UInt8]) {
            // The line is filled with spaces first, so that padding is only a move of the cursor: a fill
            // per cell cost a call per cell.
            let bound = padBound + cells.bytes.count
            var out = LineCursor(base: line.reserve(bound))
            out.base.update(repeating: 0x20, count: bound)
            do {
                let all = cells.bytes
                for i in visible.indices {
                    if i > 0 { out.pad(2) }
                    let cell = UnsafeBufferPointer(rebasing: all[cells.range(visible[i])])
                    let cellWidth = cells.width(visible[i])
                    let width = widths[i]
                    if cellWidth > width, width >= 3, cell.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                        // `shortenMiddle` on printable ASCII (one Character per byte), cut as bytes: paths are
                        // nearly always ASCII, and a table of ids shortens tens of thousands of them.
                        let keep = width - 1, head = (keep + 1) / 2
                        out.copy(UnsafeBufferPointer(rebasing: cell[..<head]))
                        out.appendEllipsis()
                        out.copy(UnsafeBufferPointer(rebasing: cell[(cell.count - (keep - head))...]))
                    } else if cellWidth > width {
                        var short = TextTable.shortenMiddle(String(decoding: cell, as: UTF8.self), to: width)
                        short.withUTF8 { put($0, width: TextTable.displayWidth($0), column: i, into: &out) }
                    } else {
                        put(cell, width: cellWidth, column: i, into: &out)
                    }
                }
            }
            let lineStart = text.count
            text.append(contentsOf: UnsafeBufferPointer(start: out.base, count: out.count))
            TextTable.trimTrailingSpaces(&text, lineStart: lineStart)
            text.append(0x0A)
        }

        private func put(_ cell: UnsafeBufferPointer<UInt8>, width: Int, column i: Int, into out: inout LineCursor) {
            if left[i] {
                out.copy(cell)
                out.pad(widths[i] - width)
            } else {
                out.pad(widths[i] - width)
                out.copy(cell)
            }
        }
    }

    /// Where the next byte of a line goes.
    private struct LineCursor {
        let base: UnsafeMutablePointer<UInt8>
        private(set) var count = 0

        init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            (base + count).update(from: source, count: bytes.count)
            count += bytes.count
        }

        /// "…" (U+2026).
        mutating func appendEllipsis() {
            base[count] = 0xE2
            base[count + 1] = 0x80
            base[count + 2] = 0xA6
            count += 3
        }

        /// Skips `spaces` bytes, which are spaces already (`LineWriter.write` fills the line first).
        mutating func pad(_ spaces: Int) {
            guard spaces > 0 else { return }
            count += spaces
        }
    }

    /// What the second thread of a two-half table measures or makes.
    private final class Half: @unchecked Sendable {
        var widths: [Int]
        var bytes: [UInt8] = []
        init(_ widths: [Int]) { self.widths = widths }
    }

    /// A line's bytes while it is put together (grown when a line needs more).
    private final class LineBuffer {
        private var base = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        private var capacity = 256

        deinit { base.deallocate() }

        func reserve(_ count: Int) -> UnsafeMutablePointer<UInt8> {
            if count > capacity {
                base.deallocate()
                capacity = max(count, 2 * capacity)
                base = .allocate(capacity: capacity)
            }
            return base
        }
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
    // The exact length as capacity: up to 15 bytes stay a small string, with no allocation.
    withHumanBytes(value) { bytes in
        String(unsafeUninitializedCapacity: bytes.count) { _ = $0.initialize(from: bytes); return bytes.count }
    }
}

/// Calls `body` with the bytes of `humanBytes(value)`, made on the stack: tables copy them straight into
/// their cells.
func withHumanBytes<R>(_ value: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    // A sign, 19 digits, ".9", " " and a unit: at most 28 bytes (`maxHumanBytes`).
    var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    return withUnsafeMutableBytes(of: &storage) { raw in
        let out = raw.bindMemory(to: UInt8.self)
        let n = writeHumanBytes(value, to: out.baseAddress!)
        return body(UnsafeBufferPointer(rebasing: out[..<n]))
    }
}

/// The most bytes `writeHumanBytes` writes.
let maxHumanBytes = 28
/// The most bytes `writeDecimal` writes: `Int.min`'s sign and 19 digits.
let maxDecimalBytes = 20

/// Writes `humanBytes(value)` at `out` (room for `maxHumanBytes`); returns how many bytes it took.
@inline(__always)
func writeHumanBytes(_ value: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
    let (unit, tenths) = humanBytesParts(value)
    if unit == 0 {
        var n = writeDecimal(value, to: out)
        out[n] = 0x20
        out[n + 1] = UInt8(ascii: "B")
        n += 2
        return n
    }
    // |tenths| >= 10 past bytes (the unit is at least 1024 bytes), so the integer part carries the sign.
    var n = writeDecimal(tenths / 10, to: out)
    out[n] = UInt8(ascii: ".")
    out[n + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: (tenths % 10).magnitude)
    out[n + 2] = 0x20
    // "KiB", "MiB", …
    out[n + 3] = unitLetter(unit)
    out[n + 4] = UInt8(ascii: "i")
    out[n + 5] = UInt8(ascii: "B")
    n += 6
    return n
}

/// The display width of `humanBytes(value)`, without making the string (tables measure every cell first).
public func humanBytesWidth(_ value: Int) -> Int {
    let (unit, tenths) = humanBytesParts(value)
    if unit == 0 { return decimalWidth(value) + 2 }
    // Digits, ".9", " " and a three-letter unit.
    return decimalWidth(tenths / 10) + 6
}

/// The unit index, and the amount in that unit in tenths (the value itself for bytes).
///
/// The unit is the largest (up to TiB) whose size the magnitude reaches, read off its highest bit: the
/// sizes are powers of two, so that agrees with dividing a `Double` by 1024 while it is at least 1024
/// (values near a unit's size are exact as `Double`s). Dividing by the unit's size at once gives the same
/// `Double` as dividing by 1024 again and again: every step is exact.
@inline(__always)
private func humanBytesParts(_ value: Int) -> (unit: Int, tenths: Int) {
    let magnitude = value.magnitude
    guard magnitude >= 1024 else { return (0, value) }
    let unit = min(4, (UInt64.bitWidth - 1 - magnitude.leadingZeroBitCount) / 10)
    let amount = Double(value) / Double(UInt64(1) << UInt64(10 * unit))
    return (unit, Int((amount * 10).rounded()))
}

/// The length of `String(value)`: most table numbers have a few digits, told by comparisons, not divisions.
@inline(__always)
public func decimalWidth(_ value: Int) -> Int {
    let magnitude = value.magnitude
    let sign = value < 0 ? 1 : 0
    if magnitude < 10 { return sign + 1 }
    if magnitude < 100 { return sign + 2 }
    if magnitude < 1000 { return sign + 3 }
    if magnitude < 10000 { return sign + 4 }
    var rest = magnitude / 10000
    var width = sign + 5
    while rest >= 10 {
        rest /= 10
        width += 1
    }
    return width
}

/// The first letter of a unit past bytes: K, M, G, T.
@inline(__always)
private func unitLetter(_ unit: Int) -> UInt8 {
    switch unit {
    case 1: UInt8(ascii: "K")
    case 2: UInt8(ascii: "M")
    case 3: UInt8(ascii: "G")
    default: UInt8(ascii: "T")
    }
}
