/// Why a header block could not be decoded (RFC 7541 calls each of these a decoding error, §3.1). After any of
/// them the dynamic table is unknown, and the decoder is blind for the rest of the connection direction.
public enum HPACKError: Error, Equatable, Sendable {
    /// An integer is above 2^31-1 or takes more than 5 continuation octets (§5.1 lets decoders set this limit).
    case integerOverflow
    /// The block ends inside a representation: in an integer, or before a string's declared length.
    case truncated
    /// An index is 0 (§6.1) or points past the static and dynamic tables (§2.3.3).
    case invalidIndex
    /// A Huffman-coded string holds the EOS symbol, or ends with more than 7 padding bits or padding that is not
    /// the most significant bits of EOS (all ones) (§5.2).
    case invalidHuffman
    /// A dynamic table size update asks for more than SETTINGS_HEADER_TABLE_SIZE allows (§6.3).
    case tableSizeAboveLimit
    /// A dynamic table size update follows a header field: it may only open a block (§4.2).
    case tableSizeUpdateAfterField

    /// One sentence for a report or a log.
    public var message: String {
        switch self {
        case .integerOverflow:
            "HPACK integer above 2^31-1 or longer than 5 continuation bytes (RFC 7541 §5.1)"
        case .truncated:
            "HPACK header block ends inside a field representation"
        case .invalidIndex:
            "HPACK index 0 or beyond the static and dynamic tables (RFC 7541 §2.3.3, §6.1)"
        case .invalidHuffman:
            "HPACK Huffman string holds EOS or has invalid padding (RFC 7541 §5.2)"
        case .tableSizeAboveLimit:
            "HPACK dynamic table size update above SETTINGS_HEADER_TABLE_SIZE (RFC 7541 §6.3)"
        case .tableSizeUpdateAfterField:
            "HPACK dynamic table size update after a header field (RFC 7541 §4.2)"
        }
    }
}
