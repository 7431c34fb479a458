/// The totals under a report: what was read and what could not be attributed to an endpoint.
public struct ReportSummary: Sendable, Equatable {
    public var captures = 0
    public var packets = 0
    /// pcap `len` summed over every frame.
    public var bytes = 0
    /// From the first to the last packet, per capture, summed.
    public var durationNanoseconds: Int64 = 0
    public var connections = 0
    public var httpConnections = 0
    public var requests = 0
    public var responses = 0
    public var unpairedRequests = 0
    public var unpairedResponses = 0
    /// Stream bytes of connections (or directions) that carried no HTTP, and unparsable stretches.
    public var nonHTTPBytes = 0
    /// Bytes after CONNECT or `101 Switching Protocols`.
    public var tunnelBytes = 0
    /// Stream bytes never captured.
    public var missingBytes = 0
    /// Records whose content decoding failed or was capped: their decoded size is unknown.
    public var decodeErrors = 0
    /// Records cut by a gap or by the capture's edge.
    public var incompleteMessages = 0
    /// Frames that are not TCP over IP, and frames too damaged to decode.
    public var nonTCPPackets = 0

    public init() {}
}
