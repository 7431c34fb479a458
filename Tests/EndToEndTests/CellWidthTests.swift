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

    @Test func decimalWidthIsTheStringsWidth() {
        for value in Self.values { #expect(decimalWidth(value) == String(value).count, "\(value)") }
    }
}
