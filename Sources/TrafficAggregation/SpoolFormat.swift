#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pieces shared by everything written to a `RecordSpool` (records for `--messages`, groups when there
/// are too many to keep): length-prefixed entries of zigzag varints and strings, a cursor that reads a run
/// of them back a buffer at a time, and the heap that merges sorted runs.

extension Array where Element == UInt8 {
    /// Starts an entry: room for its little-endian UInt32 length, filled in by `endSpoolEntry`.
    package mutating func beginSpoolEntry() -> Int {
        append(contentsOf: [0, 0, 0, 0])
        return count - 4
    }

    package mutating func endSpoolEntry(_ lengthAt: Int) {
        let length = UInt32(truncatingIfNeeded: count - lengthAt - 4)
        precondition(lengthAt >= 0 && lengthAt + 4 <= count, "an entry begun")
        // One store (four subscripts checked uniqueness four times, per entry written).
        withUnsafeMutableBytes { $0.storeBytes(of: length.littleEndian, toByteOffset: lengthAt, as: UInt32.self) }
    }

    /// Zigzag varint: small negative numbers stay short too.
    package mutating func spool(_ value: Int) {
        var v = UInt64(bitPattern: Int64(value) << 1 ^ Int64(value) >> 63)
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    package mutating func spool(_ value: Int?) {
        guard let value else { return spool(0) }
        spool(1)
        spool(value)
    }

    package mutating func spool(_ text: String) {
        spool(text.utf8.count)
        append(contentsOf: text.utf8)
    }

    package mutating func spool(_ text: String?) {
        guard let text else { return spool(-1) }
        spool(text)
    }

    /// Raw bytes (a kept head): a length, then the bytes.
    package mutating func spool(bytes: [UInt8]) {
        spool(bytes.count)
        append(contentsOf: bytes)
    }
}

/// Reads the values of one entry in the order `spool` wrote them; nil wherever the bytes are damaged.
package struct SpoolReader {
    package let bytes: UnsafeRawBufferPointer
    package var position: Int

    package init(bytes: UnsafeRawBufferPointer, position: Int) {
        self.bytes = bytes
        self.position = position
    }

    /// The length of the entry starting at `bytes` (its 4 length bytes included), if they are there.
    package static func entryLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var length = 0
        for i in 0..<4 { length |= Int(bytes[i]) << (8 * i) }
        return 4 + length
    }

    /// A zigzag varint (`Array.spool`).
    package mutating func int() -> Int? {
        guard let v = unsigned() else { return nil }
        return Int(Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1))
    }

    /// An unsigned varint (a bit mask).
    package mutating func unsigned() -> UInt64? {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let b = bytes[position]
            position += 1
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
        }
        return nil
    }

    /// nil when the bytes are damaged; .some(nil) for a missing value.
    package mutating func optionalInt() -> Int?? {
        guard let present = int() else { return nil }
        if present == 0 { return .some(nil) }
        guard let value = int() else { return nil }
        return .some(value)
    }

    package mutating func string() -> String? {
        guard let count = int(), count >= 0, count <= bytes.count - position else { return nil }
        defer { position += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)]), as: UTF8.self)
    }

    /// Raw bytes written by `spool(bytes:)`.
    package mutating func byteArray() -> [UInt8]? {
        guard let count = int(), count >= 0, count <= bytes.count - position else { return nil }
        defer { position += count }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)]))
    }

    package mutating func optionalString() -> String?? {
        guard let count = int(), count >= -1, count <= bytes.count - position else { return nil }
        if count == -1 { return .some(nil) }
        defer { position += count }
        return .some(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)]), as: UTF8.self))
    }
}

