@testable import TrafficAggregation
import Testing
import TrafficTestSupport

/// The fast paths of the spilled report: keys joined for one `memcmp` (`GroupKeyBytes.joinASCII`), the
/// field comparison without a `memcmp` per field, report-order runs sorted on joined keys, and merge heads
/// parsed only as far as the report's order needs (`SpooledGroup.parseHead`): each against the slow
/// path's results, on keys and totals chosen for the edge cases.
@Suite struct SpilledReportOrderTests {
    static let awkwardFields = ReportOrderFromKeyBytesTests.awkwardFields

    static func keyBytes(_ key: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        GroupKeyBytes.append(key, to: &bytes)
        return bytes
    }

    /// Every pair of awkward fields, and keys of one and three fields (empty ones too).
    static var keys: [[String]] {
        var keys: [[String]] = []
        for a in awkwardFields { for b in awkwardFields { keys.append([a, b]) } }
        for a in awkwardFields { keys.append([a]); keys.append([a, "", a]); keys.append(["", a, "x"]) }
        keys.append([])
        return keys
    }

    /// `compare` orders as `ReportGroup.precedes` does on `String`s, and joined keys as `compare`.
    @Test func joinedAndFieldOrderLikeStrings() {
        let keys = Self.keys
        let bytes = keys.map(Self.keyBytes)
        var joined: [[UInt8]?] = []
        for b in bytes {
            var out = [UInt8](repeating: 0xEE, count: b.count)
            let count = b.withUnsafeBytes { key in out.withUnsafeMutableBytes { GroupKeyBytes.joinASCII(key, into: $0.baseAddress!) } }
            joined.append(count.map { Array(out[..<$0]) })
        }
        var joinedPairs = 0
        for i in keys.indices {
            for j in keys.indices {
                let c = bytes[i].withUnsafeBytes { a in bytes[j].withUnsafeBytes { b in GroupKeyBytes.compare(a, b) } }
                if keys[i].count == keys[j].count {
                    #expect((c < 0) == ReportGroup.precedes(0, keys[i], 0, keys[j]), "\(keys[i]) \(keys[j])")
                    #expect((c == 0) == (bytes[i] == bytes[j]) || keys[i] == keys[j], "\(keys[i]) \(keys[j])")
                }
                let fast = bytes[i].withUnsafeBytes { a in
                    bytes[j].withUnsafeBytes { b in
                        (joined[i] ?? [0]).withUnsafeBytes { x in
                            (joined[j] ?? [0]).withUnsafeBytes { y in
                                GroupKeyBytes.compareJoined(
                                    x.baseAddress!, joined[i]?.count ?? -1, a, y.baseAddress!, joined[j]?.count ?? -1, b)
                            }
                        }
                    }
                }
                // (A report's keys all have one field count: joined, [] and [""] are alike.)
                if keys[i].count == keys[j].count {
                    #expect(fast.signum() == c.signum(), "\(keys[i]) \(keys[j])")
                    if joined[i] != nil, joined[j] != nil { joinedPairs += 1 }
                }
            }
        }
        #expect(joinedPairs > 1_000)
        // Non-ASCII and NUL are never joined.
        for (key, j) in zip(keys, joined) where j != nil {
            #expect(key.allSatisfy { $0.utf8.allSatisfy { $0 != 0 && $0 < 0x80 } })
        }
    }

    /// Groups with many equal totals and awkward keys, in insertion order.
    static func groups(seed: UInt64) -> [ReportGroup] {
        var rng = SplitMix(state: seed)
        // Keys of one report have one field count (`precedes` compares them so).
        var groups = keys.filter { $0.count == 2 }.map { key -> ReportGroup in
            var totals = GroupTotals()
            totals.requests = 1
            totals.request.bytes = Int(rng.next() % 3)
            totals.response.bytes = Int(rng.next() % 2)
            return ReportGroup(keys: key, totals: totals)
        }
        for i in 0..<2_000 {
            var totals = GroupTotals()
            totals.requests = i
            totals.request.bytes = i % 5 == 0 ? 1 << 61 : Int(rng.next() % 4)
            totals.response.bytes = Int(rng.next() % 3)
            totals.response.headerBytes = i * 1_000_003
            if i % 7 == 0 { totals.response.retransmittedBytes = Int.max / 3 }
            if i % 3 == 0 { totals.waits.add(i * 17) }
            groups.append(ReportGroup(keys: ["h\(rng.next() % 3)", "/p/\(rng.next() % 500)/\(i)"], totals: totals))
        }
        return groups
    }

