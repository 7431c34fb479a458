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
    /// NSS key log files (`--keylog`) for TLS decryption; pcapng secrets blocks of the captures add to them.
    public var keyLogPaths: [String] = []

    public init() {}
}
