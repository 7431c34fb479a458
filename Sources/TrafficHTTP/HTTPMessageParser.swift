import TrafficCapture
import TrafficCodecs
import TrafficSessions

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One direction's HTTP/1 parser: an explicit state machine (after llhttp) fed in-order bytes, returning
/// what it found (after NIO's decoders).
///
/// The caller owns the decisions that need the other direction: after `.head` it must call `beginBody`
/// with the framing; it switches the direction to a tunnel or raw HTTP/0.9 body. Every received byte
/// ends up in exactly one place: the current record's line/header/body bytes, `nonHTTPBytes` or
/// `tunnelBytes` (see `HTTPByteCounts`).
final class HTTPMessageParser {
    enum State {
        /// At a line start where a start line is expected (a message boundary).
        case startLine
        case headers
        case fixedBody
        case chunkedBody
        /// Close-delimited body, and the raw HTTP/0.9 response.
        case closeBody
        case tunnel
        /// The direction never looked like HTTP; absorbs everything until a gap.
        case nonHTTP
        /// The direction's first line was no start line: it may have begun inside a message (the capture
        /// started mid-message). Like `resync`, skipping to the next line start, where `.startLine` tries
        /// a start line with `huntTry` set; the bytes before one are non-HTTP (`huntedBytes`) until a start
        /// line is found, when they become the partial message's record (`takeMidMessageRecord`).
        case hunting
        /// Lost sync: discarding up to the next line start, where a start line is tried again.
        case resync
        /// After a request that asked to switch protocols (Upgrade, CONNECT): bytes are held back, only
        /// counted, until the response says whether they are tunnel bytes.
        case awaitingSwitch
    }

    /// What `parse` stopped for.
    enum Event {
        /// All input consumed.
        case needMore
        /// The head of the current message is complete: call `beginBody`.
        case head
        /// The current message is complete: its record is `record`, until the next message starts (an
        /// event carrying the record would copy it on every `parse` return, hundreds of bytes per segment).
        case message
        /// A start line ended `.hunting`: the partial message before it is `record` (see
        /// `takeMidMessageRecord`); emit it and call `parse` again, which starts the new message.
        case midMessage
    }

    let isRequest: Bool
    let limits: HTTPLimits
    let scratch: DecodingScratch
    /// What a fresh record of this direction has besides its identity (connection, client, server, kind, which
    /// every record of the parser shares): no template record is kept, whose copies and destruction cost more
    /// than a connection's other setup, and which was copied again for every message it restarted.
    /// Variables only for `reuse` (a pooled parser takes the next connection's identity).
    private var defaultHost: String
    private var startTime: CaptureTime
    private(set) var decrypted: Bool

    var state = State.startLine
    var counts = HTTPByteCounts()
    /// Whether this direction ever carried a start line.
    private(set) var sawHTTP = false
    /// The client opened with the HTTP/2 connection preface (RFC 9113 §3.4), directly (prior knowledge)
    /// or as the first bytes after a `101 Switching Protocols` (h2c upgrade): this parser reads none of it.
    private(set) var sawHTTP2Preface = false
    /// Whether a failed start line leads to resynchronisation (true once HTTP was seen or after a gap)
    /// rather than declaring the direction non-HTTP.
    var mayResync = false
    /// In `.hunting`: the bytes since the direction's start (its partial first message, if HTTP), counted
    /// as non-HTTP so far; the capture times of the first and last of them.
    var huntedBytes = 0
    private var huntFirstTime = CaptureTime.zero
    private var huntLastTime = CaptureTime.zero
    private var huntStart = 0
    /// In `.startLine`: the line is tried at a line start while hunting (`huntedBytes` come before it).
    var huntTry = false
    /// Set by the connection parser before each `parse`: whether a start line may end hunting now (the
    /// other direction says a message is due; see `HTTPConnectionParser`).
    var huntMayEnd = false
    /// The start line that ended hunting, begun on the next `parse` (after `.midMessage`). Boxed: `parse`
    /// tests it on every call, and an optional 96-byte tuple was copied out twice to be tested.
    private var heldStart: HeldStartLine?

