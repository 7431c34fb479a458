#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// What a decoded header block says, for the record it opens (HTTP/3 fills it from QPACK fields too).
package struct HTTP2HeaderSummary {
    package init() {}

    package var method: String?
    package var path: String?
    package var authority: String?
    package var host: String?
    /// `:scheme` is `https` (the default port of `:authority` is then 443).
    package var https = false
    package var status: Int?
    package var contentType: String?
    /// `content-type` is gRPC's: the body is length-prefixed messages.
    package var grpc = false
    package var contentEncoding: String?
    package var grpcEncoding: String?
    /// Σ(len(name) + len(value)); nil once a field's name or value is unknown.
    package var decodedBytes: Int? = 0
    package var cookieBytes = 0
    package var cookieDecodedBytes: Int? = 0
    /// The block could not be decoded (or only blindly): `hpack_error`.
    package var failed = false
    /// Regular fields as `name: value\n` lines, when HAR keeps heads.
    package var lines: [UInt8] = []
    package var linesCut = false

    static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A `:status` of 1 to 9 digits; nil otherwise.
    static func number(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 9 else { return nil }
        var n = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            n = n * 10 + Int(byte - 0x30)
        }
        return n
    }

    static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return bytes.isEmpty || memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
    }

    /// `application/grpc`, alone or followed by `+proto`, `;…` and the like.
    static func isGRPC(_ value: UnsafeRawBufferPointer) -> Bool {
        let prefix: StaticString = "application/grpc"
        return value.count >= prefix.utf8CodeUnitCount
            && memcmp(value.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }

    package mutating func add(_ field: HPACKField, request: Bool, keep: Int) {
        guard let name = field.name, let value = field.value else {
            decodedBytes = nil
            failed = true
            // A known name with an unknown value: still a cookie's representation.
            if let name = field.name, Self.isCookie(name, request: request) {
                cookieBytes &+= field.representationBytes
                cookieDecodedBytes = nil
            }
            return
        }
        decodedBytes = decodedBytes.map { $0 &+ name.count &+ value.count }
        if name.first == UInt8(ascii: ":") {
            switch name.count {
            case 5 where Self.equals(name, ":path"): path = Self.text(value)
            case 7 where Self.equals(name, ":method"): method = Self.text(value)
            case 7 where Self.equals(name, ":status"): status = Self.number(value)
            case 7 where Self.equals(name, ":scheme"): https = Self.equals(value, "https")
            case 10 where Self.equals(name, ":authority"): authority = Self.text(value)
            default: break
            }
            return
        }
        switch name.count {
        case 4 where Self.equals(name, "host"): host = Self.text(value)
        case 12 where Self.equals(name, "content-type"):
            contentType = Self.text(value)
            grpc = Self.isGRPC(value)
        case 13 where Self.equals(name, "grpc-encoding"): grpcEncoding = Self.text(value)
        case 16 where Self.equals(name, "content-encoding"): contentEncoding = Self.text(value)
        default: break
        }
        if Self.isCookie(name, request: request) {
            cookieBytes &+= field.representationBytes
            cookieDecodedBytes = cookieDecodedBytes.map { $0 &+ name.count &+ value.count }
        }
        if keep > 0 {
            let size = name.count + 2 + value.count + 1
            if lines.count + size > keep {
                linesCut = true
            } else {
                lines.append(contentsOf: name)
                lines.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
                lines.append(contentsOf: value)
                lines.append(UInt8(ascii: "\n"))
            }
        }
    }

    private static func isCookie(_ name: UnsafeRawBufferPointer, request: Bool) -> Bool {
        request ? equals(name, "cookie") : equals(name, "set-cookie")
    }
}

