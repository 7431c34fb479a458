import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficHTTP2
import TrafficReassembly
import TrafficSessions

/// Parses the decrypted, ordered stream bytes of one HTTP/3 connection (RFC 9114, QPACK RFC 9204) into request and
/// response records, one pair per request stream, each interim (1xx) response a record of its own. It knows
/// nothing of QUIC: the transport hands it each stream's bytes in order, its gaps, FINs and resets.
///
/// Sizes (the record contract of issue 23, HTTP/2's of issue 22 with HTTP/3's frames):
/// - `headerBytes`: the HEADERS frame that opened the message as sent: type varint + length varint + field section.
/// - `headerDecodedBytes`: Σ(len(name) + len(value)) of its fields after QPACK decoding, pseudo-headers included;
///   nil (`hpack_error`) when the section could not be decoded (malformed, over the limit, a dynamic entry
///   whose insert was never captured). `cookieBytes`: the field-line representations of `cookie` (request) or
///   `set-cookie` (response) as sent, `cookieDecodedBytes` their decoded sizes.
/// - `bodyBytes`: the message's DATA frames (type + length + payload) and trailer HEADERS frames;
///   `encodedBodyBytes` Σ DATA payload; `decodedBodyBytes` after `content-encoding`.
/// - Everything else in a direction is `controlBytes` (control, QPACK, push and unknown unidirectional streams,
///   stream types included; frames of request streams that are neither HEADERS nor DATA) or `unparsedBytes`
///   (bytes after the framing of a stream was lost or broken, server-initiated bidirectional streams, a
///   truncated frame header): per direction, Σ records' header + body + control + unparsed = bytes received.
///
/// Decisions (flag in parentheses):
/// - A request record is emitted when its stream's client side ended (FIN) and a response started (`paired`
///   is then known), or at a reset or the connection's end; a response when its direction ended.
/// - QPACK: the encoder stream of a direction fills the table used for the field sections of that direction.
///   A section that needs inserts not read yet, or the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY (to decode its
///   Required Insert Count), blocks its stream direction: later calls for it are held (bounded) and replayed
///   once it decodes; at the limits or the end it is decoded as far as the table allows (`hpack_error`).
/// - A gap inside a DATA frame keeps the framing (`gap`, `missingBytes`, decoded size unknown under a coding);
///   inside a HEADERS frame, the section is not decoded (`gap`, `hpack_error`); elsewhere the stream
///   direction is given up (`gap`), its later bytes unparsed. A gap in an encoder stream loses that table.
/// - A frame a request stream may not carry (SETTINGS, GOAWAY, …, DATA before HEADERS, anything after
///   trailers) gives the stream direction up (`frame_error`); unknown and reserved types are control bytes.
/// - Push streams (type 0x01) and PUSH_PROMISE frames are control bytes: pushed responses make no record.
public final class HTTP3ConnectionParser {
    public let info: TCPConnectionInfo
    let limits: HTTP3Limits
    let scratch: DecodingScratch
    let emit: (MessageRecord) -> Void
    let defaultHost: String
    var template: MessageRecord

    /// Stream directions by stream id: [Direction.rawValue][id].
    var sides: [[UInt64: HTTP3StreamSide]] = [[:], [:]]
    var streams: [UInt64: HTTP3Stream] = [:]
    /// Request streams forgotten lately (id → index): late bytes are unparsed, late overhead is `late`.
    var recent: [UInt64: Int] = [:]
    var recentOrder: [UInt64] = []
    var recentNext = 0
    var nextIndex = 1
    /// The QPACK decoder of the field sections sent in each direction.
    let qpack: [QPACKDecoder]
    /// Sides blocked on each direction's QPACK decoder, oldest first.
    var blockedSides: [[HTTP3StreamSide]] = [[], []]
    /// HEADERS payload octets buffered over all streams.
    var bufferedSectionBytes = 0
    /// SETTINGS was read on each direction's control stream.
    var settingsSeen = [false, false]
    var finished = false

