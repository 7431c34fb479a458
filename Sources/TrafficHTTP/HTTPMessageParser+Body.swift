import TrafficCodecs
import TrafficSessions

extension HTTPMessageParser {
    /// What a gap did to this direction.
    struct GapOutcome {
        /// A message the gap ended (complete=false, flag `gap`).
        var record: MessageRecord?
        /// The record ended before `.head` was delivered: the caller must still give it an identity.
        var needsIdentity = false
        /// Message boundaries may have been lost with the gap (whole messages could be in it).
        var lostBoundary = false
    }

    // MARK: Body

    /// Sets up the body of the message whose head was just delivered. Returns true when it has no body:
    /// the message is complete (its record is `record`).
    func beginBody(_ framing: HTTPBodyFraming) -> Bool {
        precondition(inMessage && !headDelivered, "beginBody outside a head: state \(state)")
        headDelivered = true
        if framing != .none, fields.contentEncodingList != nil { decoding = contentDecoding() }
        switch framing {
        case .none:
            finishMessage(truncated: false)
            return true
        case .length(let n):
            remaining = n
            state = .fixedBody
        case .chunked:
            chunked = ChunkedBodyParser()
            state = .chunkedBody
        case .untilClose:
            state = .closeBody
        }
        return false
    }

    /// The decoding for the head's `Content-Encoding` list (not nil). A keep-alive connection sends the same list
    /// message after message, made of the same cached `String` (`reused`): its codings are then taken again by
    /// the string's bits, with no parsing and none of the two arrays the parse and the filter allocate.
    private func contentDecoding() -> HTTPBodyDecoding {
        if let known = recentCodingList, let list = fields.contentEncodingList, HTTPBytes.sameBits(known, list) {
            return .pending(recentCodings)
        }
        let made = HTTPBodyDecoding.forContentEncoding(fields.contentEncodingList, record: &record)
        // Only a list of codings to apply is kept: it flags nothing on the record, so taking it again is exact.
        if case .pending(let codings) = made {
            recentCodingList = fields.contentEncodingList
            recentCodings = codings
        }
        return made
    }

