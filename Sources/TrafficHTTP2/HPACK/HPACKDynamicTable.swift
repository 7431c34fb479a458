/// The dynamic table of RFC 7541 §2.3.2: entries added by literals with incremental indexing, newest first in
/// the index space, evicted oldest first to keep the §4.1 size within the maximum the encoder chose.
///
/// Storage is two growable buffers, never an object or a String per entry:
/// - `octets`: each entry's name and value octets, back to back in insertion order. Appending goes at the tail;
///   evicting only moves the oldest live entry's start forward. When the tail runs out of room, the live entries
///   are moved to the front (or the buffer grows), so every entry stays contiguous and a field can point into it.
/// - `records`: a ring of (offset, name length, value length), one per entry, oldest at `oldest`.
///
/// Offsets in records are absolute (they count every octet ever appended), so moving the live octets only moves
/// `origin`, the absolute offset of `octets[0]`, and leaves the records as they are.
///
/// A reference type so that the decoder can hand out pointers into it while it decodes; `HPACKDecoder` copies
/// it before mutating when it is shared, which keeps the decoder a value.
final class HPACKDynamicTable {
    /// One entry's place in `octets`.
    struct Record {
        var start: Int
        var nameCount: UInt32
        var valueCount: UInt32

        /// The entry's size as §4.1 defines it: the 32 covers a decoder's overhead per entry.
        var size: Int { Int(nameCount) + Int(valueCount) + 32 }
    }

    /// Σ over entries of name + value + 32 (§4.1).
    private(set) var size = 0
    /// The maximum size, set by the encoder's dynamic table size updates (§4.2); 4096 until the first one
    /// (RFC 9113 §6.5.2, the initial SETTINGS_HEADER_TABLE_SIZE).
    private(set) var maxSize = 4096
    /// Number of entries.
    private(set) var count = 0
    /// The most this table keeps, in §4.1 bytes; `insert` refuses what would go beyond it.
    let storageLimit: Int

    private var records: UnsafeMutablePointer<Record>?
    /// A power of two, so that ring positions wrap with a mask.
    private var recordCapacity = 0
    /// Ring position of the oldest entry.
    private var oldest = 0

    private var octets: UnsafeMutableRawPointer?
    private var octetCapacity = 0
    /// Absolute offset of `octets[0]`.
    private var origin = 0
    /// Absolute offset one past the newest entry's octets.
    private var end = 0

    init(storageLimit: Int) {
        // Every entry is at most 2^31-1 bytes (the integer limit caps the maximum size), so a larger limit means
        // the same as this one, and twice it still fits in an Int.
        self.storageLimit = max(0, min(storageLimit, HPACKBlockReader.maxInteger))
    }

    deinit {
        records?.deallocate()
        octets?.deallocate()
    }

    /// An independent table with the same entries, for a decoder that was copied.
    func copy() -> HPACKDynamicTable {
        let other = HPACKDynamicTable(storageLimit: storageLimit)
        other.maxSize = maxSize
        for index in stride(from: count, through: 1, by: -1) {
            let (name, value) = entry(index)
            // The copy has the same limit and maximum size, so every entry fits again.
            _ = other.insert(name: name, nameIndex: nil, value: value)
        }
        return other
    }