    // The line being assembled across `receive` calls: kept bytes (at most maxLineBytes) and full length.
    private var line: [UInt8] = []
    private(set) var lineLength = 0
    private var lineTime = CaptureTime.zero
    private var lineSniffed = false
    /// Stream position of `bytes[0]` in the current `parse` call, and of the current line's first byte.
    var streamBase = 0
    private var lineStart = 0
    /// Segment header bytes of bytes consumed since the last record was completed (see `segmentHeaderBytes`).
    var headerShare = 0
    /// The same for TLS record overhead (`WireSpan.framingBytes`), into `tlsOverheadBytes`.
    var framingShare = 0

    // The message being parsed.
    var record: MessageRecord
    /// `record` is a fresh one (`takeRecord` left one): the next message need not restart it.
    /// Whoever writes `record` outside a message, or leaves a finished message in it, must clear it.
    var recordIsFresh = true
    var fields = HTTPHeadFields()
    var inMessage = false
    /// Whether `.head` was returned for the current message (the caller has given it an identity).
    var headDelivered = false
    var remaining = 0
    var chunked = ChunkedBodyParser()
    var decoding = HTTPBodyDecoding.identity
    private var lastFieldIsCookie = false
    /// The last value made of each field whose value a keep-alive connection repeats message after message
    /// (`Host`, `Content-Type`, the codings): when the bytes are the same, the same `String` is taken again,
    /// with no allocation and no UTF-8 validation, and records that share it compare by storage when grouped.
    private var recentHost: String?
    private var recentNormalizedHost: String?
    private var recentContentType: String?
    private var recentContentEncoding: String?
    private var recentTransferEncoding: String?
    /// The last `Content-Encoding` list that had codings to apply, and those codings (`contentDecoding`).
    var recentCodingList: String?
    var recentCodings: [ContentCoding] = []
    /// A line of the current head did not fit in `maxKeptHeadBytes`: no later line is kept either, so the
    /// kept head is always a prefix of the head as sent.
    private var headKeptInFull = true
    /// Set when the other side switched protocols while this side was inside a message.
    var tunnelAfterMessage = false
    var heldSwitchBytes = 0

    /// `template`: the first record, with the parser's identity, start time, default host and `decrypted`.
    init(isRequest: Bool, template: consuming MessageRecord, limits: HTTPLimits, scratch: DecodingScratch) {
        self.isRequest = isRequest
        defaultHost = template.host
        startTime = template.time
        decrypted = template.decrypted
        self.limits = limits
        self.scratch = scratch
        self.record = template
        // No line buffer up front: most lines are whole in one segment and never use it, and two
        // allocations per connection are measurable with tens of thousands of connections.
    }

    private func restartRecord() {
        if recordHeld { evictHeldRecord() }
        record.restart(time: startTime, host: defaultHost, decrypted: decrypted)
    }

    // Complete requests waiting for their response to start (`HTTPConnectionParser`): the newest stays in
    // `record`, where it was parsed, until this parser needs the record for the next message; only then (when
    // requests are pipelined) does it move into `held`. Without pipelining a request is emitted from where
    // it was parsed: three 550-byte moves a request less than swapping it out at once.
    private var held = HeldRequestRecords()
    /// `record` is a complete request waiting (`holdRecord`); it is newer than every record in `held`.
    private(set) var recordHeld = false

    /// The completed message in `record` waits for `releaseOldestHeld`.
    func holdRecord() {
        precondition(!recordHeld, "one held record in place at a time")
        recordHeld = true
    }

    private func evictHeldRecord() {
        recordHeld = false
        held.hold(from: self)
    }

    /// Calls `body` with the oldest held record, which is then no longer held.
    func releaseOldestHeld(_ body: (inout MessageRecord) -> Void) {
        if held.isEmpty {
            guard recordHeld else { return }
            recordHeld = false
            body(&record)
        } else {
            held.releaseOldest(body)
        }
    }

