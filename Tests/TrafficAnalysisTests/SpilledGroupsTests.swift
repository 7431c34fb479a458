@testable import TrafficAggregation
import TrafficSessions
import TrafficCapture
import Foundation
import Testing
@testable import TrafficAnalysis

/// Groups beyond `groupsInMemory` go to a temporary file in runs sorted by key hash, merged when the report
/// is made and again (in report order) as it is read: the same groups, totals, order and counts as keeping
/// every group in memory, on one thread and on three, with overhead pinned to groups across writes.
@Suite struct SpilledGroupsTests {
    static let captures = AccountingInvariantTests.sampleFiles.filter { !$0.contains("truncated") }
        + AccountingInvariantTests.corpusFiles

    static func dump(_ groups: ReportGroups) -> [String] {
        groups.map { "\($0.keys) \($0.totals)" }
    }

    /// Record `i` of `round` for the spilling tests, its sizes made from both.
    static func record(
        _ i: Int, round: Int, kind: MessageRecord.Kind, host: String, path: String, lineSpread: Int
    ) -> MessageRecord {
        var record = MessageRecord(
            connection: i, index: round, kind: kind, time: CaptureTime(nanoseconds: Int64(round * 10_000 + i)),
            client: "10.0.0.1:\(i)", server: "10.0.0.2:80", host: host, path: path)
        record.lineBytes = 20 + i % lineSpread
        record.headerBytes = 100 + i
        record.bodyBytes = round * i
        record.encodedBodyBytes = round * i
        record.decodedBodyBytes = round * i
        return record
    }

    @Test(arguments: captures)
    func spilledGroupsEqualTheInMemoryReport(path: String) throws {
        for overhead in [OverheadOptions.all, []] {
            for groupBy in [[GroupField.host, .path], [.method, .status, .contentType]] {
                var options = ReportOptions()
                options.overhead = overhead
                options.groupBy = groupBy
                let expected = try TrafficAnalyzer.analyze(paths: [path], options: options)
                let rows = Self.dump(expected.groups)
                if groupBy == [.host, .path], overhead.isEmpty {
                    // What --normalize-paths would leave is counted only when asked (the table says it, CSV and
                    // JSON do not), in memory and from spilled runs alike.
                    #expect(expected.normalizedGroupCount != nil, "\(path)")
                    var quiet = options
                    quiet.countNormalizedRows = false
                    for (jobs, budget) in [(1, quiet.groupsInMemory), (3, 1)] {
                        quiet.jobs = jobs
                        quiet.groupsInMemory = budget
                        let report = try TrafficAnalyzer.analyze(paths: [path], options: quiet)
                        #expect(report.normalizedGroupCount == nil, "\(path) jobs \(jobs) budget \(budget)")
                        #expect(Self.dump(report.groups) == rows, "\(path) jobs \(jobs) budget \(budget)")
                    }
                }
                // Nothing was written with the default budget on these small captures.
                #expect(expected.groups.inMemory != nil)
                for (jobs, budget) in [(1, 1), (1, 3), (3, 1), (3, 2)] {
                    options.jobs = jobs
                    options.groupsInMemory = budget
                    let spilled = try TrafficAnalyzer.analyze(paths: [path], options: options)
                    let label = "\(path) jobs \(jobs) budget \(budget) \(groupBy) overhead \(overhead)"
                    #expect(spilled.warnings.map(\.description) == expected.warnings.map(\.description), "\(label)")
                    #expect(spilled.groups.count == rows.count, "\(label)")
                    #expect(Self.dump(spilled.groups) == rows, "\(label)")
                    #expect(Self.dump(spilled.groups) == rows, "read twice: \(label)")
                    #expect(spilled.summary == expected.summary, "\(label)")
                    #expect(spilled.totals == expected.totals, "\(label)")
                    #expect(spilled.normalizedGroupCount == expected.normalizedGroupCount, "\(label)")
                    #expect(spilled.groups.readFailure == nil)
                    // Parts read unmerged hold every group once between them.
                    for parts in [1, 2, 3] {
                        let read = spilled.groups.unorderedParts(parts).flatMap { Self.dump(ReportGroups(Array($0))) }
                        #expect(read.sorted() == rows.sorted(), "\(parts) parts: \(label)")
                        #expect(Self.dump(expected.groups).count == read.count)
                    }
                    for start in [0, 1, rows.count / 2, rows.count, rows.count + 3] {
                        var reader = spilled.groups.makeIterator(from: start)
                        var read: [String] = []
                        while let group = reader.next() { read.append("\(group.keys) \(group.totals)") }
                        #expect(read == Array(rows.dropFirst(start)), "from \(start): \(label)")
                    }
                }
            }
        }
    }

