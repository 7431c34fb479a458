/// Sizes (response `transfer_bytes`) counted in fixed log-linear buckets, with the exact maximum: enough for
/// approximate percentiles of a group in bounded memory, and mergeable across shards and spilled runs.
///
/// Buckets: sizes 0…15 each have their own (exact); above, every power of two is split into 8 equal
/// buckets, so a bucket spans at most 1/8 of its lower bound and its midpoint is within 6.25 % of any size
/// in it (the scheme of HdrHistogram with 3 significant bits). At most 16 + 59·8 buckets exist; a group
/// stores only the non-empty ones (responses of one endpoint cluster in a few), as `bucket << 48 | count`
/// sorted by bucket, so an empty histogram is one empty array and allocates nothing.
public struct SizeHistogram: Sendable, Equatable {
    /// Non-empty buckets, ascending: bucket index in the top 16 bits, count in the low 48.
    package private(set) var entries: [UInt64] = []
    /// The largest size counted (exact); 0 when empty.
    public private(set) var max = 0

    public init() {}

    package static let countBits: UInt64 = 48
    package static let countMask: UInt64 = (1 << 48) - 1

    /// Sizes counted.
    public var count: Int { entries.reduce(0) { $0 + Int($1 & Self.countMask) } }

    /// The bucket a size falls into; negative sizes (never produced) count as 0.
    package static func bucket(of value: Int) -> Int {
        guard value >= 16 else { return Swift.max(0, value) }
        let exponent = Int.bitWidth - value.leadingZeroBitCount - 1  // ≥ 4
        let sub = (value >> (exponent - 3)) & 7
        return 16 + (exponent - 4) * 8 + sub
    }

    /// The smallest and largest size of a bucket.
    package static func range(of bucket: Int) -> ClosedRange<Int> {
        guard bucket >= 16 else { return bucket...bucket }
        let exponent = (bucket - 16) / 8 + 4
        let sub = (bucket - 16) % 8
        let lower = (8 + sub) << (exponent - 3)
        let width = 1 << (exponent - 3)
        // The top bucket's upper bound would overflow: clamp it.
        return lower...(lower > Int.max - width ? Int.max : lower + width - 1)
    }

    public mutating func add(_ value: Int) {
        add(bucket: Self.bucket(of: value), count: 1)
        if value > max { max = value }
    }

    public mutating func add(_ other: SizeHistogram) {
        for entry in other.entries {
            add(bucket: Int(entry >> Self.countBits), count: entry & Self.countMask)
        }
        if other.max > max { max = other.max }
    }

    /// Adds a stored (bucket, count) pair and a stored maximum (a spilled group's histogram added in place:
    /// `SpooledGroup.add(_:to:)`); buckets in ascending order append, as `init(entries:max:)` would keep them.
    package mutating func add(storedBucket bucket: Int, count: UInt64) { add(bucket: bucket, count: count) }

    package mutating func raiseMax(_ value: Int) { if value > max { max = value } }

    package mutating func reserveEntries(_ count: Int) { entries.reserveCapacity(count) }

    private mutating func add(bucket: Int, count: UInt64) {
        let key = UInt64(bucket) << Self.countBits
        // Few buckets per group: a linear scan from the end (sizes of one endpoint repeat) beats a search.
        var i = entries.count
        while i > 0, entries[i - 1] >= key {
            if entries[i - 1] >> Self.countBits == UInt64(bucket) {
                // Counts stay below 2^48 (no capture holds that many messages): no carry into the bucket.
                entries[i - 1] += count
                return
            }
            i -= 1
        }
        entries.insert(key | count, at: i)
    }

    /// The size at quantile `q` (0…1) by nearest rank: the midpoint of the bucket holding that rank, the
    /// bucket cut at the exact maximum (so p100 is exact, and sizes below 16 are exact); nil when empty.
    public func quantile(_ q: Double) -> Int? {
        let total = count
        guard total > 0 else { return nil }
        let clamped = Swift.min(1, Swift.max(0, q))
        let rank = Swift.max(1, Int((clamped * Double(total)).rounded(.up)))
        var seen = 0
        for entry in entries {
            seen += Int(entry & Self.countMask)
            if seen >= rank {
                // The last rank is the maximum, which is known exactly.
                if rank == total { return max }
                let range = Self.range(of: Int(entry >> Self.countBits))
                let upper = Swift.min(range.upperBound, max)
                return range.lowerBound + (upper - range.lowerBound) / 2
            }
        }
        return max
    }

    /// The entries as (bucket, count) pairs.
    public var pairs: [(bucket: Int, count: Int)] {
        entries.map { (Int($0 >> Self.countBits), Int($0 & Self.countMask)) }
    }

    /// Rebuilds a histogram from entries as `entries` holds them (buckets strictly ascending, counts not zero) and
    /// `max`; nil if they could not have been written from a histogram. The spilled form's reader: no pair array,
    /// no search per entry.
    package init?(entries: [UInt64], max: Int) {
        var previous = -1
        for entry in entries {
            let bucket = Int(entry >> Self.countBits)
            guard bucket > previous, bucket < 1 << 15, entry & Self.countMask != 0 else { return nil }
            previous = bucket
        }
        guard max >= 0 else { return nil }
        self.entries = entries
        self.max = max
    }

    /// Rebuilds a histogram from `pairs` (the form JSON reports carry); nil when a bucket repeats, is out of
    /// range or out of order, or a count is not positive.
    public init?(pairs: [(bucket: Int, count: Int)], max: Int) {
        var entries: [UInt64] = []
        entries.reserveCapacity(pairs.count)
        for (bucket, count) in pairs {
            guard bucket >= 0, bucket < 1 << 15, count > 0, UInt64(count) <= Self.countMask else { return nil }
            entries.append(UInt64(bucket) << Self.countBits | UInt64(count))
        }
        self.init(entries: entries, max: max)
    }
}
