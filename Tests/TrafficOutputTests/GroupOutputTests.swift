import Testing
import TrafficAggregation
import TrafficCapture

@testable import TrafficOutput

/// The JSON and CSV groups are written from the groups' bytes in place (`AnalyzeReport+Groups.swift`): every
/// byte must be what the former per-`ReportGroup` path wrote. Expected bytes come from `String(value)`, from
/// the `String`-based escaping and quoting (unchanged), from a copy of the former writers kept here, or by hand.
@Suite struct GroupOutputTests {
    // MARK: Primitives

    /// Every length of number, both signs, and the ends of `Int`.
    static let decimals: [Int] = {
        var values = [0, 9, 10, 99, 100, 101, 999, 1000, 9999, 10000, 12345, 99999, 100000, Int.max, Int.min, Int.min + 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1]
        }
        return values + values.filter { $0 > 0 }.map { -$0 }
    }()

    @Test func decimalsAreStringOfTheValue() {
        for value in Self.decimals {
            var bytes: [UInt8] = []
            bytes.appendDecimal(value)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
            let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxDecimalBytes + 2) { out in
                // Bytes around the room stay as they were.
                out.initialize(repeating: 0xEE)
                let count = writeDecimal(value, to: out.baseAddress! + 1)
                #expect(out[0] == 0xEE && out[count + 1] == 0xEE)
                return Array(out[1..<(1 + count)])
            }
            #expect(String(decoding: written, as: UTF8.self) == String(value))
            #expect(withDecimal(value) { Array($0) } == Array(String(value).utf8))
        }
        #expect(String(Int.min).utf8.count == maxDecimalBytes)
    }

    @Test func decimalsOfHandWrittenValues() {
        for (value, text) in [(0, "0"), (7, "7"), (-7, "-7"), (42, "42"), (-100, "-100"), (1_000_000, "1000000"),
                              (Int.max, "9223372036854775807"), (Int.min, "-9223372036854775808")] {
            var bytes: [UInt8] = []
            bytes.appendDecimal(value)
            #expect(bytes == Array(text.utf8))
        }
    }

    /// Waits (whole µs) as `AnalyzeReport.seconds` wrote them through `CaptureTime.decimalString`.
    @Test func secondsAreThoseOfCaptureTime() {
        let largest = Int(Int64.max / 1000)
        for microseconds in [0, 1, 9, 10, 99, 100, 999, 1000, 999_999, 1_000_000, 1_000_001, 1_234_567, 59_999_999,
                             123_456_789_012, largest - 1, largest, -1, -999_999, -1_000_000, -1_000_001] {
            let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: AnalyzeReport.maxSecondsCount) { out in
                String(decoding: UnsafeBufferPointer(rebasing: out[..<AnalyzeReport.writeSeconds(microseconds, to: out.baseAddress!)]),
                       as: UTF8.self)
            }
            #expect(text == AnalyzeReport.seconds(microseconds), "\(microseconds)")
        }
        var digits = [UInt8](repeating: 0, count: 9)
        digits.withUnsafeMutableBufferPointer { writeDigits(1_020_304, count: 9, to: $0.baseAddress!) }
        #expect(digits == Array("001020304".utf8))
    }

    /// The checks eight bytes at a time against a test per byte, for every byte value at every place of fields
    /// of every length up to 20 (whole words, tails, both).
    @Test func plainBytesAgreeWithATestPerByte() {
        func plainJSON(_ b: UInt8) -> Bool { b < 0x80 && b >= 0x20 && b != 0x22 && b != 0x5C }
        func plainCSV(_ b: UInt8) -> Bool { b < 0x80 && b != 0x2C && b != 0x22 && b != 0x0A && b != 0x0D }
        for length in 1...20 {
            for place in 0..<length {
                for byte in 0...255 {
                    var field = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    field[place] = UInt8(byte)
                    field.withUnsafeBytes { field in
                        #expect(PlainBytes.isPlainJSON(field) == plainJSON(UInt8(byte)), "JSON \(byte) at \(place) of \(length)")
                        #expect(PlainBytes.isPlainCSV(field) == plainCSV(UInt8(byte)), "CSV \(byte) at \(place) of \(length)")
                    }
                }
            }
        }
        #expect([UInt8]().withUnsafeBytes { PlainBytes.isPlainJSON($0) && PlainBytes.isPlainCSV($0) })
    }

    /// Keys as bytes: quotes, backslashes, control bytes, DEL, non-ASCII UTF-8, and bytes that are not UTF-8
    /// (as a damaged file could hold; decoded, they became U+FFFD).
    static let awkwardKeys: [[UInt8]] = [
        Array("api.example.com".utf8), Array("".utf8), Array("/items/42?x=1".utf8),
        Array("say \"hi\"".utf8), Array("C:\\path\\to".utf8), Array("tab\there\nline\r\u{1}\u{1F}".utf8),
        [0x7F, 0x41], Array("/caf\u{E9}/na\u{EF}ve".utf8), Array("\u{1F600} and \"quote\"".utf8),
        Array("e\u{301}\"\u{301}".utf8), [0xFF, 0x41, 0xC3], [0x22, 0xE2, 0x82], Array("a,b".utf8),
        Array("quote\"inside,and comma".utf8), Array("crlf\r\nend".utf8), Array("lf\nonly".utf8), Array("cr\ronly".utf8),
        Array("a plain key of more than eight bytes, with a comma".utf8), Array("0123456789abcdef\u{0}".utf8),
    ]

    @Test func jsonStringsFromBytesAreThoseOfTheDecodedString() {
        for key in Self.awkwardKeys {
            var fromBytes: [UInt8] = []
            key.withUnsafeBytes { fromBytes.appendJSONString(utf8: $0) }
            var fromString: [UInt8] = []
            fromString.appendJSONString(String(decoding: key, as: UTF8.self))
            #expect(fromBytes == fromString, "\(key)")
        }
    }

    @Test func jsonStringsByHand() {
        for (key, expected) in [
            ("say \"hi\"", #""say \"hi\"""#), ("a\\b", #""a\\b""#), ("t\tn\nr\r", #""t\tn\nr\r""#),
            ("\u{1}\u{1F}", #""\u0001\u001f""#), ("caf\u{E9}", "\"caf\u{E9}\""), ("\u{7F}", "\"\u{7F}\""),
        ] {
            var bytes: [UInt8] = []
            Array(key.utf8).withUnsafeBytes { bytes.appendJSONString(utf8: $0) }
            #expect(String(decoding: bytes, as: UTF8.self) == expected)
        }
        var repaired: [UInt8] = []
        [UInt8]([0x61, 0xFF]).withUnsafeBytes { repaired.appendJSONString(utf8: $0) }
        #expect(repaired == [0x22, 0x61, 0xEF, 0xBF, 0xBD, 0x22])
    }

    @Test func csvCellsFromBytesAreThoseOfTheDecodedString() {
        for key in Self.awkwardKeys {
            for before in [false, true] {
                var fromBytes = CSVWriter(), fromString = CSVWriter()
                if before {
                    fromBytes.cell(1)
                    fromString.cell(1)
                }
                key.withUnsafeBytes { fromBytes.cell(utf8: $0) }
                fromString.cell(String(decoding: key, as: UTF8.self))
                fromBytes.cell("next")
                fromString.cell("next")
                #expect(fromBytes.output == fromString.output, "\(key)")
            }
        }
    }

    @Test func csvCellsByHand() {
        for (key, expected) in [
            ("plain", "plain,x\r\n"), ("a,b", "\"a,b\",x\r\n"), ("say \"hi\"", "\"say \"\"hi\"\"\",x\r\n"),
            ("cr\rlf\n", "\"cr\rlf\n\",x\r\n"), ("crlf\r\n", "\"crlf\r\n\",x\r\n"), ("", ",x\r\n"),
            ("caf\u{E9}", "caf\u{E9},x\r\n"),
        ] {
            var w = CSVWriter()
            Array(key.utf8).withUnsafeBytes { w.cell(utf8: $0) }
            w.cell("x")
            w.endRow()
            #expect(w.output == expected)
        }
    }

    /// Nesting, commas and indentation by hand: pretty and compact, and deeper than the comma bits' 64 levels.
    @Test func jsonWriterNestingByHand() {
        var w = JSONWriter()
        w.beginObject()
        w.field("a", 1)
        w.beginArray("list")
        w.field(nil, "x")
        w.beginObject()
        w.endObject()
        w.beginArray()
        w.endArray()
        w.endArray()
        w.beginObject("empty")
        w.endObject()
        w.field("n", Int?.none)
        w.endObject()
        #expect(w.output == "{\n  \"a\": 1,\n  \"list\": [\n    \"x\",\n    {},\n    []\n  ],\n  \"empty\": {},\n  \"n\": null\n}")

        var compact = JSONWriter(pretty: false)
        for line in 0..<2 {
            compact.beginObject()
            compact.field("line", line)
            compact.beginArray("b")
            compact.field(nil, true)
            compact.field(nil, -5)
            compact.endArray()
            compact.endObject()
            compact.endLine()
        }
        #expect(compact.output == "{\"line\":0,\"b\":[true,-5]}\n{\"line\":1,\"b\":[true,-5]}\n")

        var deep = JSONWriter()
        let depth = 70
        for _ in 0..<depth { deep.beginArray() }
        deep.field(nil, 1)
        deep.field(nil, 2)
        for _ in 0..<depth { deep.endArray() }
        var expected = "["
        for level in 1..<depth { expected += "\n" + String(repeating: "  ", count: level) + "[" }
        let inner = "\n" + String(repeating: "  ", count: depth)
        expected += inner + "1," + inner + "2"
        for level in stride(from: depth - 1, through: 0, by: -1) { expected += "\n" + String(repeating: "  ", count: level) + "]" }
        #expect(deep.output == expected)
    }

    // MARK: Columns and merge state

    /// Totals with every sum different (and both HTTP/2 header sums present or both absent).
    static func totals(seed: Int, decoded: Bool) -> GroupTotals {
        var sums = (0..<SpooledGroup.sumCount).map { seed &* 1_000 &+ $0 &* 37 &+ 1 }
        if !decoded {
            // `header_decoded_records` of both sides: no decoded header sizes.
            sums[3 + 19] = 0
            sums[3 + SpooledGroup.sideFieldCount + 19] = 0
        }
        var totals = GroupTotals(sums: sums, waits: SizeHistogram())!
        for wait in 0..<(seed % 5) { totals.waits.add(wait * 977 + seed) }
        return totals
    }

    @Test func columnValuesAreTheColumnsOfTheTotals() {
        #expect(AnalyzeReport.groupColumns.count + AnalyzeReport.http2Columns.count == AnalyzeReport.columnCount)
        for seed in 0..<6 {
            for decoded in [false, true] {
                let totals = Self.totals(seed: seed, decoded: decoded)
                let expected: [Int?] = AnalyzeReport.groupColumns.map { $0.value(totals) } + AnalyzeReport.http2Columns.map { $0.value(totals) }
                let values = withUnsafePointer(to: totals) { totals in
                    AnalyzeReport.withColumnValues(totals) { _, values in Array(UnsafeBufferPointer(start: values, count: AnalyzeReport.columnCount)) }
                }
                #expect(values == expected, "seed \(seed) decoded \(decoded)")
            }
        }
    }

    /// The former `AnalyzeReport.mergeState` (with `String(value)` for its numbers).
    static func formerMergeState(_ totals: GroupTotals) -> String {
        "{\"sums\": [" + totals.sums.map { String($0) }.joined(separator: ",") + "], \"waits\": ["
            + totals.waits.pairs.map { "[\($0.bucket),\($0.count)]" }.joined(separator: ",") + "], \"wait_max_us\": "
            + String(totals.waits.max) + "}"
    }

    @Test func mergeStateIsTheFormerOne() {
        var cases = (0..<6).map { Self.totals(seed: $0, decoded: $0 % 2 == 0) }
        cases.append(GroupTotals())
        var extreme = GroupTotals(sums: (0..<SpooledGroup.sumCount).map { $0 % 2 == 0 ? Int.max : Int.min }, waits: SizeHistogram())!
        for wait in [0, 1, 15, 16, 1_000_000, Int.max] { extreme.waits.add(wait) }
        cases.append(extreme)
        for totals in cases {
            let state = withUnsafePointer(to: totals) { totals in
                let waits = totals.pointer(to: \.waits)!
                return withUnsafeTemporaryAllocation(of: Int.self, capacity: SpooledGroup.sumCount) { sums in
                    GroupTotals.store(totals, into: sums.baseAddress!)
                    let room = AnalyzeReport.mergeStateRoom(entryCount: waits.pointee.entries.count)
                    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { out in
                        let count = AnalyzeReport.writeMergeState(sums: sums.baseAddress!, waits: waits, to: out.baseAddress!)
                        return String(decoding: UnsafeBufferPointer(rebasing: out[..<count]), as: UTF8.self)
                    }
                }
            }
            #expect(state == Self.formerMergeState(totals))
        }
    }

    // MARK: Whole groups

    static let groupBy: [GroupField] = [.host, .path]

    /// Groups in report order with awkward keys, numbers of every size and waits.
    static func groups() -> [ReportGroup] {
        var groups = (0..<120).map { i -> ReportGroup in
            var totals = Self.totals(seed: i, decoded: i % 3 == 0)
            totals.request.bytes = (i * 7_919) % 5_000
            totals.response.bytes = i == 17 ? 3 << 40 : (i * 104_729) % 900_000
            let key = awkwardKeys[i % awkwardKeys.count]
            let path = i % 4 == 0 ? String(decoding: key, as: UTF8.self) : "/items/\(i)"
            let host = i % 4 == 1 ? String(decoding: key, as: UTF8.self) : "host\(i % 3).example"
            return ReportGroup(keys: [host, path], totals: totals)
        }
        ReportOrderRuns.sort(&groups)
        return groups
    }

    static func report(_ groups: ReportGroups, groupBy: [GroupField] = groupBy) -> TrafficReport {
        TrafficReport(
            captures: [], groupBy: groupBy, groups: groups, totals: GroupTotals(), summary: ReportSummary(),
            messages: nil, normalizedGroupCount: nil, anomalies: [:], warnings: [])
    }

    /// The groups kept each way a report keeps them: rows, keys as bytes, sorted runs in a file and in memory.
    static func storages(_ groups: [ReportGroup]) throws -> [(String, ReportGroups)] {
        var keyBytes: [UInt8] = [], keyEnds: [Int] = []
        for group in groups {
            GroupKeyBytes.append(group.keys, to: &keyBytes)
            keyEnds.append(keyBytes.count)
        }
        let keyed = KeyedGroups(keyBytes: keyBytes, keyEnds: keyEnds, totals: groups.map(\.totals))
        return [
            ("memory", ReportGroups(groups)),
            ("keyed", ReportGroups(storage: .keyed(keyed), count: groups.count)),
            ("runs in a file", try SpilledTableTests.spilled(groups, runCount: 3, toFile: true)),
            ("runs in memory", try SpilledTableTests.spilled(groups, runCount: 2, toFile: false)),
        ]
    }

    /// The former JSON group loop, through `JSONWriter`'s own fields (numbers as `String(value)`): the groups array
    /// as it stands in the report, from its key to its closing bracket.
    static func formerJSONGroups(_ groups: [ReportGroup], groupBy: [GroupField]) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.beginArray("groups")
        for group in groups {
            w.beginObject()
            for (field, key) in zip(groupBy, group.keys) { w.field(field.columnName, key) }
            for column in AnalyzeReport.groupColumns { w.field(column.name, raw: String(column.value(group.totals))) }
            for column in AnalyzeReport.waitColumns {
                w.field(column.name, raw: AnalyzeReport.seconds(group.totals.waits.quantile(column.quantile)) ?? "null")
            }
            for column in AnalyzeReport.http2Columns { w.field(column.name, raw: column.value(group.totals).map { String($0) } ?? "null") }
            w.field("merge_state", raw: formerMergeState(group.totals))
            w.endObject()
        }
        w.endArray()
        w.endObject()
        // From `"groups": [` to its `]` (the object's "\n}" left out): what the report has between the summary
        // and what follows.
        let text = w.output.dropLast(2)
        return String(text[text.firstRange(of: "\"groups\": [")!.lowerBound...])
    }

    /// The former CSV loop, through `CSVWriter`'s `String` cells.
    static func formerCSV(_ groups: [ReportGroup], groupBy: [GroupField]) -> String {
        var w = CSVWriter()
        w.row(groupBy.map(\.columnName) + AnalyzeReport.groupColumns.map(\.name) + AnalyzeReport.waitColumns.map(\.name)
            + AnalyzeReport.http2Columns.map(\.name))
        for group in groups {
            for key in group.keys { w.cell(key) }
            for column in AnalyzeReport.groupColumns { w.cell(String(column.value(group.totals))) }
            for column in AnalyzeReport.waitColumns { w.cell(AnalyzeReport.seconds(group.totals.waits.quantile(column.quantile)) ?? "") }
            for column in AnalyzeReport.http2Columns { w.cell(column.value(group.totals).map { String($0) } ?? "") }
            w.endRow()
        }
        return w.output
    }

    @Test func jsonAndCSVGroupsAreTheFormerOnesWhereverTheGroupsAreKept() throws {
        let groups = Self.groups()
        let expectedJSON = Self.formerJSONGroups(groups, groupBy: Self.groupBy)
        let expectedCSV = Self.formerCSV(groups, groupBy: Self.groupBy)
        for (name, storage) in try Self.storages(groups) {
            for chunkBytes in [1, 4096, 1 << 20] {
                let report = AnalyzeReport(report: Self.report(storage), listMessages: false)
                var json = "", csv = ""
                report.write(.json, chunkBytes: chunkBytes) { json += $0 }
                report.write(.csv, chunkBytes: chunkBytes) { csv += $0 }
                #expect(json.contains(expectedJSON + ",\n  \"merge_layout\""), "\(name) \(chunkBytes)")
                #expect(csv == expectedCSV, "\(name) \(chunkBytes)")
                #expect(storage.readFailure == nil)
            }
        }
    }

    /// Fewer group-by fields than key fields (JSON writes as many as there are names, CSV every field), none, and
    /// a key with a single field.
    @Test func keysAndGroupByOfOtherCounts() throws {
        let groups = Self.groups()
        for groupBy in [[GroupField](), [.host], [.host, .path, .status]] {
            for (name, storage) in try Self.storages(groups) {
                let report = AnalyzeReport(report: Self.report(storage, groupBy: groupBy), listMessages: false)
                #expect(report.render(.json).contains(Self.formerJSONGroups(groups, groupBy: groupBy) + ",\n"), "\(name) \(groupBy)")
                #expect(report.render(.csv) == Self.formerCSV(groups, groupBy: groupBy), "\(name) \(groupBy)")
            }
        }
    }

    /// A damaged key (its field count says two, one is there) decoded to no fields: it is written with none.
    @Test func aDamagedKeyIsWrittenWithoutFields() {
        var keyBytes: [UInt8] = [], keyEnds: [Int] = []
        GroupKeyBytes.append(["good.example", "/a"], to: &keyBytes)
        keyEnds.append(keyBytes.count)
        var damaged: [UInt8] = []
        GroupKeyBytes.append(["bad.example", "/b"], to: &damaged)
        keyBytes += damaged.dropLast(3)
        keyEnds.append(keyBytes.count)
        let totals = [Self.totals(seed: 3, decoded: true), Self.totals(seed: 2, decoded: false)]
        let keyed = KeyedGroups(keyBytes: keyBytes, keyEnds: keyEnds, totals: totals)
        let former = [ReportGroup(keys: ["good.example", "/a"], totals: totals[0]), ReportGroup(keys: [], totals: totals[1])]
        let report = AnalyzeReport(report: Self.report(ReportGroups(storage: .keyed(keyed), count: 2)), listMessages: false)
        #expect(report.render(.json).contains(Self.formerJSONGroups(former, groupBy: Self.groupBy) + ",\n"))
        #expect(report.render(.csv) == Self.formerCSV(former, groupBy: Self.groupBy))
    }
}