    /// The report's totals are made from its groups (`ReportBuilder.build`), not record by record: they must equal
    /// the sum of the listed records (`--messages`, whose overhead is final when listed) however the groups were
    /// written out, pinned by overhead or spread over shards.
    ///
    /// Except for one known difference, compared apart: without `--overhead`, a request counted before its
    /// exchange switched protocols (WebSocket, CONNECT) is not held, so grouped records credit both directions'
    /// tunnel bytes to the response's side, where listed records split them (client's to the request).
    @Test(arguments: captures)
    func totalsAreTheSumOfTheRecords(path: String) throws {
        func tunnelsOnResponses(_ totals: GroupTotals) -> GroupTotals {
            var totals = totals
            totals.response.tunnelBytes &+= totals.request.tunnelBytes
            totals.request.tunnelBytes = 0
            return totals
        }
        for overhead in [OverheadOptions.all, []] {
            var listing = ReportOptions()
            listing.overhead = overhead
            listing.keepMessages = true
            let listed = try TrafficAnalyzer.analyze(paths: [path], options: listing)
            var sum = GroupTotals()
            for (_, record) in listed.messages ?? [] { sum.add(record) }
            let expected = overhead.isEmpty ? tunnelsOnResponses(sum) : sum
            for (jobs, budget) in [(1, 16_384), (1, 1), (1, 3), (3, 1), (3, 16_384)] {
                var options = ReportOptions()
                options.overhead = overhead
                options.jobs = jobs
                options.groupsInMemory = budget
                let report = try TrafficAnalyzer.analyze(paths: [path], options: options)
                let totals = overhead.isEmpty ? tunnelsOnResponses(report.totals) : report.totals
                #expect(totals == expected, "\(path) jobs \(jobs) budget \(budget) overhead \(overhead)")
            }
        }
    }

    /// Spills of many groups: a spill writes its run a slice of 256 groups at a time (the two halves' split
    /// falls inside a slice), and empties the table in place, or makes a new one when records are kept. 2 000
    /// groups over budgets of 300 to 1 700, records repeated across spills: the report equals the one kept
    /// wholly in memory, its rows, totals and counts (placing the halves' split at the first slice's start
    /// instead failed 6 of its checks).
    @Test func spillsOfManyGroupsEqualTheInMemoryReport() throws {
        func records() -> [MessageRecord] {
            var records: [MessageRecord] = []
            for round in 0..<3 {
                for i in 0..<2_000 where round == 0 || i % (round + 2) == 0 {
                    records.append(
                        Self.record(
                            i, round: round, kind: i % 3 == 0 ? .response : .request, host: "h\(i % 7).example",
                            path: "/items/\(i)", lineSpread: 13))
                }
            }
            return records
        }
        func report(budget: Int, keepMessages: Bool) -> TrafficReport {
            var options = ReportOptions()
            options.groupsInMemory = budget
            options.keepMessages = keepMessages
            let builder = ReportBuilder(options: options, capturePaths: ["t.pcap"])
            for record in records() { builder.add(record, capture: 0) }
            return builder.build(captures: [CaptureSummary(path: "t.pcap", linkType: "EN10MB")], anomalies: [:], warnings: [])
        }
        for keepMessages in [false, true] {
            let expected = report(budget: 16_384, keepMessages: keepMessages)
            #expect(expected.groups.inMemory != nil)
            #expect(expected.groups.count == 2_000)
            for budget in [300, 700, 1_700] {
                let spilled = report(budget: budget, keepMessages: keepMessages)
                let label = "budget \(budget) keepMessages \(keepMessages)"
                #expect(spilled.groups.inMemory == nil, "\(label): written out")
                #expect(Self.dump(spilled.groups) == Self.dump(expected.groups), "\(label)")
                #expect(spilled.totals == expected.totals, "\(label)")
                #expect(spilled.normalizedGroupCount == expected.normalizedGroupCount, "\(label)")
                #expect(spilled.groups.readFailure == nil, "\(label)")
            }
        }
    }