    /// A fresh record with this parser's identity.
    func freshRecord() -> MessageRecord {
        var fresh = MessageRecord(
            connection: record.connection, index: 0, kind: record.kind, time: startTime, client: record.client,
            server: record.server, host: defaultHost, path: "")
        fresh.decrypted = decrypted
        return fresh
    }

    /// Whether the next byte would start a new message (nothing of it buffered yet).
    var isAtMessageBoundary: Bool { state == .startLine && lineLength == 0 }

    /// Parses from `bytes[offset...]`, advancing `offset`, until input runs out or an event needs the caller.
    func parse(_ bytes: UnsafeRawBufferPointer, from offset: inout Int, time: CaptureTime) -> Event {
        if heldStart != nil, beginHeldStart() { return .head }  // HTTP/0.9
        while offset < bytes.count {
            switch state {
            case .startLine:
                switch startLineStep(bytes, &offset, time: time) {
                case .head: return .head
                case .midMessage: return .midMessage
                default: break
                }
            case .headers:
                if headersStep(bytes, &offset) { return .head }
            case .fixedBody, .chunkedBody, .closeBody:
                if bodyStep(bytes, &offset) { return .message }
            case .tunnel:
                if isRequest, counts.tunnelBytes == 0, HTTPBytes.isHTTP2Preface(bytes, from: offset) {
                    sawHTTP2Preface = true
                }
                counts.tunnelBytes += bytes.count - offset
                offset = bytes.count
            case .nonHTTP:
                counts.nonHTTPBytes += bytes.count - offset
                offset = bytes.count
            case .hunting:
                // While nothing can end hunting, line starts need not be found: absorbed like `nonHTTP`.
                let end =
                    huntMayEnd ? HTTPBytes.firstLF(in: bytes, from: offset).map { $0 + 1 } ?? bytes.count : bytes.count
                counts.nonHTTPBytes += end - offset
                huntedBytes += end - offset
                huntLastTime = time
                offset = end
                if end < bytes.count || bytes[end - 1] == HTTPBytes.lf { state = .startLine }
            case .resync:
                if let lf = HTTPBytes.firstLF(in: bytes, from: offset) {
                    counts.nonHTTPBytes += lf + 1 - offset
                    offset = lf + 1
                    state = .startLine
                } else {
                    counts.nonHTTPBytes += bytes.count - offset
                    offset = bytes.count
                }
            case .awaitingSwitch:
                heldSwitchBytes += bytes.count - offset
                offset = bytes.count
            }
        }
        return .needMore
    }

    /// Begins the message of the start line that ended hunting; true when it is an HTTP/0.9 request (its
    /// head is complete).
    private func beginHeldStart() -> Bool {
        guard let held = heldStart else { return false }
        heldStart = nil
        beginMessage(held.line, lineBytes: held.total)
        if !held.kept.isEmpty { held.kept.withUnsafeBytes { keepHeadLine($0) } }
        return state == .startLine
    }

    // MARK: Lines

    /// Keeps the part of `bytes[range]` that fits under the line limit; counts all of it.
    private func appendToLine(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        let room = max(0, limits.maxLineBytes - line.count)
        if room > 0 {
            line.append(
                contentsOf: UnsafeRawBufferPointer(
                    rebasing: bytes[range.lowerBound..<(range.lowerBound + min(room, range.count))]))
        }
        lineLength += range.count
    }

    func resetLine() {
        // Most lines never touch the buffer (they are whole in one segment); removeAll is not free.
        if !line.isEmpty { line.removeAll(keepingCapacity: true) }
        lineLength = 0
        lineSniffed = false
    }

