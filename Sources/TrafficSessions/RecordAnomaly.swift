/// Something notable about a record, reported by its snake_case name in the `flags` list of every output.
///
/// A closed set, so that code asks `record.flags.contains(.upgrade)` rather than comparing strings, and a
/// misspelt name does not compile. Names are a public contract (scripts filter on them): add, never rename.
public enum RecordAnomaly: String, Sendable, CaseIterable {
    // HTTP/1 (see HTTPConnectionParser's decisions).
    case decodeCapped = "decode_capped"
    case decodeError = "decode_error"
    case gap
    case headerLimit = "header_limit"
    case http09
    case malformedChunk = "malformed_chunk"
    case malformedHeader = "malformed_header"
    case malformedLength = "malformed_length"
    case obsFold = "obs_fold"
    case pairingUncertain = "pairing_uncertain"
    case teAndCL = "te_and_cl"
    case truncated
    case unknownEncoding = "unknown_encoding"
    /// `101 Switching Protocols`: both directions leave HTTP after this response's head.
    case upgrade
    /// A 2xx answer to CONNECT: both directions become a tunnel.
    case tunnel
    /// A start line outside RFC 9112 that Zeek accepts: version in another case (`http/1.1`), a request
    /// without a target (`OPTIONS HTTP/1.1`), a request version without its minor digit (`HTTP/1.`).
    case nonstandardStartLine = "nonstandard_start_line"
    /// The direction's first bytes were inside a message (the capture started mid-message, or a hole at
    /// its start): the record holds those bytes, with the message's start unknown.
    case midMessageStart = "mid_message_start"
    /// A response to a request that fell into a capture hole on the client side: the server had acknowledged no
    /// byte of the next captured request when it began (TCP positions), so it answers one never seen (unpaired,
    /// path `(unknown)`); later responses pair with their own requests.
    case requestLost = "request_lost"
    // TLS without keys (see TLSConnectionFlags).
    case ech
    case handshakeLost = "handshake_lost"
    case handshakeMessageTooLarge = "handshake_message_too_large"
    case helloRetryRequest = "hello_retry_request"
    case malformedClientHello = "malformed_client_hello"
    case malformedServerHello = "malformed_server_hello"
    case recordDesync = "record_desync"
    case resumed
    case resynchronized
    case truncatedRecord = "truncated_record"
    // Why a TLS connection stayed encrypted (issue 21), on its `tls` records.
    case noKey = "no_key"
    case decryptFailed = "decrypt_failed"
    case unsupportedCipher = "unsupported_cipher"
    // HTTP/2 (issue 22, see HTTP2ConnectionParser).
    /// The stream was reset (RST_STREAM, either direction) before this record was complete.
    case reset
    /// A server-pushed stream: a response without a request, named by its PUSH_PROMISE.
    case pushed
    /// The header block could not be decoded (HPACK error, or the table's state lost to a gap or an
    /// earlier error): decoded sizes are null, the sizes as sent still count.
    case hpackError = "hpack_error"
    /// A frame violated HTTP/2 framing (a length beyond the peer's limit, a frame on the wrong stream): the
    /// connection's framing was given up from there, as a peer would with a connection error.
    case frameError = "frame_error"
    /// A request body longer than `--har-bodies` keeps: HAR's `postData.text` holds its start only.
    case bodyLimit = "body_limit"
    // QUIC (issue 23), on `quic` records and a decrypted connection's HTTP/3 records.
    /// No complete ClientHello was read from the Initials: the host is the server's address.
    case noClientHello = "no_client_hello"
    /// The server sent a Retry (RFC 9000 §8.1.2), and the client started again with its token.
    case retry
    /// The server answered with Version Negotiation (RFC 9000 §6), and the client started again.
    case versionNegotiation = "version_negotiation"
    /// Datagrams came on more than one path (NAT rebinding or migration, RFC 9000 §9).
    case migrated

    /// The anomaly of a name as written in a spool or a report; nil for a name this version does not know.
    public init?(name: String) { self.init(rawValue: name) }

    public var name: String { rawValue }

    /// A switch of protocol after this record (`upgrade` or `tunnel`): the bytes that follow are the tunnel's.
    public var switchesProtocol: Bool { self == .upgrade || self == .tunnel }
}
