/// A cipher suite code point (RFC 8446 §B.4, RFC 5246 §A.5, IANA "TLS Cipher Suites" registry).
public struct TLSCipherSuite: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The IANA name (`TLS_AES_128_GCM_SHA256`) for the suites in `knownName`, else "0xXXXX".
    public var name: String { knownName ?? TLSVersion.hex(rawValue) }

    public var description: String { name }
}
