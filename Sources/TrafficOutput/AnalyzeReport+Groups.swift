import TrafficAggregation
import TrafficCapture

/// The groups of JSON and CSV reports, written from the groups where they are kept (`ReportGroups.forEachInOrder`:
/// keys as bytes, totals through a pointer) with a group's numbers written at once into room made for them. A
/// `ReportGroup` made per group, a closure called per column and an append per piece cost 43 000 instructions
/// for a JSON group of 1 350 bytes.
extension AnalyzeReport {
    /// `groupColumns`' then `http2Columns`' values (the last 6).
    static let columnCount = 25 + 6

    /// `groupColumns`' then `http2Columns`' values of the group whose sums (`GroupTotals.store(into:)`) are at
    /// `s`, with the same arithmetic as their closures (a test holds the two together); nil where an HTTP/2
    /// column has none.
    static func columnValues(_ s: UnsafePointer<Int>, into v: UnsafeMutablePointer<Int?>) {
        let q = s + 3, p = s + 3 + SpooledGroup.sideFieldCount  // the request's and the response's sums
        // The sides' sums in `SideTotals.store(into:)`'s order.
        let bytes = 0, line = 1, header = 2, cookie = 3, body = 4, decoded = 6, compressed = 8, uncompressed = 9
        let tunnel = 10, handshake = 11, teardown = 12, packets = 13, retransmitted = 14, tlsOverhead = 15
        let tlsHandshake = 16, h2Control = 17, headerDecodedSum = 18, headerDecodedRecords = 19
        let quicOverhead = 20, h3Control = 21, quicConnection = 22
        func wire(_ x: UnsafePointer<Int>) -> Int {
            x[bytes] &+ x[tunnel] &+ x[handshake] &+ x[teardown] &+ x[packets] &+ x[retransmitted] &+ x[tlsOverhead]
                &+ x[tlsHandshake] &+ x[h2Control] &+ x[quicOverhead] &+ x[h3Control] &+ x[quicConnection]
        }
        v[0] = s[0]
        v[1] = s[1]
        v[2] = q[bytes]
        v[3] = p[bytes]
        v[4] = q[line]
        v[5] = q[header]
        v[6] = q[cookie]
        v[7] = q[body]
        v[8] = q[decoded]
        v[9] = p[line]
        v[10] = p[header]
        v[11] = p[cookie]
        v[12] = p[body]
        v[13] = p[decoded]
        v[14] = q[bytes] &+ p[bytes]
        v[15] = (q[uncompressed] - q[compressed]) + (p[uncompressed] - p[compressed])
        v[16] = q[tunnel] + p[tunnel]
        v[17] = s[2]
        v[18] = q[handshake] + p[handshake]
        v[19] = q[teardown] + p[teardown]
        v[20] = q[packets] + p[packets]
        v[21] = q[retransmitted] + p[retransmitted]
        v[22] = wire(q) + wire(p)
        v[23] = q[tlsOverhead] + p[tlsOverhead]
        v[24] = q[tlsHandshake] + p[tlsHandshake]
        v[25] = q[headerDecodedRecords] > 0 ? q[headerDecodedSum] : nil
        v[26] = p[headerDecodedRecords] > 0 ? p[headerDecodedSum] : nil
        v[27] = q[h2Control] &+ p[h2Control]
        v[28] = q[quicOverhead] &+ p[quicOverhead]
        v[29] = q[h3Control] &+ p[h3Control]
        v[30] = q[quicConnection] &+ p[quicConnection]
    }

    /// The cells after a group's keys, in the order JSON members and CSV columns have them: the first
    /// `columnCount - 6` column values, the waits' two quantiles, then the last six values. A value or wait that
    /// is not there is `nil` (JSON writes `null`, CSV an empty cell). One walk for both formats, so that their
    /// orders cannot drift apart.
    @inline(__always)
    static func forEachCell(
        _ values: UnsafePointer<Int?>, waits: UnsafePointer<SizeHistogram>, quantiles: (Double, Double),
        number: (Int?) -> Void, seconds: (Int?) -> Void
    ) {
        for i in 0..<(columnCount - 6) { number(values[i]) }
        seconds(waits.pointee.quantile(quantiles.0))
        seconds(waits.pointee.quantile(quantiles.1))
        for i in (columnCount - 6)..<columnCount { number(values[i]) }
    }

