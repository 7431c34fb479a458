import TrafficHTTP

/// Bounds on what one HTTP/2 connection may make us hold, so that hostile traffic costs bounded memory.
public struct HTTP2Limits: Sendable {
    /// A header block (HEADERS or PUSH_PROMISE and its CONTINUATION frames) is buffered whole until
    /// END_HEADERS so that HPACK sees it in one piece. A block longer than this (a CONTINUATION flood) is
    /// counted frame by frame but not decoded (flag `header_limit`), which loses the decoder's table for the
    /// rest of the direction. 1 MiB is far above what servers accept (nginx 16 KiB by default, 64 KiB max
    /// header lists in Chrome).
    public var maxHeaderBlockBytes: Int
    /// Streams open at once on one connection. Past it the oldest open stream is ended (its records are
    /// emitted incomplete, flag `truncated`); peers allow about 100 (SETTINGS_MAX_CONCURRENT_STREAMS).
    public var maxOpenStreams: Int
    /// Reset streams kept open for DATA still in flight after the RST_STREAM (RFC 9113 §5.4.2: the peer
    /// may have sent it before it saw the reset); the oldest is ended when more are reset.
    public var maxResetStreamsHeld: Int
    public var hpack: HPACKLimits
    /// Content decoding limits and what HAR keeps of heads and request bodies, shared with HTTP/1.
    public var http: HTTPLimits

    public init(
        maxHeaderBlockBytes: Int = 1 << 20, maxOpenStreams: Int = 10_000, maxResetStreamsHeld: Int = 128,
        hpack: HPACKLimits = HPACKLimits(), http: HTTPLimits = HTTPLimits()
    ) {
        self.maxHeaderBlockBytes = maxHeaderBlockBytes
        self.maxOpenStreams = maxOpenStreams
        self.maxResetStreamsHeld = maxResetStreamsHeld
        self.hpack = hpack
        self.http = http
    }
}

/// Where the bytes of one direction of an HTTP/2 connection went. Every received byte is in exactly one of
/// `messageBytes`, `controlBytes` and `nonHTTPBytes`; `missingBytes` were never captured.
public struct HTTP2ByteCounts: Sendable, Equatable {
    public var receivedBytes = 0
    public var missingBytes = 0
    /// Frames of header blocks, DATA and trailers: the records' `transferBytes`.
    public var messageBytes = 0
    /// The client preface and every frame that carries no message (RFC 9113 §6: SETTINGS, PING, GOAWAY,
    /// WINDOW_UPDATE, PRIORITY, RST_STREAM, PUSH_PROMISE with its CONTINUATION frames, unknown types).
    public var controlBytes = 0
    /// Bytes whose framing was lost (after a gap, until a frame header was found again, or for good after a
    /// framing error) or that did not start with the client preface.
    public var nonHTTPBytes = 0

    public init() {}
}
