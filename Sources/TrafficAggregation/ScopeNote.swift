/// Traffic the captures held that this version does not analyse, said once on stderr and in the JSON
/// summary (`not_analysed`): a TLS capture must not read like a bad key file, nor an h2c capture like an
/// empty one.
public struct ScopeNote: Sendable, Equatable {
    /// A stable name for scripts: `tls`, `quic`, `http2`, `other_tcp`, `non_tcp`.
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
        /// A note when `count` is not zero; `message` is given the count's pronoun (`its`/`their`).
        func note(_ kind: String, _ count: Int, _ unit: String, _ message: (_ its: String) -> String) {
            if count > 0 { notes.append(ScopeNote(kind: kind, count: count, unit: unit, message: message(count == 1 ? "its" : "their"))) }
        }
        let encrypted = tlsConnections - tlsDecrypted
        note("tls", encrypted, "connections") {
            // e.g. "12 of 40 TLS connections not decrypted: 11 no key, 1 decrypt_failed"
            var reasons: [String] = []
            if tlsNoKey > 0 { reasons.append("\(tlsNoKey) no key") }
            if tlsDecryptFailed > 0 { reasons.append("\(tlsDecryptFailed) decrypt_failed") }
            if tlsUnsupportedCipher > 0 { reasons.append("\(tlsUnsupportedCipher) unsupported_cipher") }
            let http2 = tlsHTTP2Connections > 0 ? "; \(tlsHTTP2Connections) HTTP/2 by ALPN" : ""
            let hint = tlsNoKey > 0 ? "; give the secrets with --keylog FILE" : ""
            return "\(encrypted) of \(plural(tlsConnections, "TLS connection")) not decrypted: "
                + reasons.joined(separator: ", ") + http2 + hint + "; \($0) bytes are counted per server in (tls) rows"
        }
        // Issue 23: QUIC connections without their secrets are named and sized, not read.
        note("quic", quicConnections - quicDecrypted, "connections") {
            "\(quicConnections - quicDecrypted) of \(plural(quicConnections, "QUIC connection")) not decrypted; give the "
                + "secrets with --keylog FILE; \($0) bytes are counted per server in (quic) rows"
        }
        note("other_tcp", otherProtocolConnections, "connections") {
            "\(plural(otherProtocolConnections, "TCP connection")) \(otherProtocolConnections == 1 ? "carries" : "carry") "
                + "neither HTTP nor TLS: not analysed; \($0) bytes are counted as non-HTTP"
        }
        // Undecodable frames have a warning of their own.
        note("non_tcp", otherProtocolPackets, "packets") { _ in
            "\(plural(otherProtocolPackets, "packet")) \(otherProtocolPackets == 1 ? "is" : "are") not TCP "
                + "(ICMP, ARP, UDP other than QUIC such as DNS, …): not analysed"
        }
        return notes
    }
}

/// `1 connection`, `2 connections`.
public func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
