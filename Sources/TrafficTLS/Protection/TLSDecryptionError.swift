/// Why one record did not decrypt; the connection-level caller turns these into anomalies and flags.
public enum TLSDecryptionError: Error, Equatable, Sendable {
    /// The fragment is shorter than the record's fixed overhead: explicit nonce + tag (AEAD), or
    /// IV + one block + MAC (CBC).
    case recordTooShort
    /// The AEAD tag or the HMAC did not verify: wrong or mismatched keys, a wrong sequence number, or damage.
    case authenticationFailed
    /// CBC padding malformed (RFC 5246 §6.2.3.2: every padding byte equals the length byte), or a CBC
    /// ciphertext that is not whole blocks. With MAC-then-encrypt the padding is checked before the MAC, so
    /// wrong keys usually show up here rather than as `authenticationFailed`: treat both as "keys don't fit".
    case badPadding
    /// A TLS 1.3 inner plaintext of zero bytes only: no content type (RFC 8446 §5.4).
    case noContentType
}
