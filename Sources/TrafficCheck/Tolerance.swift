/// How much a value may grow before `check` fails it: a percentage of the baseline, an absolute
/// allowance, or both — in which case the larger allowance applies (the change fails only when it
/// exceeds every allowance given). With neither, any increase fails. Decreases never fail.
public struct Tolerance: Sendable, Equatable {
    /// The allowed increase in parts per million of the baseline value (10% = 100 000).
    public var partsPerMillion: Int?
    /// The allowed increase in the field's unit: bytes, or requests for the request count.
    public var absolute: Int?

    public init(partsPerMillion: Int? = nil, absolute: Int? = nil) {
        self.partsPerMillion = partsPerMillion
        self.absolute = absolute
    }

    /// True when going from `base` to `now` is more than allowed.
    public func isExceeded(base: Amount, now: Amount) -> Bool {
        // Saturating: a hand-edited baseline can hold numbers near Int.max.
        let (difference, overflow) = now.milli.subtractingReportingOverflow(base.milli)
        let delta = overflow ? (now.milli > base.milli ? Int.max : Int.min) : difference
        guard delta > 0 else { return false }
        if partsPerMillion == nil && absolute == nil { return true }
        if let absolute, delta <= absolute &* 1000 { return false }
        if let partsPerMillion {
            // delta / base <= ppm / 1e6, cross-multiplied in 128 bits so no value can overflow it.
            let lhs = delta.multipliedFullWidth(by: 1_000_000)
            let rhs = max(base.milli, 0).multipliedFullWidth(by: partsPerMillion)
            if (lhs.high, lhs.low) <= (rhs.high, rhs.low) { return false }
        }
        return true
    }

    /// The largest increase allowed over `base` (the percentage rounded down to a thousandth).
    public func allowance(base: Amount) -> Amount {
        var allowed = 0
        if let absolute { allowed = absolute &* 1000 }
        if let partsPerMillion {
            let percent = Double(max(base.milli, 0)) * Double(partsPerMillion) / 1_000_000
            allowed = max(allowed, percent >= Double(Int.max) ? Int.max : Int(percent))
        }
        return Amount(milli: allowed)
    }

    /// `+10%`, `+2048 B`, `+10% or +2048 B`, or `no increase`, for the field's unit.
    public func describe(unit: String) -> String {
        var parts: [String] = []
        if let partsPerMillion { parts.append("+" + Self.percentText(partsPerMillion) + "%") }
        if let absolute { parts.append("+\(absolute) \(unit)") }
        if parts.count == 2 { return parts.joined(separator: " or ") + ", whichever is larger" }
        return parts.first ?? "no increase"
    }

    /// `10`, `12.5`, `0.0001` from parts per million.
    static func percentText(_ ppm: Int) -> String {
        var text = Amount(milli: ppm / 10).fixed(3)
        if ppm % 10 != 0 { text += String(ppm % 10) }
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `10%` or `12.5%` (up to four decimals) as parts per million; nil otherwise.
    public static func parsePercent(_ text: String) -> Int? {
        guard text.hasSuffix("%") else { return nil }
        let number = text.dropLast().filter { $0 != " " }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, !first.isEmpty, first.count <= 9,
              first.allSatisfy(\.isNumber), let whole = Int(first) else { return nil }
        var ppm = whole * 10_000
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 4, fraction.allSatisfy(\.isNumber), let digits = Int(fraction)
            else { return nil }
            ppm += digits * [1000, 100, 10, 1][fraction.count - 1]
        }
        return ppm
    }
}
