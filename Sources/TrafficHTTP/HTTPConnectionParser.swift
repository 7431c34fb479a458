import TrafficCapture
import TrafficCodecs
import TrafficReassembly
import TrafficSessions

/// Parses both directions of one TCP connection into `MessageRecord`s.
///
/// Called by the reassembler (see `TCPStreamHandler`): per direction, in-order bytes and gaps, then
/// `finish` once. `emit` is called synchronously, once per record, when the record is final: responses
/// when they end; requests when they have ended *and* it is known whether a response came (the response
/// started, or the stream finished), so a request record can come after its response's.
///
/// Pairing: responses answer requests in order (RFC 9112 §9.3.2); interim 1xx responses share their
/// request's index. A gap on the client side that may have swallowed requests puts a mark in the queue.
/// A response that reaches the mark is placed by TCP positions (issue 24): the ACK field of the segment
/// that carried its first byte says how much of the client's stream the server had. If that is no further
/// than the start of the first request captured after the hole, the server had none of that request: the
/// response answers a request lost in the hole (unpaired, path `(unknown)`, flag `request_lost`) and the
/// mark stays for the next response; otherwise the mark goes and the response answers that request, and
/// pairing goes on in order. Without ACK positions (decrypted bytes, or no ACK seen) pairing is abandoned
/// for the rest of the connection at the mark (Zeek stops response parsing there; we keep parsing
/// responses with GET semantics, unpaired, path `(unknown)`).
///
/// Byte accounting per direction: `counts(for:)`, see `HTTPByteCounts`.
///
/// Decisions (the anomaly flag in parentheses):
/// - Recognition: a direction is HTTP when it starts with a request line (client) or status line
///   (server), on any port. A direction whose first line is not one is non-HTTP until a gap, or until a
///   start line shows that it began inside a message (`mid_message_start`, below); after a gap,
///   or once HTTP was seen, a bad line makes the parser resynchronise at the next line start that parses
///   as a start line (bytes skipped are non-HTTP). Only HTTP/1.x and HTTP/0.9 `GET /path` are recognised.
/// - Start lines outside the grammar that Zeek accepts (`nonstandard_start_line`): a version in another
///   case (`http/1.1 200 OK`), a request without a target (`OPTIONS HTTP/1.1`, path empty), a request
///   version without its minor digit (`GET / HTTP/1.`); the version is reported as sent. See `HTTPStartLine`.
/// - Malformed `Content-Length` (sign, non-digit, differing values, above 2^63 − 1) (`malformed_length`):
///   a request has no body (what follows is resynchronised over); a response is close-delimited.
///   A request whose last transfer coding is not chunked is close-delimited too (`malformed_length`).
///   Both `Transfer-Encoding` and `Content-Length`: TE wins (`te_and_cl`).
/// - Bad chunked framing, including a chunk size above 2^63 − 1 (`malformed_chunk`): the message ends
///   there, incomplete, with the bytes read so far as body; the direction resynchronises.
/// - Gaps (`gap`, complete=false): inside a Content-Length body or one chunk's data, or in a
///   close-delimited body, the framing is kept and the hole counts as the record's `missingBytes` (never
///   as body bytes; the decoded size becomes unknown). Anywhere else (a head, chunk framing, past the end
///   of a body) the message ends incomplete and the byte after the gap is tried as a start line, then
///   line starts. A client-side gap of the second kind may hide whole requests: pairing is abandoned
///   once the responses reach it (see above).
/// - End of stream: open messages are emitted with complete=false (`truncated`), except a close-delimited
///   body, which ends normally. A start line cut off by the end is non-HTTP.
/// - CONNECT: host is the authority, lower-cased; path is the target as sent (`example.com:443`), as
///   tshark shows `http.request.uri`. A 2xx answer makes both directions a tunnel (`tunnel`); 101 does
///   the same (`upgrade`). Client bytes sent after an Upgrade/CONNECT request and before the answer are
///   held (counted, not parsed): tunnel bytes if the switch happens, non-HTTP otherwise.
/// - A direction whose first line is no start line may have begun inside a message (capture started
///   mid-download or mid-upload; `mid_message_start`): its bytes are non-HTTP until a later line start
///   holds a start line (line starts rather than segment starts, so the result does not depend on how
///   the bytes were segmented), and only once the other direction says a message is due: for responses,
///   the client sent a request; for requests, the server sent HTTP or nothing yet. Then they become one
///   record, complete=false, body bytes as captured, decoded size unknown (null), missing bytes unknown
///   (0), path `(unknown)`. A partial response answers the request that was waiting when the server's
///   first bytes came, if any (else one before the capture: unpaired); a partial request is unpaired
///   (its response may have come before it was recognised). Without such a line, or across a gap (then
///   the usual resynchronisation), the bytes stay non-HTTP.
/// - HTTP/0.9 (`http09`): a `GET /path` line without a version is a request; the response to it is
///   every byte the server sends until the end (no start line, no header section).
/// - Host: an absolute-form target wins over `Host`; lower-cased, default port (80, 443 for https)
///   dropped; without either, the server address (IPv6 in brackets) with its port unless 80.
public final class HTTPConnectionParser: StreamAnalyzer {
    /// A `var` only for `reuse`.
    public private(set) var info: TCPConnectionInfo
    private let limits: HTTPLimits
    private let emit: (inout MessageRecord) -> Void
    private let requests: HTTPMessageParser
    private let responses: HTTPMessageParser
    /// The host of messages without `Host`: the server address, with its port unless 80.
    private var defaultHost: String
    private var pending = HTTPPendingQueue()
    /// The exchange of the request currently being parsed (set once its head is complete).
    private var currentRequest: HTTPExchange?
    private var nextIndex = 1
    /// The exchange the response being parsed answers (nil when unpaired): its request's end starts `wait`.
    private var responseExchange: HTTPExchange?
    /// An exchange whose response has ended and that nothing refers to any more: the next request's.
    private var spareExchange: HTTPExchange?
    private var pairingLost = false
    /// A server-side gap may have swallowed whole responses (flag `pairing_uncertain` on later responses).
    private var responsePairingUncertain = false
    private var finished = false
    /// Makes the stage that reads the connection after a `101 Switching Protocols` to `h2c` (RFC 7540 §3.2),
    /// given the upgrading exchange's index; without it (or when it returns nil) the bytes after the switch
    /// are tunnel bytes, as for any other upgrade.
    public var upgradeToHTTP2: ((_ request: UpgradedRequest) -> (any StreamAnalyzer)?)?
    /// The HTTP/1.1 request that upgraded to h2c: its exchange's index and identity, which stream 1's response
    /// carries.
    public typealias UpgradedRequest = (index: Int, method: String?, host: String, path: String, query: String?)
    /// The stage reading HTTP/2 after an h2c upgrade: both directions' bytes after the switch go to it.
    private var upgraded: (any StreamAnalyzer)?
    /// The request waiting when the server's first bytes arrived: if those bytes are a partial response
    /// (the server direction starts mid-message), that is the request it answers; nil: one before the capture.
    private var firstServerBytesAnswer: HTTPExchange?
    private var sawServerBytes = false
    /// The client stream offset acknowledged by the segment that carried the first byte of the response being
    /// parsed (`WireSpan.acknowledged`; -1 unknown): places responses after a client-side hole.
    private var responseStartAcknowledged: Int64 = -1

