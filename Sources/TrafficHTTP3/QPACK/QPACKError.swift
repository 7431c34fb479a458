/// Why a QPACK field section or encoder instruction could not be decoded (RFC 9204 §6: the errors a decoder
/// would answer with QPACK_DECOMPRESSION_FAILED or QPACK_ENCODER_STREAM_ERROR).
public enum QPACKError: Error, Equatable, Sendable {
    /// The section or instruction ends inside a representation.
    case truncated
    /// A prefix integer beyond 2^62 − 1 (§4.1.1 leaves the limit to the implementation; QUIC's own limit).
    case integerOverflow
    /// A static index beyond Appendix A's 99 entries (§3.1).
    case invalidStaticIndex
    /// A dynamic reference to an entry that was evicted, never inserted, or at or beyond the Required Insert
    /// Count (§3.2.4, §4.5.1).
    case invalidDynamicIndex
    /// An Encoded Required Insert Count that no table state could produce (§4.5.1.1).
    case invalidRequiredInsertCount
    /// A Base below zero (§4.5.1.2).
    case invalidBase
    /// A Huffman string that is not a valid code (RFC 7541 §5.2, shared by QPACK §4.1.2).
    case invalidHuffman
    /// Set Dynamic Table Capacity above the decoder's SETTINGS_QPACK_MAX_TABLE_CAPACITY (§4.3.1).
    case capacityAboveMaximum
    /// An entry larger than the table's capacity (§3.2.2).
    case entryTooLarge
    /// An encoder instruction longer than `HTTP3Limits.maxFieldSectionBytes`.
    case instructionTooLarge
}
