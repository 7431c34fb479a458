/// The hash of a suite's PRF (TLS 1.2, RFC 5246 §5) or HKDF (TLS 1.3, RFC 8446 §7.1).
public enum TLSHashAlgorithm: Sendable, Hashable {
    case sha256, sha384

    /// Digest size in bytes: the length of a TLS 1.3 traffic secret and of one P_hash block.
    public var length: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        }
    }
}
