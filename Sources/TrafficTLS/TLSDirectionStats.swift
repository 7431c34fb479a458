/// Byte accounting for one direction of a TLS connection.
///
/// ```
/// stream:  junk  | hdr  fragment | hdr  fragment | ...gap... | hdr  fragment | hdr  frag[end]
///          nonTLS |---- record ---|---- record ---|  missing  |---- record ---|-- record ---
///                 (each record counts, 5-byte header included, under its content type)
/// ```
/// Every stream byte (received or skipped) is counted exactly once:
/// `streamBytes == handshakeBytes + applicationBytes + alertBytes + otherRecordBytes + nonTLSBytes + missingBytes`.
/// Record bytes (by content type) include the 5-byte header; `recordHeaderBytes` is a subset of
/// them, not added again. A gap inside a record counts as missing, not as the record's type.
public struct TLSDirectionStats: Sendable, Equatable {
    /// Records whose header was seen.
    public var records = 0
    /// handshake (22) and change_cipher_spec (20) records. TLS 1.3 sends its encrypted handshake as
    /// application_data (RFC 8446 §5.2), which can't be told apart without keys: that counts below.
    public var handshakeBytes = 0
    /// application_data (23) records.
    public var applicationBytes = 0
    /// alert (21) records.
    public var alertBytes = 0
    /// heartbeat (24) records.
    public var otherRecordBytes = 0
    /// The 5-byte headers of all records.
    public var recordHeaderBytes = 0
    /// Bytes outside any plausible record: before the first record, after a desync until the next
    /// plausible header, or a record header cut off by the end of the stream.
    public var nonTLSBytes = 0
    /// Bytes never captured (gaps handed on by the reassembler).
    public var missingBytes = 0
    /// Every byte of the direction's stream: received plus skipped.
    public var streamBytes = 0

    public init() {}

    /// All record bytes of every content type, headers included.
    public var transferBytes: Int { handshakeBytes + applicationBytes + alertBytes + otherRecordBytes }

    /// The buckets add up to the stream; a violation is a bug in the parser.
    public var isConserved: Bool { streamBytes == transferBytes + nonTLSBytes + missingBytes }
}