/// Reads the entries of one range of a spool file in order, a buffer at a time.
package struct SpoolCursor {
    package let spool: RecordSpool
    package let range: Range<Int64>
    private var offset: Int64
    private let buffer = ReadBuffer()
    private var start = 0
    private var end = 0
    /// Why the last read came back short, or that an entry was damaged.
    package private(set) var lastError: String?

    /// The read size when nothing else is asked for.
    package static let defaultBufferSize = 64 << 10
    private let bufferSize: Int

    /// `bufferSize`: bytes read at a time (an entry longer than that is still read whole). A merge of many runs
    /// asks for less each (`GroupRunMerge`), so that its buffers do not grow with the number of runs.
    package init(_ spool: RecordSpool, _ range: Range<Int64>, bufferSize: Int = SpoolCursor.defaultBufferSize) {
        self.spool = spool
        self.range = range
        self.bufferSize = max(1, bufferSize)
        offset = range.lowerBound
    }

    /// The next entry, made by `decode` from its bytes (length included); nil at the end of the range, or when
    /// the entry is short or damaged (then `failure` says why).
    package mutating func next<Entry>(_ decode: (UnsafeRawBufferPointer) -> Entry?) -> Entry? {
        guard let bytes = nextEntry() else { return nil }
        let entry = decode(bytes)
        if entry == nil { lastError = lastError ?? "a damaged record" }
        return entry
    }

    /// The next entry's bytes (length included), valid until the cursor moves again: merges compare the
    /// heads of their runs where they are. Nil at the end of the range, or when the entry is short or damaged.
    package mutating func nextEntry() -> UnsafeRawBufferPointer? {
        guard fill(4) else { return nil }
        guard let length = SpoolReader.entryLength(buffer.bytes(start..<end)) else {
            lastError = lastError ?? "a damaged record"
            return nil
        }
        guard fill(length) else { return nil }
        defer { start += length }
        return buffer.bytes(start..<(start + length))
    }

    /// After `next` returned nil: why the range did not end normally (nil when it simply ended).
    package var failure: String? {
        if lastError != nil || offset < range.upperBound || start < end {
            return "cannot read back the temporary file in \(spool.directory): \(lastError ?? "the file ended early")"
        }
        return nil
    }

    /// Makes sure `count` unread bytes are in the buffer, reading more of the range; false at its end.
    private mutating func fill(_ count: Int) -> Bool {
        if end - start >= count { return true }
        let left = range.upperBound - offset
        guard Int64(end - start) + left >= Int64(count) else { return false }
        // Keep the unread bytes at the front, then read as much as fits (an entry longer than the buffer
        // grows it).
        let unread = end - start
        buffer.keep(start..<end, capacity: max(bufferSize, count))
        let want = Int(min(Int64(buffer.capacity - unread), left))
        let read = spool.read(into: buffer.free(from: unread, count: want), at: offset)
        if read < want { lastError = spool.lastReadError ?? "the file ended early" }
        offset += Int64(read)
        start = 0
        end = unread + read
        return end - start >= count
    }

    /// Memory at a fixed address, so that the entries read stay where they are until the next read.
    private final class ReadBuffer {
        private var base = UnsafeMutableRawPointer.allocate(byteCount: 0, alignment: 8)
        private(set) var capacity = 0

        deinit { base.deallocate() }

        func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
        }

        func free(from start: Int, count: Int) -> UnsafeMutableRawBufferPointer {
            UnsafeMutableRawBufferPointer(start: base + start, count: count)
        }

        /// Moves the bytes of `range` to the front, with room for `capacity` bytes in all.
        func keep(_ range: Range<Int>, capacity wanted: Int) {
            if wanted > capacity {
                let grown = UnsafeMutableRawPointer.allocate(byteCount: wanted, alignment: 8)
                grown.copyMemory(from: base + range.lowerBound, byteCount: range.count)
                base.deallocate()
                base = grown
                capacity = wanted
            } else if range.lowerBound > 0, !range.isEmpty {
                memmove(base, base + range.lowerBound, range.count)
            }
        }
    }
}