    /// Per direction (Direction.rawValue): control, QPACK, push and unknown unidirectional streams (type varint
    /// included), and frames of request streams that are neither HEADERS nor DATA (type + length + payload).
    public private(set) var controlBytes = [0, 0]
    /// Per direction: received bytes in no record and not control: after a stream's framing was lost or broken,
    /// streams HTTP/3 does not define, frame headers cut by the end of a stream.
    public internal(set) var unparsedBytes = [0, 0]
    /// Per direction: QUIC overhead (`addOverhead`) that came after its stream's message was emitted, or that
    /// belongs to a stream that carries no message (control, QPACK, push, unknown, given up).
    public internal(set) var lateOverheadBytes = [0, 0]
    /// Request streams that carried a message.
    public internal(set) var streamCount = 0

    /// `info`: the connection's identity; `host`: the host of a request without `:authority` (the SNI or the
    /// server address). `emit` gets each record once, in the order they complete.
    public init(
        info: TCPConnectionInfo, host: String, scratch: DecodingScratch = DecodingScratch(),
        limits: HTTP3Limits = .init(), emit: @escaping (MessageRecord) -> Void
    ) {
        self.info = info
        self.limits = limits
        self.scratch = scratch
        self.emit = emit
        defaultHost = host
        template = MessageRecord(
            connection: info.id, index: 0, kind: .request, time: info.start, client: info.client.description,
            server: info.server.description, host: host, path: "(unknown)")
        template.decodedBodyBytes = 0
        template.decrypted = true
        qpack = (0..<2).map { _ in
            QPACKDecoder(storageLimit: limits.maxTableCapacity, maxInstructionBytes: limits.maxFieldSectionBytes)
        }
    }

    // MARK: The transport's calls

    /// In-order bytes of one QUIC stream in one direction, any split. Bytes are borrowed for the call.
    public func receive(stream id: UInt64, direction: Direction, bytes: UnsafeRawBufferPointer, time: CaptureTime) {
        guard !finished, !bytes.isEmpty else { return }
        guard let side = side(id, direction) else {
            unparsedBytes[direction.rawValue] &+= bytes.count
            return
        }
        if side.blocked != nil {
            hold(side, .bytes(Array(bytes), time), bytes: bytes.count)
            return
        }
        let used = process(side, bytes, time: time)
        if used < bytes.count {
            hold(side, .bytes(Array(bytes[used...]), time), bytes: bytes.count - used)
        }
    }

    /// The stream's FIN in that direction.
    public func end(stream id: UInt64, direction: Direction, time: CaptureTime) {
        guard !finished, let side = side(id, direction) else { return }
        if side.blocked != nil { return hold(side, .end(time), bytes: 0) }
        endSide(side, time: time)
    }

    /// `byteCount` bytes of the stream in that direction will never be delivered.
    public func skip(stream id: UInt64, direction: Direction, byteCount: Int, time: CaptureTime) {
        guard !finished, byteCount > 0, let side = side(id, direction) else { return }
        if side.blocked != nil { return hold(side, .skip(byteCount, time), bytes: 0) }
        skipSide(side, byteCount, time: time)
    }

    /// RESET_STREAM for the stream in that direction: its open message is flagged `reset` and ended.
    public func reset(stream id: UInt64, direction: Direction, time: CaptureTime) {
        guard !finished, let side = side(id, direction) else { return }
        if side.blocked != nil { return hold(side, .reset(time), bytes: 0) }
        resetSide(side, time: time)
    }

    /// QUIC's cost of carrying the stream's next bytes in that direction (called before `receive` of them).
    public func addOverhead(stream id: UInt64, direction: Direction, bytes: Int) {
        guard bytes != 0 else { return }
        guard !finished, let side = side(id, direction) else {
            lateOverheadBytes[direction.rawValue] &+= bytes
            return
        }
        if side.blocked != nil { return hold(side, .overhead(bytes), bytes: 0) }
        overhead(side, bytes)
    }

