import Testing
import TrafficAggregation

@testable import TrafficOutput

/// A table of groups read back from sorted runs is measured from the groups' bytes (`forEachInPlace`: key
/// fields' UTF-8, totals read where they are) and written from the merged rows: it must be the table of the
/// same groups in memory, byte for byte, whatever the widths (non-ASCII keys, paths cut to fit, numbers of
/// every size, waits).
@Suite struct SpilledTableTests {
    /// Groups in report order (total descending, then keys), with keys and numbers that set the widths.
    static func groups() -> [ReportGroup] {
        let hosts = ["api.example.com", "ü.example", "x", "très-long-hôte.example.org"]
        var groups = (0..<300).map { i -> ReportGroup in
            var totals = GroupTotals()
            totals.requests = i % 7 == 0 ? 1 << 33 : i
            totals.responses = i % 5
            totals.request.bytes = (i * 7_919) % 5_000
            totals.response.bytes = i == 17 ? 3 << 40 : (i * 104_729) % 900_000
            totals.response.headerBytes = i * 13
            totals.request.cookieBytes = i % 3 == 0 ? 0 : i * 1_000
            totals.response.decodedBodyBytes = i * 2_048
            totals.response.compressedBodyBytes = i
            totals.response.uncompressedBodyBytes = i * 9
            if i % 4 == 0 { totals.request.retransmittedBytes = i * 31 }
            for w in 0..<(i % 6) { totals.waits.add(w * 1_000 + i * 17) }
            let path = i == 5 ? "/" + String(repeating: "segment/", count: 30) + "é"
                : "/items/\(i)" + String(repeating: "ñ", count: i % 11)
            return ReportGroup(keys: [hosts[i % hosts.count], path], totals: totals)
        }
        ReportOrderRuns.sort(&groups)
        return groups
    }

    /// The same groups as `runCount` sorted runs, written to a temporary file or kept in memory.
    static func spilled(_ groups: [ReportGroup], runCount: Int, toFile: Bool) throws -> ReportGroups {
        let spool = try #require(RecordSpool())
        var runs: [GroupRun] = []
        for r in 0..<runCount {
            var bytes: [UInt8] = []
            for (i, group) in groups.enumerated() where i % runCount == r {
                SpooledGroup.append(hash: 0, group, to: &bytes)
            }
            if toFile {
                runs.append(.spilled(spool, try #require(spool.append(bytes))))
            } else {
                runs.append(.memory(SpoolBytes(bytes)))
            }
        }
        return ReportGroups(storage: .runs(runs), count: groups.count)
    }

    static func report(_ groups: ReportGroups, totals: GroupTotals) -> TrafficReport {
        TrafficReport(
            captures: [], groupBy: [.host, .path], groups: groups, totals: totals, summary: ReportSummary(),
            messages: nil, normalizedGroupCount: nil, anomalies: [:], warnings: [])
    }

    /// Groups read back in report order, their totals decoded by the read-ahead thread or by the reader (the
    /// table's rows): the same groups in the same order, across batches of 512 and runs; an entry whose totals are
    /// damaged fails the reading either way, and counts as empty.
    @Test func totalsDecodedAheadOrByTheReaderAlike() throws {
        var groups = (0..<1_300).map { i -> ReportGroup in
            var totals = GroupTotals()
            totals.requests = i % 9 + 1
            totals.responses = i % 4
            totals.request.bytes = i * 37
            totals.response.bytes = (i * 104_729) % 900_000
            totals.response.cookieBytes = i % 5 == 0 ? i : 0
            if i % 3 == 0 { totals.request.tunnelBytes = i }
            for w in 0..<(i % 3) { totals.waits.add(w * 500 + i) }
            return ReportGroup(keys: ["h\(i % 7).example", "/p/\(i)"], totals: totals)
        }
        ReportOrderRuns.sort(&groups)
        func read(_ runs: ReportGroups, ahead: Bool) -> [(key: [UInt8], totals: GroupTotals)] {
            var read: [(key: [UInt8], totals: GroupTotals)] = []
            var iterator = runs.makeKeyBytesIterator(decodingAhead: ahead)
            while iterator.next({ key, totals in read.append(([UInt8](key), totals.pointee)) }) {}
            return read
        }
        for (runCount, toFile) in [(1, false), (3, true)] {
            let spilled = try Self.spilled(groups, runCount: runCount, toFile: toFile)
            for ahead in [true, false] {
                let read = read(spilled, ahead: ahead)
                #expect(read.count == groups.count, "runs \(runCount) ahead \(ahead)")
                for (got, group) in zip(read, groups) {
                    var key: [UInt8] = []
                    GroupKeyBytes.append(group.keys, to: &key)
                    #expect(got.key == key && got.totals == group.totals, "runs \(runCount) ahead \(ahead) \(group.keys)")
                }
                #expect(spilled.readFailure == nil)
            }
        }
        // One entry with a byte more after its totals (its length says so): read as a truncated histogram.
        var bytes: [UInt8] = []
        for (i, group) in groups.enumerated() {
            var entry: [UInt8] = []
            SpooledGroup.append(hash: 0, group, to: &entry)
            if i == 700 {
                entry.append(0)
                let length = UInt32(entry.count - 4)
                for b in 0..<4 { entry[b] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(b))) }
            }
            bytes += entry
        }
        for ahead in [true, false] {
            let damaged = ReportGroups(storage: .runs([.memory(SpoolBytes(bytes))]), count: groups.count)
            let read = read(damaged, ahead: ahead)
            #expect(read.count == groups.count)
            #expect(read[700].totals == GroupTotals(), "ahead \(ahead)")
            #expect(read[699].totals == groups[699].totals && read[701].totals == groups[701].totals)
            #expect(damaged.readFailure == GroupRunReader.damaged, "ahead \(ahead)")
        }
    }

