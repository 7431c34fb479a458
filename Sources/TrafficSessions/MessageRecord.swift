import TrafficCapture
import TrafficReassembly

/// One message as it crossed the wire, with the exact size of every part: an HTTP/1.x request or response,
/// or one direction of a TLS connection seen without keys. Protocol-neutral: it lives in the session layer
/// so that every protocol stage (HTTP/1 today; HTTP/2 and HTTP/3 next) fills the same record, and the
/// aggregation, spooling and output know one type; fields a protocol does not have stay at their defaults
/// (`line_bytes` 0 for HTTP/2, `method` nil for a response).
///
/// Every request and every response is a record of its own: a request may never get a response,
/// and a capture can start after a request was sent.
///
/// ```
///  GET /a?b=1 HTTP/1.1\r\n                     ┐ lineBytes (start line + CRLF)                    ┐
///  Host: example.com\r\n                       ┐                                                   │
///  Cookie: id=42\r\n                           │ headerBytes (field lines + their line endings     │ transferBytes
///  Transfer-Encoding: chunked\r\n              │   + the empty line); cookieBytes ⊂ headerBytes    │ (what the message
///  \r\n                                        ┘                                                   │  occupied in the
///  1a;ext=1\r\n <26 bytes of gzip> \r\n        ┐ bodyBytes: as sent, chunk framing and trailers    │  TCP stream)
///  0\r\n Trailer: x\r\n \r\n                   ┘   encodedBodyBytes = 26 (after de-chunking)       ┘
///                                                  decodedBodyBytes = size after gunzip (nil if it failed)
/// ```
public struct MessageRecord: Sendable {
    /// `tls`: one direction of a TLS connection seen without keys (host = SNI, path = `(tls)`).
    /// `quic`: one direction of a QUIC connection not decrypted (host = SNI from the Initials, path = `(quic)`).
    public enum Kind: String, Sendable { case request, response, tls, quic }

    /// One direction of a QUIC connection, for `kind == .quic` (issue 23).
    public struct QUICBytes: Sendable, Equatable {
        /// `client_to_server` or `server_to_client`.
        public var direction: String
        /// Σ(UDP length − 8) over the direction's datagrams on every path of the connection: its transfer bytes.
        public var udpPayloadBytes = 0
        public var datagrams = 0
        /// QUIC packets, each coalesced packet counted; Version Negotiation and Retry count one each.
        public var packets = 0
        /// The negotiated version, `0x%08x`.
        public var version: String?
        /// The protocols the client offered, comma-separated.
        public var alpnOffered: String?

        public init(direction: String) { self.direction = direction }
    }

    /// The TLS record layer of one direction of a connection, for `kind == .tls`.
    public struct TLSBytes: Sendable, Equatable {
        /// `client_to_server` or `server_to_client`.
        public var direction: String
        /// Whole records (5-byte headers included) of content types handshake and change_cipher_spec.
        public var handshakeBytes = 0
        /// application_data records; in TLS 1.3 this includes the encrypted handshake.
        public var applicationBytes = 0
        public var alertBytes = 0
        /// Records of other content types (heartbeat, unknown).
        public var otherBytes = 0
        /// 5 bytes per record, all types: a subset of the above.
        public var recordHeaderBytes = 0
        public var version: String?
        public var cipherSuite: String?
        /// The protocol the server selected; nil when it is encrypted (TLS 1.3) or none was negotiated.
        public var alpn: String?
        /// The protocols the client offered, comma-separated.
        public var alpnOffered: String?

        public init(direction: String) { self.direction = direction }

        public var recordBytes: Int { handshakeBytes &+ applicationBytes &+ alertBytes &+ otherBytes }
    }

    // Identity and context
    public var connection: Int
    /// Position of the exchange on its connection, from 1; interim (1xx) responses share their request's index.
    public var index: Int
    public var kind: Kind
    /// Capture time of the message's first byte.
    public var time: CaptureTime
    public var client: String
    public var server: String
    public var method: String?
    public var status: Int?
    /// `HTTP/1.1`, `HTTP/1.0`, `HTTP/0.9`, `HTTP/2` or `HTTP/3`.
    public var version: String?
    /// HTTP/2: the stream that carried the message (also on the two HTTP/1.1 records of an h2c upgrade, which
    /// open stream 1); nil for HTTP/1.
    public var streamID: Int?
    public var host: String
    public var path: String
    public var query: String?

