import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// Parses both directions of one HTTP/2 connection (RFC 9113) into request and response records, one pair
/// per stream, each interim (1xx) response a record of its own.
///
/// Sizes (the record contract of issue 22, README "HTTP/2"):
/// - `headerBytes`: the frames (9-byte header + payload, padding and priority fields included) of the
///   HEADERS frame and its CONTINUATION frames that opened the message: the header block as sent.
/// - `headerDecodedBytes`: Σ(len(name) + len(value)) of every field of that block after HPACK decoding,
///   pseudo-header fields included; `cookieBytes` the representations of `cookie`/`set-cookie` fields as
///   sent (whole, even across a CONTINUATION boundary, since the block is decoded in one piece), and
///   `cookieDecodedBytes` their decoded sizes.
/// - `bodyBytes`: the stream's DATA frames in that direction (header, pad length, data, padding) and the
///   frames of a trailer block; `encodedBodyBytes` the DATA payload without padding; `decodedBodyBytes`
///   after `content-encoding`, or for gRPC Σ(5 + message after `grpc-encoding`) over its messages.
/// - The client preface and every frame that opens no message (SETTINGS, PING, GOAWAY, WINDOW_UPDATE,
///   PRIORITY, RST_STREAM, PUSH_PROMISE and its CONTINUATION frames, unknown types) are control bytes:
///   `counts(for:).controlBytes`, handed to `controlCharge` with the stream they concern.
///
/// Decisions (flag in parentheses):
/// - A request record is emitted when its stream ended on the client side and a response started (so that
///   `paired` is known), or when the stream was reset or the connection ended; a response when it ended.
/// - RST_STREAM (`reset`) in either direction flags the stream's records that were not complete. The stream
///   is kept a while (`HTTP2Limits.maxResetStreamsHeld`): DATA that was in flight still counts to its body.
/// - A pushed stream (`pushed`) has only a response record, named by its PUSH_PROMISE, unpaired; it carries
///   the index of the stream the promise came on (its overhead goes with that exchange), printed as null.
/// - A gap inside a DATA frame keeps the framing: the hole is the record's `missingBytes` (`gap`, decoded
///   size unknown). A gap that reaches past the frame loses the framing: the next bytes are searched for a
///   plausible frame header (bytes skipped are non-HTTP), every open message of that direction is flagged
///   `gap`, and the HPACK table of that direction is lost for good: later header blocks are still split into
///   representations and counted as sent, but decoded sizes of fields that name the dynamic table become
///   unknown (`hpack_error`, decoded sizes null).
/// - A malformed frame (a length above the peer's SETTINGS_MAX_FRAME_SIZE, a fixed-size frame of another
///   size, a frame on the wrong stream, a missing CONTINUATION) is a connection error for a peer
///   (`frame_error`): the rest of that direction is non-HTTP.
/// - DATA or trailers for a stream never opened in the capture make a record with path `(unknown)`.
public final class HTTP2ConnectionParser: StreamAnalyzer {
    /// RFC 9113 §3.4.
    public static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    public let info: TCPConnectionInfo
    let limits: HTTP2Limits
    let scratch: DecodingScratch
    let emit: (MessageRecord) -> Void
    /// Control bytes and what they concern: the exchange index of their stream (nil for the connection: stream
    /// 0, the preface, a stream never opened), and the direction that sent them.
    /// `framing`: below a decrypting stage, the TLS record overhead that came with those bytes (their share).
    public var controlCharge: ((_ index: Int?, _ direction: Direction, _ bytes: Int, _ framing: Int) -> Void)?
    let client: HTTP2Side
    let server: HTTP2Side
    var streams: [UInt32: HTTP2Stream] = [:]
    var resetOrder: [UInt32] = []
    var recentIndexes: [UInt32: Int] = [:]
    var recentOrder: [UInt32] = []
    var recentNext = 0
    var nextIndex: Int
    let defaultHost: String
    var template: MessageRecord
    private var finished = false
    /// Streams that carried a message.
    public internal(set) var streamCount = 0

