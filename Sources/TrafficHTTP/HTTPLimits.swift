import TrafficCodecs

/// Bounds on what the HTTP parser buffers and keeps, so hostile or broken traffic costs bounded memory.
public struct HTTPLimits: Sendable {
    /// Longest start line, field line or chunk-size line kept in memory. Longer field lines are still
    /// counted byte for byte (flag `header_limit`) but their values are not kept; a longer start line
    /// cannot be validated and is treated as not HTTP. 64 KiB is well above what servers accept (8–16 KiB).
    public var maxLineBytes: Int
    /// Field lines per head whose values are kept; later ones are counted only (flag `header_limit`).
    public var maxHeaderFields: Int
    /// Longest method accepted while recognising a request line (RFC 9110 methods are short tokens).
    public var maxMethodBytes: Int
    /// Requests waiting for a response on one connection. Past it (e.g. a capture holding only the
    /// client side) pairing is abandoned for the connection and held requests are emitted unpaired.
    public var maxPendingRequests: Int
    /// Limits handed to the content decoder.
    public var decoding: ContentDecodingLimits
    /// Bytes of each message's head (start line and field lines) kept in its record's `head`, for HAR's
    /// headers and cookies; lines past it are not kept (flag `header_limit`,
    /// HAR `_headers_cut`). 0, the default, keeps
    /// nothing: records are counted, not stored, and the default path copies no header bytes.
    public var maxKeptHeadBytes: Int
    /// Bytes of each request's body (after de-chunking, as sent otherwise) kept in its record's `body`, for
    /// HAR's `postData.text` (`--har-bodies`); 0, the default, keeps none.
    public var maxKeptRequestBodyBytes: Int

    public init(
        maxLineBytes: Int = 64 * 1024, maxHeaderFields: Int = 10_000, maxMethodBytes: Int = 32,
        maxPendingRequests: Int = 10_000, decoding: ContentDecodingLimits = .init(), maxKeptHeadBytes: Int = 0,
        maxKeptRequestBodyBytes: Int = 0
    ) {
        self.maxKeptHeadBytes = maxKeptHeadBytes
        self.maxKeptRequestBodyBytes = maxKeptRequestBodyBytes
        self.maxLineBytes = maxLineBytes
        self.maxHeaderFields = maxHeaderFields
        self.maxMethodBytes = maxMethodBytes
        self.maxPendingRequests = maxPendingRequests
        self.decoding = decoding
    }
}
