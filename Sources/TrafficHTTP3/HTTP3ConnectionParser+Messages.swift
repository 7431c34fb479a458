import TrafficCapture
import TrafficHTTP
import TrafficHTTP2
import TrafficReassembly
import TrafficSessions

extension HTTP3ConnectionParser {
    /// A decoded (or undecodable) head opens a message on `side`: the request, an interim response (a record of its
    /// own, emitted now) or the final response.
    func makeHead(
        _ side: HTTP3StreamSide, _ summary: HTTP2HeaderSummary, frameBytes: Int, missing: Int, time: CaptureTime,
        offset: Int, lastTime: CaptureTime, tooLarge: Bool = false
    ) {
        guard let stream = side.stream else { return }
        if !stream.counted {
            stream.counted = true
            streamCount += 1
        }
        var record = template
        record.index = stream.index
        record.version = "HTTP/3"
        record.streamID = Int(truncatingIfNeeded: stream.id)
        record.time = time
        record.lastByteTime = lastTime
        record.streamOffset = offset
        record.headerBytes = frameBytes
        record.missingBytes = missing
        record.headerDecodedBytes = summary.decodedBytes
        record.cookieBytes = summary.cookieBytes
        record.cookieDecodedBytes = summary.cookieDecodedBytes
        record.contentType = summary.contentType
        record.contentEncoding = summary.contentEncoding
        record.quicOverheadBytes = side.pendingOverhead
        side.pendingOverhead = 0
        if summary.failed { record.flag(.hpackError) }
        if missing > 0 { record.flag(.gap) }
        if tooLarge { record.flag(.headerLimit) }
        if limits.http.maxKeptHeadBytes > 0 {
            var head = Array(
                (side.isClient
                    ? "\(summary.method ?? "") \(summary.path ?? "") HTTP/3\n"
                    : "HTTP/3 \(summary.status.map(String.init) ?? "")\n").utf8)
            head.append(contentsOf: summary.lines)
            record.head = head
            if summary.linesCut { record.flag(.headerLimit) }
        }
        if side.isClient {
            let target = resolve(summary)
            stream.method = summary.method
            stream.host = target.host
            stream.path = target.path
            stream.query = target.query
            record.kind = .request
            record.method = summary.method
            record.host = target.host
            record.path = target.path
            record.query = target.query
            let message = HTTP3Message(record: record)
            message.decoding = HTTPBodyDecoding.forContentEncoding(summary.contentEncoding, record: &message.record)
            stream.request = message
            side.current = message
            side.progress = .body
            // Responses read while this section was blocked now learn their request.
            let held = stream.held
            stream.held = []
            for record in held { emitResponse(record, stream) }
            return
        }
        answered(stream)
        record.kind = .response
        record.status = summary.status
        if let status = summary.status, (100..<200).contains(status) {
            // §4.1: interim responses precede the final one; each is a record of its own, complete now.
            emitResponse(record, stream)
            return
        }
        let message = HTTP3Message(record: record)
        message.decoding = HTTPBodyDecoding.forContentEncoding(summary.contentEncoding, record: &message.record)
        stream.response = message
        side.current = message
        side.progress = .body
    }

    private func resolve(_ summary: HTTP2HeaderSummary) -> HTTPTarget { summary.target(defaultHost: defaultHost) }

    /// A response head was read (or is blocked): the request's `paired` is known, so an ended request goes now.
    func answered(_ stream: HTTP3Stream) {
        guard !stream.answered else { return }
        stream.answered = true
        if stream.request?.ended == true { emitRequest(stream) }
    }

    func emitRequest(_ stream: HTTP3Stream) {
        guard let request = stream.request, !request.emitted else { return }
        request.emitted = true
        request.record.paired = stream.answered
        emit(request.record)
    }

    /// Emits a response record with its request's identity; held while the request's section is blocked.
    func emitResponse(_ record: MessageRecord, _ stream: HTTP3Stream) {
        if stream.client?.blocked != nil {
            stream.held.append(record)
            return
        }
        var record = record
        record.method = stream.method
        record.host = stream.host ?? defaultHost
        record.path = stream.path
        record.query = stream.query
        record.paired = stream.request != nil
        if stream.request != nil {
            record.wait = stream.requestEnd.map { $0.duration(to: record.time) } ?? .zero
        }
        emit(record)
    }

    private func emitFinal(_ stream: HTTP3Stream) {
        guard let response = stream.response, !response.emitted else { return }
        response.emitted = true
        emitResponse(response.record, stream)
    }

    /// Ends the side's message: complete at its FIN, otherwise cut with `flag`.
    private func endMessage(_ side: HTTP3StreamSide, time: CaptureTime, flag: RecordAnomaly?) {
        guard let stream = side.stream, let message = side.current, !message.ended else { return }
        message.ended = true
        if let flag { message.record.flag(flag) }
        message.record.lastByteTime = max(message.record.lastByteTime, time)
        message.finishBody(truncated: flag != nil)
        message.record.complete = flag == nil && !message.record.flags.contains(.gap)
        if side.isClient {
            stream.requestEnd = time
            if stream.answered || stream.reset { emitRequest(stream) }
        } else {
            emitFinal(stream)
        }
    }

