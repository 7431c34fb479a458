import TrafficReassembly

/// Settings of one analysis run.
public struct AnalysisOptions: Sendable {
    /// A BPF expression compiled by libpcap, applied before decoding.
    public var filter: String?
    public var reassemblyLimits = TCPReassemblyLimits()
    /// Keep every connection's summary (for `traffic connections`); the report needs only totals.
    public var keepConnections = true
    /// Count frames whose IPv4 or TCP checksum is wrong (`--verify-checksums`).
    public var verifyChecksums = false

    public init() {}
}
