/// The dynamic table of one QPACK encoder–decoder pair (RFC 9204 §3.2): entries by absolute index (0 for the
/// first ever inserted), the oldest evicted first, sized name + value + 32 each (§3.2.1).
///
/// Each entry's octets are one allocation (name then value), freed when it is evicted; the number of entries
/// is bounded by capacity / 32, and capacity by `HTTP3Limits.maxTableCapacity`.
final class QPACKDynamicTable {
    private struct Entry {
        let storage: UnsafeMutableRawBufferPointer
        let nameCount: Int
        var size: Int { storage.count &+ 32 }
    }

    /// Live entries, oldest first from `head` (entries before `head` are evicted slots awaiting compaction).
    private var entries: [Entry] = []
    private var head = 0
    /// Total insertions ever (§3.2.4's Insert Count): the absolute index the next entry gets.
    private(set) var insertCount = 0
    /// Σ entry sizes.
    private(set) var size = 0
    private(set) var capacity = 0

    init() {}

    deinit {
        for i in head..<entries.count { entries[i].storage.deallocate() }
    }

    /// Absolute index of the oldest live entry (= entries ever evicted).
    var droppedCount: Int { insertCount - (entries.count - head) }

    /// §3.2.3: a new capacity evicts until the table fits it.
    func setCapacity(_ bytes: Int) {
        capacity = bytes
        evict(toFit: 0)
    }

    /// Name and value of the entry with absolute index `index`; nil when it was evicted or never inserted.
    func entry(absolute index: Int) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        guard index >= droppedCount, index < insertCount else { return nil }
        let e = entries[head + index - droppedCount]
        let bytes = UnsafeRawBufferPointer(e.storage)
        return (UnsafeRawBufferPointer(rebasing: bytes[..<e.nameCount]), UnsafeRawBufferPointer(rebasing: bytes[e.nameCount...]))
    }

    /// Inserts an entry (§3.2.2), evicting the oldest as needed. The octets are copied before anything is
    /// evicted, so `name` may point into an entry that this insertion evicts (Insert With Name Reference,
    /// Duplicate).
    func insert(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(QPACKError) {
        let entrySize = name.count &+ value.count &+ 32
        guard entrySize <= capacity else { throw .entryTooLarge }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: name.count + value.count, alignment: 1)
        if !name.isEmpty { storage.baseAddress!.copyMemory(from: name.baseAddress!, byteCount: name.count) }
        if !value.isEmpty {
            (storage.baseAddress! + name.count).copyMemory(from: value.baseAddress!, byteCount: value.count)
        }
        evict(toFit: entrySize)
        entries.append(Entry(storage: storage, nameCount: name.count))
        size &+= entrySize
        insertCount &+= 1
    }

    private func evict(toFit incoming: Int) {
        while head < entries.count, size &+ incoming > capacity {
            size &-= entries[head].size
            entries[head].storage.deallocate()
            head += 1
        }
        // Compaction: amortised O(1) per entry, and the array never holds more than twice the live entries.
        if head > 64, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
