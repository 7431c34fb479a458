/// What every TLS connection of a run decrypts with: the key log (files and capture secrets blocks) and the
/// sessions established so far (for TLS ≤ 1.2 resumption).
public final class TLSDecryptionContext: Sendable {
    public let keyLog: TLSKeyLog
    public let sessions: TLSSessionCache

    public init(keyLog: TLSKeyLog, sessions: TLSSessionCache = TLSSessionCache()) {
        self.keyLog = keyLog
        self.sessions = sessions
    }
}

/// Why a TLS connection was, or was not, decrypted.
public enum TLSDecryptionOutcome: String, Sendable, CaseIterable {
    /// At least one protected record verified with the logged secrets.
    case decrypted
    /// No secret for the connection's client random (or its handshake was not captured).
    case noKey = "no_key"
    /// Secrets were there, but no record's tag or MAC verified: wrong or mismatched secrets.
    case decryptFailed = "decrypt_failed"
    /// The negotiated cipher suite or version is not one `TLSCipherParameters` decrypts.
    case unsupportedCipher = "unsupported_cipher"
}
