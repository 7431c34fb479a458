import TrafficAggregation
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficHTTP2
import TrafficReassembly
import TrafficSessions

/// Sits between the session and the HTTP parser of one connection (HTTP/1, or HTTP/2 directly, after an h2c
/// upgrade, or inside TLS): forwards the streams, joins exchanges, counts the connection's HTTP summary, and
/// hands records to the session layer's `SessionRecords`, which attributes the connection's overhead and passes
/// them on to the report.
final class HTTPConnectionTap: SessionStage {
    /// Which parser reads the connection: HTTP/1, HTTP/2 (the session saw its preface), or the first bytes
    /// decide (below a decrypting TLS stage: ALPN `h2` is encrypted in TLS 1.3, the plaintext is not).
    enum Start { case http1, http2, detect }

    /// Owned by the tap (retained once here, released at `finish` or in `deinit`) and called unretained: a
    /// call through an optional `var` retains and releases the parser around it, an atomic pair per segment.
    private var parser: Unmanaged<HTTPConnectionParser>?
    /// The HTTP/2 parser, owned and called the same way: the connection's, or the one after an h2c upgrade
    /// (which the HTTP/1 parser feeds).
    private var http2: Unmanaged<HTTP2ConnectionParser>?
    /// Deliveries held while `.detect` waits for a direction's first bytes.
    private var undecided: HTTPVersionDetector?

    private var joiner = HTTPExchangeJoiner()
    private let builder: ReportBuilder
    private let overhead: OverheadOptions
    private let records: SessionRecords
    /// Per direction, what `connectionEnded` needs of the parser's counts once the parser is gone: its
    /// non-HTTP bytes (the parser and its buffers are freed at `finish`, while the connection may linger).
    private var nonHTTPBytes = PerDirection()
    /// TLS record overhead of stretches in no record (non-HTTP plaintext), per direction.
    private var framingLeft = PerDirection()
    /// Only groups by method or status and record listings show what the joiner fills in.
    private let joins: Bool
    /// Below a decrypting TLS tap: what of each direction reached no plaintext, which the TLS tap sets (and it
    /// counts the connection's missing bytes itself).
    private let decrypted: Bool
    var tlsBelow = TLSBelow()

    struct TLSBelow {
        /// Handshake, change_cipher_spec and alert records.
        var controlBytes = PerDirection()
        /// Captured bytes in no readable record.
        var undecryptedBytes = PerDirection()
        /// Segment header bytes that came with no plaintext (records after the last application data); set
        /// before `finish`, the two above before `connectionEnded`.
        var segmentHeaderBytes = PerDirection()
    }
    /// The TCP handshake, for the records of the connection's first exchange (HAR `connect`). Set by the
    /// session (cleartext); a decrypting TLS tap above this one may set it from its own handshake event.
    var connect: MessageRecord.TimeSpan?
    /// The TLS handshake of a decrypted connection (HAR `ssl`), set by the TLS tap above this one.
    var tlsHandshake: MessageRecord.TimeSpan?

    /// `pool`: the shard's idle HTTP/1 parsers, one of which this tap takes instead of making one (and
    /// returns when it finishes); every HTTP/1 parser comes from it.
    init(info: TCPConnectionInfo, capture: Int, scratch: DecodingScratch, builder: ReportBuilder,
         overhead: OverheadOptions, limits: HTTPLimits, pool: HTTPParserPool, decrypted: Bool = false,
         start: Start = .http1) {
        self.builder = builder
        self.pool = pool
        self.overhead = overhead
        self.decrypted = decrypted
        let records = SessionRecords(sink: builder, capture: capture, overhead: overhead)
        self.records = records
        let joins = builder.needsJoinedExchanges
        self.joins = joins
        self.info = info
        self.scratch = scratch
        self.limits = limits
        switch start {
        case .http1: useHTTP1()
        case .http2: useHTTP2()
        case .detect: undecided = HTTPVersionDetector()
        }
    }

    private let info: TCPConnectionInfo
    private let scratch: DecodingScratch
    private let limits: HTTPLimits
    private let pool: HTTPParserPool
    /// The pool's handle on the HTTP/1 parser, which `finish` gives back to `pool` with the parser.
    private var pooled: HTTPParserPool.Owner?

