/// Decodes the HPACK header blocks (RFC 7541) of one direction of one HTTP/2 connection into header fields, with
/// the octets each field took on the wire.
///
/// Why our own decoder rather than NIOHPACK's, which stays the tests' independent oracle:
/// - Sizes as sent. `cookie_bytes` counts the HPACK representation of cookie fields as sent, so every field comes
///   with its representation's octets in the block (`HPACKField.representationBytes`); NIOHPACK only returns the
///   decoded headers.
/// - Gaps. A capture gap loses dynamic table updates, after which no decoder can know what an index into the
///   dynamic table means. This one keeps walking representations anyway (`isBlind`): sizes as sent still count,
///   static entries and literals still decode, and only what refers to the lost table becomes unknown. NIOHPACK
///   has no such mode; it would reject the block or resolve indices against a wrong table.
/// - Cost. The packet path must not allocate per field, and NIOHPACK materialises Strings into `HPACKHeaders`.
///   Here a field is a pair of pointers into the block, the static table, the dynamic table or a reused scratch
///   buffer, valid for one callback; Huffman strings decode through a table of 12-bit windows, not a tree walk.
///   The goal is ≥ 1 GB/s for the whole pipeline.
///
/// Call order: `setTableSizeLimit(_:)` when the SETTINGS_HEADER_TABLE_SIZE of the endpoint that receives these
/// blocks takes effect, which is where the encoder's SETTINGS acknowledgment sits in its stream (RFC 9113 §6.5.3:
/// blocks before it were encoded under the old value); `decode(block:visit:)` once per complete header block, in
/// stream order; `loseState()` when a block is missed. Memory: the dynamic table within `HPACKLimits.maxStoredTableBytes`, plus a scratch buffer as
/// large as the largest representation seen; a block that decodes to megabytes of indexed fields costs nothing more.
///
/// A value: a copy decodes independently of the original (storage is copied on the first mutation of either).
public struct HPACKDecoder {
    /// Why the decoder went blind.
    public enum BlindReason: Equatable, Sendable {
        /// `loseState()` was called: a gap in the stream, or a block that could not be read.
        case stateLost
        /// A block failed to decode (the table may have changed up to the bad representation, or not).
        case malformedBlock(HPACKError)
        /// The encoder's table outgrew `HPACKLimits.maxStoredTableBytes`.
        case tableAboveStorageLimit
    }

    /// Blind: dynamic-table contents unknown. decode still walks representations and reports representationBytes,
    /// and name/value where they are knowable (static table indices, literal strings); fields referring to the
    /// dynamic table get nil name/value; literals with incremental indexing are NOT stored (the table is unknown
    /// anyway). Stays blind for the rest of the connection direction.
    public private(set) var isBlind = false
    /// The first reason the decoder went blind; nil while it is not.
    public private(set) var blindReason: BlindReason?

    /// SETTINGS_HEADER_TABLE_SIZE: the largest maximum size a dynamic table size update may set (§6.3).
    public private(set) var tableSizeLimit = 4096

    public let limits: HPACKLimits
    private var table: HPACKDynamicTable
    private var scratch = HPACKScratchBuffer()

    public init(limits: HPACKLimits = HPACKLimits()) {
        self.limits = limits
        self.table = HPACKDynamicTable(storageLimit: limits.maxStoredTableBytes)
    }

    /// The dynamic table's size as §4.1 counts it (name + value + 32 per entry); 0 while blind.
    public var dynamicTableSize: Int { table.size }
    /// The dynamic table's maximum size, as the encoder last set it (§4.2).
    public var dynamicTableMaxSize: Int { table.maxSize }
    /// Entries in the dynamic table; 0 while blind.
    public var dynamicTableCount: Int { table.count }
    /// Octets of the scratch buffer (for tests of the memory bound).
    var scratchCapacity: Int { scratch.capacity }

    /// The decoder's SETTINGS_HEADER_TABLE_SIZE (initially 4096): the largest size a dynamic table size update
    /// may set (RFC 7541 §4.2, §6.3). Lowering it below the current size evicts.
    ///
    /// After the limit drops below the table's maximum, §4.2 obliges the encoder to open its next block with a size
    /// update that brings the maximum within it; evicting here gives the table that update will leave. A next
    /// block without the update is not treated as an error: a passive observer gains nothing by going blind over
    /// an encoder's omission when the table it must have is known anyway.
    public mutating func setTableSizeLimit(_ bytes: Int) {
        tableSizeLimit = max(0, bytes)
        guard table.maxSize > tableSizeLimit else { return }
        makeTableUnique()
        table.setMaxSize(tableSizeLimit)
    }

    /// Decodes one complete header block (HEADERS/PUSH_PROMISE + CONTINUATION payloads concatenated, padding and
    /// priority fields already removed). Calls `visit` once per header field in order. Dynamic table size
    /// updates are not fields (their bytes are just part of the block). Throws at the first malformed
    /// representation; the table is then unknown and the decoder becomes blind.
    ///
    /// `block` is borrowed for the call. A field's buffers are valid only inside the `visit` call that gets it.
    public mutating func decode(block: UnsafeRawBufferPointer, visit: (HPACKField) -> Void) throws(HPACKError) {
        makeTableUnique()
        if !isKnownUniquelyReferenced(&scratch) { scratch = HPACKScratchBuffer() }
        var reader = HPACKBlockReader(block)
        defer {
            // A rare huge literal should not pin its scratch memory for the rest of the connection.
            if scratch.capacity > Self.keptScratchBytes { scratch = HPACKScratchBuffer() }
        }
        do throws(HPACKError) {
            try decodeRepresentations(&reader, visit)
        } catch {
            goBlind(.malformedBlock(error))
            throw error
        }
    }

