@testable import TrafficAggregation
import Testing
@testable import TrafficAnalysis

/// The per-group response-size histogram behind the HTML report's p50/p95/max: bounded, mergeable, and
/// within 6.25 % of the exact nearest-rank percentile (exact below 16 bytes and at the maximum).
@Suite struct SizeHistogramTests {
    /// The exact nearest-rank quantile of `values`.
    static func exact(_ values: [Int], _ q: Double) -> Int {
        let sorted = values.sorted()
        let rank = max(1, Int((q * Double(sorted.count)).rounded(.up)))
        return sorted[rank - 1]
    }

    /// A deterministic spread of sizes over many magnitudes (a linear congruential generator).
    static func sizes(seed: UInt64, count: Int) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let magnitude = Int(state >> 59)  // 0…31
            return Int((state >> 20) & ((1 << UInt64(magnitude)) - 1))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5]) func quantilesAreWithinABucketOfTheExactOnes(seed: Int) {
        let values = Self.sizes(seed: UInt64(seed), count: 2000)
        var histogram = SizeHistogram()
        for v in values { histogram.add(v) }
        #expect(histogram.count == values.count)
        #expect(histogram.max == values.max())
        for q in [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0] {
            let exact = Self.exact(values, q)
            let estimate = histogram.quantile(q)!
            let allowed = exact < 16 ? 0 : Int((Double(exact) * 0.0625).rounded(.up))
            #expect(abs(estimate - exact) <= allowed, "q=\(q): \(estimate) vs exact \(exact)")
        }
        #expect(histogram.quantile(1.0) == values.max())
    }

    @Test func smallSizesAreExact() {
        var histogram = SizeHistogram()
        for v in [0, 3, 3, 7, 15] { histogram.add(v) }
        #expect(histogram.quantile(0.5) == 3)
        #expect(histogram.quantile(0.2) == 0)
        #expect(histogram.quantile(1) == 15)
        #expect(SizeHistogram().quantile(0.5) == nil)
    }

    @Test func bucketsCoverEverySizeWithoutOverlap() {
        for value in [16, 17, 31, 32, 33, 1000, 1023, 1024, 65_535, 1 << 40, Int.max] {
            let bucket = SizeHistogram.bucket(of: value)
            #expect(SizeHistogram.range(of: bucket).contains(value), "\(value) in bucket \(bucket)")
            #expect(bucket < 16 + 59 * 8 + 8)
        }
        for bucket in 16..<200 {
            #expect(SizeHistogram.range(of: bucket).upperBound + 1 == SizeHistogram.range(of: bucket + 1).lowerBound)
        }
    }

    /// Shards and spilled runs merge histograms: the merge must equal counting everything in one.
    @Test func mergingEqualsCountingTogether() {
        let a = Self.sizes(seed: 7, count: 500), b = Self.sizes(seed: 8, count: 700)
        var left = SizeHistogram(), right = SizeHistogram(), all = SizeHistogram()
        for v in a { left.add(v) }
        for v in b { right.add(v) }
        for v in a + b { all.add(v) }
        left.add(right)
        #expect(left == all)
        // Bounded: at most one entry per bucket, whatever the count.
        #expect(all.pairs.count <= 16 + 59 * 8)
    }

    /// The byte form of a spilled group keeps the histogram (the spill tests compare whole totals as well).
    @Test func theSpooledFormKeepsTheHistogram() throws {
        var totals = GroupTotals()
        for v in Self.sizes(seed: 3, count: 300) { totals.responseSizes.add(v) }
        var bytes: [UInt8] = []
        SpooledGroup.append(hash: 42, ReportGroup(keys: ["h", "/p"], totals: totals), to: &bytes)
        let decoded = try #require(bytes.withUnsafeBytes { SpooledGroup.decode($0) })
        #expect(decoded.group.totals == totals)
        #expect(decoded.group.totals.responseSizes.quantile(0.95) == totals.responseSizes.quantile(0.95))
        // A damaged entry (cut inside the histogram) is refused, not misread.
        bytes.removeLast()
        let cut = bytes.withUnsafeBytes { SpooledGroup.decode($0) }
        #expect(cut == nil)
    }

    /// Waits (issue 29) are a second histogram after the sizes: kept with or without sizes beside them.
    @Test(arguments: [true, false]) func theSpooledFormKeepsTheWaits(withSizes: Bool) throws {
        var totals = GroupTotals()
        if withSizes { for v in Self.sizes(seed: 4, count: 50) { totals.responseSizes.add(v) } }
        for v in Self.sizes(seed: 5, count: 200) { totals.waits.add(v * 1000) }
        var bytes: [UInt8] = []
        SpooledGroup.append(hash: 7, ReportGroup(keys: ["h", "/w"], totals: totals), to: &bytes)
        let decoded = try #require(bytes.withUnsafeBytes { SpooledGroup.decode($0) })
        #expect(decoded.group.totals == totals)
        bytes.removeLast()
        #expect(bytes.withUnsafeBytes { SpooledGroup.decode($0) } == nil)
    }
}