    // The tap owns the parsers, which own these closures: self outlives every call (no checked unowned
    // reference per record).
    private func makeHTTP2(_ upgraded: HTTPConnectionParser.UpgradedRequest?) -> HTTP2ConnectionParser {
        let parser = HTTP2ConnectionParser(
            info: info, scratch: scratch, limits: HTTP2Limits(http: limits), decrypted: decrypted,
            upgraded: upgraded
        ) { [unowned(unsafe) self] record in self.arrived(record) }
        if !overhead.isEmpty {
            parser.controlCharge = { [unowned(unsafe) records] index, direction, bytes, framing in
                records.chargeControl(bytes, framing: framing, index: index, direction: direction)
            }
        }
        return parser
    }

    private func useHTTP1() {
        // The pool's parser calls `arrived` and `upgrade` through its owner, pointed at this tap.
        let (parser, owner) = pool.parser(for: self, info: info, decrypted: decrypted)
        pooled = owner
        self.parser = Unmanaged.passRetained(parser)
    }

    /// The HTTP/1 parser's `upgradeToHTTP2`: an h2c upgrade hands the connection to an HTTP/2 parser.
    func upgrade(_ exchange: HTTPConnectionParser.UpgradedRequest) -> (any StreamAnalyzer)? {
        let child = makeHTTP2(exchange)
        http2 = Unmanaged.passRetained(child)
        return child
    }

    private func useHTTP2() {
        http2 = Unmanaged.passRetained(makeHTTP2(nil))
    }

    private func arrived(_ record: MessageRecord) {
        // Only the first exchange's records carry the handshake (a copy of one or two records a connection).
        if record.index == 1, connect != nil || tlsHandshake != nil {
            var first = record
            first.connect = connect
            first.tlsHandshake = tlsHandshake
            deliver(first)
        } else {
            deliver(record)
        }
    }

    /// An HTTP/1 record, given in place (it is the parser's, which restarts it for the next message): the first
    /// exchange's handshake times are set on it, not on a copy.
    func arrived(_ record: inout MessageRecord) {
        if record.index == 1, connect != nil || tlsHandshake != nil {
            record.connect = connect
            record.tlsHandshake = tlsHandshake
        }
        deliver(record)
    }

    private func deliver(_ record: MessageRecord) {
        records.emitted(record)
        guard joins else {
            records.take(record)
            return
        }
        var batch: [MessageRecord] = []
        joiner.add(record) { batch.append($0) }
        records.take(batch)
    }

    func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {
        connect = MessageRecord.TimeSpan(start: syn, end: ack)
    }

    deinit {
        parser?.release()
        http2?.release()
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        if let parser {
            parser._withUnsafeGuaranteedRef { $0.receive(bytes, direction: direction, span: span) }
        } else if let http2 {
            http2._withUnsafeGuaranteedRef { $0.receive(bytes, direction: direction, span: span) }
        } else if undecided != nil {
            detect(bytes, direction: direction, span: span)
        }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        if undecided != nil {
            // A gap before the protocol is known: HTTP/1, which resynchronises on start lines (as the session does).
            decide(http2: false)
        }
        if let parser {
            parser._withUnsafeGuaranteedRef { $0.skip(byteCount, direction: direction, time: time) }
        } else if let http2 {
            http2._withUnsafeGuaranteedRef { $0.skip(byteCount, direction: direction, time: time) }
        }
    }

    /// `.detect`: the first `TCPSession.prefixBytes` of either direction choose the parser; until then the
    /// deliveries are held (a few bytes: a plaintext record usually brings a whole preface or request line).
    private func detect(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        if let speaksHTTP2 = undecided?.hold(bytes, direction: direction, span: span) { decide(http2: speaksHTTP2) }
    }

    private func decide(http2 speaksHTTP2: Bool) {
        guard var held = undecided else { return }
        undecided = nil
        if speaksHTTP2 { useHTTP2() } else { useHTTP1() }
        held.release(to: self)
    }

    func packet(_ event: TCPPacketEvent) { records.note(event) }

