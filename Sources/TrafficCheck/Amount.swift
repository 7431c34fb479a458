/// A count or byte size exact to a thousandth: the unit of per-request averages, so that every
/// comparison is integer arithmetic and gives the same verdict on every machine.
public struct Amount: Sendable, Hashable, Comparable {
    /// The value times 1000.
    public var milli: Int

    public init(milli: Int) { self.milli = milli }

    /// A whole number of bytes or requests.
    public init(_ units: Int) { milli = units &* 1000 }

    /// `total / count` rounded half up to a thousandth; a count of zero divides by one (a group with
    /// responses but no requests still has a cost).
    public init(total: Int, count: Int) {
        let divisor = max(count, 1)
        milli = (total &* 1000 &+ divisor / 2) / divisor
    }

    public static let zero = Amount(milli: 0)

    public static func < (lhs: Amount, rhs: Amount) -> Bool { lhs.milli < rhs.milli }
    public static func - (lhs: Amount, rhs: Amount) -> Amount { Amount(milli: lhs.milli &- rhs.milli) }

    /// Rounded half away from zero to `places` (0...3) decimals, always showing them: `2166.7`.
    public func fixed(_ places: Int) -> String {
        let scale = [1000, 100, 10, 1][places]
        let magnitude = milli.magnitude
        let rounded = (magnitude + UInt(scale / 2)) / UInt(scale)
        let sign = milli < 0 && rounded > 0 ? "-" : ""
        guard places > 0 else { return sign + String(rounded) }
        let unit = UInt([1, 10, 100, 1000][places])
        let fraction = String(rounded % unit)
        return sign + String(rounded / unit) + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// Whole numbers without decimals, others with one: `2048`, `2166.7`. For tables and messages.
    public var short: String { milli % 1000 == 0 ? String(milli / 1000) : fixed(1) }

    /// Exact, trailing zeros dropped: `2048`, `2166.667`. For JSON.
    public var exact: String {
        var text = fixed(3)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `short` with a sign: `+1000`, `-12.5`, `0`.
    public var signed: String { milli > 0 ? "+" + short : short }

    /// The change from `base` as a percentage with one decimal and a sign, or nil when `base` is zero.
    public func percentChange(from base: Amount) -> String? {
        guard base.milli != 0 else { return nil }
        // In Double: the difference of two amounts can exceed Int, and so can the tenths of a percentage.
        let percent = (Double(milli) - Double(base.milli)) / Double(base.milli) * 100
        let text = String(Int(min((abs(percent) * 10).rounded(), 1e15)))
        let padded = text.count < 2 ? "0" + text : text
        let magnitude = padded.dropLast() + "." + padded.suffix(1)
        if magnitude == "0.0" { return "0.0%" }
        return (percent > 0 ? "+" : "-") + magnitude + "%"
    }
}
