import Testing
@testable import TrafficOutput

/// Table cells are written straight into their buffer (numbers without a `String`, widths kept as they are
/// added): each against the `String` it stands for, on edge cases (huge and negative numbers, 0, unit
/// boundaries, non-ASCII text).
@Suite struct TableCellsTests {
    static let values: [Int] = {
        var values = [0, 1, -1, 9, 10, 99, 100, 999, 1000, 1023, 1024, 1025, 9999, 10_000, 99_999, 100_000, 1_048_575,
                      1_048_576, 1 << 40, (1 << 40) - 1, (1 << 50) + 3, (1 << 53) + 1, Int.max, Int.min, Int.min + 1, -1024]
        var x: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<5_000 {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            values.append(Int(truncatingIfNeeded: x >> (x % 64)))
        }
        return values
    }()

    /// `humanBytes` as it was first written: a `Double` divided by 1024 while it is at least 1024.
    static func reference(_ value: Int) -> String {
        var amount = Double(value), unit = 0
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        while abs(amount) >= 1024, unit < 4 {
            amount /= 1024
            unit += 1
        }
        if unit == 0 { return "\(value) B" }
        let tenths = Int((amount * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10)) \(units[unit])"
    }

    static func text(_ cells: TextTable.Cells, _ i: Int) -> String { cells.withCell(i) { String(decoding: $0, as: UTF8.self) } }

    @Test func numbersAreTheirStrings() {
        var cells = TextTable.Cells()
        for value in Self.values {
            cells.removeAll()
            cells.append(decimal: value)
            cells.append(humanBytes: value)
            #expect(Self.text(cells, 0) == String(value))
            #expect(Self.text(cells, 1) == Self.reference(value), "\(value)")
            #expect(cells.width(0) == String(value).count && cells.width(1) == Self.reference(value).count)
            #expect(humanBytes(value) == Self.reference(value) && humanBytesWidth(value) == Self.reference(value).count)
            #expect(decimalWidth(value) == String(value).count)
        }
    }

    /// A row's numbers appended at once: hidden columns empty, the first counts as decimals, the others as
    /// bytes (or decimals with exact bytes); the buffers grow past their first capacity.
    @Test(arguments: [false, true])
    func numbersOfARow(exact: Bool) {
        var cells = TextTable.Cells()
        cells.append("ünïcödé key")
        let shown = [true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true,
                     true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]
        let values = Array(Self.values.prefix(32))
        values.withUnsafeBufferPointer { cells.append(numbers: $0, decimalCount: 1, exact: exact, shown: shown) }
        #expect(cells.count == 33)
        #expect(Self.text(cells, 0) == "ünïcödé key" && cells.width(0) == "ünïcödé key".unicodeScalars.count)
        for (i, value) in values.enumerated() {
            let expected = !shown[i + 1] ? "" : i == 0 || exact ? String(value) : Self.reference(value)
            #expect(Self.text(cells, i + 1) == expected)
            #expect(cells.width(i + 1) == expected.count)
        }
        // A copy keeps its cells when the original goes on.
        let copy = cells
        cells.removeAll()
        cells.append(decimal: 5)
        #expect(copy.count == 33 && Self.text(copy, 0) == "ünïcödé key" && Self.text(cells, 0) == "5")
    }

    @Test(arguments: ["", "a", "abcdefgh", "abcdefghi", "café", "naïve/ünïcödé/😀/e\u{301}", String(repeating: "é", count: 17)])
    func displayWidthCountsScalars(text: String) {
        #expect(TextTable.displayWidth(text) == text.unicodeScalars.count)
        var cells = TextTable.Cells()
        cells.append(text)
        #expect(cells.width(0) == text.unicodeScalars.count)
    }
}
