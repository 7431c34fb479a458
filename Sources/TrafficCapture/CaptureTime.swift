/// A capture timestamp: nanoseconds since the Unix epoch, UTC.
///
/// Integer nanoseconds keep pcap's microsecond and nanosecond stamps exact and make arithmetic and
/// printing deterministic; an `Int64` lasts until the year 2262.
public struct CaptureTime: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public init(seconds: Int64, nanoseconds: Int64) {
        self.nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue
            &+ nanoseconds
    }

    public static let zero = CaptureTime(nanoseconds: 0)

    public static func < (a: CaptureTime, b: CaptureTime) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Seconds as a floating-point number, for JSON output.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Seconds from `self` to `later`, saturating.
    public func duration(to later: CaptureTime) -> CaptureTime {
        CaptureTime(nanoseconds: later.nanoseconds.subtractingReportingOverflow(nanoseconds).partialValue)
    }

    /// `seconds.nnnnnnnnn` with exactly nine decimals: exact, and stable across platforms.
    public var decimalString: String {
        let negative = nanoseconds < 0
        let magnitude = nanoseconds.magnitude
        let whole = magnitude / 1_000_000_000
        let fraction = String(magnitude % 1_000_000_000)
        let padded = String(repeating: "0", count: 9 - fraction.count) + fraction
        return (negative ? "-" : "") + "\(whole).\(padded)"
    }
}