    /// `scratch` is shared by every content decoder this parser creates (one per coded body, one at a time).
    /// `decrypted`: the bytes come from a TLS stage, so records say so, and the default port of a host is 443.
    public init(
        info: TCPConnectionInfo, scratch: DecodingScratch = DecodingScratch(), limits: HTTPLimits = .init(),
        decrypted: Bool = false, emit: @escaping (inout MessageRecord) -> Void
    ) {
        self.info = info
        self.limits = limits
        self.emit = emit
        let (server, host) = Self.serverTexts(info, decrypted: decrypted)
        defaultHost = host
        // Each parser's first record made for it and moved in (a record copied is a retain per string).
        let client = info.client.description
        func first(_ kind: MessageRecord.Kind) -> MessageRecord {
            var record = MessageRecord(
                connection: info.id, index: 0, kind: kind, time: info.start, client: client, server: server, host: host,
                path: "")
            record.decrypted = decrypted
            return record
        }
        requests = HTTPMessageParser(isRequest: true, template: first(.request), limits: limits, scratch: scratch)
        responses = HTTPMessageParser(isRequest: false, template: first(.response), limits: limits, scratch: scratch)
    }

    /// Whether at least one HTTP start line was seen in either direction.
    public var isHTTP: Bool { requests.sawHTTP || responses.sawHTTP }

