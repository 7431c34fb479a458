/// One header field of a decoded block, as `HPACKDecoder.decode(block:visit:)` hands it to its visitor.
///
/// The buffers point into the block, the static table or the decoder's own storage: they are valid only during
/// the `visit` call that receives the field. Copy what must outlive it.
public struct HPACKField {
    /// How the field was represented (RFC 7541 §6), which also says whether the encoder let it be indexed.
    public enum Kind: Sendable, Equatable {
        /// An indexed header field (§6.1): name and value from the static or dynamic table.
        case indexed
        /// A literal that was added to the dynamic table (§6.2.1).
        case incrementalIndexing
        /// A literal not added to the table, which intermediaries may index when they re-encode (§6.2.2).
        case withoutIndexing
        /// A literal that must stay a literal across every hop, typically a secret such as a cookie (§6.2.3).
        case neverIndexed
    }

    /// Decoded octets (after Huffman decoding); nil when the field refers to a dynamic-table entry whose state
    /// was lost (blind mode).
    public var name: UnsafeRawBufferPointer?
    /// Decoded value octets; nil under the same condition as `name`.
    public var value: UnsafeRawBufferPointer?
    /// Octets of this representation in the block as sent (prefix byte(s), length integers, string bytes).
    /// Dynamic table size updates belong to no field: the fields of a block sum to its size less theirs.
    public var representationBytes: Int
    /// How the field was represented.
    public var kind: Kind

    public init(name: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?, representationBytes: Int, kind: Kind) {
        self.name = name
        self.value = value
        self.representationBytes = representationBytes
        self.kind = kind
    }
}