    /// Ends everything still open: blocked sections are decoded as far as the table allows, messages without
    /// their FIN are emitted `truncated`.
    public func finish(time: CaptureTime) {
        guard !finished else { return }
        for d in 0..<2 {
            while let side = blockedSides[d].first { unblock(side, force: true) }
        }
        for d in 0..<2 {
            for side in sides[d].values.sorted(by: { $0.id < $1.id }) {
                if !side.finished { settle(side, flag: .truncated) }
                lateOverheadBytes[d] &+= side.pendingOverhead
                side.pendingOverhead = 0
            }
        }
        for stream in streams.values.sorted(by: { $0.id < $1.id }) { close(stream) }
        sides = [[:], [:]]
        streams = [:]
        finished = true
    }

    // MARK: Streams

    /// The side of stream `id` in `direction`, made on first sight; nil for a request stream forgotten lately.
    func side(_ id: UInt64, _ direction: Direction) -> HTTP3StreamSide? {
        if let side = sides[direction.rawValue][id] { return side }
        if recent[id] != nil { return nil }
        let side: HTTP3StreamSide
        // RFC 9000 §2.1: bit 0x1 server-initiated, bit 0x2 unidirectional.
        switch id & 3 {
        case 0:
            let stream = streams[id] ?? newStream(id)
            side = HTTP3StreamSide(id: id, direction: direction, role: .request, stream: stream)
            if direction == .clientToServer { stream.client = side } else { stream.server = side }
        case 2, 3:
            // A unidirectional stream flows from its initiator only.
            let initiator: Direction = id & 1 == 0 ? .clientToServer : .serverToClient
            side = HTTP3StreamSide(
                id: id, direction: direction, role: direction == initiator ? .pendingType : .unparsed, stream: nil)
        default:
            // §6.1: server-initiated bidirectional streams are not defined by HTTP/3.
            side = HTTP3StreamSide(id: id, direction: direction, role: .unparsed, stream: nil)
        }
        sides[direction.rawValue][id] = side
        return side
    }

    private func newStream(_ id: UInt64) -> HTTP3Stream {
        let stream = HTTP3Stream(id: id, index: nextIndex)
        nextIndex += 1
        streams[id] = stream
        if streams.count > limits.maxOpenStreams, let oldest = streams.keys.min(), oldest != id,
            let victim = streams[oldest]
        {
            evict(victim)
        }
        return stream
    }

    /// A stream evicted by the open-stream limit: its open messages end `truncated`.
    private func evict(_ stream: HTTP3Stream) {
        for side in [stream.client, stream.server] {
            guard let side else { continue }
            if side.blocked != nil { unblock(side, force: true) }
            if !side.finished { settle(side, flag: .truncated) }
            lateOverheadBytes[side.direction.rawValue] &+= side.pendingOverhead
            side.pendingOverhead = 0
        }
        close(stream)
    }

    /// A stream whose both directions are done can be forgotten (its later bytes are unparsed).
    func forgetIfDone(_ stream: HTTP3Stream) {
        guard stream.client?.finished ?? false, stream.server?.finished ?? false,
            stream.request?.emitted ?? true, stream.response?.emitted ?? true, stream.held.isEmpty
        else { return }
        for side in [stream.client, stream.server] {
            guard let side else { continue }
            lateOverheadBytes[side.direction.rawValue] &+= side.pendingOverhead
            side.pendingOverhead = 0
        }
        forget(stream)
    }

    func forget(_ stream: HTTP3Stream) {
        streams[stream.id] = nil
        sides[0][stream.id] = nil
        sides[1][stream.id] = nil
        // A ring of the last 256 ids: the oldest leaves as the newest comes.
        if recentOrder.count < 256 {
            recentOrder.append(stream.id)
        } else {
            recent[recentOrder[recentNext]] = nil
            recentOrder[recentNext] = stream.id
            recentNext = (recentNext + 1) & 255
        }
        recent[stream.id] = stream.index
    }