    /// The client sent the HTTP/2 connection preface, directly or after an h2c upgrade: HTTP/2 that this
    /// parser counts as non-HTTP (or tunnel) bytes without reading it.
    public var speaksHTTP2: Bool { requests.sawHTTP2Preface }

    /// Segment header bytes of `direction` not yet in any record: non-HTTP or tunnel stretches (final after `finish`).
    public func unattributedSegmentHeaderBytes(for direction: Direction) -> Int { parser(direction).headerShare }

    /// TLS record overhead (`WireSpan.framingBytes`) of `direction` not yet in any record (final after `finish`).
    public func unattributedFramingBytes(for direction: Direction) -> Int { parser(direction).framingShare }

    /// Where the bytes of `direction` went so far (final after `finish`).
    public func counts(for direction: Direction) -> HTTPByteCounts { parser(direction).counts }

    private func parser(_ direction: Direction) -> HTTPMessageParser {
        direction == .clientToServer ? requests : responses
    }

    // MARK: StreamAnalyzer

    public func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span segment: WireSpan) {
        guard !finished else { return }
        // The parser is passed straight from its `let` property: a local picked by direction was retained
        // and released around the whole call, once per segment.
        if direction == .clientToServer {
            receive(bytes, direction: direction, segment: segment, parser: requests)
        } else {
            receive(bytes, direction: direction, segment: segment, parser: responses)
        }
    }

    private func receive(
        _ bytes: UnsafeRawBufferPointer, direction: Direction, segment: WireSpan, parser: HTTPMessageParser
    ) {
        if direction == .serverToClient, !sawServerBytes {
            sawServerBytes = true
            if case .exchange(let exchange)? = pending.first { firstServerBytesAnswer = exchange }
        }
        // A direction that began inside a message ends it at a start line only when the other direction
        // says a message is due: a request was sent (responses), or the server answered or has not spoken
        // yet (requests). A non-HTTP protocol whose bytes happen to hold a start line stays non-HTTP.
        // Segment starts are tried too (a body need not end with a line end), on firmer evidence: the
        // other direction carried HTTP.
        // (Only while the direction hunts or may start to: before its first start line or gap.)
        if parser.huntTry || !parser.mayResync {
            if direction == .serverToClient {
                parser.huntMayEnd = requests.sawHTTP
                parser.segmentStart(huntingAllowed: requests.sawHTTP)
            } else {
                parser.huntMayEnd =
                    responses.sawHTTP || responses.counts.receivedBytes + responses.counts.missingBytes == 0
                parser.segmentStart(huntingAllowed: responses.sawHTTP)
            }
        }
        parser.streamBase = parser.counts.receivedBytes + parser.counts.missingBytes
        parser.counts.receivedBytes += bytes.count
        var offset = 0
        // The segment's header bytes are shared among the messages of this delivery in proportion to
        // their bytes; cumulative rounding keeps the shares summing to exactly `overheadBytes`.
        let overhead = segment.overheadBytes
        var allocated = 0
        func share(upTo end: Int) -> Int {
            guard overhead > 0, !bytes.isEmpty else { return 0 }
            // The whole delivery, as for most segments (a body's), takes no division (4 % of this function's
            // samples in perf on the API bench).
            let target = end == bytes.count ? overhead : overhead * end / bytes.count
            defer { allocated = target }
            return target - allocated
        }
        // The TLS record overhead of decrypted bytes, shared the same way (0 for cleartext: one test per call).
        let framing = segment.framingBytes
        var framed = 0
        func shareFraming(upTo end: Int) {
            guard framing > 0, !bytes.isEmpty else { return }
            let target = end == bytes.count ? framing : framing * end / bytes.count
            parser.framingShare += target - framed
            framed = target
        }
        while true {
            if let upgraded, parser.state == .tunnel {
                // After an h2c upgrade: the rest is the HTTP/2 stage's, with the overhead not shared out yet.
                if offset < bytes.count {
                    upgraded.receive(
                        UnsafeRawBufferPointer(rebasing: bytes[offset...]), direction: direction,
                        span: WireSpan(time: segment.time, overheadBytes: overhead - allocated, framingBytes: framing - framed))
                }
                return
            }
            if direction == .serverToClient, offset < bytes.count, parser.isAtMessageBoundary,
                case .exchange(let exchange)? = pending.first, exchange.isHTTP09
            {
                // RFC 1945 §4.1: the answer to a simple request is a bare entity body, ended by the close.
                parser.beginRawResponse(time: segment.time, position: parser.streamBase + offset)
                _ = pairResponse(final: true)
            }
            // A response may begin here: what its server had of the client's stream (only read at a mark).
            if direction == .serverToClient, parser.isAtMessageBoundary { responseStartAcknowledged = segment.acknowledged }
            switch parser.parse(bytes, from: &offset, time: segment.time) {
            case .needMore:
                parser.headerShare += share(upTo: bytes.count)
                shareFraming(upTo: bytes.count)
                // The message in progress has bytes up to here (HAR `send`/`receive`, `last_byte_time`).
                if parser.inMessage { parser.record.lastByteTime = segment.time }
                return
            case .head:
                parser.headerShare += share(upTo: offset)
                shareFraming(upTo: offset)
                parser.record.lastByteTime = segment.time
                headCompleted(direction)
            case .message:
                parser.headerShare += share(upTo: offset)
                shareFraming(upTo: offset)
                parser.record.lastByteTime = segment.time
                messageCompleted(direction)
            case .midMessage:
                // The partial message's bytes ended before this segment: its share so far is all it gets.
                midMessageEnded(direction)
            }
        }
    }

    public func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard !finished, byteCount > 0 else { return }
        if let upgraded, parser(direction).state == .tunnel {
            upgraded.skip(byteCount, direction: direction, time: time)
            return
        }
        let outcome = parser(direction).skip(byteCount)
        if let record = outcome.record { ended(record, needsIdentity: outcome.needsIdentity, direction) }
        // Whole requests may be inside the gap: responses can no longer be matched past this point.
        if direction == .clientToServer, outcome.lostBoundary, !pairingLost { pending.append(.lostRequests) }
        // Whole responses may be inside the gap: pairing goes on in order (most gaps are inside one body),
        // but every later response says its request may be the wrong one.
        if direction == .serverToClient, outcome.lostBoundary { responsePairingUncertain = true }
    }

    public func finish(time: CaptureTime) {
        guard !finished else { return }
        finished = true
        // A direction between messages (nearly always) has no record to return: `finishAtBoundary` spares
        // `finish`'s return of an optional record, ~200 instructions a direction.
        if requests.isAtMessageBoundary {
            requests.finishAtBoundary()
        } else if let (record, needsIdentity) = requests.finish() {
            ended(record, needsIdentity: needsIdentity, .clientToServer)
        }
        if responses.isAtMessageBoundary {
            responses.finishAtBoundary()
        } else if let (record, needsIdentity) = responses.finish() {
            ended(record, needsIdentity: needsIdentity, .serverToClient)
        }
        for case .exchange(let exchange) in pending.drain() { releaseHeldRequest(exchange) }
        upgraded?.finish(time: time)
    }

    // MARK: Messages

    private func headCompleted(_ direction: Direction) {
        if direction == .clientToServer {
            let exchange = openExchange()
            let framing: HTTPBodyFraming =
                exchange.isHTTP09 ? .none : .forRequest(
                    contentLength: HTTPHeadFields.contentLength(
                        value: requests.fields.contentLengthValue, list: requests.fields.contentLengthList),
                    transferEncoding: requests.fields.transferEncodingList, record: &requests.record)
            if requests.beginBody(framing) { messageCompleted(.clientToServer) }
            return
        }
        let status = responses.record.status ?? 200
        // An accepted h2c upgrade makes the exchange stream 1 (RFC 7540 §3.2): known before pairing releases
        // the held request record.
        if status == 101, !pairingLost, upgraded == nil, case .exchange(let waiting)? = pending.first,
            waiting.offersH2C,
            let stage = upgradeToHTTP2?(
                (index: waiting.index, method: waiting.method, host: waiting.host, path: waiting.path, query: waiting.query))
        {
            waiting.upgradedToHTTP2 = true
            upgraded = stage
            responses.record.streamID = 1
        }
        let exchange = pairResponse(final: status >= 200 || status == 101)
        // The request's method, which pairing gave the record (a final response takes it from the exchange).
        let method = (exchange != nil ? responses.record.method : nil) ?? "GET"
        let framing = HTTPBodyFraming.forResponse(
            status: status, requestMethod: method,
            contentLength: HTTPHeadFields.contentLength(
                value: responses.fields.contentLengthValue, list: responses.fields.contentLengthList),
            transferEncoding: responses.fields.transferEncodingList, record: &responses.record)
        // RFC 9110 §15.2.2 (101) and §9.3.6 (CONNECT 2xx): both directions leave HTTP after this head.
        let switching = status == 101 || ((200..<300).contains(status) && Self.isCONNECT(method))
        if switching { responses.record.flag(status == 101 ? .upgrade : .tunnel) }
        if status >= 200 || status == 101 { exchange?.switchDecided = true }
        if responses.beginBody(framing) { messageCompleted(.serverToClient) }
        if switching {
            responses.switchToTunnel()
            requests.switchToTunnel()
        } else if status >= 200, exchange?.wantsSwitch == true {
            requests.resumeAfterRefusedSwitch()
        }
    }

    /// The message in `direction`'s parser is complete: its record is emitted from where it is (passed
    /// `inout`, so not copied), or, for a request whose response has not started, held by its parser.
    private func messageCompleted(_ direction: Direction) {
        // The parser passed straight from its `let` property (a local picked by direction is retained).
        if direction == .clientToServer { Self.settleShares(requests) } else { Self.settleShares(responses) }
        guard direction == .clientToServer else {
            // Taken, not copied: a retain and a release less a message.
            if var exchange = responseExchange.take() {
                if let end = exchange.requestEnd {
                    responses.record.wait = end.duration(to: responses.record.time)
                } else {
                    // The request has not ended yet: the server answered before it was sent in full.
                    responses.record.wait = .zero
                }
                // The request waiting when the server's first bytes came, once out of the queue (its final response),
                // can no longer be what a partial response answers (`midMessageEnded` looks for it at the queue's
                // head, and it never comes back): let go of it, or the first exchange of every connection was never
                // spare and the second request made one (~3 600 allocations on the API bench capture).
                if firstServerBytesAnswer === exchange, !pending.startsWith(exchange) { firstServerBytesAnswer = nil }
                // Done with when nothing else refers to it (not queued, not the request being parsed).
                if isKnownUniquelyReferenced(&exchange) { spareExchange = exchange }
            }
            emitRecord(&responses.record)
            responses.recordIsFresh = false
            return
        }
        guard let exchange = currentRequest.take() else {
            preconditionFailure("request completed without an exchange (index \(requests.record.index))")
        }
        exchange.requestEnd = requests.record.lastByteTime
        if exchange.paired || exchange.unpairable {
            requests.record.paired = exchange.paired
            emitRecord(&requests.record)
            requests.recordIsFresh = false
        } else {
            // Held by the request parser (`releaseOldestHeld`). Exchanges are released in the order of `pending`
            // (responses answer in order; abandoning and finishing drain it in order) and requests complete in
            // that order too, so the oldest held record is the released exchange's.
            exchange.isHolding = true
            requests.holdRecord()
        }
        if exchange.wantsSwitch, !exchange.switchDecided { requests.awaitSwitch() }
    }

    /// The segment header and TLS framing shares of the completed message's bytes go onto its record.
    @inline(__always)
    private static func settleShares(_ parser: HTTPMessageParser) {
        parser.record.segmentHeaderBytes += parser.headerShare
        parser.headerShare = 0
        if parser.framingShare != 0 {
            parser.record.tlsOverheadBytes += parser.framingShare
            parser.framingShare = 0
        }
    }

    /// A message ended by a gap or the end of the stream, possibly before its head was complete.
    private func ended(_ record: consuming MessageRecord, needsIdentity: Bool, _ direction: Direction) {
        // Back into its parser, where identity is given and records are emitted (a rare path: one copy).
        let parser = parser(direction)
        parser.record = record
        parser.recordIsFresh = false
        if needsIdentity {
            // The parser's record is what was parsed; identity comes from its fields so far.
            if direction == .clientToServer {
                _ = openExchange()
            } else {
                _ = pairResponse(final: (parser.record.status ?? 200) >= 200 || parser.record.status == 101)
            }
        }
        messageCompleted(direction)
    }

    /// The first bytes of `direction` were the rest of a message whose start was not captured
    /// (`mid_message_start`): its record, with path `(unknown)`, is emitted now. A partial request is queued
    /// like any request; a partial response answers the request that was waiting when the server's first
    /// bytes arrived, if it is still the oldest waiting, else one from before the capture (unpaired).
    private func midMessageEnded(_ direction: Direction) {
        if direction == .clientToServer {
            _ = openExchange(unknownTarget: true)
        } else if let answered = firstServerBytesAnswer, case .exchange(let first)? = pending.first, first === answered {
            _ = pairResponse(final: true)
        } else {
            _ = pairResponse(final: true, pairing: false)
        }
        firstServerBytesAnswer = nil
        messageCompleted(direction)
    }

    /// Gives the request being parsed its index, host, path and query, and queues it for a response.
    /// `unknownTarget`: a request whose start line was not captured: host the server's, path `(unknown)`.
    private func openExchange(unknownTarget: Bool = false) -> HTTPExchange {
        var target: HTTPTarget
        if unknownTarget {
            target = HTTPTarget(host: defaultHost, path: "(unknown)", query: nil)
        } else if requests.fields.target?.isOriginForm == true {
            // `HTTPTarget.resolve` of an origin-form target, with its path and query moved out of the fields
            // (nothing reads them after this) instead of copied: two retains and releases less a request.
            target = HTTPTarget(host: requests.fields.normalizedHost ?? defaultHost, path: "", query: nil)
            swap(&target.path, &requests.fields.target!.text)
            swap(&target.query, &requests.fields.target!.query)
        } else {
            target = HTTPTarget.resolve(
                method: requests.record.method, target: requests.fields.target,
                normalizedHost: requests.fields.normalizedHost, defaultHost: defaultHost)
        }
        let isHTTP09 = requests.record.version.map(HTTPStartLine.isHTTP09) ?? false
        let wantsSwitch = Self.isCONNECT(requests.record.method) || requests.fields.upgrade != nil
        let exchange: HTTPExchange
        if let spare = spareExchange.take() {
            spare.reuse(
                index: nextIndex, method: requests.record.method, host: target.host, path: target.path,
                query: target.query, isHTTP09: isHTTP09, wantsSwitch: wantsSwitch)
            exchange = spare
        } else {
            exchange = HTTPExchange(
                index: nextIndex, method: requests.record.method, host: target.host, path: target.path,
                query: target.query, isHTTP09: isHTTP09, wantsSwitch: wantsSwitch)
        }
        nextIndex += 1
        if let upgrade = requests.fields.upgrade, HTTPConnectionParser.offersH2C(upgrade) { exchange.offersH2C = true }
        requests.record.index = exchange.index
        exchange.startOffset = Int64(requests.record.streamOffset)
        // The record takes the target's strings by swapping (the exchange holds copies): no second retain.
        swap(&requests.record.host, &target.host)
        swap(&requests.record.path, &target.path)
        swap(&requests.record.query, &target.query)
        currentRequest = exchange
        if pairingLost || unknownTarget {
            // A partial request's response may have come before it was recognised: it pairs with none.
            exchange.unpairable = true
        } else {
            pending.append(.exchange(exchange))
            if pending.count > limits.maxPendingRequests { abandonPairing() }
        }
        return exchange
    }

    /// Matches the response being parsed with the oldest waiting request (`final` removes it from the queue)
    /// and copies that request's identity into it; an unmatched response gets path `(unknown)`.
    /// `pairing` false: the response answers no request we saw (unpaired, path `(unknown)`).
    private func pairResponse(final: Bool, pairing: Bool = true) -> HTTPExchange? {
        var lostRequest = false
        if pairing, !pairingLost, case .lostRequests? = pending.first {
            switch placeAfterClientHole() {
            case .lostRequest: lostRequest = true
            case .nextRequest: pending.removeFirst()
            case .unknown: abandonPairing()
            }
        }
        if lostRequest {
            responses.record.flag(.requestLost)
        } else if pairing, !pairingLost, case .exchange(let exchange)? = pending.first {
            exchange.paired = true
            responses.record.index = exchange.index
            if final {
                pending.removeFirst()
                // Nothing reads the exchange's identity once its final response has it: moved, not copied (a
                // retain now and a release when the exchange goes, per string). Interim responses copy it.
                swap(&responses.record.method, &exchange.method)
                swap(&responses.record.host, &exchange.host)
                swap(&responses.record.path, &exchange.path)
                swap(&responses.record.query, &exchange.query)
            } else {
                responses.record.method = exchange.method
                responses.record.host = exchange.host
                responses.record.path = exchange.path
                responses.record.query = exchange.query
            }
            responses.record.paired = true
            responseExchange = exchange
            if responsePairingUncertain { responses.record.flag(.pairingUncertain) }
            releaseHeldRequest(exchange)
            return exchange
        }
        responseExchange = nil
        responses.record.index = nextIndex
        if final { nextIndex += 1 }
        responses.record.host = defaultHost
        responses.record.path = "(unknown)"
        responses.record.paired = false
        return nil
    }

    /// Where the response being parsed belongs when a client-side hole mark heads the queue.
    private enum HolePlacement { case lostRequest, nextRequest, unknown }

    private func placeAfterClientHole() -> HolePlacement {
        let acknowledged = responseStartAcknowledged
        guard acknowledged >= 0 else { return .unknown }
        switch pending.second {
        case .exchange(let next)?:
            guard next.startOffset >= 0 else { return .unknown }
            // The server had none of the next captured request: it answers one that the hole took. A response
            // to that request needs its bytes, so the ACK is past its first byte (early responses too).
            return acknowledged <= next.startOffset ? .lostRequest : .nextRequest
        case .lostRequests?, nil:
            // No captured request after the hole yet: whatever it answers was lost.
            return .lostRequest
        }
    }

    /// Stops pairing for the rest of the connection; waiting requests are emitted unpaired.
    private func abandonPairing() {
        pairingLost = true
        for case .exchange(let exchange) in pending.drain() {
            exchange.unpairable = true
            releaseHeldRequest(exchange)
        }
    }

    private func releaseHeldRequest(_ exchange: HTTPExchange) {
        guard exchange.isHolding else { return }
        exchange.isHolding = false
        requests.releaseOldestHeld { held in
            assert(held.index == exchange.index, "held requests are released in order")
            held.paired = exchange.paired
            if exchange.upgradedToHTTP2 { held.streamID = 1 }
            emitRecord(&held)
        }
    }

    /// `inout` only so that a record stored in a parser is passed on without a copy of it.
    private func emitRecord(_ record: inout MessageRecord) {
        // Read into a local first: with the parser's counts being modified around it, the getter was given a
        // copy of the whole record (550 bytes) for every message.
        let bytes = record.transferBytes
        parser(record.kind == .request ? .clientToServer : .serverToClient).counts.messageBytes += bytes
        emit(&record)
    }

    /// `method == "CONNECT"`, length first: `==` calls the out-of-line string comparison whenever the bits
    /// differ, i.e. for nearly every method. A method is a token (ASCII), so only 7 bytes can be equal.
    @inline(__always)
    static func isCONNECT(_ method: String?) -> Bool {
        guard let method, method.utf8.count == 7 else { return false }
        return method == "CONNECT"
    }

    /// `Upgrade: h2c` or a list holding it (`Upgrade: websocket, h2c`), any case.
    static func offersH2C(_ field: String) -> Bool {
        field.split(separator: ",").contains { token in
            token.filter { $0 != " " && $0 != "\t" }.lowercased() == "h2c"
        }
    }
}

