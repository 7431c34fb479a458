import TrafficHTTP2

/// Decodes the QPACK field sections (RFC 9204) sent in one direction of an HTTP/3 connection, with the table
/// that direction's encoder stream builds.
///
/// A passive observer sees both the encoder stream and the sections, in capture order: a section whose
/// Required Insert Count is beyond the inserts read so far is *blocked* (§2.1.2) and the caller retries it
/// after more of the encoder stream (`decode` returns `.blocked`), or forces it at the end, when references
/// that cannot be resolved make fields of unknown name and value.
///
/// Fields reach the visitor as `HPACKField`s (the shape HTTP/2 uses; `kind` is `.indexed` for indexed field
/// lines, `.neverIndexed` when the N bit is set, else `.withoutIndexing`) with the octets of their
/// representation as sent; buffers are valid only during the visit.
package final class QPACKDecoder {
    package enum Outcome: Equatable, Sendable {
        /// Every field was visited; `complete` is false when some name or value was unknown (forced or lost).
        case decoded(complete: Bool)
        /// Needs inserts not read yet, or the decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY (to decode the
        /// Required Insert Count); nothing was visited.
        case blocked
    }

    /// The decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY (§3.2.3, §5): nil until its SETTINGS is read.
    package var maxTableCapacity: Int?
    /// Capacity beyond this is not followed (memory): the table is then lost.
    package let storageLimit: Int
    /// An encoder instruction buffered beyond this is an error (a string length of 2^62).
    package let maxInstructionBytes: Int
    /// The encoder stream had a gap or an error: the table is unknown for good, and every dynamic reference
    /// decodes to an unknown field.
    package private(set) var isLost = false
    package private(set) var lostReason: QPACKError?

    private let table = QPACKDynamicTable()
    private let scratch = HPACKScratchBuffer()
    /// An encoder instruction split across deliveries, and the size it needs before it can be parsed again.
    private var pending: [UInt8] = []
    private var pendingNeeded = 0

    package init(maxTableCapacity: Int? = nil, storageLimit: Int = 1 << 20, maxInstructionBytes: Int = 1 << 20) {
        self.maxTableCapacity = maxTableCapacity
        self.storageLimit = storageLimit
        self.maxInstructionBytes = maxInstructionBytes
    }

    package var insertCount: Int { table.insertCount }
    package var tableSize: Int { table.size }
    package var tableCapacity: Int { table.capacity }
    /// Octets of an encoder instruction waiting for the rest of it.
    package var pendingInstructionBytes: Int { pending.count }

    /// A gap in the encoder stream: table state is lost.
    package func loseState(_ reason: QPACKError? = nil) {
        guard !isLost else { return }
        isLost = true
        lostReason = reason
        pending = []
    }

    // MARK: Encoder stream (§4.3)

    /// Encoder-stream bytes after the stream type, in order, any split. An instruction split across calls is
    /// kept until complete. A malformed instruction loses the table (and is thrown, once).
    package func readEncoderStream(_ bytes: UnsafeRawBufferPointer) throws(QPACKError) {
        guard !isLost, !bytes.isEmpty else { return }
        do throws(QPACKError) {
            if pending.isEmpty {
                let used = try readInstructions(bytes)
                if used < bytes.count { keep(UnsafeRawBufferPointer(rebasing: bytes[used...])) }
            } else {
                keep(bytes)
                guard pending.count >= pendingNeeded else { return }
                let buffered = pending
                pending = []
                pendingNeeded = 0
                let result = buffered.withUnsafeBytes { b in Result { () throws(QPACKError) in try readInstructions(b) } }
                let used = try result.get()
                if used < buffered.count {
                    buffered.withUnsafeBytes { keep(UnsafeRawBufferPointer(rebasing: $0[used...])) }
                }
            }
            if pending.count > maxInstructionBytes || pendingNeeded > maxInstructionBytes { throw .instructionTooLarge }
        } catch {
            loseState(error)
            throw error
        }
    }

    private func keep(_ bytes: UnsafeRawBufferPointer) {
        pending.append(contentsOf: bytes)
    }

    /// Whole instructions from the start of `bytes`; returns the octets they took (a partial one is left).
    private func readInstructions(_ bytes: UnsafeRawBufferPointer) throws(QPACKError) -> Int {
        var reader = QPACKReader(bytes)
        var done = 0
        while !reader.isAtEnd {
            do throws(QPACKError) {
                try readInstruction(&reader)
                done = reader.position
            } catch .truncated {
                pendingNeeded = reader.needed > 0 ? reader.needed - done : 0
                return done
            }
        }
        return done
    }

    private func readInstruction(_ reader: inout QPACKReader) throws(QPACKError) {
        let first = reader.current
        if first & 0x80 != 0 {
            // §4.3.2 Insert with Name Reference: 1Txxxxxx, a 6-bit index, then the value (H 0x80, 7-bit length).
            let isStatic = first & 0x40 != 0
            let index = try reader.readInteger(prefixBits: 6)
            let value = try reader.readString(prefixBits: 7)
            let name: UnsafeRawBufferPointer
            if isStatic {
                guard index < QPACKStaticTable.count else { throw .invalidStaticIndex }
                name = QPACKStaticTable.entry(index).name
            } else {
                // §3.2.5: relative index 0 is the newest entry.
                guard let entry = table.entry(absolute: table.insertCount - 1 - index) else { throw .invalidDynamicIndex }
                name = entry.name
            }
            let v = try decodeString(value, at: 0)
            try table.insert(name: name, value: v)
        } else if first & 0x40 != 0 {
            // §4.3.3 Insert with Literal Name: 01Hxxxxx, the name with a 5-bit length, then the value.
            let name = try reader.readString(prefixBits: 5)
            let value = try reader.readString(prefixBits: 7)
            let nameCount = try decodeString(name, at: 0).count
            // The name may live in the scratch buffer, which decoding the value may move: placed after it.
            let v = try decodeString(value, at: nameCount)
            let n = name.huffman ? UnsafeRawBufferPointer(start: scratch.base, count: nameCount) : name.octets
            try table.insert(name: n, value: v)
        } else if first & 0x20 != 0 {
            // §4.3.1 Set Dynamic Table Capacity: 001xxxxx.
            let capacity = try reader.readInteger(prefixBits: 5)
            if let maxTableCapacity, capacity > maxTableCapacity { throw .capacityAboveMaximum }
            guard capacity <= storageLimit else {
                // Legal for the peer, beyond what we hold: the table is not followed (not an encoder error).
                loseState(.capacityAboveMaximum)
                return
            }
            table.setCapacity(capacity)
        } else {
            // §4.3.4 Duplicate: 000xxxxx, a 5-bit relative index.
            let index = try reader.readInteger(prefixBits: 5)
            guard let entry = table.entry(absolute: table.insertCount - 1 - index) else { throw .invalidDynamicIndex }
            try table.insert(name: entry.name, value: entry.value)
        }
    }

    /// A string's octets, Huffman-decoded into the scratch buffer at `offset` when needed.
    private func decodeString(_ s: (huffman: Bool, octets: UnsafeRawBufferPointer), at offset: Int) throws(QPACKError)
        -> UnsafeRawBufferPointer
    {
        guard s.huffman else { return s.octets }
        let base = scratch.reserve(offset + HPACKHuffman.maxDecodedCount(s.octets.count), keeping: offset)
        do {
            let count = try HPACKHuffman.decode(s.octets, into: base + offset)
            return UnsafeRawBufferPointer(start: base + offset, count: count)
        } catch {
            throw .invalidHuffman
        }
    }

    // MARK: Field sections (§4.5)

    /// The Required Insert Count of a section (§4.5.1.1); nil when it cannot be known yet (the decoder's
    /// maximum table capacity is not known, or the table is lost).
    package func requiredInsertCount(_ section: UnsafeRawBufferPointer) throws(QPACKError) -> Int? {
        var reader = QPACKReader(section)
        return try requiredInsertCount(&reader)
    }

    private func requiredInsertCount(_ reader: inout QPACKReader) throws(QPACKError) -> Int? {
        let encoded = try reader.readInteger(prefixBits: 8)
        if encoded == 0 { return 0 }
        guard let maxTableCapacity, !isLost else { return nil }
        let maxEntries = maxTableCapacity / 32
        let fullRange = 2 * maxEntries
        guard encoded <= fullRange else { throw .invalidRequiredInsertCount }
        let maxValue = table.insertCount + maxEntries
        let maxWrapped = maxValue / fullRange * fullRange
        var ric = maxWrapped + encoded - 1
        if ric > maxValue {
            guard ric > fullRange else { throw .invalidRequiredInsertCount }
            ric -= fullRange
        }
        guard ric != 0 else { throw .invalidRequiredInsertCount }
        return ric
    }

    /// Decodes one field section (a HEADERS or PUSH_PROMISE frame's payload). Not `force`d, a section that
    /// needs inserts not read yet is `.blocked` and nothing is visited. `force`d (the encoder stream will bring
    /// no more), fields referring to missing entries are visited with nil name and value. Throws at the first
    /// malformed representation (fields before it were visited); the table is unaffected (§2.2.3: decoding a
    /// section never changes it).
    package func decode(section: UnsafeRawBufferPointer, force: Bool = false, visit: (HPACKField) -> Void)
        throws(QPACKError) -> Outcome
    {
        var reader = QPACKReader(section)
        let ric = try requiredInsertCount(&reader)
        // §4.5.1.2: the sign bit and Delta Base.
        guard !reader.isAtEnd else { throw .truncated }
        let negative = reader.current & 0x80 != 0
        let delta = try reader.readInteger(prefixBits: 7)
        if !force, !isLost, ric == nil || ric! > table.insertCount { return .blocked }
        var base: Int?
        if let ric {
            if negative {
                guard ric > delta else { throw .invalidBase }
                base = ric - delta - 1
            } else {
                let (sum, overflow) = ric.addingReportingOverflow(delta)
                guard !overflow else { throw .invalidBase }
                base = sum
            }
        }
        var complete = true
        while !reader.isAtEnd {
            let start = reader.position
            let first = reader.current
            var name: UnsafeRawBufferPointer?
            var value: UnsafeRawBufferPointer?
            var kind = HPACKField.Kind.withoutIndexing
            if first & 0x80 != 0 {
                // §4.5.2 Indexed Field Line: 1Txxxxxx.
                kind = .indexed
                let isStatic = first & 0x40 != 0
                let index = try reader.readInteger(prefixBits: 6)
                if isStatic {
                    let e = try staticEntry(index)
                    (name, value) = (e.name, e.value)
                } else if let e = try dynamicEntry(base.map { $0 - 1 - index }, ric: ric) {
                    (name, value) = (e.name, e.value)
                }
            } else if first & 0xf0 == 0x10 {
                // §4.5.3 Indexed Field Line with Post-Base Index: 0001xxxx.
                kind = .indexed
                let index = try reader.readInteger(prefixBits: 4)
                if let e = try dynamicEntry(base.map { $0 &+ index }, ric: ric) { (name, value) = (e.name, e.value) }
            } else if first & 0xc0 == 0x40 {
                // §4.5.4 Literal Field Line with Name Reference: 01NTxxxx, then the value.
                if first & 0x20 != 0 { kind = .neverIndexed }
                let isStatic = first & 0x10 != 0
                let index = try reader.readInteger(prefixBits: 4)
                if isStatic {
                    name = try staticEntry(index).name
                } else {
                    name = try dynamicEntry(base.map { $0 - 1 - index }, ric: ric)?.name
                }
                value = try decodeString(reader.readString(prefixBits: 7), at: 0)
            } else if first & 0xe0 == 0x20 {
                // §4.5.6 Literal Field Line with Literal Name: 001NHxxx, the name (3-bit length), the value.
                if first & 0x10 != 0 { kind = .neverIndexed }
                let n = try reader.readString(prefixBits: 3)
                let v = try reader.readString(prefixBits: 7)
                let nameCount = try decodeString(n, at: 0).count
                value = try decodeString(v, at: nameCount)
                name = n.huffman ? UnsafeRawBufferPointer(start: scratch.base, count: nameCount) : n.octets
            } else {
                // §4.5.5 Literal Field Line with Post-Base Name Reference: 0000Nxxx.
                if first & 0x08 != 0 { kind = .neverIndexed }
                let index = try reader.readInteger(prefixBits: 3)
                name = try dynamicEntry(base.map { $0 &+ index }, ric: ric)?.name
                value = try decodeString(reader.readString(prefixBits: 7), at: 0)
            }
            if name == nil || value == nil { complete = false }
            visit(HPACKField(name: name, value: value, representationBytes: reader.position - start, kind: kind))
        }
        return .decoded(complete: complete)
    }

    private func staticEntry(_ index: Int) throws(QPACKError) -> QPACKStaticTable.Entry {
        guard index < QPACKStaticTable.count else { throw .invalidStaticIndex }
        return QPACKStaticTable.entry(index)
    }

    /// The entry at absolute index `absolute` (nil: the base is unknown); nil when the table cannot say
    /// (lost, or a forced section's entry not inserted yet); an error when the reference is impossible.
    private func dynamicEntry(_ absolute: Int?, ric: Int?) throws(QPACKError)
        -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
    {
        guard let absolute, let ric, !isLost else { return nil }
        // §4.5.1: a reference at or beyond the Required Insert Count (or below 0) is an error.
        guard absolute >= 0, absolute < ric else { throw .invalidDynamicIndex }
        if absolute >= table.insertCount { return nil }  // forced: not inserted yet
        guard let entry = table.entry(absolute: absolute) else { throw .invalidDynamicIndex }
        return entry
    }
}