    /// Name and value of the entry at dynamic index `index` (1 is the newest), which must be in 1…count. The
    /// pointers stay valid until the table is next mutated.
    @inline(__always)
    func entry(_ index: Int) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        precondition(index >= 1 && index <= count, "dynamic table index \(index) outside 1…\(count)")
        let record = records.unsafelyUnwrapped[(oldest &+ count &- index) & (recordCapacity - 1)]
        let name = octets.unsafelyUnwrapped + (record.start - origin)
        let nameCount = Int(record.nameCount)
        return (
            UnsafeRawBufferPointer(start: name, count: nameCount),
            UnsafeRawBufferPointer(start: name + nameCount, count: Int(record.valueCount))
        )
    }

    /// Applies a new maximum size, evicting oldest entries until the table fits (§4.3).
    func setMaxSize(_ newMaxSize: Int) {
        maxSize = newMaxSize
        while size > maxSize { evictOldest() }
        // An empty table starts again at the front of its buffer.
        if count == 0 { origin = end }
    }

    /// Adds an entry (§4.4) and reports whether the table could keep it within `storageLimit`.
    ///
    /// `name` may be the name of an entry of this table, given by `nameIndex`; §4.4 warns that the insertion may
    /// evict that very entry, so the name is copied before anything is evicted. When this returns false, the
    /// table is unchanged and the caller must consider it lost.
    func insert(name: UnsafeRawBufferPointer, nameIndex: Int?, value: UnsafeRawBufferPointer) -> Bool {
        let entrySize = name.count + value.count + 32
        // §4.4: an entry larger than the maximum size empties the table and is not added; that is no error.
        guard entrySize <= maxSize else {
            removeAll()
            return true
        }
        var evicted = 0
        var sizeAfterEviction = size
        while sizeAfterEviction + entrySize > maxSize {
            sizeAfterEviction -= record(oldest + evicted).size
            evicted += 1
        }
        guard sizeAfterEviction + entrySize <= storageLimit else { return false }

        let octetCount = name.count + value.count
        reserveOctets(octetCount)
        // `reserveOctets` may have moved the entries; take the name again.
        let name = nameIndex.map { entry($0).name } ?? name
        let tail = octets.unsafelyUnwrapped + (end - origin)
        if let source = name.baseAddress { tail.copyMemory(from: source, byteCount: name.count) }
        if let source = value.baseAddress { (tail + name.count).copyMemory(from: source, byteCount: value.count) }
        let newRecord = Record(start: end, nameCount: UInt32(name.count), valueCount: UInt32(value.count))
        end += octetCount

        for _ in 0..<evicted { evictOldest() }
        if count == recordCapacity { growRecords() }
        records.unsafelyUnwrapped[(oldest + count) & (recordCapacity - 1)] = newRecord
        count += 1
        size += entrySize
        return true
    }

    /// Drops every entry: §4.4's entry larger than the whole table.
    func removeAll() {
        size = 0
        count = 0
        oldest = 0
        origin = end
    }

    @inline(__always)
    private func record(_ ringPosition: Int) -> Record {
        records.unsafelyUnwrapped[ringPosition & (recordCapacity - 1)]
    }

    private func evictOldest() {
        size -= record(oldest).size
        oldest = (oldest + 1) & (recordCapacity - 1)
        count -= 1
    }

    /// Makes room for `needed` octets at the tail without dropping any entry, not even those about to be evicted.
    private func reserveOctets(_ needed: Int) {
        let liveStart = count > 0 ? record(oldest).start : end
        let live = end - liveStart
        let required = live + needed
        if let octets {
            if end - origin + needed <= octetCapacity { return }
            // Moving the live octets to the front pays off when it frees at least half the buffer; otherwise
            // grow, so that the octets moved stay proportional to those appended. The buffer never grows past
            // twice the limit: the live octets and the new entry are each within it.
            if required <= octetCapacity / 2 || (octetCapacity >= 2 * storageLimit && required <= octetCapacity) {
                octets.copyMemory(from: octets + (liveStart - origin), byteCount: live)
                origin = liveStart
                return
            }
        }
        // Allocated even for an entry without octets, so that `entry` can always point into the buffer.
        let newCapacity = max(required, min(max(2 * required, 1024), 2 * storageLimit))
        let newOctets = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if let octets {
            newOctets.copyMemory(from: octets + (liveStart - origin), byteCount: live)
            octets.deallocate()
        }
        octets = newOctets
        octetCapacity = newCapacity
        origin = liveStart
    }

    private func growRecords() {
        let newCapacity = max(16, recordCapacity * 2)
        let newRecords = UnsafeMutablePointer<Record>.allocate(capacity: newCapacity)
        for i in 0..<count { newRecords[i] = record(oldest + i) }
        records?.deallocate()
        records = newRecords
        recordCapacity = newCapacity
        oldest = 0
    }
}