    /// Calls `body` with the complete line ending at the LF at `lf` (line ending removed), its total length
    /// including the line ending, and whether it exceeded `maxLineBytes` (then only a prefix is passed).
    private func withCompleteLine<R>(
        _ bytes: UnsafeRawBufferPointer, from offset: Int, lf: Int,
        _ body: (UnsafeRawBufferPointer, Int, Bool) -> R
    ) -> R {
        let total = lineLength + (lf + 1 - offset)
        let overlong = total > limits.maxLineBytes
        if lineLength == 0 {
            // The common case: the whole line is in this segment; no copy.
            var end = lf
            if end > offset, bytes[end - 1] == HTTPBytes.cr { end -= 1 }
            return body(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), total, overlong)
        }
        appendToLine(bytes, offset..<lf)
        return line.withUnsafeBytes { kept in
            var end = kept.count
            if !overlong, end > 0, kept[end - 1] == HTTPBytes.cr { end -= 1 }
            return body(UnsafeRawBufferPointer(rebasing: kept[0..<end]), total, overlong)
        }
    }

    // MARK: Start line

    /// Returns `.head` when an HTTP/0.9 request line completed a message head by itself, `.midMessage` when
    /// a start line ended hunting (it is begun on the next call), else `.needMore`.
    private func startLineStep(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, time: CaptureTime) -> Event {
        if lineLength == 0 {
            lineTime = time
            lineStart = streamBase + offset
        }
        guard let lf = HTTPBytes.firstLF(in: bytes, from: offset) else {
            appendToLine(bytes, offset..<bytes.count)
            offset = bytes.count
            // A lone CR may be the start of an empty line (ignored, RFC 9112 §2.2): not a verdict yet.
            if !lineSniffed, !(lineLength == 1 && line.first == HTTPBytes.cr) {
                let verdict = line.withUnsafeBytes {
                    HTTPStartLine.sniff($0, request: isRequest, maxMethodBytes: limits.maxMethodBytes)
                }
                if verdict == .rejected { return abandonPartialLine() }
                lineSniffed = verdict == .viable
            }
            if lineLength > limits.maxLineBytes { return abandonPartialLine() }
            return .needMore
        }
        if lineLength == 0, !huntTry, let base = bytes.baseAddress {
            // The common case: a whole start line in this segment, not hunting. Parsed in place, with no
            // closure, tuple or kept copy (the line stays readable in `bytes` after the record restarts), and
            // no `resetLine` (an empty line buffer stays empty). A line in the buffer, or while hunting, takes
            // the general path below.
            let total = lf &+ 1 &- offset
            var end = lf
            if end > offset, base.load(fromByteOffset: end &- 1, as: UInt8.self) == HTTPBytes.cr { end &-= 1 }
            let content = UnsafeRawBufferPointer(start: base + offset, count: end &- offset)
            offset = lf &+ 1
            guard total <= limits.maxLineBytes,
                let start = HTTPStartLine.parse(content, request: isRequest, maxMethodBytes: limits.maxMethodBytes)
            else {
                if isRequest, !sawHTTP, HTTPBytes.isHTTP2Preface(content, from: 0) { sawHTTP2Preface = true }
                return noStartLine(total: total, empty: content.isEmpty, time: time)
            }
            beginMessage(consume start, lineBytes: total)
            if limits.maxKeptHeadBytes > 0 { keepHeadLine(content) }
            return state == .startLine ? .head : .needMore  // HTTP/0.9: no header section
        }
        let (parsed, total, empty, kept) = withCompleteLine(bytes, from: offset, lf: lf) { content, total, overlong in
            let start =
                overlong
                ? nil : HTTPStartLine.parse(content, request: isRequest, maxMethodBytes: limits.maxMethodBytes)
            if start == nil, isRequest, !sawHTTP, HTTPBytes.isHTTP2Preface(content, from: 0) { sawHTTP2Preface = true }
            // The start line for HAR: copied out only when heads are kept (the record restarts below).
            let kept: [UInt8] = start != nil && limits.maxKeptHeadBytes > 0 ? Array(content) : []
            return (start, total, content.isEmpty, kept)
        }
        offset = lf + 1
        resetLine()
        guard let parsed, !huntTry || huntMayEnd else { return noStartLine(total: total, empty: empty, time: time) }
        if huntTry {
            huntTry = false
            heldStart = HeldStartLine(line: parsed, total: total, kept: kept)
            takeMidMessageRecord()
            return .midMessage
        }
        beginMessage(consume parsed, lineBytes: total)
        if !kept.isEmpty { kept.withUnsafeBytes { keepHeadLine($0) } }
        return state == .startLine ? .head : .needMore  // HTTP/0.9: no header section
    }

    /// A complete line of `total` bytes where a start line was expected is none (or may not end hunting yet).
    private func noStartLine(total: Int, empty: Bool, time: CaptureTime) -> Event {
        // RFC 9112 §2.2: empty lines before a start line are ignored; they belong to no message.
        counts.nonHTTPBytes += total
        if huntTry {
            // Still hunting: the next line is tried too.
            huntedBytes += total
            huntLastTime = time
        } else if !empty, !mayResync {
            startHunting(total, inLine: false)
        }
        return .needMore
    }

    /// A partial line that cannot be a start line: its bytes are not HTTP; skip to the next line.
    private func abandonPartialLine() -> Event {
        counts.nonHTTPBytes += lineLength
        let length = lineLength
        resetLine()
        if huntTry {
            huntedBytes += length
            state = .hunting
        } else if mayResync {
            state = .resync
        } else {
            startHunting(length, inLine: true)
        }
        return .needMore
    }

    /// The direction's first line (`count` bytes so far, already counted non-HTTP) is no start line:
    /// `inLine`, skip to its end first.
    private func startHunting(_ count: Int, inLine: Bool) {
        state = inLine ? .hunting : .startLine
        huntTry = true
        huntedBytes = count
        huntFirstTime = lineTime
        huntLastTime = lineTime
        huntStart = lineStart
    }

    /// A `receive` starts, which is likely a segment start (tshark looks for messages there): while
    /// hunting inside a line, try a start line here if `huntingAllowed`. While `huntMayEnd` is false no
    /// line can end hunting: the receive is absorbed whole (a non-HTTP stream costs no line search).
    func segmentStart(huntingAllowed: Bool) {
        guard huntTry else { return }
        if !huntMayEnd, state == .startLine, lineLength == 0 {
            state = .hunting
        } else if huntingAllowed, state == .hunting {
            state = .startLine
        }
    }

    /// Ends `.hunting`: the hunted bytes were the rest of a message whose start was not captured. They
    /// become `record` (body bytes of unknown framing, nothing known missing, complete=false, flag
    /// `mid_message_start`; the caller gives it an identity and emits it) and the direction continues at a
    /// message boundary, resynchronising at line starts if the next line is no start line.
    func takeMidMessageRecord() {
        precondition(huntedBytes > 0, "no partial message: state \(state)")
        if !recordIsFresh { restartRecord() }
        recordIsFresh = false
        record.time = huntFirstTime
        record.lastByteTime = huntLastTime
        record.streamOffset = huntStart
        record.bodyBytes = huntedBytes
        record.encodedBodyBytes = huntedBytes
        record.decodedBodyBytes = nil
        record.complete = false
        record.flag(.midMessageStart)
        counts.nonHTTPBytes -= huntedBytes
        huntedBytes = 0
        fields.clear()
        inMessage = false
        headDelivered = true
        sawHTTP = true
        mayResync = true
        if state == .hunting { state = .startLine }
    }

    /// `start` is consumed: its strings move into the record and the fields (a start line left to destroy
    /// afterwards went through generic value witnesses, ~150 instructions a message).
    private func beginMessage(_ start: consuming HTTPStartLine, lineBytes: Int) {
        if !recordIsFresh {
            // The version, and a request's method, are assigned below.
            if recordHeld { evictHeldRecord() }
            record.restartForStartLine(time: startTime, host: defaultHost, decrypted: decrypted, keepingMethod: isRequest)
        }
        recordIsFresh = false
        record.time = lineTime
        record.streamOffset = lineStart
        record.lineBytes = lineBytes
        fields.clear(keepingTarget: isRequest)  // a request's target is assigned below
        inMessage = true
        headDelivered = false
        sawHTTP = true
        mayResync = true
        lastFieldIsCookie = false
        headKeptInFull = true
        // Already identity after every message but a failed one: assigning destroys the old value through
        // its outlined value witness.
        if case .identity = decoding {} else { decoding = .identity }
        state = .headers
        if start.isNonstandard { record.flag(.nonstandardStartLine) }
        switch consume start {
        case .request(let method, let target, let version, _):
            record.method = method
            if HTTPStartLine.isHTTP09(version) {
                record.flag(.http09)
                state = .startLine
            }
            record.version = version
            fields.target = target
        case .status(let version, let code, _):
            record.version = version
            record.status = code
        }
    }

    /// Starts the raw response to an HTTP/0.9 request: no head, everything until close is body.
    func beginRawResponse(time: CaptureTime, position: Int) {
        if !recordIsFresh { restartRecord() }
        recordIsFresh = false
        record.time = time
        record.streamOffset = position
        record.version = HTTPStartLine.http09
        record.flag(.http09)
        huntTry = false
        fields.clear()
        inMessage = true
        headDelivered = true
        sawHTTP = true
        mayResync = true
        decoding = .identity
        state = .closeBody
    }

    // MARK: Field lines

    /// Returns true at the empty line that ends the head.
    private func headersStep(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Bool {
        if lineLength > 0 {
            // A line begun in an earlier segment: completed from the line buffer.
            guard let lf = HTTPBytes.firstLF(in: bytes, from: offset) else {
                appendToLine(bytes, offset..<bytes.count)
                offset = bytes.count
                return false
            }
            let ended = withCompleteLine(bytes, from: offset, lf: lf) { content, total, overlong in
                fieldLine(content, total: total, overlong: overlong, readable: content.count)
            }
            offset = lf + 1
            resetLine()
            if ended { return true }
        }
        // From here every line starts in this segment with the line buffer empty (`lineLength` 0, and
        // `lineSniffed` is only ever set before a start line), so a complete line needs no `resetLine`;
        // the position is kept in a local and stored once.
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        let maxLineBytes = limits.maxLineBytes
        var at = offset
        while at < count {
            guard let lf = HTTPBytes.firstLF(in: bytes, from: at) else {
                appendToLine(bytes, at..<count)
                offset = count
                return false
            }
            let total = lf &+ 1 &- at
            var end = lf
            if end > at, base.load(fromByteOffset: end &- 1, as: UInt8.self) == HTTPBytes.cr { end &-= 1 }
            let ended = fieldLine(
                UnsafeRawBufferPointer(start: base + at, count: end &- at), total: total,
                overlong: total > maxLineBytes, readable: count &- at)
            at = lf &+ 1
            if ended {
                offset = at
                return true
            }
        }
        offset = at
        return false
    }

    /// Appends one line of the head to the record's `head` (HAR), with an LF, while the limit allows.
    private func keepHeadLine(_ content: UnsafeRawBufferPointer) {
        guard headKeptInFull, record.head.count + content.count < limits.maxKeptHeadBytes else {
            if headKeptInFull { record.flag(.headerLimit) }
            headKeptInFull = false
            return
        }
        record.head.append(contentsOf: content)
        record.head.append(HTTPBytes.lf)
    }

    /// Accounts one complete field line; returns true for the empty line ending the head. Inlined into
    /// `headersStep` (its only caller): a call per field line was a tenth of its cost.
    /// `readable`: the bytes that may be read from `content`'s start (at least `content.count`), for the colon
    /// search.
    @inline(__always)
    private func fieldLine(_ content: UnsafeRawBufferPointer, total: Int, overlong: Bool, readable: Int) -> Bool {
        record.headerBytes &+= total
        if content.isEmpty { return true }
        if limits.maxKeptHeadBytes > 0 {
            // An overlong line arrives as a prefix: it and every later line are left out, as past the limit.
            if overlong { headKeptInFull = false } else { keepHeadLine(content) }  // overlong: flagged below
        }
        if overlong { record.flag(.headerLimit) }
        if HTTPBytes.isWhitespace(content[0]) {
            // obs-fold (RFC 9112 §5.2): a continuation of the previous field line, Cookie lines included.
            guard fields.fieldCount > 0 else {
                record.flag(.malformedHeader)
                return false
            }
            record.flag(.obsFold)
            if lastFieldIsCookie { record.cookieBytes += total }
            if !overlong, fields.fieldCount <= limits.maxHeaderFields {
                fields.extend(with: HTTPBytes.string(HTTPBytes.trimmed(content)))
            }
            return false
        }
        fields.fieldCount &+= 1  // at most one per line: never near overflow
        guard let colon = HTTPBytes.firstColon(in: content, readable: readable), colon > 0 else {
            record.flag(.malformedHeader)
            lastFieldIsCookie = false
            fields.lastName = nil
            return false
        }
        let name = HTTPHeadFields.Name.classify(UnsafeRawBufferPointer(rebasing: content[0..<colon]))
        lastFieldIsCookie = name == .cookie
        if lastFieldIsCookie { record.cookieBytes &+= total }
        if fields.fieldCount > limits.maxHeaderFields { record.flag(.headerLimit) }
        guard name != .other, name != .cookie, !overlong, fields.fieldCount <= limits.maxHeaderFields else {
            fields.lastName = nil
            return false
        }
        let value = HTTPBytes.trimmed(UnsafeRawBufferPointer(rebasing: content[(colon + 1)...]))
        switch name {
        case .host:
            if fields.host == nil {
                let (host, normalized) = hostValue(value)
                fields.storeHost(host, normalized: normalized)
            } else {
                fields.store(.host, value: "")  // ignored: only the first `Host` counts (marks the fold target)
            }
        case .contentLength: fields.storeContentLength(value)
        case .contentType: fields.store(name, value: Self.reused(&recentContentType, value))
        case .contentEncoding: fields.store(name, value: Self.reused(&recentContentEncoding, value))
        case .transferEncoding: fields.store(name, value: Self.reused(&recentTransferEncoding, value))
        default: fields.store(name, value: HTTPBytes.string(value))
        }
        return false
    }

    /// The `Host` value of `bytes` and its normalised form: the last ones again when the bytes are the same.
    private func hostValue(_ bytes: UnsafeRawBufferPointer) -> (String, String?) {
        if let known = recentHost, Self.sameBytes(known, bytes) { return (known, recentNormalizedHost) }
        let made = HTTPBytes.string(bytes)
        recentHost = made
        recentNormalizedHost = made.isEmpty ? nil : HTTPTarget.normalizedHost(made, defaultPort: "80")
        return (made, recentNormalizedHost)
    }

    /// Whether `known` holds exactly `bytes`.
    @inline(__always)
    private static func sameBytes(_ known: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        known.utf8.count == bytes.count
            && known.utf8.withContiguousStorageIfAvailable({
                memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            })
                == true
    }

    /// `cached` when it holds exactly `bytes` (then it is valid UTF-8 as it stands); else a new string, which
    /// becomes `cached`.
    @inline(__always)
    private static func reused(_ cached: inout String?, _ bytes: UnsafeRawBufferPointer) -> String {
        if let known = cached, sameBytes(known, bytes) { return known }
        let made = HTTPBytes.string(bytes)
        cached = made
        return made
    }
}

