@testable import TrafficAggregation
import Testing
import TrafficTestSupport
@testable import TrafficAnalysis

/// The in-memory report path works from the group table's key bytes (sorting, counting what
/// `--normalize-paths` would leave, keeping the keys as bytes): each against the way it was done on
/// `String` rows before, on keys chosen to hit the edge cases (non-ASCII, NUL, prefixes, empty fields,
/// equal totals, canonically equivalent spellings).
@Suite struct ReportOrderFromKeyBytesTests {
    static let awkwardFields = [
        "", "a", "a\u{0}", "a\u{0}b", "ab", "a b", "A", "/api/v1/users/12345678", "/api/v1/users/12345679",
        "/api/v1/users/1234567", "/api/v1/users/12345678/x", "café", "cafe\u{301}", "cafe\u{301}z", "cafez", "caf",
        "ünïcödé", "😀", "z\u{7F}", "\u{7F}", "/café/1", "/café/1/2", "e\u{301}", "é",
    ]

    /// Keys of every pair of awkward fields, and random ones with few distinct totals (many ties).
    static func table(seed: UInt64) -> (GroupTable, [ReportGroup]) {
        var rng = SplitMix(state: seed)
        var table = GroupTable()
        var keys: [[String]] = []
        for a in awkwardFields { for b in awkwardFields { keys.append([a, b]) } }
        for _ in 0..<3_000 { keys.append(["h\(rng.next() % 3)", "/p/\(rng.next() % 2_000)"]) }
        for key in keys {
            var totals = GroupTotals()
            totals.requests = 1
            totals.request.bytes = Int(rng.next() % 4)
            totals.response.bytes = Int(rng.next() % 3)
            let slot = table.slot(for: key)
            table[slot].add(totals)
        }
        // In slot order, as `drainRows` made them. (Keys are told apart by their bytes: "é" and "e\u{301}"
        // are two groups, which `String`s, and a dictionary of them, call equal.)
        let inSlotOrder = (0..<table.count).map { slot in
            ReportGroup(keys: table.withKey(ofSlot: slot) { GroupKeyBytes.decode($0)! }, totals: table[slot])
        }
        return (table, inSlotOrder)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func slotsInReportOrderAreTheStableSortOfStringRows(seed: UInt64) {
        let (table, inSlotOrder) = Self.table(seed: seed)
        var expected = inSlotOrder
        ReportOrderRuns.sort(&expected)
        let order = table.slotsInReportOrder()
        #expect(order.map { inSlotOrder[$0].keys } == expected.map(\.keys))
    }

    @Test(arguments: [UInt64(4), 5])
    func keyedGroupsReadAsTheSortedRows(seed: UInt64) {
        var (table, inSlotOrder) = Self.table(seed: seed)
        var expected = inSlotOrder
        ReportOrderRuns.sort(&expected)
        let keyed = table.drainKeyed(order: table.slotsInReportOrder())
        #expect(table.count == 0)
        let groups = ReportGroups(storage: .keyed(keyed), count: keyed.count)
        #expect(Array(groups).map(\.keys) == expected.map(\.keys))
        #expect(Array(groups).map(\.totals) == expected.map(\.totals))
        #expect(groups.inMemory?.map(\.keys) == expected.map(\.keys))
        var fromSeventh = groups.makeIterator(from: 7)
        #expect((0..<3).map { _ in fromSeventh.next()!.keys } == expected[7..<10].map(\.keys))
        // Read in parts, and as runs to merge: every group once.
        var parts: [[String]] = []
        for part in groups.unorderedParts(3) { parts += part.map(\.keys) }
        #expect(Set(parts) == Set(expected.map(\.keys)))
        #expect(parts.count == expected.count)
        var inPlace = 0
        for part in groups.unorderedParts(2) { part.forEachInPlace { _, _ in inPlace += 1 } }
        #expect(inPlace == expected.count)
        let merged = ReportGroups(storage: .runs(groups.storage.runs), count: groups.count)
        #expect(Array(merged).map(\.keys) == expected.map(\.keys))
    }

    @Test(arguments: [UInt64(6), 7])
    func normalizedCountFromKeyBytesMatchesASetOfNormalizedKeys(seed: UInt64) {
        var rng = SplitMix(state: seed)
        var table = GroupTable()
        var keys = Self.awkwardFields.flatMap { a in Self.awkwardFields.map { b in [a, b] } }
        for _ in 0..<2_000 {
            keys.append(["h\(rng.next() % 2)", "/users/\(rng.next() % 500)/items/\(rng.next() % 3)"])
            keys.append(["h", "/users/550e8400-e29b-41d4-a716-4466554400\(rng.next() % 90 + 10)"])
        }
        for key in keys { _ = table.slot(for: key) }
        let collapse = PathNormalizer(collapseIdentifiers: true)
        let distinct = (0..<table.count).map { slot in table.withKey(ofSlot: slot) { GroupKeyBytes.decode($0)! } }
        for column in 0..<2 {
            // By bytes, as the groups are told apart ("é" and "e\u{301}" are two keys, which a Set of `String`s merges).
            let reference = Set(distinct.map { key in key.indices.map { Array(($0 == column ? collapse.normalize(key[$0]) : key[$0]).utf8) } })
            let stored = table.keys
            #expect(ReportBuilder.normalizedKeyCount(keyBytes: stored.bytes, ends: stored.ends, pathColumn: column) == reference.count)
            #expect(ReportBuilder.normalizedKeyCount(distinct, pathColumn: column) == reference.count)
            // Counters of two halves added up count each key once.
            var first = NormalizedKeyCounter(pathColumn: column), second = NormalizedKeyCounter(pathColumn: column)
            for (i, key) in distinct.enumerated() { if i % 2 == 0 { first.add(key) } else { second.add(key) } }
            first.add(second)
            #expect(first.count == reference.count)
        }
    }
}