    /// Calls `body` with the group's sums and its column values (`columnValues`), on the stack.
    static func withColumnValues<R>(
        _ totals: UnsafePointer<GroupTotals>, _ body: (_ sums: UnsafePointer<Int>, _ values: UnsafePointer<Int?>) -> R
    ) -> R {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: SpooledGroup.sumCount) { sums in
            GroupTotals.store(totals, into: sums.baseAddress!)
            return withUnsafeTemporaryAllocation(of: Int?.self, capacity: columnCount) { values in
                columnValues(sums.baseAddress!, into: values.baseAddress!)
                return body(sums.baseAddress!, values.baseAddress!)
            }
        }
    }

    /// Writes `Self.seconds(microseconds)` at `out` (room for `maxSecondsCount`); how many bytes. The whole
    /// seconds and nine decimals written in place (`CaptureTime.withDecimalBytes` made them in a buffer of its
    /// own, a digit a step, for both waits of every group); the same overflow trap as `seconds`.
    static func writeSeconds(_ microseconds: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let nanoseconds = Int64(microseconds) * 1000
        guard nanoseconds >= 0 else {
            // (No wait is negative; kept exact all the same.)
            return CaptureTime(nanoseconds: nanoseconds).withDecimalBytes { digits in
                out.update(from: digits.baseAddress!, count: digits.count)
                return digits.count
            }
        }
        let at = writeDecimal(Int(nanoseconds / 1_000_000_000), to: out)
        out[at] = UInt8(ascii: ".")
        writeDigits(UInt64(nanoseconds % 1_000_000_000), count: 9, to: out + at + 1)
        return at + 10
    }

    /// The most bytes `writeSeconds` writes: a sign, the whole seconds of `Int64` nanoseconds and nine decimals.
    static let maxSecondsCount = 32

    /// Writes a group's `merge_state` at `out` (room for `mergeStateRoom`) and returns how many bytes: its exact
    /// state on one line (issue 27), every sum in `merge_layout`'s order and the wait histogram (`[bucket, count]`
    /// pairs and the largest wait in µs), from which `traffic merge` rebuilds the group, and adds groups of other
    /// reports to it, exactly as one run over all the captures would have.
    static func writeMergeState(
        sums: UnsafePointer<Int>, waits: UnsafePointer<SizeHistogram>, to out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        var at = 0
        func put(_ text: StaticString) {
            (out + at).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
            at += text.utf8CodeUnitCount
        }
        put("{\"sums\": [")
        for i in 0..<SpooledGroup.sumCount {
            if i > 0 {
                out[at] = UInt8(ascii: ",")
                at += 1
            }
            // Most sums are zero (the rare ones, cookies, bodies of GETs).
            if sums[i] == 0 {
                out[at] = UInt8(ascii: "0")
                at += 1
            } else {
                at += writeDecimal(sums[i], to: out + at)
            }
        }
        put("], \"waits\": [")
        let entries = waits.pointer(to: \.entries)!
        for (i, entry) in entries.pointee.enumerated() {
            put(i > 0 ? ",[" : "[")
            at += writeDecimal(Int(entry >> SizeHistogram.countBits), to: out + at)
            put(",")
            at += writeDecimal(Int(entry & SizeHistogram.countMask), to: out + at)
            put("]")
        }
        put("], \"wait_max_us\": ")
        at += writeDecimal(waits.pointee.max, to: out + at)
        put("}")
        return at
    }

    /// Room for `writeMergeState`'s text of a group with `entryCount` wait buckets.
    static func mergeStateRoom(entryCount: Int) -> Int {
        64 + SpooledGroup.sumCount * (maxDecimalBytes + 1) + entryCount * (2 * maxDecimalBytes + 4) + maxDecimalBytes
    }

    /// The members of a group's JSON object, as `json` writes them. (A class: the closures of `write` capture
    /// it, and a struct of four arrays was copied into them for every group.)
    final class GroupJSONMembers {
        /// `JSONWriter.memberPrefix` of each group-by field, one after the other; `keyPrefixEnds` says where each ends.
        private let keyPrefixes: [UInt8]
        private let keyPrefixEnds: [Int]
        /// The members after the key fields (`groupColumns`, `waitColumns`, `http2Columns`, `merge_state`), each
        /// as its comma and `memberPrefix`, one after the other; `memberEnds` says where each ends.
        private let members: [UInt8]
        private let memberEnds: [Int]
        private let keyCount: Int
        /// `waitColumns`' quantiles (read once: the list's strings were retained and released per group).
        private let waitQuantiles: (Double, Double)
        /// Room for the members after the keys, their state aside (`mergeStateRoom`).
        private let numbersRoom: Int

        /// For groups opened in `writer`'s value open now (the groups array).
        init(groupBy: [GroupField], writer: JSONWriter) {
            precondition(AnalyzeReport.groupColumns.count + AnalyzeReport.http2Columns.count == AnalyzeReport.columnCount)
            precondition(AnalyzeReport.waitColumns.count == 2, "two wait columns")
            let depth = writer.openDepth + 1
            var keyPrefixes: [UInt8] = [], keyPrefixEnds: [Int] = []
            for field in groupBy {
                keyPrefixes += writer.memberPrefix(JSONWriter.Key(field.columnName), depth: depth)
                keyPrefixEnds.append(keyPrefixes.count)
            }
            let names = AnalyzeReport.groupColumns.map(\.name) + AnalyzeReport.waitColumns.map(\.name)
                + AnalyzeReport.http2Columns.map(\.name) + ["merge_state"]
            var members: [UInt8] = [], memberEnds: [Int] = []
            for name in names {
                members.append(UInt8(ascii: ","))
                members += writer.memberPrefix(JSONWriter.Key(name), depth: depth)
                memberEnds.append(members.count)
            }
            self.keyPrefixes = keyPrefixes
            self.keyPrefixEnds = keyPrefixEnds
            self.members = members
            self.memberEnds = memberEnds
            keyCount = groupBy.count
            waitQuantiles = (AnalyzeReport.waitColumns[0].quantile, AnalyzeReport.waitColumns[1].quantile)
            numbersRoom = members.count + AnalyzeReport.groupColumns.count * maxDecimalBytes
                + AnalyzeReport.waitColumns.count * AnalyzeReport.maxSecondsCount
                + AnalyzeReport.http2Columns.count * maxDecimalBytes
        }

        /// Writes one group's object, as the next element of the array open in `w`.
        func write(key: UnsafeRawBufferPointer, totals: UnsafePointer<GroupTotals>, to w: inout JSONWriter) {
            w.beginObject()
            // As `zip(groupBy, keys)` of the decoded key: the fields there are, up to `keyCount`; none of a
            // damaged key (decoded, it was no fields): what was written of one is taken back.
            var written = 0
            let keysStart = w.byteCount
            let intact = keyPrefixes.withUnsafeBytes { prefixes in
                keyPrefixEnds.withUnsafeBufferPointer { ends in
                    GroupKeyBytes.forEachField(key) { field in
                        guard written < keyCount else { return }
                        if written > 0 { w.appendComma() }
                        let start = written == 0 ? 0 : ends[written - 1]
                        w.appendRaw(UnsafeRawBufferPointer(start: prefixes.baseAddress! + start, count: ends[written] - start))
                        w.appendJSONString(utf8: field)
                        written += 1
                    }
                }
            }
            if !intact {
                w.removeBytes(from: keysStart)
                written = 0
            }
            let waits = totals.pointer(to: \.waits)!
            let room = numbersRoom + AnalyzeReport.mergeStateRoom(entryCount: waits.pointee.entries.count)
            let quantiles = waitQuantiles
            AnalyzeReport.withColumnValues(totals) { sums, values in
                members.withUnsafeBufferPointer { members in
                    memberEnds.withUnsafeBufferPointer { ends in
                        w.appendWritten(maxCount: room) { out in
                            var at = 0
                            var member = 0
                            /// The next member's comma (none for the first member of an object without keys) and name.
                            @inline(__always) func next() {
                                var start = member == 0 ? 0 : ends[member - 1]
                                if member == 0 && written == 0 { start += 1 }
                                let count = ends[member] - start
                                (out + at).update(from: members.baseAddress! + start, count: count)
                                at += count
                                member += 1
                            }
                            @inline(__always) func null() {
                                let null: StaticString = "null"
                                (out + at).update(from: null.utf8Start, count: null.utf8CodeUnitCount)
                                at += null.utf8CodeUnitCount
                            }
                            AnalyzeReport.forEachCell(
                                values, waits: waits, quantiles: quantiles,
                                number: { value in
                                    next()
                                    if let value { at += writeDecimal(value, to: out + at) } else { null() }
                                },
                                seconds: { wait in
                                    next()
                                    if let wait { at += AnalyzeReport.writeSeconds(wait, to: out + at) } else { null() }
                                })
                            next()
                            at += AnalyzeReport.writeMergeState(sums: sums, waits: waits, to: out + at)
                            return at
                        }
                    }
                }
            }
            w.noteMembersWritten()
            w.endObject()
        }
    }

    /// A group's CSV row, as `groupsCSV` wrote it from the group's `keys` and `totals`.
    struct GroupCSVRow {
        /// `waitColumns`' quantiles (read once: the list's strings were retained and released per group).
        private let waitQuantiles: (Double, Double)

        init() {
            precondition(AnalyzeReport.waitColumns.count == 2, "two wait columns")
            waitQuantiles = (AnalyzeReport.waitColumns[0].quantile, AnalyzeReport.waitColumns[1].quantile)
        }

        /// Room for the cells after the keys.
        private static let room = (1 + maxDecimalBytes) * AnalyzeReport.columnCount + 2 * (1 + AnalyzeReport.maxSecondsCount)

        func write(key: UnsafeRawBufferPointer, totals: UnsafePointer<GroupTotals>, to w: inout CSVWriter) {
            // Every field of the key; none of a damaged one (decoded, it was no fields): what was written of one
            // is taken back.
            let mark = w.mark
            if !GroupKeyBytes.forEachField(key, { field in w.cell(utf8: field) }) { w.rollBack(to: mark) }
            let waits = totals.pointer(to: \.waits)!
            let quantiles = waitQuantiles
            AnalyzeReport.withColumnValues(totals) { _, values in
                w.appendCells(maxCount: Self.room) { out, rowStarted in
                    var at = 0
                    var first = !rowStarted
                    @inline(__always) func separate() {
                        if !first {
                            out[at] = UInt8(ascii: ",")
                            at += 1
                        }
                        first = false
                    }
                    AnalyzeReport.forEachCell(
                        values, waits: waits, quantiles: quantiles,
                        number: { value in
                            separate()
                            if let value { at += writeDecimal(value, to: out + at) }
                        },
                        seconds: { wait in
                            separate()
                            if let wait { at += AnalyzeReport.writeSeconds(wait, to: out + at) }
                        })
                    return at
                }
            }
            w.endRow()
        }
    }
}
