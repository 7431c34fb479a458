import TrafficCapture
import TrafficWire

/// What `traffic connections` says about a QUIC connection that ended.
public struct QUICConnectionSummary: Sendable {
    public var id: Int
    public var client: Endpoint
    public var server: Endpoint
    public var start: CaptureTime
    public var end: CaptureTime
    public var version: QUICVersion
    public var serverName: String?
    public var offeredALPN: [String]
    /// Client to server, server to client.
    public var stats: [QUICDirectionStats]
    public var paths: Int
    public var sawRetry: Bool
    public var sawVersionNegotiation: Bool
    /// "decrypted", "no_key" or "decrypt_failed"; nil when the run has no secrets.
    public var decryption: String?

    public var duration: CaptureTime { start.duration(to: end) }
}

extension QUICConnection {
    public var summary: QUICConnectionSummary {
        QUICConnectionSummary(
            id: id, client: client, server: server, start: start, end: lastTime, version: version,
            serverName: serverName, offeredALPN: offeredALPN, stats: stats, paths: paths, sawRetry: sawRetry,
            sawVersionNegotiation: sawVersionNegotiation,
            decryption: keyLog == nil ? nil : decrypted ? "decrypted" : hasSecrets ? "decrypt_failed" : "no_key")
    }
}