    @Test func aSpilledTableIsTheInMemoryTable() throws {
        let groups = Self.groups()
        var totals = GroupTotals()
        for group in groups { totals.add(group.totals) }
        for (runCount, toFile) in [(1, true), (3, true), (2, false)] {
            let spilled = try Self.spilled(groups, runCount: runCount, toFile: toFile)
            #expect(spilled.inMemory == nil)
            for exactBytes in [false, true] {
                for timings in [false, true] {
                    for rowThreads in [1, 2, 3] {
                        for width in [60, 100, 400] {
                            var memory = AnalyzeReport(report: Self.report(ReportGroups(groups), totals: totals), listMessages: false)
                            var read = AnalyzeReport(report: Self.report(spilled, totals: totals), listMessages: false)
                            memory.exactBytes = exactBytes
                            read.exactBytes = exactBytes
                            memory.timings = timings
                            read.timings = timings
                            memory.rowThreads = rowThreads
                            read.rowThreads = rowThreads
                            let expected = memory.render(.table, width: width)
                            #expect(read.render(.table, width: width) == expected,
                                "runs \(runCount) file \(toFile) exact \(exactBytes) timings \(timings) threads \(rowThreads) width \(width)")
                        }
                    }
                }
            }
            #expect(spilled.readFailure == nil)
        }
    }

    /// `forEachInPlace` passes every group once, its key's bytes and its totals as decoding would make them.
    @Test func partsInPlaceHoldEveryGroup() throws {
        let groups = Self.groups()
        let expected = groups.map { "\($0.keys) \($0.totals)" }.sorted()
        for source in [try Self.spilled(groups, runCount: 4, toFile: true), ReportGroups(groups)] {
            for parts in [1, 2, 5] {
                var seen: [String] = []
                for part in source.unorderedParts(parts) {
                    part.forEachInPlace { key, totals in
                        seen.append("\(GroupKeyBytes.decode(key) ?? ["damaged"]) \(totals.pointee)")
                    }
                }
                #expect(seen.sorted() == expected, "\(parts) parts")
            }
        }
    }
}