// MARK: Reuse

extension HTTPMessageParser {
    /// `finish` of a direction at a message boundary (`isAtMessageBoundary`), which returns nothing: its
    /// `.startLine` case (no partial line to count as non-HTTP).
    func finishAtBoundary() {
        precondition(isAtMessageBoundary, "finishAtBoundary inside a message")
        resetLine()
        state = .nonHTTP
        huntTry = false
    }

    /// A line buffer that grew past this is dropped when the parser is retired, not kept: a pooled parser
    /// holds at most this much for the line (a field line that spans segments rarely needs more), so pooled
    /// parsers cost memory bounded by the pool's size, whatever the connections before them sent.
    static let keptLineCapacity = 4096

    /// A `recent…` value longer than this is not kept for the next connection (a field line may be 64 KiB).
    static let keptRecentBytes = 256

    /// The connection is over and the parser waits in a pool (`HTTPConnectionParser.retire`): lets go of
    /// whatever of it holds memory (the record's strings and kept head or body, the fields, a decoder, a
    /// grown line buffer, long cached values); `reuse` does the rest.
    func retire() {
        if heldStart != nil { heldStart = nil }
        if line.capacity > Self.keptLineCapacity { line = [] } else if !line.isEmpty { line.removeAll(keepingCapacity: true) }
        precondition(!recordHeld, "retire of a parser that still holds a request")
        held.retire(host: defaultHost)
        record.restart(time: startTime, host: defaultHost, decrypted: decrypted)
        recordIsFresh = true
        fields.clear()
        chunked = ChunkedBodyParser()
        decoding = .identity
        if let host = recentHost, host.utf8.count > Self.keptRecentBytes {
            recentHost = nil
            recentNormalizedHost = nil
        }
        Self.dropLong(&recentContentType)
        Self.dropLong(&recentContentEncoding)
        Self.dropLong(&recentTransferEncoding)
        if let list = recentCodingList, list.utf8.count > Self.keptRecentBytes {
            recentCodingList = nil
            recentCodings = []
        }
    }

