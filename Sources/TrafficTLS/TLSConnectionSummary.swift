import TrafficSessions
import TrafficReassembly

/// What a TLS connection revealed without keys: the hellos' identifying fields and per-direction byte counts.
public struct TLSConnectionSummary: Sendable {
    public var info: TCPConnectionInfo
    /// At least one plausible TLS record was seen in either direction.
    public var isTLS = false
    /// server_name from the (first) ClientHello (RFC 6066 §3); with ECH, the outer (public) name.
    public var sni: String?
    /// The ClientHello carries encrypted_client_hello: `sni` and `offeredALPN` are the outer values.
    public var ech = false
    /// ALPN protocols the client offered (RFC 7301 §3.1), GREASE removed.
    public var offeredALPN: [String] = []
    /// ALPN protocol the server selected.
    public var selectedALPN: String?
    /// The ClientHello's legacy_version.
    public var clientLegacyVersion: TLSVersion?
    /// The ClientHello's supported_versions (RFC 8446 §4.2.1), GREASE removed; empty if absent.
    public var offeredVersions: [TLSVersion] = []
    /// The version the (last) ServerHello chose: supported_versions when present, else legacy_version.
    public var negotiatedVersion: TLSVersion?
    /// The cipher suite the (last) ServerHello chose.
    public var cipherSuite: TLSCipherSuite?
    /// The session was resumed: the TLS 1.3 ServerHello accepted a PSK (RFC 8446 §4.2.11), or a
    /// TLS ≤ 1.2 server sent change_cipher_spec without a ServerHelloDone, i.e. an abbreviated
    /// handshake (RFC 5246 §7.3).
    public var resumed = false
    /// The server sent a HelloRetryRequest (RFC 8446 §4.1.4).
    public var helloRetryRequest = false
    /// Facts and anomalies by snake_case name, sorted: `ech`, `gap`, `handshake_lost`,
    /// `handshake_message_too_large`, `hello_retry_request`, `malformed_client_hello`,
    /// `malformed_server_hello`, `record_desync`, `resumed`, `resynchronized`, `truncated_record`.
    public var flags: [RecordAnomaly] = []
    /// Whether the connection was decrypted, and why not; nil when no secrets were given at all.
    public var decryption: TLSDecryptionOutcome?
    public var clientToServer = TLSDirectionStats()
    public var serverToClient = TLSDirectionStats()

    public init(info: TCPConnectionInfo) { self.info = info }

    public subscript(direction: Direction) -> TLSDirectionStats {
        get { direction == .clientToServer ? clientToServer : serverToClient }
        set {
            if direction == .clientToServer { clientToServer = newValue } else { serverToClient = newValue }
        }
    }
}
