import TrafficOutput
/// Parses byte sizes as written on command lines and in budgets: `2048`, `512B`, `2KiB`, `1.5 MB`.
public enum ByteSize {
    /// Decimal (KB = 1000) and binary (KiB = 1024) units, case-insensitive.
    static let units: [String: Int] = [
        "": 1, "b": 1, "kb": 1000, "kib": 1024, "mb": 1_000_000, "mib": 1 << 20, "gb": 1_000_000_000, "gib": 1 << 30,
    ]

    /// The number of bytes, rounded half up to a whole byte; nil when `text` is not a size.
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.filter { $0 != " " }
        let numberEnd = trimmed.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? trimmed.endIndex
        let number = trimmed[..<numberEnd]
        guard let multiplier = units[trimmed[numberEnd...].lowercased()],
              let (whole, thousandths) = parseDecimal(number) else { return nil }
        let (product, overflow) = whole.multipliedReportingOverflow(by: multiplier)
        guard !overflow, product < Int.max / 2 else { return nil }
        return product + (thousandths * multiplier + 500) / 1000
    }

    /// `12.5` → (12, 500); at most three decimals.
    static func parseDecimal(_ text: Substring) -> (Int, Int)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, !first.isEmpty, first.count <= 15,
              let whole = Int(first) else { return nil }
        guard parts.count == 2 else { return (whole, 0) }
        let fraction = parts[1]
        guard !fraction.isEmpty, fraction.count <= 3, fraction.allSatisfy(\.isNumber),
              let digits = Int(fraction) else { return nil }
        return (whole, digits * [100, 10, 1][fraction.count - 1])
    }

    /// `2048 B` below 1 KiB, else the exact bytes and the binary size: `3072 B (3.0 KiB)`.
    public static func describe(_ amount: Amount) -> String {
        amount.milli.magnitude < 1_024_000
            ? "\(amount.short) B" : "\(amount.short) B (\(humanBytes(amount.milli / 1000)))"
    }
}
