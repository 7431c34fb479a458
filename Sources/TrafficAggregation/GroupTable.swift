#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Group totals by group key: an index from keys to slots, and the totals in fixed-size chunks.
///
/// With ids in paths a capture of a gigabyte has tens of thousands of groups. Chunks keep growth from
/// copying (and briefly doubling) every group's totals, the way one growing array would.
package struct GroupTable {
    private static let chunkShift = 12
    private static let chunkSize = 1 << chunkShift

    /// The index: open addressing over (hash, slot) pairs, linear probing, at most half full. Hashes are
    /// kept, so growing never reads a key again and a probe that meets another group is told apart
    /// without comparing keys; groups are never removed one by one.
    /// Hash and slot side by side: a probe reads one cache line, not one in each of two arrays (the probe's
    /// load was a fifth of `ReportBuilder.count`'s samples, a miss even with the table in L2).
    private var index: [IndexEntry] = Array(repeating: IndexEntry(), count: 1024)

    private struct IndexEntry {
        var hash: UInt64 = 0
        /// -1: a free position.
        var slot: Int32 = -1
    }
    /// Every slot's key as `GroupKeyBytes`, one after the other in the order the groups appeared: slot `s`'s
    /// are `keyBytes[keyEnds[s - 1]..<keyEnds[s]]`.
    private var keyBytes: [UInt8] = []
    private var keyEnds: [Int] = []
    /// The hash of each slot's key, so that merging shard tables does not read and hash every key again.
    private var slotHashes: [UInt64] = []
    private var chunks: [[GroupTotals]] = []

    package var count: Int { keyEnds.count }

    /// The slot of `key`, made (with empty totals) if it is new.
    package mutating func slot(for key: [String]) -> Int { slot(for: key, hash: Self.hash(key)) }

    /// The slot of `key`, whose `hash(_:)` is `hash`.
    package mutating func slot(for key: [String], hash: UInt64) -> Int {
        let found = lookup(hash) { GroupKeyBytes.matches($0, key) }
        if let slot = found.slot { return slot }
        GroupKeyBytes.append(key, to: &keyBytes)
        return insert(hash: hash, at: found.free)
    }

    /// The slot of the two-field key `[first, second]` (each field's UTF-8), made if it is new: what
    /// `slot(for: [first, second])` answers, without making the strings and the array (the default grouping,
    /// host and path, once per record).
    /// `hint`: a slot to try first (the last record's, -1 for none), whose key is compared without hashing.
    /// Mutating even when the key is known: a read of the table through a class's property copies it (a retain
    /// per array).
    package mutating func slot(
        forPair first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, hint: Int = -1
    ) -> Int {
        // The hint's key length first: most records after another endpoint's differ in it, and the bytes
        // are then not compared (a varint-reading comparison cost ~140 instructions a record).
        if hint >= 0, hint < keyEnds.count,
            keyEnds[hint] - (hint == 0 ? 0 : keyEnds[hint - 1]) == GroupKeyBytes.pairLength(first.count, second.count),
            withKey(ofSlot: hint, { GroupKeyBytes.matches($0, pair: first, second) })
        {
            return hint
        }
        let hash = Self.hash(pair: first, second)
        let found = lookup(hash) { GroupKeyBytes.matches($0, pair: first, second) }
        if let slot = found.slot { return slot }
        GroupKeyBytes.append(pair: first, second, to: &keyBytes)
        return insert(hash: hash, at: found.free)
    }

    /// The slot of the key whose `GroupKeyBytes` are `key` and whose hash is `hash`.
    package mutating func slot(forKeyBytes key: UnsafeRawBufferPointer, hash: UInt64) -> Int {
        let found = lookup(hash) { GroupKeyBytes.equal($0, key) }
        if let slot = found.slot { return slot }
        keyBytes.append(contentsOf: key)
        return insert(hash: hash, at: found.free)
    }

    /// The slot with `hash` whose key bytes `isKey` accepts; else the free index position where it goes.
    @inline(__always)
    private func lookup(_ hash: UInt64, _ isKey: (UnsafeRawBufferPointer) -> Bool) -> (slot: Int?, free: Int) {
        index.withUnsafeBufferPointer { index in
            // `mask` keeps every probe in range: no bounds check per probe. The index's count is a power of two
            // from 1024 up whenever a lookup can run (`drainInPlace` empties it only until its `removeAll`).
            let mask = index.count - 1
            var probe = Int(truncatingIfNeeded: hash) & mask
            while index[probe].slot >= 0 {
                let entry = index[probe]
                if entry.hash == hash, withKey(ofSlot: Int(entry.slot), isKey) { return (Int(entry.slot), probe) }
                probe = (probe + 1) & mask
            }
            return (nil, probe)
        }
    }

    /// A new slot for the key just appended to `keyBytes`, at index position `probe`.
    private mutating func insert(hash: UInt64, at probe: Int) -> Int {
        let slot = keyEnds.count
        index[probe] = IndexEntry(hash: hash, slot: Int32(truncatingIfNeeded: slot))
        keyEnds.append(keyBytes.count)
        slotHashes.append(hash)
        if keyEnds.count * 2 > index.count { growIndex() }
        let chunk = slot >> Self.chunkShift
        if chunk == chunks.count {
            chunks.append([])
            chunks[chunk].reserveCapacity(Self.chunkSize)
        }
        chunks[chunk].append(GroupTotals())
        return slot
    }

    /// Calls `body` with slot `slot`'s key as `GroupKeyBytes` (valid only inside `body`).
    package func withKey<Result>(ofSlot slot: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let start = slot == 0 ? 0 : keyEnds[slot - 1]
        return keyBytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<keyEnds[slot]])) }
    }

    private mutating func growIndex() {
        let old = index
        index = Array(repeating: IndexEntry(), count: old.count * 2)
        let mask = index.count - 1
        for entry in old where entry.slot >= 0 {
            var probe = Int(truncatingIfNeeded: entry.hash) & mask
            while index[probe].slot >= 0 { probe = (probe + 1) & mask }
            index[probe] = entry
        }
    }

    /// The fields' UTF-8 hashed eight bytes at a time, each field's length first (so that fields stay apart:
    /// `["ab", "c"]` and `["a", "bc"]` differ), then a final mix so that the low bits the index uses and the
    /// top bit that splits spilled runs in halves depend on every byte. FNV-1a byte by byte cost a dependent
    /// multiply per byte: ~200 instructions for a host and path, a record in two on the API bench.
    package static func hash(_ key: [String]) -> UInt64 {
        var h = seed
        for field in key {
            let done: Void? = field.utf8.withContiguousStorageIfAvailable { absorb(&h, UnsafeRawBufferPointer($0)) }
            if done == nil { Array(field.utf8).withUnsafeBytes { absorb(&h, $0) } }
        }
        return mix(h)
    }

    /// `hash([first, second])` of the two fields' UTF-8.
    package static func hash(pair first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> UInt64 {
        var h = seed
        absorb(&h, first)
        absorb(&h, second)
        return mix(h)
    }

    private static let seed: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    private static func absorb(_ h: inout UInt64, _ field: UnsafeRawBufferPointer) {
        @inline(__always) func round(_ word: UInt64) {
            h = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
        }
        let count = field.count
        round(UInt64(count))
        guard count > 0, let base = field.baseAddress else { return }
        var i = 0
        while i + 8 <= count {
            round(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        guard i < count else { return }
        if count >= 8 {
            // The last eight bytes, overlapping words already taken: one load instead of up to seven.
            round(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)))
        } else {
            var tail: UInt64 = 0
            for j in 0..<count { tail |= UInt64(base.load(fromByteOffset: j, as: UInt8.self)) << (8 * UInt64(j)) }
            round(tail)
        }
    }

    private static func mix(_ hash: UInt64) -> UInt64 {
        var h = hash
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        return h ^ (h >> 32)
    }

    /// The hash of slot `slot`'s key.
    package func hash(ofSlot slot: Int) -> UInt64 { slotHashes[slot] }

    /// Where a group's `SpooledGroup` entry is in the bytes `encodeForSpill` wrote, and its key's hash.
    package struct SpillEntry {
        package var hash: UInt64
        package var offset: Int
        package var length: Int32
        var slot: Int32
    }

    /// Appends every group but those `skip` says (given its slot and key hash) to `bytes` as a `SpooledGroup`, in
    /// slot order, and returns where each one is, sorted in the order of spilled runs (by key hash, then key bytes:
    /// `GroupRunMerge.Order.aggregation`); `appendEntries` copies them out in that order. The totals written are
    /// added to `sum`, when given. The table's arrays are read through pointers taken once (a call per slot
    /// retained and released them seven times over: 50 M instructions on the 1 GiB bench), and in slot order its
    /// totals (~300 bytes a group) are read front to back, which the hardware prefetches: read in hash order, the
    /// first load of each group's totals and of its key's end were cache misses, half of a spill's time (perf
    /// annotate, 1 GiB API bench). The entries are then copied from bytes a third as large.
    package func encodeForSpill(
        skip: (_ slot: Int, _ hash: UInt64) -> Bool, to bytes: inout [UInt8], sum: UnsafeMutablePointer<GroupTotals>?
    ) -> [SpillEntry] {
        var order: [SpillEntry] = []
        order.reserveCapacity(count)
        keyBytes.withUnsafeBytes { keys in
            keyEnds.withUnsafeBufferPointer { ends in
                slotHashes.withUnsafeBufferPointer { hashes in
                    var slot = 0
                    for c in chunks.indices {
                        chunks[c].withUnsafeBufferPointer { chunk in
                            for i in chunk.indices {
                                defer { slot += 1 }
                                if skip(slot, hashes[slot]) { continue }
                                let start = slot == 0 ? 0 : ends[slot - 1]
                                let key = UnsafeRawBufferPointer(rebasing: keys[start..<ends[slot]])
                                let totals = chunk.baseAddress! + i
                                let offset = bytes.count
                                SpooledGroup.append(hash: hashes[slot], keyBytes: key, totals: totals, to: &bytes)
                                sum?.pointee.add(totals)
                                order.append(SpillEntry(
                                    hash: hashes[slot], offset: offset, length: Int32(truncatingIfNeeded: bytes.count - offset),
                                    slot: Int32(truncatingIfNeeded: slot)))
                            }
                        }
                    }
                }
            }
        }
        keyBytes.withUnsafeBytes { bytes in
            keyEnds.withUnsafeBufferPointer { ends in
                func key(_ slot: Int32) -> UnsafeRawBufferPointer {
                    let slot = Int(slot)
                    return UnsafeRawBufferPointer(rebasing: bytes[(slot == 0 ? 0 : ends[slot - 1])..<ends[slot]])
                }
                order.sort { a, b in a.hash != b.hash ? a.hash < b.hash : GroupKeyBytes.bytesPrecede(key(a.slot), key(b.slot)) }
            }
        }
        return order
    }

    /// Appends the entries `encodeForSpill` wrote to `encoded`, in `order`, to `bytes`; returns where the first one
    /// whose key hash is at least `split` starts in `bytes` (the second half of a run), nil when none is.
    package static func appendEntries(
        _ order: ArraySlice<SpillEntry>, from encoded: [UInt8], to bytes: inout [UInt8], split: UInt64
    ) -> Int? {
        var upper: Int?
        encoded.withUnsafeBytes { encoded in
            for entry in order {
                if upper == nil, entry.hash >= split { upper = bytes.count }
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: encoded[entry.offset..<(entry.offset + Int(entry.length))]))
            }
        }
        return upper
    }

    /// Adds the totals of every group to `sum`, read in place.
    package func addTotals(to sum: inout GroupTotals) {
        for c in chunks.indices {
            chunks[c].withUnsafeBufferPointer { chunk in
                for i in chunk.indices { sum.add(chunk.baseAddress! + i) }
            }
        }
    }

    package subscript(slot: Int) -> GroupTotals {
        get { chunks[slot >> Self.chunkShift][slot & (Self.chunkSize - 1)] }
        _modify { yield &chunks[slot >> Self.chunkShift][slot & (Self.chunkSize - 1)] }
    }

    /// Calls `body` with every group in slot order (its key as `GroupKeyBytes`, its hash, its totals) and
    /// leaves the table empty. Each chunk of totals is freed as soon as it is passed on.
    package mutating func drain(_ body: (UnsafeRawBufferPointer, UInt64, GroupTotals) -> Void) {
        drainInPlace { key, hash, totals in body(key, hash, totals.pointee) }
    }

    /// `drain` with each group's totals where they are: `body` may move them out (`move()`) as long as it
    /// puts totals back (`initialize`), so that a row takes them without a copy that retains their arrays
    /// and a destruction of the table's that releases them again.
    private mutating func drainInPlace(_ body: (UnsafeRawBufferPointer, UInt64, UnsafeMutablePointer<GroupTotals>) -> Void) {
        // No more lookups: the index goes before the rows are made.
        index = []
        var slot = 0
        let hashes = slotHashes
        keyBytes.withUnsafeBytes { bytes in
            keyEnds.withUnsafeBufferPointer { ends in
                for c in chunks.indices {
                    var chunk: [GroupTotals] = []
                    swap(&chunk, &chunks[c])
                    chunk.withUnsafeMutableBufferPointer { chunk in
                        for i in chunk.indices {
                            let key = UnsafeRawBufferPointer(rebasing: bytes[(slot == 0 ? 0 : ends[slot - 1])..<ends[slot]])
                            body(key, hashes[slot], chunk.baseAddress! + i)
                            slot += 1
                        }
                    }
                }
            }
        }
        removeAll()
    }

    /// Every group as a report row, in slot order; the table is left empty.
    package mutating func drainRows() -> [ReportGroup] {
        var rows: [ReportGroup] = []
        rows.reserveCapacity(count)
        drainInPlace { key, _, totals in
            rows.append(ReportGroup(keys: GroupKeyBytes.decode(key) ?? [], totals: totals.move()))
            totals.initialize(to: GroupTotals())
        }
        return rows
    }

    /// Every group in the order of `order` (a permutation of the slots, `slotsInReportOrder`), with its key
    /// as bytes; the table is left empty. The totals are moved, not copied.
    package mutating func drainKeyed(order: [Int]) -> KeyedGroups {
        precondition(order.count == count, "a permutation of every slot")
        var keys = [UInt8](repeating: 0, count: keyBytes.count)
        var ends: [Int] = []
        ends.reserveCapacity(count)
        keyBytes.withUnsafeBytes { bytes in
            keyEnds.withUnsafeBufferPointer { keyEnds in
                keys.withUnsafeMutableBytes { out in
                    var at = 0
                    for slot in order {
                        let start = slot == 0 ? 0 : keyEnds[slot - 1], length = keyEnds[slot] - start
                        if length > 0 { (out.baseAddress! + at).copyMemory(from: bytes.baseAddress! + start, byteCount: length) }
                        at += length
                        ends.append(at)
                    }
                }
            }
        }
        var totals: [GroupTotals] = []
        totals.reserveCapacity(count)
        drainInPlace { _, _, slotTotals in
            totals.append(slotTotals.move())
            slotTotals.initialize(to: GroupTotals())
        }
        Permutation.apply(&totals, by: order)
        return KeyedGroups(keyBytes: keys, keyEnds: ends, totals: totals)
    }

    /// Every slot in report order (`ReportGroup.precedes`: total bytes descending, then keys), from the
    /// keys' bytes: comparing strings of rows made first cost twice as much. Equal totals and keys that only
    /// `String`s call equal keep slot order, as the stable sort of rows in slot order did.
    ///
    /// Keys of ASCII fields without NUL (nearly all) are compared as their fields joined by NUL, with one
    /// `memcmp`: `String`s of ASCII order by their bytes, a field that is a prefix of the other's comes first
    /// (NUL orders before any other byte), and equal fields go on to the next. Other keys are compared by
    /// `GroupKeyBytes.compare`, which reads the fields and tells where bytes cannot decide.
    package func slotsInReportOrder() -> [Int] {
        var order: [(total: Int, slot: Int)] = []
        order.reserveCapacity(count)
        for c in chunks.indices {
            chunks[c].withUnsafeBufferPointer { chunk in
                for i in chunk.indices {
                    let totals = chunk.baseAddress! + i
                    order.append((totals.pointee.request.bytes &+ totals.pointee.response.bytes, order.count))
                }
            }
        }
        // Slot `s`'s joined fields are `joined[joinedStart[s]..<joinedStart[s] + joinedCount[s]]`; a count of
        // -1: not ASCII without NUL. A field's length took at least a byte, so the joined fields, a NUL
        // between each two, take no more room than the keys.
        var joined = [UInt8](repeating: 0, count: keyBytes.count)
        var joinedStart = [Int](repeating: 0, count: count)
        var joinedCount = [Int](repeating: -1, count: count)
        keyBytes.withUnsafeBytes { bytes in
            keyEnds.withUnsafeBufferPointer { ends in
                func key(_ slot: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[(slot == 0 ? 0 : ends[slot - 1])..<ends[slot]])
                }
                joined.withUnsafeMutableBytes { out in
                    var at = 0
                    for slot in 0..<count {
                        let start = at
                        var plain = true, first = true
                        let complete = GroupKeyBytes.forEachField(key(slot)) { field in
                            if !first {
                                out[at] = 0
                                at += 1
                            }
                            first = false
                            plain = plain && Self.isPlainASCII(field)
                            if !field.isEmpty { (out.baseAddress! + at).copyMemory(from: field.baseAddress!, byteCount: field.count) }
                            at += field.count
                        }
                        joinedStart[slot] = start
                        if plain, complete { joinedCount[slot] = at - start }
                    }
                }
                joined.withUnsafeBufferPointer { joined in
                    let base = joined.baseAddress ?? UnsafePointer(bitPattern: 1)!
                    joinedStart.withUnsafeBufferPointer { starts in
                        joinedCount.withUnsafeBufferPointer { counts in
                            order.sort { a, b in
                                if a.total != b.total { return a.total > b.total }
                                let x = counts[a.slot], y = counts[b.slot]
                                if x >= 0, y >= 0 {
                                    let c = min(x, y) == 0 ? 0 : memcmp(base + starts[a.slot], base + starts[b.slot], min(x, y))
                                    return c != 0 ? c < 0 : x < y
                                }
                                return GroupKeyBytes.compare(key(a.slot), key(b.slot)) < 0
                            }
                        }
                    }
                }
            }
        }
        return order.map(\.slot)
    }

    /// Whether every byte is ASCII and none is NUL, eight at a time.
    package static func isPlainASCII(_ field: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = field.count
        var high: UInt64 = 0, zero: UInt64 = 0
        while i + 8 <= n {
            let x = field.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            high |= x
            // A zero byte (in a word of ASCII bytes) leaves its high bit set here.
            zero |= (x &- 0x0101_0101_0101_0101) & ~x
            i += 8
        }
        while i < n {
            let b = field[i]
            if b == 0 || b >= 0x80 { return false }
            i += 1
        }
        return (high | zero) & 0x8080_8080_8080_8080 == 0
    }

    /// Every key's bytes, one after the other, and where each ends (slot `s`'s are
    /// `bytes[ends[s - 1]..<ends[s]]`): shared, not copied, so that they can be read on another thread while
    /// the table is drained.
    package var keys: (bytes: [UInt8], ends: [Int]) { (keyBytes, keyEnds) }

    /// Frees everything (the report has taken what it needs).
    package mutating func removeAll() {
        self = GroupTable()
    }

    /// Empties the table but keeps its memory, for a table that fills again (after a spill). A new table
    /// regrew its index and took its chunks of totals (a megabyte each) from the system page by page again:
    /// page faults were ~3 % of a `--jobs 1` run on the 1 GiB API bench, which spills six times.
    package mutating func removeAllKeepingCapacity() {
        keyBytes.removeAll(keepingCapacity: true)
        keyEnds.removeAll(keepingCapacity: true)
        slotHashes.removeAll(keepingCapacity: true)
        index.withUnsafeMutableBufferPointer { $0.update(repeating: IndexEntry()) }
        for c in chunks.indices { chunks[c].removeAll(keepingCapacity: true) }
    }
}