extension HTTP2ConnectionParser {
    /// END_HEADERS: the block is decoded and opens (or ends) a message.
    func endBlock(_ side: HTTP2Side) {
        guard let id = side.blockStream else { return }
        let isClient = side === client
        var summary = HTTP2HeaderSummary()
        let keep = limits.http.maxKeptHeadBytes
        if side.blockTooLarge || side.blockLost {
            side.hpack.loseState()
            summary.failed = true
            summary.decodedBytes = nil
            summary.cookieDecodedBytes = nil
        } else {
            var failed = false
            side.block.withUnsafeBytes { block in
                do {
                    try side.hpack.decode(block: block) { field in summary.add(field, request: isClient, keep: keep) }
                } catch {
                    failed = true
                }
            }
            if failed {
                summary.failed = true
                summary.decodedBytes = nil
                summary.cookieDecodedBytes = nil
            }
        }
        let frameBytes = side.blockFrameBytes
        let push = side.blockIsPush
        let endStream = side.blockEndStream
        side.blockParent = push ? (streams[id]?.index ?? recentIndexes[id]) : nil
        side.blockStream = nil
        side.blockIsPush = false
        if push {
            if let promised = side.blockPromised { openPushed(promised, summary: summary, side: side) }
            return
        }
        let headerShare = side.blockHeaderShare, framingShare = side.blockFramingShare
        let tooLarge = side.blockTooLarge
        func settle(_ record: inout MessageRecord) {
            record.segmentHeaderBytes &+= headerShare
            record.tlsOverheadBytes &+= framingShare
            record.missingBytes &+= side.blockMissing
            if side.blockMissing > 0 || side.blockLost { record.flag(.gap) }
            if tooLarge { record.flag(.headerLimit) }
        }
        if isClient {
            // (Fields are read through the optional in place: a copy of a message retains every string of its record.)
            if let stream = streams[id], stream.request?.headersDone == true {
                // Trailers (§8.1): their frames are body bytes.
                stream.request!.record.bodyBytes &+= frameBytes
                settle(&stream.request!.record)
                if endStream { endMessage(stream, side) }
                return
            }
            let stream = streams[id] ?? newStream(id, pushed: false)
            let target = resolve(summary)
            stream.method = summary.method
            stream.host = target.host
            stream.path = target.path
            stream.query = target.query
            // Made in place in the stream: a record is large, and every copy retains its strings.
            stream.request = HTTP2Message(record: template)
            stream.request!.record.kind = .request
            stream.request!.record.index = stream.index
            fill(&stream.request!.record, summary, frameBytes: frameBytes, side: side, request: true, stream: id)
            stream.request!.record.method = summary.method
            stream.request!.record.host = target.host
            stream.request!.record.path = target.path
            stream.request!.record.query = target.query
            settle(&stream.request!.record)
            stream.request!.headersDone = true
            stream.request!.decoding = decoding(summary, &stream.request!.record)
            if endStream { endMessage(stream, side) }
            return
        }
        let stream = streams[id] ?? orphan(id)
        if stream.response?.headersDone == true, stream.response?.ended == false {
            stream.response!.record.bodyBytes &+= frameBytes
            settle(&stream.response!.record)
            if endStream { endMessage(stream, side) }
            return
        }
        answered(stream)
        if let status = summary.status, (100..<200).contains(status), !endStream {
            // An interim response is a record of its own, complete when its block ends.
            var record = responseTemplate(stream)
            fill(&record, summary, frameBytes: frameBytes, side: side, request: false, stream: id)
            record.status = summary.status
            settle(&record)
            record.lastByteTime = side.time
            record.wait = wait(stream, record.time)
            emit(record)
            return
        }
        stream.response = HTTP2Message(record: responseTemplate(stream))
        fill(&stream.response!.record, summary, frameBytes: frameBytes, side: side, request: false, stream: id)
        stream.response!.record.status = summary.status
        settle(&stream.response!.record)
        stream.response!.headersDone = true
        stream.response!.decoding = decoding(summary, &stream.response!.record)
        if endStream { endMessage(stream, side) }
    }

    /// A header block that will never be read whole (a gap inside it, the capture's end): its bytes still
    /// make a record, with what is known.
    func endBlockLost(_ side: HTTP2Side, truncated: Bool = false) {
        side.blockLost = true
        let id = side.blockStream
        endBlock(side)
        guard let id, let stream = streams[id] else { return }
        if truncated {
            if side === client { stream.request?.record.flag(.truncated) } else { stream.response?.record.flag(.truncated) }
        }
    }

    private func fill(
        _ record: inout MessageRecord, _ summary: HTTP2HeaderSummary, frameBytes: Int, side: HTTP2Side, request: Bool,
        stream id: UInt32
    ) {
        record.version = "HTTP/2"
        record.streamID = Int(id)
        record.time = side.blockTime
        record.lastByteTime = side.time
        record.streamOffset = side.blockOffset
        record.headerBytes = frameBytes
        record.headerDecodedBytes = summary.decodedBytes
        record.cookieBytes = summary.cookieBytes
        record.cookieDecodedBytes = summary.cookieDecodedBytes
        record.contentType = summary.contentType
        record.contentEncoding = summary.contentEncoding
        if summary.failed { record.flag(.hpackError) }
        if limits.http.maxKeptHeadBytes > 0 {
            var head: [UInt8]
            if request {
                let query = summary.path ?? ""
                head = Array("\(summary.method ?? "") \(query) HTTP/2\n".utf8)
            } else {
                head = Array("HTTP/2 \(summary.status.map(String.init) ?? "")\n".utf8)
            }
            head.append(contentsOf: summary.lines)
            record.head = head
            if summary.linesCut { record.flag(.headerLimit) }
        }
    }