    /// `upgraded`: the connection switched from HTTP/1.1 (`Upgrade: h2c`, RFC 7540 §3.2) on that request:
    /// stream 1 is its response, already half-closed by the client, and the client's first bytes here are its
    /// preface.
    public init(
        info: TCPConnectionInfo, scratch: DecodingScratch = DecodingScratch(), limits: HTTP2Limits = .init(),
        decrypted: Bool = false, upgraded: HTTPConnectionParser.UpgradedRequest? = nil,
        emit: @escaping (MessageRecord) -> Void
    ) {
        self.info = info
        self.limits = limits
        self.scratch = scratch
        self.emit = emit
        let address = info.server.address
        var host = address.isIPv6 ? "[\(address)]" : "\(address)"
        if info.server.port != (decrypted ? 443 : 80) { host += ":\(info.server.port)" }
        defaultHost = host
        template = MessageRecord(
            connection: info.id, index: 0, kind: .request, time: info.start, client: info.client.description,
            server: info.server.description, host: host, path: "")
        template.decodedBodyBytes = 0
        template.decrypted = decrypted
        client = HTTP2Side(direction: .clientToServer, limits: limits.hpack)
        server = HTTP2Side(direction: .serverToClient, limits: limits.hpack)
        client.prefaceMatched = 0
        nextIndex = 1
        if let upgraded {
            let exchange = upgraded.index
            let stream = HTTP2Stream(id: 1, index: exchange, pushed: false)
            stream.method = upgraded.method
            stream.host = upgraded.host
            stream.path = upgraded.path
            stream.query = upgraded.query
            // The request was the HTTP/1.1 one, already a record: nothing of it is emitted here.
            let request = HTTP2Message(record: template)
            request.ended = true
            request.emitted = true
            stream.request = request
            stream.answered = true
            streams[1] = stream
            streamCount = 1
            nextIndex = exchange + 1
        }
    }

    /// Where the bytes of `direction` went so far (final after `finish`).
    public func counts(for direction: Direction) -> HTTP2ByteCounts { side(direction).counts }
    /// Segment header bytes of `direction` in no record: control frames and non-HTTP stretches.
    public func unattributedSegmentHeaderBytes(for direction: Direction) -> Int { side(direction).headerShare }
    /// TLS record overhead of `direction` in no record.
    public func unattributedFramingBytes(for direction: Direction) -> Int { side(direction).framingShare }

    private func side(_ direction: Direction) -> HTTP2Side { direction == .clientToServer ? client : server }
    private func peer(_ side: HTTP2Side) -> HTTP2Side { side === client ? server : client }

    // MARK: StreamAnalyzer

