/// A key of `FlowTable`: equality, and all of its fields mixed into one word.
protocol FlowTableKey: Equatable {
    var mixed: UInt64 { get }
}

/// The reassembler's connections by flow: an open-addressing hash table (linear probing, deletion by
/// backward shift). The lookup runs for every packet; a `Dictionary` spends more on SipHash than on
/// finding the connection, and this table hashes a flow with two multiplications.
struct FlowTable<Key: FlowTableKey, Value: AnyObject> {
    private var keys: [Key?]
    private var values: [Value?]
    private var mask: Int
    /// 64 − log2(slots): the home slot is the product's top bits.
    private var shift: UInt64
    private(set) var count = 0

    init() {
        keys = Array(repeating: nil, count: 64)
        values = Array(repeating: nil, count: 64)
        mask = 63
        shift = 58
    }

    @inline(__always)
    private func home(_ key: Key) -> Int {
        // Fibonacci hashing takes the product's top bits, which depend on every bit of `mixed`; bits from the
        // middle of the product depend only on the bits of `mixed` below them.
        Int(truncatingIfNeeded: (key.mixed &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, or the empty slot where it would go.
    @inline(__always)
    private func find(_ key: Key) -> (slot: Int, found: Bool) {
        // `mask` keeps every slot in range: the array's bounds check per probe is left out.
        keys.withUnsafeBufferPointer { keys in
            var slot = home(key)
            while let stored = keys[slot] {
                if stored == key { return (slot, true) }
                slot = (slot + 1) & mask
            }
            return (slot, false)
        }
    }

    subscript(key: Key) -> Value? {
        get {
            let (slot, found) = find(key)
            return found ? values[slot] : nil
        }
        set {
            if let newValue { insert(key, newValue) } else { remove(key) }
        }
    }

    /// The value for `key`, not retained: valid while the entry stays in the table. The per-packet lookup
    /// uses it, so that finding a connection costs no atomic retain and release.
    @inline(__always)
    func unretained(_ key: Key) -> Unmanaged<Value>? {
        let (slot, found) = find(key)
        guard found else { return nil }
        return values.withUnsafeBufferPointer { values in values[slot].map { Unmanaged.passUnretained($0) } }
    }

    private mutating func insert(_ key: Key, _ value: Value) {
        let (slot, found) = find(key)
        if found {
            values[slot] = value
            return
        }
        keys[slot] = key
        values[slot] = value
        count += 1
        // At most half full: a successful lookup then takes ~1.5 probes with linear probing (three quarters full, as
        // before, ~2.5), for 64 bytes a slot more memory (one 50 000-connection table: 8 MiB either way).
        if count * 2 > keys.count { grow() }
    }

    private mutating func remove(_ key: Key) {
        var (hole, found) = find(key)
        guard found else { return }
        count -= 1
        // Backward shift (Knuth 6.4, algorithm R): move later entries of the cluster into the hole when
        // their home slot does not lie cyclically between the hole and where they are.
        var slot = hole
        while true {
            slot = (slot + 1) & mask
            guard let stored = keys[slot] else { break }
            let want = home(stored)
            let stays = hole <= slot ? (hole < want && want <= slot) : (hole < want || want <= slot)
            if stays { continue }
            keys[hole] = stored
            values[hole] = values[slot]
            hole = slot
        }
        keys[hole] = nil
        values[hole] = nil
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        keys = Array(repeating: nil, count: oldKeys.count * 2)
        values = Array(repeating: nil, count: oldKeys.count * 2)
        mask = keys.count - 1
        shift -= 1
        for (key, value) in zip(oldKeys, oldValues) {
            guard let key, let value else { continue }
            let (slot, _) = find(key)
            keys[slot] = key
            values[slot] = value
        }
    }

    /// Every entry, in no particular order (for sweeps and the end of the capture, not per packet).
    var entries: [(key: Key, value: Value)] {
        var result: [(key: Key, value: Value)] = []
        result.reserveCapacity(count)
        for (key, value) in zip(keys, values) {
            if let key, let value { result.append((key, value)) }
        }
        return result
    }
}
