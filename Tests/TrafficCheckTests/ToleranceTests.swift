import Testing
@testable import TrafficCheck

/// Each tolerance rule at its limit, just under and just over, on hand-made numbers.
@Suite struct ToleranceTests {
    /// (baseline, now, failed) in whole bytes.
    typealias Case = (Int, Int, Bool)

    @Test(arguments: [(1000, 1000, false), (1000, 999, false), (1000, 1001, true), (0, 1, true)] as [Case])
    func noToleranceFailsAnyIncrease(base: Int, now: Int, failed: Bool) {
        #expect(Tolerance().isExceeded(base: Amount(base), now: Amount(now)) == failed)
    }

    @Test(arguments: [(1000, 1100, false), (1000, 1099, false), (1000, 1101, true), (0, 1, true), (5000, 1, false)] as [Case])
    func percentage(base: Int, now: Int, failed: Bool) {
        let tolerance = Tolerance(partsPerMillion: 100_000)  // 10%
        #expect(tolerance.isExceeded(base: Amount(base), now: Amount(now)) == failed)
    }

    @Test func percentageIsExactToAThousandth() {
        let tolerance = Tolerance(partsPerMillion: 100_000)
        #expect(!tolerance.isExceeded(base: Amount(1000), now: Amount(milli: 1_100_000)))
        #expect(tolerance.isExceeded(base: Amount(1000), now: Amount(milli: 1_100_001)))
        // 12.5% of 333.333 is 41.666625: 374.999 passes, 375.000 does not.
        let eighth = Tolerance(partsPerMillion: 125_000)
        #expect(!eighth.isExceeded(base: Amount(milli: 333_333), now: Amount(milli: 374_999)))
        #expect(eighth.isExceeded(base: Amount(milli: 333_333), now: Amount(milli: 375_000)))
    }

    @Test(arguments: [(1000, 3048, false), (1000, 3047, false), (1000, 3049, true)] as [Case])
    func bytes(base: Int, now: Int, failed: Bool) {
        let tolerance = Tolerance(absolute: 2048)  // 2KiB
        #expect(tolerance.isExceeded(base: Amount(base), now: Amount(now)) == failed)
    }

    /// 10% or 2 KiB: the larger allowance applies, so a change fails only when it exceeds both.
    @Test(arguments: [
        (1000, 3048, false), (1000, 3049, true),  // small: 2048 B > 100 B (10%)
        (30000, 33000, false), (30000, 33001, true),  // large: 3000 B (10%) > 2048 B
        (20480, 22528, false), (20480, 22529, true),  // both allow exactly 2048 B
    ] as [Case])
    func percentageAndBytesTakeTheLarger(base: Int, now: Int, failed: Bool) {
        let tolerance = Tolerance(partsPerMillion: 100_000, absolute: 2048)
        #expect(tolerance.isExceeded(base: Amount(base), now: Amount(now)) == failed)
    }

    @Test func noOverflowOnHugeValues() {
        let tolerance = Tolerance(partsPerMillion: 1_000_000_000)
        let base = Amount(milli: Int.max / 2)
        #expect(!tolerance.isExceeded(base: base, now: Amount(milli: Int.max)))
    }

    @Test func allowanceAndDescription() {
        let tolerance = Tolerance(partsPerMillion: 100_000, absolute: 2048)
        #expect(tolerance.allowance(base: Amount(1000)) == Amount(2048))
        #expect(tolerance.allowance(base: Amount(30000)) == Amount(3000))
        #expect(tolerance.describe(unit: "B") == "+10% or +2048 B, whichever is larger")
        #expect(Tolerance().describe(unit: "B") == "no increase")
        #expect(Tolerance(partsPerMillion: 125_001).describe(unit: "B") == "+12.5001%")
    }

    @Test(arguments: [
        ("10%", 100_000), ("0%", 0), ("12.5%", 125_000), ("0.0001%", 1), ("150%", 1_500_000),
    ] as [(String, Int)])
    func parsesPercentages(text: String, ppm: Int) {
        #expect(Tolerance.parsePercent(text) == ppm)
    }

    @Test(arguments: ["10", "%", "-5%", "1.23456%", "ten%", "1e3%"])
    func rejectsPercentages(text: String) {
        #expect(Tolerance.parsePercent(text) == nil)
    }
}
