/// Traffic the captures held that this version does not analyse, said once on stderr and in the JSON
/// summary (`not_analysed`): a TLS capture must not read like a bad key file, nor an h2c capture like an
/// empty one.
public struct ScopeNote: Sendable, Equatable {
    /// A stable name for scripts: `tls`, `http2`, `other_tcp`, `non_tcp`.
    public var kind: String
    /// How many `unit`s.
    public var count: Int
    /// `connections` or `packets`.
    public var unit: String
    /// One sentence for people.
    public var message: String
}

extension ReportSummary {
    /// What was seen and not analysed, most important first.
    public var scopeNotes: [ScopeNote] {
        var notes: [ScopeNote] = []
        if tlsConnections > tlsDecrypted {
            let count = tlsConnections - tlsDecrypted
            let http2 = tlsHTTP2Connections > 0 ? ", \(tlsHTTP2Connections) of them HTTP/2 by ALPN" : ""
            notes.append(ScopeNote(
                kind: "tls", count: count, unit: "connections",
                message: "\(plural(count, "TLS connection")): not decrypted (HTTPS decryption is not supported "
                    + "yet\(http2)); \(count == 1 ? "its" : "their") bytes are counted per server in (tls) rows"))
        }
        if http2Connections > 0 {
            notes.append(ScopeNote(
                kind: "http2", count: http2Connections, unit: "connections",
                message: "\(plural(http2Connections, "connection")) \(http2Connections == 1 ? "speaks" : "speak") "
                    + "cleartext HTTP/2 (h2c): not analysed; their bytes are counted as non-HTTP or tunnelled"))
        }
        if otherProtocolConnections > 0 {
            notes.append(ScopeNote(
                kind: "other_tcp", count: otherProtocolConnections, unit: "connections",
                message: "\(plural(otherProtocolConnections, "TCP connection")) "
                    + "\(otherProtocolConnections == 1 ? "carries" : "carry") neither HTTP nor TLS: not analysed; "
                    + "\(otherProtocolConnections == 1 ? "its" : "their") bytes are counted as non-HTTP"))
        }
        // Undecodable frames have a warning of their own.
        if otherProtocolPackets > 0 {
            notes.append(ScopeNote(
                kind: "non_tcp", count: otherProtocolPackets, unit: "packets",
                message: "\(plural(otherProtocolPackets, "packet")) \(otherProtocolPackets == 1 ? "is" : "are") not TCP "
                    + "(UDP such as DNS or QUIC/HTTP/3, ICMP, ARP, …): not analysed"))
        }
        return notes
    }
}

/// `1 connection`, `2 connections`.
public func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