    // Sizes, in bytes
    public var lineBytes: Int = 0
    public var headerBytes: Int = 0
    public var cookieBytes: Int = 0
    /// HTTP/2: Σ(len(name) + len(value)) over every field of the header block after HPACK decoding, pseudo-header
    /// fields included (octets after Huffman decoding); nil for HTTP/1, and when HPACK state was lost to a gap.
    public var headerDecodedBytes: Int?
    /// HTTP/2: Σ(len(name) + len(value)) of the `cookie` (request) or `set-cookie` (response) fields after
    /// decoding; nil as `headerDecodedBytes`. (`cookieBytes` is their representations as sent.)
    public var cookieDecodedBytes: Int?
    public var bodyBytes: Int = 0
    public var encodedBodyBytes: Int = 0
    /// nil when content decoding failed or was capped: never a guess.
    public var decodedBodyBytes: Int? = 0
    /// Bytes of this message's body that were never captured (a gap, flag `gap`). They are *not* in
    /// `bodyBytes` or `encodedBodyBytes`, which count captured bytes only; the body's size on the wire is
    /// `bodyBytes + missingBytes`.
    public var missingBytes: Int = 0
    /// Inlinable: a non-inlined getter is handed a copy of the whole record (550 bytes) by callers that hold
    /// the record `inout`, once per message.
    @inlinable
    public var transferBytes: Int {
        lineBytes &+ headerBytes &+ bodyBytes &+ (tlsStorage?.value.recordBytes ?? 0)
            &+ (quicStorage?.value.udpPayloadBytes ?? 0)
    }

    /// For `kind == .tls` only.
    public var tls: TLSBytes? {
        get { tlsStorage?.value }
        set { tlsStorage = newValue.map(TLSBox.init) }
    }
    /// Boxed (and replaced on every change, so records keep value semantics): HTTP records, the many,
    /// carry and copy 8 bytes instead of the TLS fields.
    @usableFromInline var tlsStorage: TLSBox?
    @usableFromInline final class TLSBox: Sendable {
        @usableFromInline let value: TLSBytes
        init(_ value: TLSBytes) { self.value = value }
    }

    /// For `kind == .quic` only.
    public var quic: QUICBytes? {
        get { quicStorage?.value }
        set { quicStorage = newValue.map(QUICBox.init) }
    }
    @usableFromInline var quicStorage: QUICBox?
    @usableFromInline final class QUICBox: Sendable {
        @usableFromInline let value: QUICBytes
        init(_ value: QUICBytes) { self.value = value }
    }

