import TrafficReassembly

/// Recognises one protocol by the first bytes of a direction, and makes the stage that reads it.
///
/// Detection is by content on any port (TLS on 8443, HTTP on 3000, h2c on 50051), as Zeek's dynamic
/// protocol detection does: port numbers say nothing reliable.
public struct ProtocolDetector: Sendable {
    /// A name for the stage, e.g. `tls`.
    public var name: String
    /// Whether the first bytes of a direction are this protocol's. Called with `TCPSession.prefixBytes`
    /// bytes, or fewer when the stream ended before that many arrived.
    public var matches: @Sendable (_ firstBytes: UnsafeRawBufferPointer, _ direction: Direction) -> Bool

    public init(
        name: String, matches: @escaping @Sendable (_ firstBytes: UnsafeRawBufferPointer, _ direction: Direction) -> Bool
    ) {
        self.name = name
        self.matches = matches
    }
}