    /// Scratch memory kept between blocks: far above the strings of ordinary headers (a few hundred octets, a few
    /// KiB for large cookies or tokens).
    static let keptScratchBytes = 64 * 1024

    /// A gap in the stream (or a block we could not read) lost table updates: from now on the decoder is blind.
    public mutating func loseState() {
        goBlind(.stateLost)
    }

    private mutating func goBlind(_ reason: BlindReason) {
        guard !isBlind else { return }
        isBlind = true
        blindReason = reason
        // A fresh table rather than emptying this one, which a copy of the decoder may share. Its maximum size
        // still tracks size updates, which are checked against the limit as before.
        let maxSize = table.maxSize
        table = HPACKDynamicTable(storageLimit: 0)
        table.setMaxSize(maxSize)
    }

    private mutating func makeTableUnique() {
        if !isKnownUniquelyReferenced(&table) { table = table.copy() }
    }

    private mutating func decodeRepresentations(_ reader: inout HPACKBlockReader, _ visit: (HPACKField) -> Void)
        throws(HPACKError)
    {
        var sawField = false
        while !reader.isAtEnd {
            let start = reader.position
            let first = reader.current
            if first & 0x80 != 0 {
                // §6.1 Indexed Header Field: 1xxxxxxx, a 7-bit prefix index.
                let index = try reader.readInteger(prefixBits: 7)
                let entry = try lookUp(index)
                sawField = true
                visit(
                    HPACKField(
                        name: entry.name, value: entry.value, representationBytes: reader.position - start,
                        kind: .indexed))
            } else if first & 0xe0 == 0x20 {
                // §6.3 Dynamic Table Size Update: 001xxxxx. §4.2: only at the beginning of a block.
                guard !sawField else { throw .tableSizeUpdateAfterField }
                let maxSize = try reader.readInteger(prefixBits: 5)
                guard maxSize <= tableSizeLimit else { throw .tableSizeAboveLimit }
                table.setMaxSize(maxSize)
            } else {
                sawField = true
                try decodeLiteral(&reader, visit)
            }
        }
    }

    /// A literal header field (§6.2): 01xxxxxx with incremental indexing (6-bit name index), 0000xxxx without
    /// indexing and 0001xxxx never indexed (4-bit name index); index 0 means a literal name follows.
    @inline(__always)
    private mutating func decodeLiteral(_ reader: inout HPACKBlockReader, _ visit: (HPACKField) -> Void)
        throws(HPACKError)
    {
        let start = reader.position
        let first = reader.current
        let kind: HPACKField.Kind
        let index: Int
        if first & 0x40 != 0 {
            kind = .incrementalIndexing
            index = try reader.readInteger(prefixBits: 6)
        } else {
            kind = first & 0x10 != 0 ? .neverIndexed : .withoutIndexing
            index = try reader.readInteger(prefixBits: 4)
        }

        var name: UnsafeRawBufferPointer?
        // Octets of the name in the scratch buffer, when it was Huffman-coded.
        var nameInScratch: Int?
        if index == 0 {
            let literal = try reader.readString()
            if literal.huffman {
                let count = try decodeHuffman(literal.octets, at: 0)
                nameInScratch = count
            } else {
                name = literal.octets
            }
        } else {
            name = try lookUp(index).name
        }

        let value: UnsafeRawBufferPointer
        let literal = try reader.readString()
        if literal.huffman {
            let offset = nameInScratch ?? 0
            let count = try decodeHuffman(literal.octets, at: offset)
            value = UnsafeRawBufferPointer(start: scratch.base.unsafelyUnwrapped + offset, count: count)
        } else {
            value = literal.octets
        }
        // Taken only now: decoding the value may have moved the scratch buffer.
        if let nameInScratch {
            name = UnsafeRawBufferPointer(start: scratch.base.unsafelyUnwrapped, count: nameInScratch)
        }

        visit(HPACKField(name: name, value: value, representationBytes: reader.position - start, kind: kind))

        // §6.2.1: the field becomes the newest dynamic entry. Blind, the table it would join is unknown.
        guard kind == .incrementalIndexing, !isBlind, let name else { return }
        let nameIndex = index > HPACKStaticTable.count ? index - HPACKStaticTable.count : nil
        if !table.insert(name: name, nameIndex: nameIndex, value: value) {
            goBlind(.tableAboveStorageLimit)
        }
    }

    /// Decodes a Huffman string into the scratch buffer at `offset`, keeping what lies before it, and returns the
    /// decoded length.
    @inline(__always)
    private func decodeHuffman(_ octets: UnsafeRawBufferPointer, at offset: Int) throws(HPACKError) -> Int {
        let base = scratch.reserve(offset + HPACKHuffman.maxDecodedCount(octets.count), keeping: offset)
        return try HPACKHuffman.decode(octets, into: base + offset)
    }

    /// Name and value at `index` of the index space (§2.3.3): 1…61 static, then the dynamic table newest first.
    /// Blind, a dynamic index cannot be resolved nor checked: both are nil.
    @inline(__always)
    private func lookUp(_ index: Int) throws(HPACKError) -> (
        name: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?
    ) {
        guard index > 0 else { throw .invalidIndex }
        if index <= HPACKStaticTable.count {
            let entry = HPACKStaticTable.entry(index)
            return (entry.name, entry.value)
        }
        if isBlind { return (nil, nil) }
        guard index - HPACKStaticTable.count <= table.count else { throw .invalidIndex }
        let entry = table.entry(index - HPACKStaticTable.count)
        return (entry.name, entry.value)
    }
}
