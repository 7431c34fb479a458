/// The record-layer content types a TLS parser recognises (RFC 8446 §5.1, RFC 6520 for heartbeat).
public enum TLSContentType: UInt8, Sendable, CaseIterable {
    case changeCipherSpec = 20
    case alert = 21
    case handshake = 22
    case applicationData = 23
    // RFC 6520: heartbeat records; counted as "other" record bytes.
    case heartbeat = 24

    /// The snake_case name used in reports.
    public var name: String {
        switch self {
        case .changeCipherSpec: "change_cipher_spec"
        case .alert: "alert"
        case .handshake: "handshake"
        case .applicationData: "application_data"
        case .heartbeat: "heartbeat"
        }
    }
}