    private func resolve(_ summary: HTTP2HeaderSummary) -> HTTPTarget { summary.target(defaultHost: defaultHost) }

    private func decoding(_ summary: HTTP2HeaderSummary, _ record: inout MessageRecord) -> HTTP2BodyDecoding {
        if summary.grpc {
            return .grpc(GRPCMessageCounter(encoding: summary.grpcEncoding, scratch: scratch, limits: limits.http.decoding))
        }
        return .content(HTTPBodyDecoding.forContentEncoding(summary.contentEncoding, record: &record))
    }

    private func responseTemplate(_ stream: HTTP2Stream) -> MessageRecord {
        var record = template
        record.kind = .response
        record.index = stream.index
        record.method = stream.method
        record.host = stream.host ?? defaultHost
        record.path = stream.path
        record.query = stream.query
        record.paired = !stream.pushed && stream.request != nil
        if stream.pushed { record.flag(.pushed) }
        return record
    }

    private func wait(_ stream: HTTP2Stream, _ time: CaptureTime) -> CaptureTime? {
        guard stream.request != nil, !stream.pushed else { return nil }
        return stream.requestEnd.map { $0.duration(to: time) } ?? .zero
    }

    /// A response started: the request's `paired` is known, so an ended request is emitted now.
    private func answered(_ stream: HTTP2Stream) {
        guard !stream.answered else { return }
        stream.answered = true
        if stream.request?.ended == true, stream.request?.emitted == false { emitRequest(stream) }
    }

    /// `index`: a pushed stream's is its PUSH_PROMISE's stream's (its control bytes and overhead go with that
    /// exchange; it is printed as null); others get the next client ordinal.
    func newStream(_ id: UInt32, pushed: Bool, index given: Int? = nil) -> HTTP2Stream {
        let index: Int
        if let given {
            index = given
        } else {
            index = nextIndex
            nextIndex += 1
        }
        let stream = HTTP2Stream(id: id, index: index, pushed: pushed)
        streams[id] = stream
        streamCount += 1
        if streams.count > limits.maxOpenStreams, let oldest = streams.keys.min(), oldest != id,
            let victim = streams[oldest]
        {
            close(victim, truncated: true)
        }
        return stream
    }

    /// A stream first seen by its server side (the capture began after its request): a request of unknown
    /// identity, so the response's path is `(unknown)`.
    private func orphan(_ id: UInt32) -> HTTP2Stream { newStream(id, pushed: id & 1 == 0) }

    private func openPushed(_ promised: UInt32, summary: HTTP2HeaderSummary, side: HTTP2Side) {
        guard promised != 0, streams[promised] == nil, let parent = side.blockParent else { return }
        let stream = newStream(promised, pushed: true, index: parent)
        // The promised request names the pushed response (§8.4); its record is made by the pushed HEADERS.
        var record = template
        record.kind = .response
        record.index = stream.index
        let target = resolve(summary)
        stream.method = summary.method
        stream.host = target.host
        stream.path = target.path
        stream.query = target.query
        let placeholder = HTTP2Message(record: record)
        placeholder.headersDone = false
        stream.response = placeholder
    }

    /// The message for DATA of stream `id` on `side`, made for a stream never opened in the capture.
    func openMessage(_ id: UInt32, _ side: HTTP2Side) -> HTTP2Stream {
        let stream = streams[id] ?? (side === client ? newStream(id, pushed: false) : orphan(id))
        if side === client {
            if stream.request == nil || stream.request!.ended {
                if stream.request?.emitted == false { emitRequest(stream) }
                var record = template
                record.kind = .request
                record.index = stream.index
                record.path = "(unknown)"
                stream.request = bodyOnly(record, stream: id, side: side)
            }
        } else if stream.response == nil || !stream.response!.headersDone || stream.response!.ended {
            if stream.response?.ended == true, stream.response?.emitted == false { emitResponse(stream) }
            stream.response = bodyOnly(responseTemplate(stream), stream: id, side: side)
        }
        return stream
    }

    /// A message whose header block was not captured (the capture began inside it): DATA only, decoded size
    /// unknown, `mid_message_start`.
    private func bodyOnly(_ template: MessageRecord, stream id: UInt32, side: HTTP2Side) -> HTTP2Message {
        var record = template
        record.version = "HTTP/2"
        record.streamID = Int(id)
        record.time = side.frameTime
        record.streamOffset = side.frameOffset
        record.headerDecodedBytes = 0
        record.cookieDecodedBytes = 0
        record.flag(.midMessageStart)
        let message = HTTP2Message(record: record)
        message.headersDone = true
        message.decoding = .content(.lost)
        return message
    }