    public func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        guard !finished, !bytes.isEmpty else { return }
        if direction == .clientToServer {
            receive(bytes, side: client, span: span)
        } else {
            receive(bytes, side: server, span: span)
        }
    }

    private func receive(_ bytes: UnsafeRawBufferPointer, side: HTTP2Side, span: WireSpan) {
        side.base = side.counts.receivedBytes &+ side.counts.missingBytes
        side.counts.receivedBytes &+= bytes.count
        side.time = span.time
        var shares = OverheadShares(count: bytes.count, overhead: span.overheadBytes, framing: span.framingBytes)
        var offset = 0
        while offset < bytes.count {
            let start = offset
            switch side.state {
            case .preface:
                let n = min(Self.preface.count - side.prefaceMatched, bytes.count - offset)
                var matches = true
                for i in 0..<n where bytes[offset + i] != Self.preface[side.prefaceMatched + i] {
                    matches = false
                    break
                }
                guard matches else {
                    side.state = .lost
                    continue
                }
                offset += n
                side.prefaceMatched += n
                side.counts.controlBytes &+= n
                side.owner = .control
                give(&shares, upTo: offset, side)
                charge(nil, side, bytes: n)
                if side.prefaceMatched == Self.preface.count { side.state = .header }
            case .header:
                if side.headerFill == 0 {
                    side.frameTime = span.time
                    side.frameOffset = side.base &+ offset
                    if bytes.count - offset >= 9 {
                        // The whole header is here (almost always): read it where it is.
                        offset += 9
                        beginFrame(side, UnsafeRawBufferPointer(rebasing: bytes[(offset - 9)..<offset]))
                        give(&shares, upTo: offset, side)
                        if side.state == .payload, side.remaining == 0 { endFrame(side) }
                        continue
                    }
                }
                let n = min(9 - side.headerFill, bytes.count - offset)
                for i in 0..<n { side.header[side.headerFill + i] = bytes[offset + i] }
                side.headerFill += n
                offset += n
                guard side.headerFill == 9 else {
                    // The owner is known with the whole header: its share waits in the side.
                    shares.hold(upTo: offset, in: side)
                    continue
                }
                side.headerFill = 0
                side.header.withUnsafeBytes { beginFrame(side, $0) }
                give(&shares, upTo: offset, side)
                if side.state == .payload, side.remaining == 0 { endFrame(side) }
            case .payload:
                let n = min(side.remaining, bytes.count - offset)
                payload(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]), side)
                offset += n
                side.remaining -= n
                give(&shares, upTo: offset, side)
                if side.remaining == 0 { endFrame(side) }
            case .resync:
                if let found = findFrameHeader(bytes, from: offset, side) {
                    side.counts.nonHTTPBytes &+= found - offset
                    offset = found
                    side.state = .header
                } else {
                    side.counts.nonHTTPBytes &+= bytes.count - offset
                    offset = bytes.count
                }
                if offset > start { shares.give(upTo: offset, to: side) }
            case .lost:
                side.counts.nonHTTPBytes &+= bytes.count - offset
                offset = bytes.count
                shares.give(upTo: offset, to: side)
            }
        }
    }

    /// The overhead share of the bytes up to `end` goes to the current frame's owner: its message's record,
    /// the header block in progress, or the side (control frames).
    private func give(_ shares: inout OverheadShares, upTo end: Int, _ side: HTTP2Side) {
        let (header, framing) = shares.take(upTo: end)
        let heldHeader = side.heldHeaderShare, heldFraming = side.heldFramingShare
        side.heldHeaderShare = 0
        side.heldFramingShare = 0
        let h = header &+ heldHeader, f = framing &+ heldFraming
        guard h != 0 || f != 0 else { return }
        switch side.owner {
        case .message(let stream):
            if side === client {
                stream.request?.record.segmentHeaderBytes &+= h
                stream.request?.record.tlsOverheadBytes &+= f
            } else {
                stream.response?.record.segmentHeaderBytes &+= h
                stream.response?.record.tlsOverheadBytes &+= f
            }
        case .block:
            side.blockHeaderShare &+= h
            side.blockFramingShare &+= f
        case .control:
            side.headerShare &+= h
            side.controlFraming &+= f
        }
    }

    /// Control bytes go to their exchange (or the connection) with the TLS framing they brought; without a
    /// taker (no `--overhead`) the framing stays in no record.
    func charge(_ index: Int?, _ side: HTTP2Side, bytes: Int) {
        if let controlCharge {
            controlCharge(index, side.direction, bytes, side.controlFraming)
        } else {
            side.framingShare &+= side.controlFraming
        }
        side.controlFraming = 0
    }

    public func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard !finished, byteCount > 0 else { return }
        let side = side(direction)
        side.counts.missingBytes &+= byteCount
        side.time = time
        switch side.state {
        case .payload where byteCount < side.remaining:
            // Inside one frame: the framing holds.
            side.remaining -= byteCount
            switch side.owner {
            case .message(let stream):
                if side === client { stream.request?.lose(byteCount) } else { stream.response?.lose(byteCount) }
            case .block:
                side.blockLost = true
                side.blockMissing &+= byteCount
            case .control:
                side.payloadLost = true
            }
        case .payload:
            // The rest of the frame and what followed: the framing is lost.
            let inFrame = side.remaining
            switch side.owner {
            case .message(let stream):
                if side === client { stream.request?.lose(inFrame) } else { stream.response?.lose(inFrame) }
            case .block:
                side.blockLost = true
                side.blockMissing &+= inFrame
            case .control: break
            }
            side.remaining = 0
            loseFraming(side)
        case .header, .preface:
            loseFraming(side)
        case .resync, .lost:
            break
        }
    }

    /// A gap reached past a frame: every open message of the side may have lost bytes, a header block in
    /// progress is gone, and HPACK's table with it.
    private func loseFraming(_ side: HTTP2Side) {
        side.headerFill = 0
        if side.state != .lost { side.state = .resync }
        side.hpack.loseState()
        if side.blockStream != nil { endBlockLost(side) }
        let isClient = side === client
        for stream in streams.values {
            if isClient {
                if stream.request?.ended == false { stream.request?.lose(0) }
            } else if stream.response?.ended == false {
                stream.response?.lose(0)
            }
        }
    }

    public func finish(time: CaptureTime) {
        guard !finished else { return }
        for side in [client, server] {
            if side.state == .payload, side.owner.isControl { chargeFrame(side) }
            if side.blockStream != nil { endBlockLost(side, truncated: true) }
            // Framing of control bytes never charged (a frame that broke the framing).
            side.framingShare &+= side.controlFraming
            side.controlFraming = 0
        }
        for id in streams.keys.sorted() {
            if let stream = streams[id] { close(stream, truncated: true) }
        }
        streams = [:]
        resetOrder = []
        recentIndexes = [:]
        recentOrder = []
        recentNext = 0
        finished = true
    }
}