    func finish(time: CaptureTime) {
        if let held = undecided {
            // Too few bytes to decide: what there is, client side first.
            decide(http2: held.decisionNow)
        }
        // HTTP/2 without HTTP/1 before it (after an upgrade the HTTP/1 parser finishes its child).
        if parser == nil, http2 != nil {
            finishHTTP2(time: time)
            return
        }
        guard let owned = self.parser else { return }
        // The parser's last use: this local reference now owns it, and frees it when finish returns
        // (a connection's entry can linger in the reassembler for late packets).
        self.parser = nil
        let parser = owned.takeRetainedValue()
        parser.finish(time: time)
        if !joiner.isUnused {
            var batch: [MessageRecord] = []
            joiner.flush { batch.append($0) }
            // The joiner's emptied table keeps its storage: a new one frees it while the connection lingers.
            joiner = HTTPExchangeJoiner()
            records.take(batch)
        }
        let counts = (parser.counts(for: .clientToServer), parser.counts(for: .serverToClient))
        nonHTTPBytes = PerDirection(counts.0.nonHTTPBytes, counts.1.nonHTTPBytes)
        builder.summary.nonHTTPBytes += counts.0.nonHTTPBytes + counts.1.nonHTTPBytes
        builder.summary.tunnelBytes += counts.0.tunnelBytes + counts.1.tunnelBytes
        // Below TLS the plaintext's missing bytes are estimates (a lost record's size less its overhead): the TLS
        // tap counts the stream's.
        if !decrypted { builder.summary.missingBytes += counts.0.missingBytes + counts.1.missingBytes }
        framingLeft = PerDirection(parser.unattributedFramingBytes(for: .clientToServer),
                                   parser.unattributedFramingBytes(for: .serverToClient))
        var leftover = PerDirection(
            parser.unattributedSegmentHeaderBytes(for: .clientToServer) + tlsBelow.segmentHeaderBytes[0],
            parser.unattributedSegmentHeaderBytes(for: .serverToClient) + tlsBelow.segmentHeaderBytes[1])
        if parser.isHTTP { builder.summary.httpConnections += 1 }
        if let http2 {
            // After an h2c upgrade: the HTTP/1 parser finished its child.
            self.http2 = nil
            countHTTP2(http2.takeRetainedValue(), leftover: &leftover)
        } else if parser.speaksHTTP2 {
            // The preface without a parser for it (an upgrade this version did not follow): scope note.
            builder.summary.otherProtocolConnections += 1
        } else if !parser.isHTTP, counts.0.nonHTTPBytes + counts.1.nonHTTPBytes > 0 {
            builder.summary.otherProtocolConnections += 1
        }
        // Nothing more is read of the parser: the pool may give it to the next connection.
        if let pooled {
            self.pooled = nil
            pool.recycle(parser, owner: pooled)
        }
        records.streamsEnded(
            tunnelBytes: PerDirection(counts.0.tunnelBytes, counts.1.tunnelBytes), leftoverHeaders: leftover)
    }

    /// Bytes of each direction that an HTTP/2 parser put in no record: control frames (unless `--overhead`
    /// attributes them) and non-HTTP bytes.
    private var http2Unanalysed = PerDirection()

    private func countHTTP2(_ parser: HTTP2ConnectionParser, leftover: inout PerDirection) {
        builder.summary.http2Connections += 1
        builder.summary.http2Streams += parser.streamCount
        for direction in Direction.allCases {
            let d = direction.rawValue
            let c = parser.counts(for: direction)
            builder.summary.h2ControlBytes += c.controlBytes
            builder.summary.nonHTTPBytes += c.nonHTTPBytes
            if !decrypted { builder.summary.missingBytes += c.missingBytes }
            http2Unanalysed[d] = c.nonHTTPBytes + (overhead.isEmpty ? c.controlBytes : 0)
            framingLeft[d] += parser.unattributedFramingBytes(for: direction)
            leftover[d] += parser.unattributedSegmentHeaderBytes(for: direction)
        }
    }

