/// Where the bytes of one direction of a connection went.
///
/// Invariant (checked by the tests): `messageBytes + nonHTTPBytes + tunnelBytes + missingBytes ==
/// receivedBytes + missingBytes`, i.e. every received byte is in exactly one of the first three buckets
/// and every skipped byte is in `missingBytes`. A gap inside a body is counted here *and* in that record's
/// `missingBytes`, but never in its `bodyBytes`, so `transferBytes` only holds bytes that were captured.
public struct HTTPByteCounts: Sendable, Equatable {
    /// Sum of `transferBytes` of the records emitted for this direction.
    public var messageBytes = 0
    /// Bytes that were not part of an HTTP message: a non-HTTP stream, garbage skipped while resynchronising,
    /// stray empty lines between messages, a start line cut off by the end of the stream.
    public var nonHTTPBytes = 0
    /// Bytes after a protocol switch (101 Switching Protocols, or a 2xx answer to CONNECT).
    public var tunnelBytes = 0
    /// Bytes reported as never captured (`skip`), wherever they fell.
    public var missingBytes = 0
    /// Bytes handed to `receive`.
    public var receivedBytes = 0

    public init() {}

    /// The accounting invariant: captured bytes are all attributed exactly once.
    public var isBalanced: Bool { messageBytes + nonHTTPBytes + tunnelBytes == receivedBytes }
}