// MARK: - Frames

extension HTTP2ConnectionParser {
    /// The 9-byte header is complete (RFC 9113 §4.1): checks it and sets the frame's owner.
    private func beginFrame(_ side: HTTP2Side, _ h: UnsafeRawBufferPointer) {
        let length = Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2])
        let type = h[3], flags = h[4]
        let id = (UInt32(h[5]) << 24 | UInt32(h[6]) << 16 | UInt32(h[7]) << 8 | UInt32(h[8])) & 0x7fff_ffff
        side.type = type
        side.flags = flags
        side.stream = id
        side.length = length
        side.remaining = length
        side.payloadLost = false
        side.frameCaptured = 9
        side.payload.removeAll(keepingCapacity: true)
        side.state = .payload
        // A peer that never sent SETTINGS in the capture may have raised the limit before it began.
        let maxFrame = peer(side).settingsSeen ? side.maxFrameSize : 16_777_215
        if length > maxFrame { return frameError(side) }
        if side.blockStream != nil, type != HTTP2FrameType.continuation.rawValue || id != side.blockStream {
            return frameError(side)
        }
        switch HTTP2FrameType(rawValue: type) {
        case .data:
            guard id != 0 else { return frameError(side) }
            let stream = openMessage(id, side)
            side.owner = .message(stream)
            side.padPending = flags & 0x8 != 0
            side.padRemaining = 0
            side.counts.messageBytes &+= 9
            if side === client { stream.request?.record.bodyBytes &+= 9 } else { stream.response?.record.bodyBytes &+= 9 }
        case .headers:
            guard id != 0 else { return frameError(side) }
            beginBlock(side, stream: id, push: false)
        case .pushPromise:
            guard id != 0, side === server else { return frameError(side) }
            beginBlock(side, stream: id, push: true)
        case .continuation:
            guard side.blockStream == id, id != 0 else { return frameError(side) }
            side.blockFrameBytes &+= 9
            if side.blockIsPush { side.counts.controlBytes &+= 9 } else { side.counts.messageBytes &+= 9 }
        case .settings:
            let ack = flags & 0x1 != 0
            guard id == 0, ack ? length == 0 : length % 6 == 0 else { return frameError(side) }
            control(side)
        case .ping:
            guard id == 0, length == 8 else { return frameError(side) }
            control(side)
        case .goaway:
            guard id == 0, length >= 8 else { return frameError(side) }
            control(side)
        case .rstStream:
            guard id != 0, length == 4 else { return frameError(side) }
            control(side)
        case .priority:
            guard id != 0, length == 5 else { return frameError(side) }
            control(side)
        case .windowUpdate:
            guard length == 4 else { return frameError(side) }
            control(side)
        case nil:
            // §4.1: unknown types are ignored by peers; they are control bytes here.
            control(side)
        }
    }

    private func control(_ side: HTTP2Side) {
        side.owner = .control
        side.counts.controlBytes &+= 9
    }

    private func beginBlock(_ side: HTTP2Side, stream id: UInt32, push: Bool) {
        side.blockStream = id
        side.blockIsPush = push
        side.blockFrameBytes = 9
        side.blockMissing = 0
        side.blockEndStream = side.flags & 0x1 != 0 && !push
        side.blockLost = false
        side.blockTooLarge = false
        side.blockPromised = nil
        side.block.removeAll(keepingCapacity: true)
        side.blockTime = side.frameTime
        side.blockOffset = side.frameOffset
        side.blockHeaderShare = 0
        side.blockFramingShare = 0
        side.owner = push ? .control : .block
        if push { side.counts.controlBytes &+= 9 } else { side.counts.messageBytes &+= 9 }
    }

    /// Payload bytes of the current frame, in order.
    private func payload(_ bytes: UnsafeRawBufferPointer, _ side: HTTP2Side) {
        side.frameCaptured &+= bytes.count
        switch side.owner {
        case .message(let stream):
            side.counts.messageBytes &+= bytes.count
            var data = bytes
            // Bytes of the frame left when this piece begins (`remaining` is lowered after it).
            var left = side.remaining
            // §6.1: Pad Length, data, then that many bytes of padding.
            if side.padPending, !data.isEmpty {
                side.padPending = false
                side.padRemaining = Int(data[0])
                data = UnsafeRawBufferPointer(rebasing: data.dropFirst())
                left -= 1
                // Padding as long as the payload or longer is a PROTOCOL_ERROR; counted as padding anyway.
            }
            let dataEnd = max(0, min(data.count, left - side.padRemaining))
            let isClient = side === client
            if isClient { stream.request?.record.bodyBytes &+= bytes.count } else { stream.response?.record.bodyBytes &+= bytes.count }
            if dataEnd > 0 {
                let piece = UnsafeRawBufferPointer(rebasing: data[..<dataEnd])
                if isClient {
                    stream.request?.data(piece, scratch: scratch, limits: limits.http.decoding, keep: limits.http.maxKeptRequestBodyBytes)
                } else {
                    stream.response?.data(piece, scratch: scratch, limits: limits.http.decoding, keep: 0)
                }
            }
        case .block:
            side.counts.messageBytes &+= bytes.count
            side.blockFrameBytes &+= bytes.count
            buffer(bytes, side)
        case .control:
            side.counts.controlBytes &+= bytes.count
            if side.blockIsPush, side.blockStream != nil {
                side.blockFrameBytes &+= bytes.count
                buffer(bytes, side)
            } else if side.type == HTTP2FrameType.settings.rawValue || side.type == HTTP2FrameType.rstStream.rawValue {
                side.payload.append(contentsOf: bytes)
            }
        }
    }

    /// Header-block frames are kept until they end (fragments go to the block then), within the block limit.
    private func buffer(_ bytes: UnsafeRawBufferPointer, _ side: HTTP2Side) {
        if side.payload.count &+ side.block.count &+ bytes.count > limits.maxHeaderBlockBytes {
            side.blockTooLarge = true
            side.payload.removeAll()
            return
        }
        if !side.blockTooLarge { side.payload.append(contentsOf: bytes) }
    }

    private func endFrame(_ side: HTTP2Side) {
        side.state = .header
        let flags = side.flags
        switch HTTP2FrameType(rawValue: side.type) {
        case .data:
            if case .message(let stream) = side.owner, flags & 0x1 != 0 { endMessage(stream, side) }
        case .headers, .pushPromise, .continuation:
            if !side.blockTooLarge, !side.blockLost, !side.payloadLost { appendFragment(side) }
            if side.blockIsPush { chargeFrame(side) }
            if flags & 0x4 != 0 { endBlock(side) }
        case .settings:
            chargeFrame(side)
            if !side.payloadLost { settings(side, ack: flags & 0x1 != 0) }
        case .rstStream:
            chargeFrame(side)
            if let stream = streams[side.stream] { resetStream(stream) }
        default:
            chargeFrame(side)
        }
    }

    /// Control bytes of the frame just read go to its stream's exchange, or to the connection.
    private func chargeFrame(_ side: HTTP2Side) {
        let id = side.blockIsPush && side.blockStream != nil ? side.blockStream! : side.stream
        let index = id == 0 ? nil : streams[id]?.index ?? recentIndexes[id]
        charge(index, side, bytes: side.frameCaptured)
        side.frameCaptured = 0
    }

    /// The fragment of a HEADERS, PUSH_PROMISE or CONTINUATION payload (§6.2, §6.6, §6.10): without pad
    /// length, priority fields, promised stream id and padding.
    private func appendFragment(_ side: HTTP2Side) {
        let p = side.payload
        var start = 0, end = p.count
        let type = side.type, flags = side.flags
        if type != HTTP2FrameType.continuation.rawValue {
            if flags & 0x8 != 0 {
                guard !p.isEmpty else { return frameErrorInBlock(side) }
                end -= Int(p[0])
                start = 1
            }
            if type == HTTP2FrameType.headers.rawValue, flags & 0x20 != 0 { start += 5 }
            if type == HTTP2FrameType.pushPromise.rawValue {
                guard start + 4 <= p.count else { return frameErrorInBlock(side) }
                side.blockPromised =
                    (UInt32(p[start]) << 24 | UInt32(p[start + 1]) << 16 | UInt32(p[start + 2]) << 8 | UInt32(p[start + 3]))
                    & 0x7fff_ffff
                start += 4
            }
        }
        guard start <= end else { return frameErrorInBlock(side) }
        if side.block.count &+ (end - start) > limits.maxHeaderBlockBytes {
            side.blockTooLarge = true
            return
        }
        side.block.append(contentsOf: p[start..<end])
    }

    /// Padding longer than the frame: the block cannot be read (a PROTOCOL_ERROR for a peer).
    private func frameErrorInBlock(_ side: HTTP2Side) {
        side.blockLost = true
    }

    /// §6.5: SETTINGS_HEADER_TABLE_SIZE bounds the peer's encoder once the peer acknowledges it;
    /// SETTINGS_MAX_FRAME_SIZE bounds the frames the peer sends.
    private func settings(_ side: HTTP2Side, ack: Bool) {
        let other = peer(side)
        if ack {
            // The acknowledging side's encoder now uses the table size the other side advertised.
            if !other.advertisedTableSizes.isEmpty {
                if let size = other.advertisedTableSizes.removeFirst() { side.hpack.setTableSizeLimit(size) }
            }
            return
        }
        side.settingsSeen = true
        var tableSize: Int?
        let p = side.payload
        var i = 0
        while i + 6 <= p.count {
            let id = UInt16(p[i]) << 8 | UInt16(p[i + 1])
            let value = Int(p[i + 2]) << 24 | Int(p[i + 3]) << 16 | Int(p[i + 4]) << 8 | Int(p[i + 5])
            switch id {
            case 0x1: tableSize = value
            case 0x5: if value >= 16_384, value <= 16_777_215 { other.maxFrameSize = max(other.maxFrameSize, value) }
            default: break
            }
            i += 6
        }
        // A long queue means acknowledgements are not coming (one side not captured): keep the newest only.
        if side.advertisedTableSizes.count >= 16 { side.advertisedTableSizes.removeFirst() }
        side.advertisedTableSizes.append(tableSize)
    }

    /// A frame a peer would call a connection error: the rest of the direction is non-HTTP.
    private func frameError(_ side: HTTP2Side) {
        // The 9 header bytes were not counted anywhere yet.
        side.counts.nonHTTPBytes &+= 9
        side.owner = .control
        side.state = .lost
        side.remaining = 0
        side.hpack.loseState()
        if side.blockStream != nil { endBlockLost(side) }
        let isClient = side === client
        for stream in streams.values {
            if isClient {
                if stream.request?.ended == false { stream.request?.record.flag(.frameError) }
            } else if stream.response?.ended == false {
                stream.response?.record.flag(.frameError)
            }
        }
    }

    /// Looks for a plausible frame header after a gap: a known type with a length within bounds on a stream
    /// that fits it, followed by another plausible header when the delivery holds one.
    private func findFrameHeader(_ bytes: UnsafeRawBufferPointer, from start: Int, _ side: HTTP2Side) -> Int? {
        guard bytes.count >= 9 else { return nil }
        var i = start
        while i + 9 <= bytes.count {
            if let length = plausibleHeader(bytes, at: i, side) {
                let next = i + 9 + length
                if next + 9 > bytes.count || plausibleHeader(bytes, at: next, side) != nil { return i }
            }
            i += 1
        }
        return nil
    }

    private func plausibleHeader(_ b: UnsafeRawBufferPointer, at i: Int, _ side: HTTP2Side) -> Int? {
        let length = Int(b[i]) << 16 | Int(b[i + 1]) << 8 | Int(b[i + 2])
        let type = b[i + 3], flags = b[i + 4]
        guard b[i + 5] & 0x80 == 0, length <= side.maxFrameSize else { return nil }
        let id = UInt32(b[i + 5]) << 24 | UInt32(b[i + 6]) << 16 | UInt32(b[i + 7]) << 8 | UInt32(b[i + 8])
        switch HTTP2FrameType(rawValue: type) {
        case .data: return id != 0 && streams[id] != nil && flags & ~0x09 == 0 ? length : nil
        case .headers: return id != 0 && flags & ~0x2d == 0 && (id & 1 == 1 || streams[id] != nil) ? length : nil
        case .priority: return id != 0 && length == 5 && flags == 0 ? length : nil
        case .rstStream: return id != 0 && length == 4 && flags == 0 ? length : nil
        case .settings: return id == 0 && (flags == 0 ? length % 6 == 0 : flags == 1 && length == 0) ? length : nil
        case .pushPromise: return side === server && id != 0 && flags & ~0x0c == 0 ? length : nil
        case .ping: return id == 0 && length == 8 && flags & ~0x01 == 0 ? length : nil
        case .goaway: return id == 0 && length >= 8 && flags == 0 ? length : nil
        case .windowUpdate: return length == 4 && flags == 0 ? length : nil
        case .continuation, nil: return nil
        }
    }
}