    private func finishHTTP2(time: CaptureTime) {
        guard let owned = http2 else { return }
        http2 = nil
        let parser = owned.takeRetainedValue()
        parser.finish(time: time)
        var batch: [MessageRecord] = []
        joiner.flush { batch.append($0) }
        // The joiner's emptied table keeps its storage: a new one frees it while the connection lingers.
        joiner = HTTPExchangeJoiner()
        records.take(batch)
        nonHTTPBytes = PerDirection()
        framingLeft = PerDirection()
        var leftover = tlsBelow.segmentHeaderBytes
        if parser.streamCount > 0 { builder.summary.httpConnections += 1 }
        countHTTP2(parser, leftover: &leftover)
        records.streamsEnded(tunnelBytes: PerDirection(), leftoverHeaders: leftover)
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        var lost = 0
        if records.count > 0 {
            if decrypted { records.tlsHandshakeBytes = tlsBelow.controlBytes }
            lost = records.connectionEnded(summary)
        }
        end.count(summary, recordlessOverhead: lost)
    }

    /// What `connectionEnded` adds from this tap's own counts, final once `finish` has run (below TLS, once the TLS
    /// tap has set `tlsBelow`).
    private var end: HTTPConnectionEnd {
        var unanalysed = PerDirection()
        for d in 0..<2 {
            // Captured payload in no record or tunnel (non-HTTP stretches), and overhead the user did not choose.
            unanalysed[d] = nonHTTPBytes[d] + http2Unanalysed[d]
            if decrypted {
                unanalysed[d] += framingLeft[d] + tlsBelow.undecryptedBytes[d]
                if !overhead.contains(.handshake) { unanalysed[d] += tlsBelow.controlBytes[d] }
            }
        }
        return HTTPConnectionEnd(
            builder: builder, overhead: overhead, hasRecords: records.count > 0, unanalysed: unanalysed)
    }

    /// A finished cleartext tap without `--overhead` needs nothing more until the connection ends: late packets
    /// change nothing (no ledger; the parsers are gone) and its records are counted. It stands down for its end.
    /// Below TLS (`decrypted`) the TLS tap owns this tap and keeps only its own end; with `--overhead` the records'
    /// attribution still waits for late ACKs and the teardown.
    func lingeringStage() -> (any SessionStage)? {
        guard overhead.isEmpty, !decrypted, parser == nil, http2 == nil, undecided == nil else { return nil }
        return FinishedHTTPConnection(end: end)
    }
}

/// What the end of an HTTP connection adds to the summary: its frame bytes that no record carries.
struct HTTPConnectionEnd {
    let builder: ReportBuilder
    let overhead: OverheadOptions
    let hasRecords: Bool
    /// Per direction: captured bytes in no record (non-HTTP stretches, and below TLS its framing and records that
    /// were not read), and TLS control records when `--overhead` leaves out the handshake.
    let unanalysed: PerDirection

    /// `recordlessOverhead`: overhead the connection's records could not take (`SessionRecords.connectionEnded`).
    func count(_ summary: TCPConnectionSummary, recordlessOverhead: Int) {
        guard hasRecords else {
            // A connection that made no record: all of its frames are non-HTTP.
            builder.summary.nonHTTPFrameBytes += summary.clientToServer.frameBytes + summary.serverToClient.frameBytes
            return
        }
        var unattributed = recordlessOverhead
        for direction in Direction.allCases {
            unattributed += summary[direction].unattributedFrameBytes(
                unanalysedBytes: unanalysed[direction.rawValue], handshake: overhead.contains(.handshake),
                teardown: overhead.contains(.teardown), packets: overhead.contains(.packets))
        }
        builder.summary.unattributedFrameBytes += unattributed
    }
}

/// A finished `HTTPConnectionTap`'s stand-in while its closed connection lingers (`lingeringStage`), instead of the
/// tap, its `SessionRecords` and what they hold: 640 bytes less heap a lingering connection (malloc's in-use bytes
/// with the 3 627 connections of the 100 MiB API bench capture lingering: 14.8 → 12.4 MB).
final class FinishedHTTPConnection: SessionStage {
    private let end: HTTPConnectionEnd

    init(end: HTTPConnectionEnd) { self.end = end }

    // After `finish` the tap ignored bytes, gaps and packets too (no parser, no ledger without `--overhead`).
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {}
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {}
    func finish(time: CaptureTime) {}

    func connectionEnded(_ summary: TCPConnectionSummary) { end.count(summary, recordlessOverhead: 0) }
}