    // MARK: Blocking on the encoder stream

    /// A call for a blocked side waits; past the byte limit the section is decoded as far as it can be.
    private func hold(_ side: HTTP3StreamSide, _ event: HTTP3StreamSide.Event, bytes: Int) {
        side.queue.append(event)
        side.queuedBytes &+= bytes
        if side.queuedBytes > limits.maxBlockedBytes { unblock(side, force: true) }
    }

    /// Registers a side whose section just blocked.
    func block(_ side: HTTP3StreamSide) {
        let d = side.direction.rawValue
        blockedSides[d].append(side)
        if blockedSides[d].count > limits.maxBlockedStreams, let oldest = blockedSides[d].first, oldest !== side {
            unblock(oldest, force: true)
        }
    }

    /// Retries the blocked sections of `direction` after the encoder stream or SETTINGS moved.
    func retryBlocked(_ direction: Direction) {
        let d = direction.rawValue
        guard !blockedSides[d].isEmpty else { return }
        for side in blockedSides[d] where side.blocked != nil && blockedSides[d].contains(where: { $0 === side }) {
            unblock(side, force: qpack[d].isLost)
        }
    }

    /// Decodes a blocked side's section (forced: as far as the table allows) and replays what was held.
    func unblock(_ side: HTTP3StreamSide, force: Bool) {
        guard let blocked = side.blocked else { return }
        let summary: HTTP2HeaderSummary
        if let s = decodeSection(blocked.section, side: side, force: force) {
            summary = s
        } else {
            return  // still blocked
        }
        let d = side.direction.rawValue
        blockedSides[d].removeAll { $0 === side }
        bufferedSectionBytes &-= blocked.section.count
        side.blocked = nil
        makeHead(
            side, summary, frameBytes: blocked.frameBytes, missing: 0, time: blocked.time, offset: blocked.offset,
            lastTime: blocked.lastTime)
        replay(side)
    }

    /// Replays held calls in order until the side blocks again.
    private func replay(_ side: HTTP3StreamSide) {
        var queue = side.queue
        side.queue = []
        side.queuedBytes = 0
        var i = 0
        while i < queue.count {
            if side.blocked != nil {
                // Blocked again: the rest waits.
                side.queue = Array(queue[i...])
                for case .bytes(let b, _) in side.queue { side.queuedBytes &+= b.count }
                return
            }
            switch queue[i] {
            case .bytes(let bytes, let time):
                let used = bytes.withUnsafeBytes { process(side, $0, time: time) }
                if used < bytes.count {
                    queue[i] = .bytes(Array(bytes[used...]), time)
                    continue
                }
            case .skip(let n, let time): skipSide(side, n, time: time)
            case .end(let time): endSide(side, time: time)
            case .reset(let time): resetSide(side, time: time)
            case .overhead(let n): overhead(side, n)
            }
            i += 1
        }
    }

    // MARK: Overhead

    func overhead(_ side: HTTP3StreamSide, _ bytes: Int) {
        switch side.role {
        case .request, .pendingType:
            if let message = side.current, !message.emitted {
                message.record.quicOverheadBytes &+= bytes
            } else if side.finished {
                lateOverheadBytes[side.direction.rawValue] &+= bytes
            } else {
                side.pendingOverhead &+= bytes
            }
        case .control, .encoder, .other, .unparsed:
            lateOverheadBytes[side.direction.rawValue] &+= bytes
        }
    }

    func addControl(_ side: HTTP3StreamSide, _ n: Int) { controlBytes[side.direction.rawValue] &+= n }
    func addUnparsed(_ side: HTTP3StreamSide, _ n: Int) { unparsedBytes[side.direction.rawValue] &+= n }
}