    /// After its first spill a table holds at most 4 096 groups (`ReportBuilder.spilledTableLimit`) unless records
    /// are kept, its groups encoded in slot order and written in hash order (`GroupTable.encodeForSpill`); the
    /// report-order runs sort by total, then each run of equal totals by key (non-ASCII keys by their strings).
    /// 9 000 groups over a budget of 5 000, so that the first spill makes the table smaller; head sizes repeat every
    /// five groups, so that most totals tie; two paths in three are non-ASCII (a precomposed and a decomposed "é",
    /// which `String` orders as equal up to the id). The report equals the one kept in memory, which is sorted by
    /// other code (`GroupTable.slotsInReportOrder`) — its rows, totals and counts.
    @Test func aSmallerTableAfterTheFirstSpillAndTiesOnTotal() throws {
        func report(budget: Int, keepMessages: Bool, jobs: Int) -> TrafficReport {
            var options = ReportOptions()
            options.groupsInMemory = budget
            options.keepMessages = keepMessages
            options.jobs = jobs
            let builder = ReportBuilder(options: options, capturePaths: ["t.pcap"])
            for round in 0..<2 {
                for i in 0..<9_000 where round == 0 || i % 4 == 0 {
                    let path = i % 3 == 0 ? "/caf\u{E9}/\(i)" : i % 3 == 1 ? "/cafe\u{301}/\(i)" : "/items/\(i)"
                    var record = Self.record(
                        i, round: round, kind: i % 2 == 0 ? .response : .request, host: "h\(i % 3).example", path: path,
                        lineSpread: 1)
                    record.headerBytes = 100 + i % 5
                    record.bodyBytes = round
                    record.encodedBodyBytes = round
                    record.decodedBodyBytes = round
                    builder.add(record, capture: 0)
                }
            }
            return builder.build(captures: [CaptureSummary(path: "t.pcap", linkType: "EN10MB")], anomalies: [:], warnings: [])
        }
        let expected = report(budget: 16_384, keepMessages: false, jobs: 1)
        #expect(expected.groups.inMemory != nil)
        #expect(expected.groups.count == 9_000)
        let rows = Self.dump(expected.groups)
        // Ties on total are most of the report (the test would not see a sort by total alone otherwise).
        #expect(Set(expected.groups.map(\.totals.totalBytes)).count < 100)
        for (keepMessages, jobs) in [(false, 1), (false, 2), (true, 1)] {
            let spilled = report(budget: 5_000, keepMessages: keepMessages, jobs: jobs)
            let label = "keepMessages \(keepMessages) jobs \(jobs)"
            #expect(spilled.groups.inMemory == nil, "\(label): written out")
            #expect(Self.dump(spilled.groups) == rows, "\(label)")
            #expect(spilled.totals == expected.totals, "\(label)")
            #expect(spilled.summary == expected.summary, "\(label)")
            #expect(spilled.normalizedGroupCount == expected.normalizedGroupCount, "\(label)")
            #expect(spilled.groups.readFailure == nil, "\(label)")
        }
    }

    /// A merge of hundreds of runs reads each a page at a time (`GroupRunMerge.readSize`), so that its buffers
    /// do not grow with the runs; a group longer than a page (a 6 000- or 20 000-byte path) is still read whole.
    /// 1 200 groups over a budget of 2 (about 600 runs a half): the report equals the one kept in memory.
    @Test func aMergeOfManyRunsReadsLittleAtATime() throws {
        #expect(GroupRunMerge.readSize(spilledRuns: 0) == 64 << 10)
        #expect(GroupRunMerge.readSize(spilledRuns: 32) == 64 << 10)
        #expect(GroupRunMerge.readSize(spilledRuns: 64) == 32 << 10)
        #expect(GroupRunMerge.readSize(spilledRuns: 600) == 4 << 10)
        #expect(GroupRunMerge.readSize(spilledRuns: 100_000) == 4 << 10)
        func report(budget: Int, jobs: Int) -> TrafficReport {
            var options = ReportOptions()
            options.groupsInMemory = budget
            options.jobs = jobs
            let builder = ReportBuilder(options: options, capturePaths: ["t.pcap"])
            for round in 0..<2 {
                for i in 0..<1_200 where round == 0 || i % 5 == 0 {
                    let long = i % 97 == 0 ? String(repeating: "x", count: i % 2 == 0 ? 6_000 : 20_000) : ""
                    let record = Self.record(
                        i, round: round, kind: i % 2 == 0 ? .response : .request, host: "h\(i % 5).example",
                        path: "/items/\(i)/\(long)", lineSpread: 11)
                    builder.add(record, capture: 0)
                }
            }
            return builder.build(captures: [CaptureSummary(path: "t.pcap", linkType: "EN10MB")], anomalies: [:], warnings: [])
        }
        let expected = report(budget: 16_384, jobs: 1)
        #expect(expected.groups.inMemory != nil)
        #expect(expected.groups.count == 1_200)
        for jobs in [1, 2] {
            let spilled = report(budget: 2, jobs: jobs)
            #expect(spilled.groups.inMemory == nil, "jobs \(jobs): written out")
            #expect(Self.dump(spilled.groups) == Self.dump(expected.groups), "jobs \(jobs)")
            #expect(spilled.totals == expected.totals, "jobs \(jobs)")
            #expect(spilled.groups.readFailure == nil, "jobs \(jobs)")
        }
    }