    /// Consumes body bytes; returns true when the body ended (the message is complete, in `record`).
    func bodyStep(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> Bool {
        switch state {
        case .fixedBody:
            // O(1) per segment unless a content coding needs the bytes.
            // Byte counts within the buffer and the stated length: no overflow checks needed.
            let n = min(remaining, bytes.count &- offset)
            takeData(bytes, offset..<(offset &+ n))
            offset &+= n
            remaining &-= n
            guard remaining == 0 else { return false }
            finishMessage(truncated: false)
            return true
        case .closeBody:
            takeData(bytes, offset..<bytes.count)
            offset = bytes.count
            return false
        case .chunkedBody:
            let start = offset
            switch chunked.consume(bytes, from: offset) {
            case .framing(let end):
                record.bodyBytes &+= end &- start
                offset = end
            case .data(let end):
                takeData(bytes, start..<end)
                offset = end
            case .done(let end):
                record.bodyBytes &+= end &- start
                offset = end
                finishMessage(truncated: false)
                return true
            case .malformed(let end):
                // A bad chunk-size line or missing CRLF: the framing is lost. The message ends here
                // (incomplete) and the direction resynchronises at the next start line, like Zeek.
                record.bodyBytes += end - start
                offset = end
                record.flag(.malformedChunk)
                record.complete = false
                finishMessage(truncated: false)
                if state == .startLine, bytes[end - 1] != HTTPBytes.lf { state = .resync }
                return true
            }
            return false
        default:
            preconditionFailure("bodyStep in state \(state)")
        }
    }

    /// Body data (after de-chunking): counted, and fed to the decoder when a content coding needs it.
    private func takeData(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        // Sums of received byte counts: bounded by the stream, never near overflow.
        record.bodyBytes &+= range.count
        record.encodedBodyBytes &+= range.count
        guard !range.isEmpty else { return }
        if isRequest, limits.maxKeptRequestBodyBytes > 0 {
            record.keepBody(UnsafeRawBufferPointer(rebasing: bytes[range]), limit: limits.maxKeptRequestBodyBytes)
        }
        decoding.feed(UnsafeRawBufferPointer(rebasing: bytes[range]), scratch: scratch, limits: limits.decoding)
    }

    /// Ends the current message and returns its record; the direction goes back to a message boundary.
    func completeMessage(truncated: Bool) -> MessageRecord {
        finishMessage(truncated: truncated)
        return takeRecord()
    }

    /// The completed message's record, handed over, not copied (no retain of every string); the next
    /// message starts from a fresh record anyway.
    func takeRecord() -> MessageRecord {
        // Only the current message's record is taken: a held one was moved out when that message began.
        assert(!recordHeld, "a held record is taken only by releaseOldestHeld")
        var done = freshRecord()
        swap(&done, &record)
        recordIsFresh = true
        return done
    }

    /// Ends the current message in place; the direction goes back to a message boundary.
    func finishMessage(truncated: Bool) {
        // Moved, not copied (the fields are cleared at the next message start anyway): a copy retained each
        // string and released the record's nil, three atomic pairs a message.
        swap(&record.contentType, &fields.contentType)
        swap(&record.contentEncoding, &fields.contentEncoding)
        swap(&record.transferEncoding, &fields.transferEncoding)
        if case .identity = decoding {
            // Most bodies: no copy and destruction of the enum through its outlined value witnesses.
            record.decodedBodyBytes = record.encodedBodyBytes
        } else {
            var ended = HTTPBodyDecoding.identity
            swap(&ended, &decoding)
            ended.finish(into: &record, truncated: truncated)
        }
        inMessage = false
        state = tunnelAfterMessage ? .tunnel : .startLine
        tunnelAfterMessage = false
    }

    /// Records a gap of `count` bytes inside the current body: counted as missing, never as body.
    private func noteGap(_ count: Int) {
        record.missingBytes += count
        record.complete = false
        record.flag(.gap)
        decoding.lose()
    }

    // MARK: Gaps and the end of the stream

    /// `count` stream bytes were never captured.
    func skip(_ count: Int) -> GapOutcome {
        counts.missingBytes += count
        switch state {
        case .fixedBody:
            if count < remaining {
                remaining -= count
                noteGap(count)
                return GapOutcome()
            }
            noteGap(remaining)
            let overshoot = count > remaining
            remaining = 0
            let done = completeMessage(truncated: false)
            if overshoot { enterAfterGap() }
            return GapOutcome(record: done, lostBoundary: overshoot)
        case .chunkedBody:
            let inData = chunked.dataRemaining
            let wasInData = chunked.isInData
            if chunked.absorbGap(count) {
                noteGap(count)
                return GapOutcome()
            }
            noteGap(wasInData ? inData : 0)
            let done = completeMessage(truncated: false)
            enterAfterGap()
            return GapOutcome(record: done, lostBoundary: true)
        case .closeBody:
            // Everything until close is this body (RFC 9112 §6.3 item 8): nothing after the gap can be a
            // new message, so keep counting instead of resynchronising on text inside the body.
            noteGap(count)
            return GapOutcome()
        case .headers:
            record.headerBytes += lineLength
            resetLine()
            record.complete = false
            record.flag(.gap)
            let needsIdentity = !headDelivered
            let done = completeMessage(truncated: false)
            enterAfterGap()
            return GapOutcome(record: done, needsIdentity: needsIdentity, lostBoundary: true)
        case .startLine, .resync, .nonHTTP, .hunting:
            // A hunted partial message stays non-HTTP: after the gap, resynchronise as usual.
            counts.nonHTTPBytes += lineLength
            resetLine()
            enterAfterGap()
            return GapOutcome(lostBoundary: true)
        case .tunnel, .awaitingSwitch:
            return GapOutcome()
        }
    }

    /// After a gap the next byte is likely a segment that starts a message (tshark's heuristic):
    /// try a start line there; if that fails, resynchronise at line starts.
    private func enterAfterGap() {
        mayResync = true
        huntTry = false
        huntedBytes = 0
        if state != .tunnel { state = .startLine }
    }

    /// The stream ended. Returns the open message, if any (complete=false and `truncated` unless its
    /// body was close-delimited), and whether it still needs an identity.
    func finish() -> (MessageRecord, needsIdentity: Bool)? {
        defer {
            state = .nonHTTP
            huntTry = false
        }
        switch state {
        case .headers:
            record.headerBytes += lineLength
            resetLine()
            record.complete = false
            record.flag(.truncated)
            let needsIdentity = !headDelivered
            return (completeMessage(truncated: true), needsIdentity)
        case .fixedBody, .chunkedBody:
            record.complete = false
            record.flag(.truncated)
            return (completeMessage(truncated: true), false)
        case .closeBody:
            return (completeMessage(truncated: false), false)
        case .startLine, .resync, .nonHTTP, .hunting:
            // A start line cut off by the end of the stream cannot be validated: not counted as HTTP.
            counts.nonHTTPBytes += lineLength
            resetLine()
            return nil
        case .awaitingSwitch:
            // The switch was never confirmed: the held bytes are not known to be HTTP nor tunnel.
            counts.nonHTTPBytes += heldSwitchBytes
            heldSwitchBytes = 0
            return nil
        case .tunnel:
            return nil
        }
    }

    // MARK: Protocol switches

    /// Everything from now on in this direction is tunnel bytes (after the current message, if inside one).
    func switchToTunnel() {
        switch state {
        case .startLine:
            counts.tunnelBytes += lineLength
            resetLine()
            huntTry = false
            state = .tunnel
        case .awaitingSwitch:
            counts.tunnelBytes += heldSwitchBytes
            heldSwitchBytes = 0
            state = .tunnel
        case .nonHTTP, .resync, .tunnel, .hunting:
            huntTry = false
            state = .tunnel
        case .headers, .fixedBody, .chunkedBody, .closeBody:
            tunnelAfterMessage = true
        }
    }

    /// The request just completed asked to switch protocols: hold the next bytes until the answer.
    func awaitSwitch() {
        if isAtMessageBoundary { state = .awaitingSwitch }
    }

    /// The server refused the switch: bytes sent meanwhile cannot be parsed any more (we only counted them).
    func resumeAfterRefusedSwitch() {
        guard state == .awaitingSwitch else { return }
        if heldSwitchBytes > 0 {
            counts.nonHTTPBytes += heldSwitchBytes
            heldSwitchBytes = 0
            state = .resync
        } else {
            state = .startLine
        }
    }
}
