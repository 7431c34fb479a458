/// A capture timestamp: nanoseconds since the Unix epoch, UTC.
///
/// Integer nanoseconds keep pcap's microsecond and nanosecond stamps exact and make arithmetic and
/// printing deterministic. Timestamps read from a capture are clamped to ±(2^62 − 1) ns (the years 1823 to
/// 2116, which holds every 32-bit pcap second count): the difference of any two then fits in an `Int64`,
/// so a damaged or hostile timestamp can never make time arithmetic overflow.
public struct CaptureTime: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    /// The largest magnitude a timestamp read from a capture may have.
    public static let limit: Int64 = (1 << 62) - 1

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// A capture's timestamp, clamped to ±`limit`. Inlinable: the read loop makes one per packet.
    @inlinable
    public init(seconds: Int64, nanoseconds: Int64) {
        // Every pcap record: 32-bit seconds and a sub-second count below 2^32, whose sum stays under `limit`
        // (checked arithmetic on every packet cost 2.5 M instructions per 100 MiB).
        if UInt64(bitPattern: seconds) < 1 << 32, UInt64(bitPattern: nanoseconds) < 1 << 32 {
            self.nanoseconds = seconds &* 1_000_000_000 &+ nanoseconds
            return
        }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowSum) = whole.addingReportingOverflow(nanoseconds)
        let value = overflow ? (seconds < 0 ? Int64.min : Int64.max) : overflowSum ? (nanoseconds < 0 ? Int64.min : Int64.max) : sum
        self.nanoseconds = min(max(value, -Self.limit), Self.limit)
    }

    public static let zero = CaptureTime(nanoseconds: 0)

    public static func < (a: CaptureTime, b: CaptureTime) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Seconds as a floating-point number, for JSON output.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Time from `self` to `later`, never negative (a capture's clock can step back), saturating.
    public func duration(to later: CaptureTime) -> CaptureTime {
        let (difference, overflow) = later.nanoseconds.subtractingReportingOverflow(nanoseconds)
        if overflow { return CaptureTime(nanoseconds: later.nanoseconds > nanoseconds ? .max : 0) }
        return CaptureTime(nanoseconds: max(0, difference))
    }

    /// `self + other`, saturating: sums of spans over many captures.
    public func adding(_ other: CaptureTime) -> CaptureTime {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(other.nanoseconds)
        return CaptureTime(nanoseconds: overflow ? (other.nanoseconds < 0 ? .min : .max) : sum)
    }

    /// `seconds.nnnnnnnnn` with exactly nine decimals: exact, and stable across platforms.
    public var decimalString: String {
        withDecimalBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// `decimalString`'s UTF-8, valid during the call (no string made: NDJSON writes two per record).
    public func withDecimalBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        // Digits written backwards into a stack buffer (at most a sign, 10 whole digits, the point and 9): every
        // record's times and every group's waits go through here, and string interpolation cost several times more.
        let negative = nanoseconds < 0
        let magnitude = nanoseconds.magnitude
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var i = buffer.count
            var fraction = magnitude % 1_000_000_000
            for _ in 0..<9 {
                i -= 1
                buffer[i] = 0x30 + UInt8(truncatingIfNeeded: fraction % 10)
                fraction /= 10
            }
            i -= 1
            buffer[i] = 0x2e
            var whole = magnitude / 1_000_000_000
            repeat {
                i -= 1
                buffer[i] = 0x30 + UInt8(truncatingIfNeeded: whole % 10)
                whole /= 10
            } while whole > 0
            if negative {
                i -= 1
                buffer[i] = 0x2d
            }
            return body(UnsafeBufferPointer(rebasing: buffer[i...]))
        }
    }
}