    // Connection overhead (`--overhead`); all zero unless the analysis attributes it.
    /// Frame bytes of the SYN, SYN-ACK and completing ACK, on the first exchange of the connection.
    public var handshakeBytes = 0
    /// Frame bytes of FIN/RST frames and the ACKs of FINs, on the last exchange.
    public var teardownBytes = 0
    /// L2–L4 header bytes of the data segments carrying this message, and pure ACKs attributed to it.
    public var packetOverheadBytes = 0
    /// Frame bytes of retransmitted segments of this message.
    public var retransmittedBytes = 0
    /// Bytes after CONNECT 2xx or `101 Switching Protocols` in this record's direction (on the record that switched).
    public var tunnelBytes = 0
    /// A decrypted message: the TLS record-layer bytes beyond its plaintext (record headers, explicit nonces, MACs
    /// or AEAD tags, CBC padding, TLS 1.3's inner content type) of the records that carried it, shared by
    /// plaintext bytes when a record carries parts of two messages. Always counted (it is not an option's
    /// overhead: the message cannot cross the wire without it); 0 for cleartext.
    public var tlsOverheadBytes = 0
    /// A decrypted connection's TLS handshake, change_cipher_spec and alert records, on its first exchange by
    /// direction (with `--overhead handshake`, like the TCP handshake).
    public var tlsHandshakeBytes = 0
    /// HTTP/2 frames that carry no message (SETTINGS, PING, WINDOW_UPDATE, PRIORITY, RST_STREAM, GOAWAY,
    /// PUSH_PROMISE, unknown types) and the client preface, with `--overhead`: a stream's on that stream's
    /// record of the sending side, the connection's (stream 0, the preface) on its first exchange.
    public var h2ControlBytes = 0
    /// HTTP/3: what QUIC added to carry this message (packet headers, AEAD tags, frame headers, ACK, PADDING and
    /// other frames of the packets that carried its stream bytes, in proportion to them; retransmitted STREAM
    /// frames of its stream). Always counted, like `tlsOverheadBytes`; 0 for TCP.
    public var quicOverheadBytes = 0
    /// HTTP/3, with `--overhead`: the sending side's control stream, QPACK encoder/decoder streams, other
    /// unidirectional streams, and frames that are not HEADERS/DATA of a request stream, on the first exchange.
    public var h3ControlBytes = 0
    /// HTTP/3, with `--overhead`: packets of the sending side that carried no request-stream bytes (handshake,
    /// ACK-only, control), on the first exchange.
    public var quicConnectionBytes = 0
    /// Everything this message cost on the wire with the overhead chosen.
    public var wireBytes: Int {
        transferBytes &+ tunnelBytes &+ handshakeBytes &+ teardownBytes &+ packetOverheadBytes &+ retransmittedBytes
            &+ tlsOverheadBytes &+ tlsHandshakeBytes &+ h2ControlBytes &+ quicOverheadBytes &+ h3ControlBytes
            &+ quicConnectionBytes
    }

    /// Offset of the message's first byte in its direction's stream (captured and missing bytes counted).
    public var streamOffset = 0
    /// This message's share of the header bytes of the data segments that carried it, split in proportion
    /// when a segment carries parts of two messages; the analysis turns it into `packetOverheadBytes`.
    public var segmentHeaderBytes = 0
    /// Whether the message was read from decrypted TLS records (its `tlsOverheadBytes` apply).
    public var decrypted = false

    // Timings (HAR `timings`, `--messages` `first_byte_time`/`last_byte_time`); `time` is the first byte's.
    /// A stretch of capture time, e.g. the TCP handshake.
    public struct TimeSpan: Sendable, Equatable {
        public var start: CaptureTime
        public var end: CaptureTime
        public init(start: CaptureTime, end: CaptureTime) {
            self.start = start
            self.end = end
        }
    }

    /// Capture time of the packet that completed the message's last byte (its first byte's is `time`).
    public var lastByteTime = CaptureTime.zero
    /// The connection's TCP handshake, SYN to the ACK completing it, on the records of its first exchange
    /// only (HAR counts a connection's setup once): nil on later exchanges and without a captured handshake.
    public var connect: TimeSpan?
    /// On a response: its request's last byte to its own first byte (HAR `wait`; 0 when the server answered
    /// before the request ended); nil for a response without a known request, and on requests.
    public var wait: CaptureTime?
    /// The TLS handshake of the connection, on its first exchange, for a stage that decrypts (HAR `ssl`,
    /// within `connect`'s end and the first request byte): nil for cleartext, which is all there is today.
    public var tlsHandshake: TimeSpan?
    /// The head as sent (start line, then each field line, each ended by one LF, line endings otherwise
    /// removed), kept only when `HTTPLimits.maxKeptHeadBytes` asks for it (HAR's headers and cookies):
    /// empty otherwise, so the default path copies no bytes. Bytes, not text: field values are not
    /// guaranteed to be UTF-8.
    public var head: [UInt8] = []
    /// A request's body after de-chunking (content coding left as sent), kept only when
    /// `HTTPLimits.maxKeptRequestBodyBytes` asks for it (HAR `postData.text` with `--har-bodies`).
    public var body: [UInt8] = []

