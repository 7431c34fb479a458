import Testing
import TrafficTestSupport
@testable import TrafficAnalysis

/// The group store against a plain dictionary, across several chunks, and the in-place row permutation
/// against building a second array.
@Suite struct GroupTableTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func slotsAndTotalsMatchADictionary(seed: UInt64) {
        var rng = SplitMix(state: seed)
        var table = GroupTable()
        var reference: [[String]: GroupTotals] = [:]
        for _ in 0..<30_000 {
            let key = ["h\(rng.next() % 3)", "/p/\(rng.next() % 9_000)"]
            var totals = GroupTotals()
            totals.requests = Int(rng.next() % 5)
            totals.request.bytes = Int(rng.next() % 1_000)
            table[table.slot(for: key)].add(totals)
            reference[key, default: GroupTotals()].add(totals)
        }
        #expect(table.count == reference.count)
        #expect(table.count > 8_192)  // more than two chunks
        for (slot, key) in table.keys.enumerated() { #expect(table[slot] == reference[key]) }
        var drained: [[String]: GroupTotals] = [:]
        table.drain { drained[$0] = $1 }
        #expect(drained == reference)
        #expect(table.count == 0)
    }

    @Test(arguments: [0, 1, 2, 5, 4_097])
    func permuteEqualsGathering(count: Int) {
        var rng = SplitMix(state: UInt64(count) + 7)
        let rows = (0..<count).map { i -> ReportGroup in
            var totals = GroupTotals()
            totals.requests = i
            return ReportGroup(keys: ["k\(i)"], totals: totals)
        }
        let source = Array(0..<count).shuffled(using: &rng)
        var permuted = rows
        ReportBuilder.permute(&permuted, by: source)
        #expect(permuted.map(\.keys) == source.map { rows[$0].keys })
        #expect(permuted.map(\.totals.requests) == source)
    }
}
