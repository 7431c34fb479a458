/// The 5-byte header in front of every TLS record (RFC 8446 §5.1, RFC 5246 §6.2.1).
///
/// ```
/// +------+---------+---------+
/// | type | version | length  |   type: u8, version: u16, length: u16 (fragment bytes after the header)
/// +------+---------+---------+
/// ```
public struct TLSRecordHeader: Sendable, Equatable {
    /// Header size on the wire.
    public static let byteCount = 5
    /// Largest plausible fragment: RFC 5246 §6.2.3 allows 2^14 + 2048 for TLSCiphertext (TLS 1.3's
    /// 2^14 + 256, RFC 8446 §5.2, is smaller).
    public static let maximumLength = 16384 + 2048

    public var contentType: TLSContentType
    /// The record-layer version: 0x0301 or 0x0303 in practice, frozen at 0x0303 by TLS 1.3 (RFC 8446 §5.1).
    public var version: UInt16
    /// Fragment bytes that follow the header.
    public var length: Int

    public init(contentType: TLSContentType, version: UInt16, length: Int) {
        self.contentType = contentType
        self.version = version
        self.length = length
    }

    /// Decodes a plausible header from five bytes, or nil: known content type, version 0x0300–0x0304,
    /// length at most `maximumLength`.
    public init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8) {
        guard let type = TLSContentType(rawValue: b0), b1 == 3, b2 <= 4 else { return nil }
        let length = Int(b3) << 8 | Int(b4)
        guard length <= Self.maximumLength else { return nil }
        self.init(contentType: type, version: UInt16(b1) << 8 | UInt16(b2), length: length)
    }

    /// Decodes the header at `offset`; the caller guarantees five bytes are there.
    init?(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.init(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3], bytes[offset + 4])
    }
}