    /// END_STREAM on `side`: its message is complete.
    func endMessage(_ stream: HTTP2Stream, _ side: HTTP2Side) {
        if side === client {
            guard stream.request?.ended == false else { return }
            end(stream.request!, time: side.time)
            stream.requestEnd = side.time
            if stream.answered || stream.reset { emitRequest(stream) }
        } else {
            guard stream.response?.ended == false else { return }
            end(stream.response!, time: side.time)
            emitResponse(stream)
        }
        forgetIfFinished(stream)
    }

    private func end(_ message: HTTP2Message, time: CaptureTime) {
        message.ended = true
        message.record.lastByteTime = time
        message.finishBody(truncated: false)
        message.record.complete = !message.record.flags.contains(.gap)
    }

    /// Ends a message that never saw END_STREAM (the stream was evicted or the connection ended).
    private func cut(_ message: HTTP2Message) {
        guard !message.ended else { return }
        message.ended = true
        message.finishBody(truncated: true)
        message.record.complete = false
        if !message.record.flags.contains(.reset) { message.record.flag(.truncated) }
    }

    private func emitRequest(_ stream: HTTP2Stream) {
        guard stream.request?.emitted == false else { return }
        stream.request!.emitted = true
        stream.request!.record.paired = stream.answered
        emit(stream.request!.record)
    }

    private func emitResponse(_ stream: HTTP2Stream) {
        guard stream.response?.emitted == false else { return }
        stream.response!.emitted = true
        if stream.response!.record.wait == nil {
            stream.response!.record.wait = wait(stream, stream.response!.record.time)
        }
        emit(stream.response!.record)
    }

    private func forgetIfFinished(_ stream: HTTP2Stream) {
        if stream.isFinished, !stream.reset { forget(stream) }
    }

    /// A finished stream's index is remembered a while: control frames may still name it (a WINDOW_UPDATE or
    /// RST_STREAM after END_STREAM), and they go to its records.
    func forget(_ stream: HTTP2Stream) {
        streams[stream.id] = nil
        // A ring of the last 256 ids: the oldest leaves as the newest comes.
        if recentOrder.count < 256 {
            recentOrder.append(stream.id)
        } else {
            recentIndexes[recentOrder[recentNext]] = nil
            recentOrder[recentNext] = stream.id
            recentNext = (recentNext + 1) & 255
        }
        recentIndexes[stream.id] = stream.index
    }

    /// RST_STREAM in either direction: what was not complete is `reset`; DATA in flight still counts.
    func resetStream(_ stream: HTTP2Stream) {
        if !stream.reset {
            stream.reset = true
            resetOrder.append(stream.id)
        }
        if stream.request?.ended == false { stream.request?.record.flag(.reset) }
        if stream.response?.ended == false { stream.response?.record.flag(.reset) }
        if stream.request?.ended == true { emitRequest(stream) }
        if resetOrder.count > limits.maxResetStreamsHeld {
            let oldest = resetOrder.removeFirst()
            if let victim = streams[oldest] { close(victim, truncated: true) }
        }
    }

    /// Ends a stream for good (the connection ended, or it was evicted): open messages are emitted as they are.
    func close(_ stream: HTTP2Stream, truncated: Bool) {
        if stream.request?.emitted == false {
            cut(stream.request!)
            emitRequest(stream)
        }
        if stream.response?.emitted == false, stream.response?.headersDone == true {
            cut(stream.response!)
            emitResponse(stream)
        }
        forget(stream)
    }
}

extension HTTP2HeaderSummary {
    /// Host, path and query of a request head. RFC 9113 §8.3.1 (and RFC 9114 §4.3.1 for HTTP/3): `:authority`
    /// names the host; `host` stands in when a client sent none (h2c translations); CONNECT's target is its
    /// authority.
    package func target(defaultHost: String) -> HTTPTarget {
        let authority = authority.flatMap { $0.isEmpty ? nil : $0 } ?? host
        let host = authority.map { HTTPTarget.normalizedHost($0, defaultPort: https ? "443" : "80") }
        if method == "CONNECT", path == nil, let authority {
            return HTTPTarget(host: host ?? defaultHost, path: authority, query: nil)
        }
        return HTTPTarget.resolve(method: method, target: path, hostField: nil, defaultHost: host ?? defaultHost)
    }
}
