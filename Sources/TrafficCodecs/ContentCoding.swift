/// A content coding from `Content-Encoding` (RFC 9110 §8.4.1), as the HTTP stage names it.
public enum ContentCoding: String, Sendable, CaseIterable {
    case identity
    /// `gzip` and `x-gzip` (RFC 9110 §8.4.1.3).
    case gzip
    /// `deflate`: RFC 1950 zlib-wrapped data, but also raw RFC 1951 data as some servers send it.
    case deflate
    /// `br` (RFC 7932).
    case brotli = "br"
    /// `zstd` (RFC 8878).
    case zstd
}
