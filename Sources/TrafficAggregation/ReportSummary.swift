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
    /// Connections recognised as TLS by their records, and how many of them were decrypted (`--keylog`, or
    /// secrets in the capture); the others by reason.
    public var tlsConnections = 0
    public var tlsDecrypted = 0
    public var tlsNoKey = 0
    public var tlsDecryptFailed = 0
    public var tlsUnsupportedCipher = 0
    /// Protected records of decrypted connections whose tag or MAC did not verify (their plaintext is a gap).
    public var tlsFailedRecords = 0
    /// Captured bytes of decrypted connections in no readable record: records cut by a gap or by the capture's
    /// end, early data the server rejected, bytes after the record framing was lost, records that failed.
    public var tlsUndecryptedBytes = 0
    /// TLS connections whose server chose HTTP/2 by ALPN.
    public var tlsHTTP2Connections = 0
    /// Connections read as HTTP/2 (prior knowledge, an h2c upgrade, or h2 decrypted).
    public var http2Connections = 0
    /// Connections with payload that was neither HTTP/1 nor TLS nor HTTP/2 (another application's protocol).
    public var otherProtocolConnections = 0
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
    /// Of those, the frames that decoded fine but are not TCP (UDP, ICMP, ARP, …).
    public var otherProtocolPackets = 0

    // The frame-byte reconciliation (issue 6): with `--overhead all`, the groups' wire bytes +
    // non-HTTP + non-TCP + unattributed frame bytes = the capture's frame bytes.
    public var captureFrameBytes = 0
    /// Frames of TCP connections that carried no HTTP.
    public var nonHTTPFrameBytes = 0
    /// Frames that are not TCP over IP, frames too damaged to decode, fragments never completed.
    public var nonTCPFrameBytes = 0
    /// Frame bytes of HTTP connections in no record: non-HTTP stretches, payload cut by the snaplen,
    /// data after close, and overhead not chosen with `--overhead`.
    public var unattributedFrameBytes = 0

    // HTTP/2 (issue 22).
    /// The client preface and every frame that carries no message (SETTINGS, PING, WINDOW_UPDATE, PRIORITY,
    /// RST_STREAM, GOAWAY, PUSH_PROMISE, unknown types), in both directions of every HTTP/2 connection, whether
    /// `--overhead` attributed them to records or not: Σ transfer_bytes + this + non-HTTP bytes = delivered bytes.
    public var h2ControlBytes = 0
    /// HTTP/2 streams seen (client-initiated and pushed).
    public var http2Streams = 0

    // QUIC and HTTP/3 (issue 23).
    /// QUIC connections, and those whose 0-RTT or 1-RTT packets were decrypted (HTTP/3 records instead of
    /// `quic` records).
    public var quicConnections = 0
    public var quicDecrypted = 0
    /// HTTP/3 request streams that carried a message.
    public var http3Streams = 0

    public init() {}

    /// Adds a shard's counts (parallel runs).
    package mutating func add(_ o: ReportSummary) {
        captures += o.captures; packets += o.packets; bytes += o.bytes; durationNanoseconds += o.durationNanoseconds
        connections += o.connections; httpConnections += o.httpConnections; tlsConnections += o.tlsConnections
        tlsDecrypted += o.tlsDecrypted; tlsHTTP2Connections += o.tlsHTTP2Connections
        tlsNoKey += o.tlsNoKey; tlsDecryptFailed += o.tlsDecryptFailed; tlsUnsupportedCipher += o.tlsUnsupportedCipher
        tlsFailedRecords += o.tlsFailedRecords; tlsUndecryptedBytes += o.tlsUndecryptedBytes
        http2Connections += o.http2Connections; otherProtocolConnections += o.otherProtocolConnections
        requests += o.requests; responses += o.responses
        unpairedRequests += o.unpairedRequests; unpairedResponses += o.unpairedResponses
        nonHTTPBytes += o.nonHTTPBytes; tunnelBytes += o.tunnelBytes; missingBytes += o.missingBytes
        otherProtocolPackets += o.otherProtocolPackets
        decodeErrors += o.decodeErrors; incompleteMessages += o.incompleteMessages; nonTCPPackets += o.nonTCPPackets
        captureFrameBytes += o.captureFrameBytes; nonHTTPFrameBytes += o.nonHTTPFrameBytes
        nonTCPFrameBytes += o.nonTCPFrameBytes; unattributedFrameBytes += o.unattributedFrameBytes
        h2ControlBytes += o.h2ControlBytes; http2Streams += o.http2Streams
        quicConnections += o.quicConnections; quicDecrypted += o.quicDecrypted; http3Streams += o.http3Streams
    }
}
