/// The byte form of a group in a `RecordSpool` (when a report has more groups than `groupsInMemory`): the
/// key's hash (8 bytes, little-endian), the key (`GroupKeyBytes`), then the totals: a mask of the sums that
/// are not zero (an unsigned varint, bit `i` for sum `i` of `GroupTotals.store(into:)`) and those sums as
/// zigzag varints. Most of a group's 43 sums are zero (the rare ones, cookies, bodies of GETs): the mask
/// keeps an entry near 80 bytes (95 with every sum written), and writing the temporary file costs by the byte.
///
/// After the sums comes the response-size histogram: its exact maximum, the number of non-empty buckets, and
/// (bucket, count) for each, all unsigned varints (`SizeHistogram`; a few bytes for most groups); nothing at all
/// when it is empty. Then, when there are waits, the wait histogram the same way (the size histogram is then
/// written even when empty, so that the second one is known by its place).
///
/// Every stored sum is written: a test counts the stored properties of `GroupTotals` and `SideTotals`
/// against `totalsFieldCount` and `sideFieldCount`, so that a sum added there without being added here
/// fails the tests instead of vanishing from large reports only.
package enum SpooledGroup {
    package static let totalsFieldCount = 7
    /// `SideTotals`' stored sums, the thirteen rare ones included (four overhead sums as properties, the others
    /// together as `rareSums`: 15 properties).
    package static let sideFieldCount = 10 + SideTotals.rareCount
    /// The sums of `GroupTotals.store(into:)`: three counts and two sides.
    package static let sumCount = 3 + 2 * sideFieldCount

    package static func append(hash: UInt64, _ group: ReportGroup, to bytes: inout [UInt8]) {
        var key: [UInt8] = []
        GroupKeyBytes.append(group.keys, to: &key)
        key.withUnsafeBytes { key in
            withUnsafePointer(to: group.totals) { append(hash: hash, keyBytes: key, totals: $0, to: &bytes) }
        }
    }

    /// The totals are read in place (a copy retains and releases their arrays), their numbers encoded into
    /// a stack buffer and appended at once (appending varints byte by byte cost 500 ns a group).
    package static func append(
        hash: UInt64, keyBytes: UnsafeRawBufferPointer, totals: UnsafePointer<GroupTotals>, to bytes: inout [UInt8]
    ) {
        let sizes = totals.pointer(to: \.responseSizes)!, waits = totals.pointer(to: \.waits)!
        let histogramEntries = sizes.pointee.entries.count + waits.pointee.entries.count
        // The whole entry on the stack and one append, when it fits (nearly every group: a key of a few dozen
        // bytes, histograms of a few buckets). Appending its length, hash, key, sums and each histogram pair
        // in turn, with the length stored afterwards, cost ~1 100 instructions a group: most of a spill, which
        // kept the other thread waiting for ~6 ms (1 GiB API bench).
        let bound = 12 + keyBytes.count + 10 * (1 + sumCount) + (histogramEntries > 0 ? 40 + 20 * histogramEntries : 0)
        guard bound <= Self.stackEntryBytes else {
            return appendInParts(hash: hash, keyBytes: keyBytes, totals: totals, to: &bytes)
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.stackEntryBytes) { buffer in
            let out = buffer.baseAddress!
            UnsafeMutableRawPointer(out + 4).storeBytes(of: hash.littleEndian, as: UInt64.self)
            var n = 12
            if let key = keyBytes.baseAddress, !keyBytes.isEmpty {
                (out + n).update(from: key.assumingMemoryBound(to: UInt8.self), count: keyBytes.count)
                n += keyBytes.count
            }
            n += writeSums(totals, at: out + n)
            if histogramEntries > 0 {
                func write(_ histogram: UnsafePointer<SizeHistogram>) {
                    n += putUnsigned(UInt64(histogram.pointee.max), at: out + n)
                    histogram.pointee.entries.withUnsafeBufferPointer { entries in
                        n += putUnsigned(UInt64(entries.count), at: out + n)
                        for entry in entries {
                            n += putUnsigned(entry >> SizeHistogram.countBits, at: out + n)
                            n += putUnsigned(entry & SizeHistogram.countMask, at: out + n)
                        }
                    }
                }
                write(sizes)
                if !waits.pointee.entries.isEmpty { write(waits) }
            }
            UnsafeMutableRawPointer(out).storeBytes(of: UInt32(truncatingIfNeeded: n - 4).littleEndian, as: UInt32.self)
            bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: n))
        }
    }

    /// The most an entry written at once may take (`append`): a stack buffer's size.
    private static let stackEntryBytes = 1024

    /// `append` in parts, for an entry too long for the stack buffer (a long key, many histogram buckets).
    package static func appendInParts(
        hash: UInt64, keyBytes: UnsafeRawBufferPointer, totals: UnsafePointer<GroupTotals>, to bytes: inout [UInt8]
    ) {
        let lengthAt = bytes.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 12 + 10 * (1 + sumCount)) { buffer in
            let out = buffer.baseAddress!
            // The length (filled in by `endSpoolEntry`) and the hash, in one append.
            for i in 0..<4 { out[i] = 0 }
            for i in 0..<8 { out[4 + i] = UInt8(truncatingIfNeeded: hash >> (8 * UInt64(i))) }
            bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: 12))
            bytes.append(contentsOf: keyBytes)
            let count = writeSums(totals, at: out)
            bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: count))
            let sizes = totals.pointee.responseSizes
            let waits = totals.pointee.waits
            // Groups without responses (most TLS rows, requests cut short) write nothing more.
            guard !sizes.entries.isEmpty || !waits.entries.isEmpty else { return }
            // Written from the entries as they are (no pair array, no list of histograms: groups are spilled and
            // merged several times over, and the wait histograms cost +16 % on the bench before this).
            func write(_ histogram: SizeHistogram) {
                var n = putUnsigned(UInt64(histogram.max), at: out)
                n += putUnsigned(UInt64(histogram.entries.count), at: out + n)
                bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: n))
                for entry in histogram.entries {
                    n = putUnsigned(entry >> SizeHistogram.countBits, at: out)
                    n += putUnsigned(entry & SizeHistogram.countMask, at: out + n)
                    bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: n))
                }
            }
            write(sizes)
            if !waits.entries.isEmpty { write(waits) }
        }
        bytes.endSpoolEntry(lengthAt)
    }

    /// The mask of the totals' sums that are not zero and those sums as zigzag varints, at `out` (room for ten
    /// bytes a sum and ten for the mask); returns their length. One pass: the sums' varints go after room for
    /// the mask, the mask is written before them, and they are moved up to it.
    @inline(__always)
    private static func writeSums(_ totals: UnsafePointer<GroupTotals>, at out: UnsafeMutablePointer<UInt8>) -> Int {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: sumCount) { sums in
            totals.pointee.store(into: sums.baseAddress!)
            var mask: UInt64 = 0
            var end = 10
            for i in 0..<sumCount where sums[i] != 0 {
                mask |= 1 << UInt64(i)
                let v = Int64(sums[i])
                end += putUnsigned(UInt64(bitPattern: v << 1 ^ v >> 63), at: out + end)
            }
            let maskCount = putUnsigned(mask, at: out)
            if maskCount < 10 { (out + maskCount).update(from: out + 10, count: end - 10) }
            return maskCount + end - 10
        }
    }

    /// An unsigned varint at `out`; returns its length.
    private static func putUnsigned(_ value: UInt64, at out: UnsafeMutablePointer<UInt8>) -> Int {
        var v = value, count = 0
        while v >= 0x80 {
            out[count] = UInt8(truncatingIfNeeded: v) | 0x80
            count += 1
            v >>= 7
        }
        out[count] = UInt8(v)
        return count + 1
    }

    /// An entry's hash, key (checked whole) and the mask of its sums, with the reader at the first sum: what
    /// `parse` and `parseHead` both read first.
    @inline(__always)
    private static func keyAndMask(
        _ bytes: UnsafeRawBufferPointer
    ) -> (hash: UInt64, keyBytes: UnsafeRawBufferPointer, totalsStart: Int, mask: UInt64, reader: SpoolReader)? {
        guard bytes.count >= 12 else { return nil }
        let hash = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
        var r = SpoolReader(bytes: bytes, position: 12)
        let keyStart = r.position
        guard let fieldCount = r.int(), fieldCount >= 0, fieldCount <= bytes.count else { return nil }
        for _ in 0..<fieldCount where r.field() == nil { return nil }
        let keyBytes = UnsafeRawBufferPointer(rebasing: bytes[keyStart..<r.position])
        let totalsStart = r.position
        guard let mask = r.unsigned(), mask >> UInt64(sumCount) == 0 else { return nil }
        return (hash, keyBytes, totalsStart, mask, r)
    }

    /// The parts of one entry (all of its bytes, the length included), checked whole but without making its
    /// key's strings or its totals (`Head.totals` makes them when they are wanted: a merge mostly compares
    /// keys and totals, and a group in one run only is copied on as it is); nil if they are not a group (a
    /// damaged spool file). `keyBytes` and `totalsBytes` point into `bytes`.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> GroupRunMerge.Head? {
        guard let (hash, keyBytes, totalsStart, mask, reader) = keyAndMask(bytes) else { return nil }
        var r = reader
        // Only the two byte sums are kept (the report's order); the others are skipped.
        var total = 0
        var rest = mask
        while rest != 0 {
            let i = rest.trailingZeroBitCount
            rest &= rest - 1
            guard let value = r.int() else { return nil }
            if i == requestBytesSum || i == responseBytesSum { total &+= value }
        }
        if r.position < bytes.count {
            guard skipHistogram(&r, bytes.count) else { return nil }
            if r.position < bytes.count { guard skipHistogram(&r, bytes.count) else { return nil } }
        }
        guard r.position == bytes.count else { return nil }
        return GroupRunMerge.Head(
            hash: hash, keyBytes: keyBytes, totalsBytes: UnsafeRawBufferPointer(rebasing: bytes[totalsStart...]),
            totalBytes: total)
    }

    /// `parse` for a merge's head: the key is checked whole (merges compare it), but the totals only as far
    /// as `response.bytes` (their sum orders the report), neither the rarer sums after it nor the histograms.
    /// Whoever reads the totals checks them then (`add`, `Head.totals(_:)`), and every group's totals are read
    /// before the report is out: a damaged entry still fails the reading, and checking every entry whole each
    /// time a run was read (spilled, merged, measured, merged again) cost 660 instructions a group.
    package static func parseHead(_ bytes: UnsafeRawBufferPointer) -> GroupRunMerge.Head? {
        guard let (hash, keyBytes, totalsStart, mask, reader) = keyAndMask(bytes) else { return nil }
        var r = reader
        var total = 0
        // The sums before `response.bytes`, and it: the two byte sums read, the others only skipped (up to
        // ten bytes each, as a varint of 64 bits at most: what `add` reads checks them).
        var rest = mask & ((2 << UInt64(responseBytesSum)) - 1)
        while rest != 0 {
            let i = rest.trailingZeroBitCount
            rest &= rest - 1
            if i == requestBytesSum || i == responseBytesSum {
                guard let value = r.int() else { return nil }
                total &+= value
            } else {
                let limit = min(bytes.count, r.position + 10)
                var p = r.position
                while p < limit, bytes[p] >= 0x80 { p += 1 }
                guard p < limit else { return nil }
                r.position = p + 1
            }
        }
        return GroupRunMerge.Head(
            hash: hash, keyBytes: keyBytes, totalsBytes: UnsafeRawBufferPointer(rebasing: bytes[totalsStart...]),
            totalBytes: total)
    }

    /// `parseHead` for a reading in no order (`ReportGroups.UnorderedPart`, the table's measuring pass): the key
    /// is checked whole and the mask read, but no sum: such a reading orders nothing by `totalBytes` (left 0),
    /// and it reads every entry's totals whole right after (`Head.totals`, checked there). Skipping the sums
    /// up to `response.bytes` a second time was about half of what `parseHead` cost a group.
    package static func parseKey(_ bytes: UnsafeRawBufferPointer) -> GroupRunMerge.Head? {
        guard let (hash, keyBytes, totalsStart, _, _) = keyAndMask(bytes) else { return nil }
        return GroupRunMerge.Head(
            hash: hash, keyBytes: keyBytes, totalsBytes: UnsafeRawBufferPointer(rebasing: bytes[totalsStart...]),
            totalBytes: 0)
    }

    /// Where `GroupTotals.store(into:)` puts `request.bytes` and `response.bytes` (`totalBytes` is their sum).
    private static let requestBytesSum = 3
    private static let responseBytesSum = 3 + sideFieldCount

    /// Totals as `append` wrote them after the key (`Head.totalsBytes`); nil when the bytes are damaged.
    package static func totals(_ bytes: UnsafeRawBufferPointer) -> GroupTotals? {
        var totals = GroupTotals()
        return add(bytes, to: &totals) ? totals : nil
    }

    /// Adds totals as `append` wrote them after the key to `totals`, in place: each stored sum goes straight
    /// into its field and each histogram pair into its histogram (decoding into a buffer of sums, then into
    /// `SideTotals` and `GroupTotals` that were copied and added, cost about 2 200 instructions a group).
    /// Into empty totals, this gives what decoding them alone gives. False when the bytes are damaged
    /// (`totals` is then partly added to: callers drop it).
    package static func add(_ bytes: UnsafeRawBufferPointer, to totals: inout GroupTotals) -> Bool {
        var r = SpoolReader(bytes: bytes, position: 0)
        guard let mask = r.unsigned(), mask >> UInt64(sumCount) == 0 else { return false }
        var rest = mask
        while rest != 0 {
            let i = rest.trailingZeroBitCount
            rest &= rest - 1
            guard let value = r.int() else { return false }
            totals.addSum(i, value)
        }
        if r.position == bytes.count { return true }
        guard addHistogram(&r, bytes.count, to: &totals.responseSizes) else { return false }
        if r.position < bytes.count {
            guard addHistogram(&r, bytes.count, to: &totals.waits) else { return false }
        }
        return r.position == bytes.count
    }

    /// Adds a histogram as `append` writes it to `histogram`; false when the bytes are damaged.
    private static func addHistogram(_ r: inout SpoolReader, _ entryBytes: Int, to histogram: inout SizeHistogram) -> Bool {
        let wasEmpty = histogram.entries.isEmpty
        guard let max = readHistogram(
            &r, entryBytes, pairs: { if wasEmpty { histogram.reserveEntries($0) } },
            { histogram.add(storedBucket: $0, count: $1) })
        else { return false }
        histogram.raiseMax(max)
        return true
    }

    /// Checks a histogram as `histogram` reads it, without making it.
    private static func skipHistogram(_ r: inout SpoolReader, _ entryBytes: Int) -> Bool {
        readHistogram(&r, entryBytes) { _, _ in } != nil
    }

    /// Reads a histogram as `append` writes it: `pairs` gets the number of (bucket, count) pairs, `pair` each of
    /// them. Returns its exact maximum, or nil when the bytes are damaged (the conditions of
    /// `SizeHistogram(entries:max:)`: buckets strictly ascending and in range, counts not zero).
    private static func readHistogram(
        _ r: inout SpoolReader, _ entryBytes: Int, pairs: (Int) -> Void = { _ in }, _ pair: (Int, UInt64) -> Void
    ) -> Int? {
        guard let max = r.unsigned(), max <= UInt64(Int.max), let pairCount = r.unsigned(),
            pairCount <= UInt64(entryBytes)
        else { return nil }
        pairs(Int(pairCount))
        var previous = -1
        for _ in 0..<Int(pairCount) {
            guard let bucket = r.unsigned(), let count = r.unsigned(), bucket < 1 << 15, count <= SizeHistogram.countMask,
                Int(bucket) > previous, count != 0
            else { return nil }
            previous = Int(bucket)
            pair(previous, count)
        }
        return Int(max)
    }

    /// Decodes one group written by `append` (all of its bytes, the length included); nil if they are not
    /// one (a damaged spool file).
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> SpilledGroup? {
        guard let entry = parse(bytes), let keys = GroupKeyBytes.decode(entry.keyBytes),
            let totals = totals(entry.totalsBytes)
        else { return nil }
        return SpilledGroup(hash: entry.hash, group: ReportGroup(keys: keys, totals: totals))
    }
}

/// A group read back from a spool, with the hash of its key (the order of spilled runs).
package struct SpilledGroup: Sendable {
    package var hash: UInt64
    package var group: ReportGroup
}