/// The share of a delivery's packet overhead (`WireSpan.overheadBytes`) and TLS framing (`framingBytes`)
/// that its bytes up to a position carry, by cumulative rounding so that the shares sum to the whole.
struct OverheadShares {
    let count: Int
    let overhead: Int
    let framing: Int
    private var givenOverhead = 0
    private var givenFraming = 0

    init(count: Int, overhead: Int, framing: Int) {
        self.count = count
        self.overhead = overhead
        self.framing = framing
    }

    mutating func take(upTo end: Int) -> (overhead: Int, framing: Int) {
        guard count > 0, overhead | framing != 0 else { return (0, 0) }
        let o = overhead.multipliedReportingOverflow(by: end).partialValue / count
        let f = framing.multipliedReportingOverflow(by: end).partialValue / count
        defer {
            givenOverhead = o
            givenFraming = f
        }
        return (o - givenOverhead, f - givenFraming)
    }

    /// To the side itself: bytes in no record.
    mutating func give(upTo end: Int, to side: HTTP2Side) {
        let (o, f) = take(upTo: end)
        side.headerShare &+= o
        side.framingShare &+= f
    }

    /// Held until the frame's owner is known.
    mutating func hold(upTo end: Int, in side: HTTP2Side) {
        let (o, f) = take(upTo: end)
        side.heldHeaderShare &+= o
        side.heldFramingShare &+= f
    }
}