// MARK: Reuse

extension HTTPConnectionParser {
    /// The server's text (`a.b.c.d:port`, `[v6]:port`) and the host of messages without `Host`.
    fileprivate static func serverTexts(_ info: TCPConnectionInfo, decrypted: Bool) -> (server: String, host: String) {
        let server = info.server.description
        guard info.server.port == (decrypted ? 443 : 80) else {
            // The server's own text: one string less per connection.
            return (server, server)
        }
        let address = info.server.address
        return (server, address.isIPv6 ? "[\(address)]" : address.description)
    }

    /// Whether `reuse` may take this parser: it finished, and no HTTP/2 stage took over after an h2c upgrade
    /// (that stage and its tables go with the parser rather than waiting in a pool).
    package var isReusable: Bool { finished && upgraded == nil }

    /// The connection is over and the parser goes back to its pool: lets go of everything of the connection
    /// that holds memory (records, exchanges, grown buffers), so that an idle pooled parser stays small.
    package func retire() {
        precondition(isReusable, "retire of a parser that did not finish")
        requests.retire()
        responses.retire()
        pending.retire()
        currentRequest = nil
        responseExchange = nil
        firstServerBytesAnswer = nil
    }

    /// Makes this retired parser as one just made by `init` for `info` (with the same `scratch`, `limits`,
    /// `emit` and `upgradeToHTTP2`, which its owner points at the new connection): a pool of parsers per
    /// shard saves the two message parsers' allocation and teardown for every connection (~8 000 instructions
    /// a connection on API captures). With `retire`, every stored property but those is set back; a property
    /// added to this class must be reset in one of them too (`HTTPParserReuseTests`).
    package func reuse(info: TCPConnectionInfo, decrypted: Bool) {
        precondition(isReusable, "reuse of a parser that did not finish")
        // Consecutive connections of a pool's parser often go to the same server: its texts are kept.
        let server: String
        let host: String
        if info.server == self.info.server, decrypted == responses.decrypted {
            server = responses.record.server
            host = defaultHost
        } else {
            (server, host) = Self.serverTexts(info, decrypted: decrypted)
        }
        let client = info.client.description
        self.info = info
        defaultHost = host
        requests.reuse(
            connection: info.id, client: client, server: server, host: host, time: info.start, decrypted: decrypted)
        responses.reuse(
            connection: info.id, client: client, server: server, host: host, time: info.start, decrypted: decrypted)
        nextIndex = 1
        pairingLost = false
        responsePairingUncertain = false
        finished = false
        sawServerBytes = false
        responseStartAcknowledged = -1
        // `spareExchange` is kept: `reuse` of an exchange sets all of it.
    }
}
