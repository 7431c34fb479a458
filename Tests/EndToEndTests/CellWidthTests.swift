import Testing
import TrafficOutput

/// Tables are measured from numbers without formatting them: the widths must be those of the strings.
@Suite struct CellWidthTests {
    static let values: [Int] = {
        var values = [0, 1, 9, 10, 99, 100, 1023, 1024, 1025, 10_239, 10_240, 1_048_063, 1_048_064, 1_048_575,
                      1_048_576, 1_073_741_823, 1_073_741_824, Int.max, Int.min, -1, -1023, -1024, -1_048_576]
        // Around every unit boundary and the tenths that round up to the next whole number.
        for power in 0..<5 {
            let unit = 1 << (10 * power)
            for k in [1, 9, 10, 99, 100, 999, 1000, 1023] {
                for delta in -3...3 { values.append(k * unit + delta * max(1, unit / 20)) }
            }
        }
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            values.append(Int(truncatingIfNeeded: x >> UInt64(x % 60)))
        }
        return values
    }()

    @Test func humanBytesWidthIsTheStringsWidth() {
        for value in Self.values {
            #expect(humanBytesWidth(value) == humanBytes(value).count, "\(value): \(humanBytes(value))")
        }
    }

    /// Written out by hand, and against the formula the bytes writer replaced (Double, concatenated).
    @Test func humanBytesSpellsUnits() {
        #expect(humanBytes(0) == "0 B")
        #expect(humanBytes(1023) == "1023 B")
        #expect(humanBytes(1024) == "1.0 KiB")
        #expect(humanBytes(1536) == "1.5 KiB")
        #expect(humanBytes(1_048_524) == "1023.9 KiB")
        #expect(humanBytes(1_048_575) == "1024.0 KiB")
        #expect(humanBytes(1_048_576) == "1.0 MiB")
        #expect(humanBytes(-2048) == "-2.0 KiB")
        #expect(humanBytes(-5) == "-5 B")
        #expect(humanBytes(Int.max) == "8388608.0 TiB")
        func reference(_ value: Int) -> String {
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
        for value in Self.values { #expect(humanBytes(value) == reference(value), "\(value)") }
    }

    /// A long ASCII path keeps its start and end around "…" (cut as bytes), a non-ASCII one by characters.
    @Test func narrowTablesShortenPathsInTheMiddle() {
        var table = TextTable(columns: [.init("path", .left, shrinkable: true), .init("n")])
        let paths = ["/api/v1/users/1234567890/profile/settings", "/café/ünïcödé/1234567890/ßettings/naïve"]
        table.rowSource = (paths.count, { i, _, cells in
            cells.append(paths[i])
            cells.append(decimal: i)
        })
        table.rowWidths = { i, widths in
            widths[0] = max(widths[0], paths[i].count)
            widths[1] = max(widths[1], 1)
        }
        // 41 columns of path + 2 + 1 do not fit 20: the path column gets 17, so 8 characters, "…", 8 characters.
        #expect(table.render(width: 20) == """
            path               n
            ────────────────────
            /api/v1/…settings  0
            /café/ün…gs/naïve  1

            """)
    }

    /// A table made in two halves on two threads is byte for byte the table made on one (cut paths,
    /// non-ASCII cells, widths that only the second half reaches, a static row and a footer included).
    @Test(arguments: [TextTable.twoThreadRows - 1, TextTable.twoThreadRows, 5_001, 20_000])
    func twoThreadTableEqualsOneThreadTable(rowCount: Int) {
        func make(twoThreads: Bool, parts: Int = 0) -> TextTable {
            var table = TextTable(columns: [.init("path", .left, shrinkable: true), .init("n"), .init("note", .left, dropOrder: 1)])
            table.rows = [["/static", "0", "first"]]
            func path(_ i: Int) -> String { i % 7 == 0 ? "/café/\(i)" : "/api/v1/items/\(i * 7919)/details" }
            // The widest number is near the end: only the second half sees it.
            func number(_ i: Int) -> Int { i == rowCount - 3 ? 123_456_789 : i }
            table.rowSource = (rowCount, { i, shown, cells in
                cells.append(path(i))
                cells.append(decimal: number(i))
                if shown[2] { cells.append(i % 3 == 0 ? "ünïcode" : "") } else { cells.appendEmpty() }
            })
            table.rowWidths = { i, widths in
                widths[0] = max(widths[0], path(i).unicodeScalars.count)
                widths[1] = max(widths[1], decimalWidth(number(i)))
                widths[2] = max(widths[2], i % 3 == 0 ? 7 : 0)
            }
            if parts > 0 {
                // Measured in parts of rows in no order: every third row, shuffled by a stride.
                let widths = table.rowWidths!
                table.rowWidths = nil
                table.rowWidthParts = (0..<parts).map { part in
                    { measured in
                        for i in stride(from: rowCount - 1 - part, through: 0, by: -parts) { widths(i, &measured) }
                    }
                }
            }
            table.footer = [["total", "1", ""]]
            table.rowsOnTwoThreads = twoThreads
            return table
        }
        for width in [24, 40, 200] {
            var pieces = 0
            var two = ""
            make(twoThreads: true).render(width: width, chunkBytes: 4096) { two += $0; pieces += 1 }
            let one = make(twoThreads: false).render(width: width)
            #expect(two == one, "width \(width)")
            for parts in [1, 3] {
                #expect(make(twoThreads: false, parts: parts).render(width: width) == one, "width \(width), \(parts) parts")
            }
            #expect(one.split(separator: "\n").count == rowCount + 5)
            #expect(pieces > 1)
        }
    }

    @Test func decimalWidthIsTheStringsWidth() {
        for value in Self.values { #expect(decimalWidth(value) == String(value).count, "\(value)") }
    }
}