    // Description and flags
    public var contentType: String?
    public var contentEncoding: String?
    public var transferEncoding: String?
    public var complete: Bool = true
    public var paired: Bool = false
    /// Anomalies in the order found, each once, e.g. `malformed_length`, `decode_error`, `upgrade`, `truncated`.
    public var flags: [RecordAnomaly] = []

    /// Adds an anomaly once.
    package mutating func flag(_ anomaly: RecordAnomaly) {
        if !flags.contains(anomaly) { flags.append(anomaly) }
    }

    /// Makes this record a fresh one again in place — what `MessageRecord.init` makes with this record's identity
    /// (`connection`, `kind`, `client`, `server`, left as they are), `time`, `host` and an empty path — with
    /// `decrypted` set as given. Assigning a new record copies the whole record (a retain per string) and
    /// destroys the old one (a release per string) for every message, and a stored template to copy from costs
    /// its copies per connection: fields are set where they differ, strings cleared where set. Every stored
    /// property is listed; a test compares each one with a fresh record's.
    /// `host` is consumed: moved in, not retained again (the caller's copy was the one retain it needs).
    package mutating func restart(time: CaptureTime, host: consuming String, decrypted: Bool) {
        restart(time: time, host: host, decrypted: decrypted, keepingVersion: false, keepingMethod: false)
    }

    /// `restart` for a caller that assigns `version`, and with `keepingMethod` `method`, right after: those are
    /// left for its assignment to replace. Clearing them first cost a release each that the assignment then
    /// made again on nil.
    package mutating func restartForStartLine(time: CaptureTime, host: consuming String, decrypted: Bool, keepingMethod: Bool) {
        restart(time: time, host: host, decrypted: decrypted, keepingVersion: true, keepingMethod: keepingMethod)
    }

    @inline(__always)
    private mutating func restart(
        time: CaptureTime, host: consuming String, decrypted: Bool, keepingVersion: Bool, keepingMethod: Bool
    ) {
        index = 0
        self.time = time
        if !keepingMethod, method != nil { method = nil }
        status = nil
        if !keepingVersion, version != nil { version = nil }
        streamID = nil
        self.host = host
        path = ""
        if query != nil { query = nil }
        lineBytes = 0
        headerBytes = 0
        cookieBytes = 0
        headerDecodedBytes = nil
        cookieDecodedBytes = nil
        bodyBytes = 0
        encodedBodyBytes = 0
        decodedBodyBytes = 0
        missingBytes = 0
        if tlsStorage != nil { tlsStorage = nil }
        if quicStorage != nil { quicStorage = nil }
        handshakeBytes = 0
        teardownBytes = 0
        packetOverheadBytes = 0
        retransmittedBytes = 0
        tunnelBytes = 0
        tlsOverheadBytes = 0
        tlsHandshakeBytes = 0
        h2ControlBytes = 0
        quicOverheadBytes = 0
        h3ControlBytes = 0
        quicConnectionBytes = 0
        streamOffset = 0
        segmentHeaderBytes = 0
        self.decrypted = decrypted
        lastByteTime = .zero
        connect = nil
        wait = nil
        tlsHandshake = nil
        if !head.isEmpty { head = [] }
        if !body.isEmpty { body = [] }
        if contentType != nil { contentType = nil }
        if contentEncoding != nil { contentEncoding = nil }
        if transferEncoding != nil { transferEncoding = nil }
        complete = true
        paired = false
        if !flags.isEmpty { flags = [] }
    }

    /// 0 for what the client sent (a request, a client-to-server TLS record), 1 for the server's: the order of
    /// a record within its exchange in listings.
    package var sideOrder: Int {
        switch kind {
        case .request: 0
        case .response: 1
        case .tls: tls?.direction == "client_to_server" ? 0 : 1
        case .quic: quic?.direction == "client_to_server" ? 0 : 1
        }
    }

    public init(
        connection: Int, index: Int, kind: Kind, time: CaptureTime, client: String, server: String,
        host: String, path: String
    ) {
        self.connection = connection
        self.index = index
        self.kind = kind
        self.time = time
        self.client = client
        self.server = server
        self.host = host
        self.path = path
    }
}