    /// Report-order runs (joined keys, entries copied from stored totals), merged, give the order of a stable
    /// sort of the rows, in one run or many, in memory or in a file.
    @Test(arguments: [UInt64(1), 2])
    func reportOrderRunsSortLikeRows(seed: UInt64) throws {
        let groups = Self.groups(seed: seed)
        var expected = groups
        ReportOrderRuns.sort(&expected)
        let expectedText = expected.map { "\($0.keys) \($0.totals)" }
        for (runLength, toFile) in [(groups.count, false), (97, false), (500, true)] {
            var runs = ReportOrderRuns(runLength: runLength, spool: toFile ? try #require(RecordSpool()) : nil)
            for (i, group) in groups.enumerated() {
                let key = Self.keyBytes(group.keys)
                key.withUnsafeBytes { key in
                    if i % 2 == 0 {
                        withUnsafePointer(to: group.totals) { runs.add(keyBytes: key, totals: $0) }
                    } else {
                        // As a merge copies a group found in one run only: its totals as stored.
                        var entry: [UInt8] = []
                        SpooledGroup.append(hash: 0, group, to: &entry)
                        let head = entry.withUnsafeBytes { SpooledGroup.parse($0)! }
                        runs.add(keyBytes: key, totalsBytes: head.totalsBytes, totalBytes: head.totalBytes)
                    }
                }
            }
            #expect(runs.failure == nil)
            let status = SpoolReadStatus()
            var merging = GroupRunMerge(runs.finish().runs, order: .report, status: status)
            var seen: [String] = []
            while let group = merging.next() { seen.append("\(group.keys) \(group.totals)") }
            #expect(status.failure.withLock { $0 } == nil)
            #expect(seen == expectedText, "run length \(runLength)")
        }
    }

    /// `parseHead` finds the key, the totals' bytes and the total as `parse` does; it checks the totals only
    /// as far as `response.bytes`, and whoever reads them finds the rest damaged.
    @Test func headsParsedAsFarAsNeeded() throws {
        for group in Self.groups(seed: 3).prefix(700) {
            var entry: [UInt8] = []
            SpooledGroup.append(hash: 0x1234_5678_9ABC_DEF0, group, to: &entry)
            let full = try #require(entry.withUnsafeBytes { SpooledGroup.parse($0) })
            let head = try #require(entry.withUnsafeBytes { SpooledGroup.parseHead($0) })
            #expect(head.hash == full.hash && head.totalBytes == full.totalBytes)
            #expect(Array(head.keyBytes) == Array(full.keyBytes) && Array(head.totalsBytes) == Array(full.totalsBytes))
            #expect(head.totalBytes == group.totals.totalBytes)
            #expect(head.totals(SpoolReadStatus()) == group.totals)
        }
        // A varint cut at the end of the totals (beyond `response.bytes`): the head is read, its totals fail.
        var totals = GroupTotals()
        totals.request.bytes = 10
        totals.response.bytes = 20
        totals.response.retransmittedBytes = 300
        var entry: [UInt8] = []
        SpooledGroup.append(hash: 0, ReportGroup(keys: ["h", "/p"], totals: totals), to: &entry)
        entry[entry.count - 1] |= 0x80
        #expect(entry.withUnsafeBytes { SpooledGroup.parse($0) } == nil)
        let head = try #require(entry.withUnsafeBytes { SpooledGroup.parseHead($0) })
        #expect(head.totalBytes == 30)
        let status = SpoolReadStatus()
        _ = head.totals(status)
        #expect(status.failure.withLock { $0 } != nil)
        // Read through a merge, as the report does: the failure is the list's.
        let groups = ReportGroups(storage: .runs([.memory(SpoolBytes(entry))]), count: 1)
        var read = 0
        for _ in groups { read += 1 }
        #expect(read == 1 && groups.readFailure != nil)
        // Damage within the key or the sums the order needs is no head at all.
        var cut = entry
        cut[13] = 0x7F  // the first field's length: negative
        #expect(cut.withUnsafeBytes { SpooledGroup.parseHead($0) } == nil)
    }
}