/// Entries kept in memory (a run that was not written), at a fixed address: merges read them in place.
package final class SpoolBytes: @unchecked Sendable {
    private let base: UnsafeMutableRawBufferPointer

    package init(_ bytes: [UInt8]) {
        base = .allocate(byteCount: bytes.count, alignment: 8)
        bytes.withUnsafeBytes { base.copyMemory(from: $0) }
    }

    /// `count` bytes written by `fill` where they stay (no array made first and copied).
    package init(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        base = .allocate(byteCount: count, alignment: 8)
        fill(base)
    }

    deinit { base.deallocate() }

    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(base) }
}

/// Merges sorted runs: the indexes of runs that still have a head, as a binary min-heap by `before` (a
/// comparison of two runs' heads). Callers break ties by run index, so that equal heads come from the
/// earlier run first, as a stable sort of everything would order them.
package struct MergeHeap {
    package private(set) var runs: [Int] = []

    /// The run whose head comes first.
    package var top: Int? { runs.first }

    package mutating func push(_ run: Int, before: (Int, Int) -> Bool) {
        runs.append(run)
        var i = runs.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard before(runs[i], runs[parent]) else { break }
            runs.swapAt(i, parent)
            i = parent
        }
    }

    /// After the top run advanced: `exhausted` when it has no head any more.
    package mutating func topAdvanced(exhausted: Bool, before: (Int, Int) -> Bool) {
        if exhausted {
            runs[0] = runs[runs.count - 1]
            runs.removeLast()
        }
        var i = 0
        while true {
            let left = 2 * i + 1, right = left + 1
            var smallest = i
            if left < runs.count, before(runs[left], runs[smallest]) { smallest = left }
            if right < runs.count, before(runs[right], runs[smallest]) { smallest = right }
            if smallest == i { return }
            runs.swapAt(i, smallest)
            i = smallest
        }
    }
}

/// A `MergeHeap` whose runs are ordered by a small key of each run's head, kept here beside the heap:
/// comparisons read the keys through a pointer. (A comparison closure over the merge itself held a
/// second reference to the heap's array, and every step of the heap copied the array.)
package struct KeyedMergeHeap<Key> {
    private var heap = MergeHeap()
    /// Each run's head key; nil once the run is exhausted.
    private var keys: [Key?]
    /// Negative, zero or positive as the first key comes before, with or after the second; equal keys
    /// go in run order.
    private let compare: (Key, Key) -> Int

    package init(_ keys: [Key?], compare: @escaping (Key, Key) -> Int) {
        self.keys = keys
        self.compare = compare
        var heap = MergeHeap()
        self.keys.withUnsafeBufferPointer { keys in
            for run in keys.indices where keys[run] != nil { heap.push(run) { Self.before($0, $1, keys, compare) } }
        }
        self.heap = heap
    }

    /// The run whose head comes first.
    package var top: Int? { heap.top }

    /// Whether the head of a run that comes right after the top one in the heap (a child of the top) is one
    /// that `matches`: the next top is the best of those or the top run's own next head.
    package func topChildMatches(_ matches: (Key) -> Bool) -> Bool {
        let runs = heap.runs
        for i in 1..<min(3, max(1, runs.count)) {
            if let key = keys[runs[i]], matches(key) { return true }
        }
        return false
    }

    /// The top run moved on: `key` is its new head's, nil when it has no more.
    package mutating func topAdvanced(to key: Key?) {
        guard let top = heap.top else { return }
        keys[top] = key
        let compare = compare
        keys.withUnsafeBufferPointer { keys in
            heap.topAdvanced(exhausted: key == nil) { Self.before($0, $1, keys, compare) }
        }
    }

    private static func before(_ a: Int, _ b: Int, _ keys: UnsafeBufferPointer<Key?>, _ compare: (Key, Key) -> Int) -> Bool {
        let c = compare(keys[a]!, keys[b]!)
        return c != 0 ? c < 0 : a < b
    }
}