    /// Makes this retired parser as a new one for a connection with this identity (`init`'s template record):
    /// with `retire`, every stored property is set back to its initial value, except `isRequest`, `limits` and
    /// `scratch` (the pool's parsers share them) and the short `recent…` values, which are caches of bytes to
    /// the same `String` and hold for any connection (a keep-alive client's next connection usually repeats
    /// its `Host`). A property added to this class must be reset here or in `retire` too
    /// (`HTTPParserReuseTests` compares a reused parser with a new one).
    func reuse(connection: Int, client: String, server: String, host: String, time: CaptureTime, decrypted: Bool) {
        precondition(recordIsFresh && heldStart == nil, "reuse of a parser that was not retired")
        defaultHost = host
        startTime = time
        self.decrypted = decrypted
        state = .startLine
        counts = HTTPByteCounts()
        sawHTTP = false
        sawHTTP2Preface = false
        mayResync = false
        huntedBytes = 0
        huntFirstTime = .zero
        huntLastTime = .zero
        huntStart = 0
        huntTry = false
        huntMayEnd = false
        lineLength = 0
        lineTime = .zero
        lineSniffed = false
        streamBase = 0
        lineStart = 0
        headerShare = 0
        framingShare = 0
        // The record, restarted by `retire`, takes the new identity and what `restart` takes from its arguments.
        record.connection = connection
        record.client = client
        record.server = server
        record.time = time
        record.host = host
        record.decrypted = decrypted
        held.reuse(connection: connection, client: client, server: server)
        inMessage = false
        headDelivered = false
        remaining = 0
        lastFieldIsCookie = false
        headKeptInFull = true
        tunnelAfterMessage = false
        heldSwitchBytes = 0
    }

    private static func dropLong(_ value: inout String?) {
        if let text = value, text.utf8.count > keptRecentBytes { value = nil }
    }
}

/// A start line that ended hunting, kept for the next `parse` (rare: once per direction at most).
private final class HeldStartLine {
    let line: HTTPStartLine
    let total: Int
    let kept: [UInt8]

    init(line: HTTPStartLine, total: Int, kept: [UInt8]) {
        self.line = line
        self.total = total
        self.kept = kept
    }
}
