import TrafficHTTP

/// Bounds on what one HTTP/3 connection may make us hold, so that hostile traffic costs bounded memory.
public struct HTTP3Limits: Sendable {
    /// A HEADERS frame's field section is buffered whole (QPACK decodes it in one piece; the frame's length is
    /// known up front). A longer one is counted but not decoded (flag `header_limit`). 1 MiB, as HTTP/2's
    /// header block limit. Also bounds one buffered QPACK encoder instruction.
    public var maxFieldSectionBytes: Int
    /// Field sections of all streams buffered at once (many streams may each have one in flight): past it a
    /// section is counted but not decoded (`header_limit`).
    public var maxBufferedSectionBytes: Int
    /// The largest dynamic table capacity followed (the encoder may be allowed up to 2^62 by its peer's
    /// SETTINGS_QPACK_MAX_TABLE_CAPACITY); above it the table is not kept and references to it are unknown.
    public var maxTableCapacity: Int
    /// Request streams open at once; past it the oldest is ended (records emitted, `truncated`).
    public var maxOpenStreams: Int
    /// Stream directions held blocked on the QPACK encoder stream at once, per direction; past it the oldest
    /// is decoded as far as the table allows (`hpack_error`). Peers allow about 100
    /// (SETTINGS_QPACK_BLOCKED_STREAMS).
    public var maxBlockedStreams: Int
    /// Bytes of one blocked stream direction held until its field section can be decoded; past it the section
    /// is decoded as far as the table allows.
    public var maxBlockedBytes: Int
    /// Content decoding limits (and what HAR keeps of heads and request bodies), shared with HTTP/1 and HTTP/2.
    public var http: HTTPLimits

    public init(
        maxFieldSectionBytes: Int = 1 << 20, maxBufferedSectionBytes: Int = 16 << 20, maxTableCapacity: Int = 1 << 20,
        maxOpenStreams: Int = 10_000, maxBlockedStreams: Int = 128, maxBlockedBytes: Int = 1 << 20,
        http: HTTPLimits = HTTPLimits()
    ) {
        self.maxFieldSectionBytes = maxFieldSectionBytes
        self.maxBufferedSectionBytes = maxBufferedSectionBytes
        self.maxTableCapacity = maxTableCapacity
        self.maxOpenStreams = maxOpenStreams
        self.maxBlockedStreams = maxBlockedStreams
        self.maxBlockedBytes = maxBlockedBytes
        self.http = http
    }
}