    /// FIN (§4.1: a message ends with its stream direction).
    func endSide(_ side: HTTP3StreamSide, time: CaptureTime) {
        guard !side.finished else { return }
        if side.role == .request {
            if side.atFrameBoundary, side.varint.isEmpty {
                endMessage(side, time: time, flag: nil)
            } else {
                settle(side, flag: .truncated)
            }
            side.finished = true
            side.role = .unparsed  // nothing follows a FIN
            if !side.isClient, let stream = side.stream, stream.request?.ended == true { emitRequest(stream) }
            if let stream = side.stream { forgetIfDone(stream) }
        } else {
            settle(side, flag: .truncated)
            side.finished = true
        }
    }

    /// `n` bytes will never come: the framing holds inside a frame's payload; elsewhere the side is given up.
    func skipSide(_ side: HTTP3StreamSide, _ n: Int, time: CaptureTime) {
        guard !side.finished else { return }
        side.time = time
        side.offset &+= n
        switch side.role {
        case .request, .control:
            if side.inPayload, n <= side.remaining {
                side.remaining -= n
                switch side.kind {
                case .data: side.current?.lose(n)
                case .headers: side.sectionMissing &+= n
                case .settings: side.kind = .control  // the SETTINGS is not read
                case .control: break
                }
                if side.remaining == 0 { endFrame(side) }
                return
            }
            if side.role == .control {
                settle(side, flag: nil)
                side.role = .other  // still control bytes, no longer read
                return
            }
            if side.inPayload, side.kind == .data { side.current?.lose(side.remaining) }
            if side.inPayload, side.kind == .headers { side.sectionMissing &+= side.remaining }
            side.current?.lose(0)
            giveUp(side, flag: .gap)
        case .encoder:
            qpack[side.direction.rawValue].loseState()
            retryBlocked(side.direction)
        case .pendingType:
            addUnparsed(side, side.headerCount)
            side.headerCount = 0
            side.role = .unparsed
        case .other, .unparsed:
            break
        }
    }

    /// RESET_STREAM: what the side was sending is cut, flagged `reset`.
    func resetSide(_ side: HTTP3StreamSide, time: CaptureTime) {
        guard !side.finished else { return }
        side.time = time
        guard side.role == .request, let stream = side.stream else {
            settle(side, flag: nil)
            side.finished = true
            return
        }
        stream.reset = true
        settle(side, flag: .reset)
        side.finished = true
        side.role = .unparsed
        if stream.request?.ended == true { emitRequest(stream) }
        forgetIfDone(stream)
    }

    /// A frame error or a gap past a frame: the side's partial frame and message are settled, its later bytes
    /// are unparsed.
    func giveUp(_ side: HTTP3StreamSide, flag: RecordAnomaly) {
        settle(side, flag: flag)
        side.role = .unparsed
        side.finished = true
        if let stream = side.stream {
            if stream.request?.ended == true { emitRequest(stream) }
            forgetIfDone(stream)
        }
    }

    /// The side stops where it is: a partial frame header is unparsed, a partial HEADERS frame becomes the head
    /// (or trailers) it was, with what was captured, and the open message ends with `flag`.
    func settle(_ side: HTTP3StreamSide, flag: RecordAnomaly?) {
        let partialHeaders = side.inPayload && side.kind == .headers
        if partialHeaders {
            side.inPayload = false
            bufferedSectionBytes &-= side.tooLarge ? 0 : side.section.count
            side.section = []
            let frameBytes = side.headerCount &+ side.sectionCaptured
            side.headerCount = 0
            let missing = side.sectionMissing
            if side.progress == .body, let message = side.current {
                message.record.bodyBytes &+= frameBytes
                message.record.missingBytes &+= missing
            } else if side.progress == .head, side.role == .request {
                if !side.isClient, let stream = side.stream { answered(stream) }
                var summary = HTTP2HeaderSummary()
                summary.failed = true
                summary.decodedBytes = nil
                summary.cookieDecodedBytes = nil
                makeHead(
                    side, summary, frameBytes: frameBytes, missing: missing, time: side.frameTime,
                    offset: side.frameOffset, lastTime: side.time, tooLarge: side.tooLarge)
            } else {
                addUnparsed(side, frameBytes)
            }
        }
        // A frame header cut short (or one refused by a frame error) is in no frame.
        addUnparsed(side, side.headerCount)
        side.headerCount = 0
        side.varint = QUICVarint()
        side.readingLength = false
        side.inPayload = false
        if side.role == .request, let flag { endMessage(side, time: side.time, flag: flag) }
    }

    /// Ends a stream for good (eviction, the connection's end): open messages are emitted as they are.
    func close(_ stream: HTTP3Stream) {
        if let request = stream.request, !request.ended {
            request.ended = true
            request.record.flag(.truncated)
            request.record.complete = false
            request.finishBody(truncated: true)
        }
        emitRequest(stream)
        if let response = stream.response, !response.ended {
            response.ended = true
            response.record.flag(.truncated)
            response.record.complete = false
            response.finishBody(truncated: true)
        }
        emitFinal(stream)
        let held = stream.held
        stream.held = []
        for record in held { emit(record) }
        forget(stream)
    }
}