    /// No temporary file can be made: the groups stay in memory, the report is the same, a warning says so.
    @Test func anUnwritableDirectoryKeepsGroupsInMemory() throws {
        let path = try #require(Self.captures.max { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int ?? 0) ?? 0
            < (try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int ?? 0) ?? 0 })
        var options = ReportOptions()
        let expected = Self.dump(try TrafficAnalyzer.analyze(paths: [path], options: options).groups)
        options.groupsInMemory = 1
        options.messageSpoolDirectory = "/nonexistent/traffic-test"
        for jobs in [1, 3] {
            options.jobs = jobs
            let report = try TrafficAnalyzer.analyze(paths: [path], options: options)
            #expect(Self.dump(report.groups) == expected)
            #expect(report.warnings.map(\.description)
                == ["warning: groups: cannot create a temporary file in /nonexistent/traffic-test; groups are kept in memory"])
        }
    }

    /// Every sum survives the byte form, the rare ones and negative values (wrapped sums) included.
    @Test func aSpooledGroupReadsBackWhole() throws {
        var totals = GroupTotals()
        totals.requests = 3
        totals.responses = 1 << 40
        totals.incomplete = -2
        var value = 1
        let sides: [WritableKeyPath<GroupTotals, SideTotals>] = [\.request, \.response]
        for side in sides {
            let fields: [WritableKeyPath<SideTotals, Int>] = [\.bytes, \.lineBytes, \.headerBytes, \.cookieBytes, \.bodyBytes, \.encodedBodyBytes,
                \.decodedBodyBytes, \.decodeUnknown, \.compressedBodyBytes, \.uncompressedBodyBytes, \.tunnelBytes,
                \.handshakeBytes, \.teardownBytes, \.packetOverheadBytes, \.retransmittedBytes, \.tlsOverheadBytes,
                \.tlsHandshakeBytes, \.h2ControlBytes, \.headerDecodedSum, \.headerDecodedRecords, \.quicOverheadBytes,
                \.h3ControlBytes, \.quicConnectionBytes]
            for field in fields {
                value = value &* 37 &+ 11
                totals[keyPath: side.appending(path: field)] = value.isMultiple(of: 3) ? -value : value
            }
        }
        totals.response.decodeUnknown = Int.min
        let group = ReportGroup(keys: ["api.example.com", "/ü/ñ", ""], totals: totals)
        var bytes: [UInt8] = []
        SpooledGroup.append(hash: UInt64.max - 5, group, to: &bytes)
        let decoded = try #require(bytes.withUnsafeBytes { SpooledGroup.decode($0) })
        #expect(decoded.hash == UInt64.max - 5)
        #expect(decoded.group.keys == group.keys)
        #expect(decoded.group.totals == totals)
        // A cut entry is damage, not a shorter group.
        #expect(bytes.withUnsafeBytes { SpooledGroup.decode(UnsafeRawBufferPointer(rebasing: $0.dropLast())) } == nil)
    }

    /// An entry written at once on the stack (`append`) has the bytes of one written in parts
    /// (`appendInParts`, the path of entries too long for the stack): keys of every length around the stack
    /// buffer's size, sums of every magnitude and sign, histograms of 0 to 40 buckets, with and without waits
    /// (breaking the stack path's hash order failed 81 of these 224 cases); each also decodes to the group written
    /// (expecting the keys reversed failed all 224).
    @Test func anEntryWrittenAtOnceHasTheBytesOfOneWrittenInParts() throws {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return seed
        }
        for keyLength in [0, 1, 2, 40, 200, 400, 440, 480, 500, 520, 600, 900, 1_000, 1_100] {
            for round in 0..<16 {
                var totals = GroupTotals()
                totals.requests = Int(next() % 1_000)
                totals.responses = round.isMultiple(of: 3) ? 0 : Int(next() % 1_000)
                totals.incomplete = Int(next() % 3)
                let fields: [WritableKeyPath<SideTotals, Int>] = [\.bytes, \.lineBytes, \.headerBytes, \.cookieBytes,
                    \.bodyBytes, \.encodedBodyBytes, \.decodedBodyBytes, \.decodeUnknown, \.compressedBodyBytes,
                    \.uncompressedBodyBytes, \.tunnelBytes, \.handshakeBytes, \.teardownBytes, \.packetOverheadBytes,
                    \.retransmittedBytes, \.tlsOverheadBytes, \.tlsHandshakeBytes, \.h2ControlBytes,
                    \.headerDecodedSum, \.headerDecodedRecords, \.quicOverheadBytes, \.h3ControlBytes,
                    \.quicConnectionBytes]
                let sides: [WritableKeyPath<GroupTotals, SideTotals>] = [\.request, \.response]
                for side in sides {
                    for field in fields where next() % 3 != 0 {
                        let magnitude = Int(truncatingIfNeeded: next() >> (next() % 64))
                        totals[keyPath: side.appending(path: field)] = next() % 5 == 0 ? -magnitude : magnitude
                    }
                }
                for _ in 0..<Int(next() % (round % 4 == 3 ? 41 : 4)) { totals.responseSizes.add(Int(truncatingIfNeeded: next() >> (next() % 64)) & Int.max) }
                if round.isMultiple(of: 2) {
                    for _ in 0..<Int(next() % (round % 4 == 2 ? 20 : 3)) { totals.waits.add(Int(next() % 100_000)) }
                }
                let keys = ["h\(round)", String((0..<keyLength).map { _ in Character(Unicode.Scalar(UInt8(97 + next() % 26))) })]
                var key: [UInt8] = []
                GroupKeyBytes.append(keys, to: &key)
                var atOnce: [UInt8] = [1, 2, 3], inParts: [UInt8] = [1, 2, 3]
                let hash = next()
                key.withUnsafeBytes { key in
                    withUnsafePointer(to: totals) { totals in
                        SpooledGroup.append(hash: hash, keyBytes: key, totals: totals, to: &atOnce)
                        SpooledGroup.appendInParts(hash: hash, keyBytes: key, totals: totals, to: &inParts)
                    }
                }
                #expect(atOnce == inParts, "key of \(keyLength) bytes, round \(round)")
                // And not only the same as the other path: read back, it is the group that was written.
                let decoded = try #require(atOnce.dropFirst(3).withUnsafeBytes { SpooledGroup.decode($0) })
                #expect(decoded.hash == hash && decoded.group.keys == keys && decoded.group.totals == totals,
                        "read back: key of \(keyLength) bytes, round \(round)")
            }
        }
    }

    /// Only the sums that are not zero are stored (a mask says which): empty and sparse totals read back as
    /// they were, and a mask naming a sum that is not there is damage.
    @Test func zeroSumsAreLeftOutAndReadBack() throws {
        var sparse = GroupTotals()
        sparse.responses = 1
        sparse.response.bytes = 200
        sparse.request.retransmittedBytes = 60
        // HTTP/2: a decoded size of 0 over one record is not "no decoded size" (0 records).
        var decodedZero = GroupTotals()
        decodedZero.response.headerDecodedRecords = 1
        decodedZero.request.h2ControlBytes = 33
        for totals in [GroupTotals(), sparse, decodedZero] {
            let group = ReportGroup(keys: ["h"], totals: totals)
            var bytes: [UInt8] = []
            SpooledGroup.append(hash: 7, group, to: &bytes)
            let decoded = try #require(bytes.withUnsafeBytes { SpooledGroup.decode($0) })
            #expect(decoded.group.totals == totals)
            #expect(decoded.group.totals.response.headerDecodedBytes == totals.response.headerDecodedBytes)
            #expect(decoded.group.keys == ["h"])
        }
        var empty: [UInt8] = []
        SpooledGroup.append(hash: 7, ReportGroup(keys: ["h"], totals: GroupTotals()), to: &empty)
        // Length, hash, key (count, length, "h"), an empty mask: nothing else.
        #expect(empty.count == 4 + 8 + 3 + 1)
        // A mask with a bit beyond the sums.
        var beyond = Array(empty.dropLast())
        beyond += [0x80, 0x80, 0x80, 0x80, 0x10]
        let length = beyond.count - 4
        for i in 0..<4 { beyond[i] = UInt8(truncatingIfNeeded: length >> (8 * i)) }
        #expect(beyond.withUnsafeBytes { SpooledGroup.decode($0) } == nil)
    }

    /// An entry is checked whole when it is read (its totals are made later, from bytes already checked): the
    /// total it is ordered by is the totals' `totalBytes`, and a damaged histogram is damage at once.
    @Test func anEntryIsCheckedWholeWhenRead() throws {
        var totals = GroupTotals()
        totals.request.bytes = 1_000
        totals.response.bytes = -300
        totals.responseSizes.add(70)
        totals.responseSizes.add(5_000)
        totals.waits.add(12)
        var bytes: [UInt8] = []
        SpooledGroup.append(hash: 9, ReportGroup(keys: ["h", "/p"], totals: totals), to: &bytes)
        let head = try #require(bytes.withUnsafeBytes { SpooledGroup.parse($0) })
        #expect(head.totalBytes == 700)
        #expect(head.totals(SpoolReadStatus()) == totals)
        // The size histogram's buckets out of order (5 000's bucket before 70's): rejected by `parse` too.
        // The last bytes: the sizes' two (bucket, count) pairs, (32, 1) and (81, 1), then the waits' max 12,
        // one pair, (12, 1): one byte each.
        let pairs = bytes.count - 4 - 4
        #expect(Array(bytes[pairs...]) == [32, 1, 81, 1, 12, 1, 12, 1])
        var swapped = bytes
        swapped.swapAt(pairs, pairs + 2)
        #expect(swapped.withUnsafeBytes { SpooledGroup.decode($0) } == nil)
        #expect(swapped.withUnsafeBytes { SpooledGroup.parse($0) } == nil)
    }

    /// `parseKey` (the table's measuring pass, in no order) gives the hash, key and totals bytes that `parse`,
    /// which checks the entry whole, gives; its totals read back the same; a damaged key is refused by both.
    @Test func keyOnlyHeadsMatchWholeParse() throws {
        var full = GroupTotals()
        full.requests = 4
        full.responses = 3
        full.request.bytes = 1_000
        full.request.cookieBytes = 77
        full.response.bytes = 1 << 33
        full.response.compressedBodyBytes = -5
        full.request.quicConnectionBytes = 9
        full.responseSizes.add(70)
        full.responseSizes.add(5_000)
        full.waits.add(12)
        var sparse = GroupTotals()
        sparse.response.retransmittedBytes = 60
        let keys: [[String]] = [["h", "/p"], ["api.example.com", "/ü/ñ", ""], [], ["x"]]
        for (i, totals) in [full, sparse, GroupTotals(), full].enumerated() {
            var bytes: [UInt8] = []
            SpooledGroup.append(hash: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, ReportGroup(keys: keys[i], totals: totals), to: &bytes)
            try bytes.withUnsafeBytes { raw in
                let whole = try #require(SpooledGroup.parse(raw))
                let key = try #require(SpooledGroup.parseKey(raw))
                #expect(key.hash == whole.hash)
                #expect(Array(key.keyBytes) == Array(whole.keyBytes))
                #expect(key.totalsBytes.baseAddress == whole.totalsBytes.baseAddress)
                #expect(key.totalsBytes.count == whole.totalsBytes.count)
                #expect(key.totals(SpoolReadStatus()) == totals)
                #expect(GroupKeyBytes.decode(key.keyBytes) == keys[i])
            }
            // A key whose field runs past the entry (the byte after the field count: a field's length).
            guard !keys[i].isEmpty else { continue }
            var cut = bytes
            cut[12 + 1] = 0x7E
            #expect(cut.withUnsafeBytes { SpooledGroup.parseKey($0) } == nil)
            #expect(cut.withUnsafeBytes { SpooledGroup.parse($0) } == nil)
        }
    }

    /// A run several times the reader's 64 KiB buffer: each refill moves the unread bytes to the front, where
    /// the entry just read was (a reader that decoded a group's key after moving on read other bytes).
    @Test func runsLongerThanTheReadBufferReadBackWhole() throws {
        let spool = try #require(RecordSpool())
        let groups = (0..<4_000).map { i -> ReportGroup in
            var totals = GroupTotals()
            totals.requests = 1
            totals.request.bytes = 4_000 - i  // report order: total descending
            return ReportGroup(keys: ["host-\(i % 7)", "/items/" + String(repeating: "x", count: i % 90) + "/\(i)"], totals: totals)
        }
        var bytes: [UInt8] = []
        for group in groups { SpooledGroup.append(hash: 0, group, to: &bytes) }
        #expect(bytes.count > 4 * 65_536)
        let range = try #require(spool.append(bytes))
        let report = ReportGroups(storage: .runs([.spilled(spool, range)]), count: groups.count)
        let expected = groups.map { "\($0.keys) \($0.totals)" }
        #expect(Self.dump(report) == expected)
        for parts in [1, 2] {
            let read = report.unorderedParts(parts).flatMap { part in part.map { "\($0.keys) \($0.totals)" } }
            #expect(read.sorted() == expected.sorted(), "\(parts) parts")
        }
        #expect(report.readFailure == nil)
    }

    /// Totals read from their bytes go straight into their fields (`SpooledGroup.add(_:to:)`): for random groups
    /// (rare sums or not, histograms or not, negative sums) they equal totals made from the stored sums at once,
    /// and adding one group's bytes to another's totals equals `GroupTotals.add` of the two.
    @Test func totalsAddedFromBytesEqualTotalsAdded() throws {
        var rng = SystemRandomNumberGenerator()
        func randomTotals() -> GroupTotals {
            var sums = [Int](repeating: 0, count: SpooledGroup.sumCount)
            let rare = Bool.random(using: &rng)
            for i in sums.indices where Int.random(in: 0..<3, using: &rng) == 0 {
                let side = (i - 3) % SpooledGroup.sideFieldCount
                if i >= 3, side >= 10, !rare { continue }
                sums[i] = Int.random(in: -5...Int(Int32.max), using: &rng)
            }
            var waits = SizeHistogram()
            if Bool.random(using: &rng) { for _ in 0..<Int.random(in: 1...20, using: &rng) { waits.add(Int.random(in: 0...1 << 40, using: &rng)) } }
            var totals = GroupTotals(sums: sums, waits: waits)!
            if Bool.random(using: &rng) { for _ in 0..<Int.random(in: 1...20, using: &rng) { totals.responseSizes.add(Int.random(in: 0...1 << 30, using: &rng)) } }
            return totals
        }
        func stored(_ totals: GroupTotals) -> [UInt8] {
            var bytes: [UInt8] = []
            SpooledGroup.append(hash: 1, ReportGroup(keys: ["h", "/p"], totals: totals), to: &bytes)
            return bytes
        }
        for _ in 0..<500 {
            let a = randomTotals(), b = randomTotals()
            let bytesA = stored(a), bytesB = stored(b)
            let headA = try #require(bytesA.withUnsafeBytes { SpooledGroup.parse($0) })
            let decoded = try #require(SpooledGroup.totals(headA.totalsBytes))
            #expect(decoded == a)
            #expect(decoded.sums == a.sums)
            var sum = a
            sum.add(b)
            var added = decoded
            let headB = try #require(bytesB.withUnsafeBytes { SpooledGroup.parse($0) })
            #expect(SpooledGroup.add(headB.totalsBytes, to: &added))
            #expect(added == sum)
            #expect(added.sums == sum.sums)
        }
    }

    /// A sum added to the totals without being added to the byte form would vanish from large reports only.
    @Test func theByteFormHasEveryStoredSum() {
        #expect(Mirror(reflecting: GroupTotals()).children.count == SpooledGroup.totalsFieldCount)
        // Ten sums, the four overhead sums, and the other nine rare ones stored together.
        #expect(SideTotals.rareCount == 13)
        #expect(SideTotals.inlineRareCount == 4)
        #expect(
            Mirror(reflecting: SideTotals()).children.count
                == SpooledGroup.sideFieldCount - SideTotals.rareCount + SideTotals.inlineRareCount + 1)
    }
}
