import TrafficCapture
import TrafficHTTP2
import TrafficReassembly
import TrafficSessions

/// RFC 9114 §7.2 frame types this parser tells apart.
enum HTTP3FrameType {
    static let data: UInt64 = 0x0
    static let headers: UInt64 = 0x1
    static let cancelPush: UInt64 = 0x3
    static let settings: UInt64 = 0x4
    static let pushPromise: UInt64 = 0x5
    static let goaway: UInt64 = 0x7
    static let maxPushID: UInt64 = 0xd

    /// Frames a request stream may not carry (§7.2.3–7.2.7: control-stream frames; §7.2.8: HTTP/2's types
    /// 0x2, 0x6, 0x8, 0x9 with no HTTP/3 meaning): H3_FRAME_UNEXPECTED.
    static func isForbiddenOnRequestStream(_ type: UInt64) -> Bool {
        switch type {
        case cancelPush, settings, goaway, maxPushID, 0x2, 0x6, 0x8, 0x9: true
        default: false
        }
    }
}

/// RFC 9114 §6.2 unidirectional stream types.
enum HTTP3StreamType {
    static let control: UInt64 = 0x00
    static let push: UInt64 = 0x01
    static let qpackEncoder: UInt64 = 0x02
    static let qpackDecoder: UInt64 = 0x03
}

extension HTTP3ConnectionParser {
    /// Reads `bytes` of a side that is not blocked; returns how many it took (fewer only when a field section
    /// blocked the side: the rest must be held).
    func process(_ side: HTTP3StreamSide, _ bytes: UnsafeRawBufferPointer, time: CaptureTime) -> Int {
        side.time = time
        var offset = 0
        let count = bytes.count
        while offset < count {
            if side.blocked != nil { break }
            switch side.role {
            case .unparsed:
                addUnparsed(side, count - offset)
                offset = count
            case .other:
                addControl(side, count - offset)
                offset = count
            case .encoder:
                let piece = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                addControl(side, piece.count)
                offset = count
                let decoder = qpack[side.direction.rawValue]
                if !decoder.isLost {
                    do { try decoder.readEncoderStream(piece) } catch {}
                    retryBlocked(side.direction)
                }
            case .pendingType:
                // §6.2: the stream type, a varint.
                let octet = bytes[offset]
                offset += 1
                side.headerCount += 1
                if let type = side.varint.feed(octet) { setType(side, type) }
            case .request, .control:
                if side.inPayload {
                    let n = min(side.remaining, count - offset)
                    // A whole HEADERS payload in this delivery is decoded where it is, without a copy.
                    if side.kind == .headers, side.sectionCaptured == 0, n == side.remaining {
                        let frame = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
                        side.sectionCaptured = n
                        side.remaining = 0
                        offset += n
                        headersDone(side, section: side.tooLarge ? nil : frame)
                        continue
                    }
                    payload(side, UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]))
                    offset += n
                    side.remaining -= n
                    if side.remaining == 0 { endFrame(side) }
                } else {
                    if side.headerCount == 0 {
                        side.frameTime = time
                        side.frameOffset = side.offset &+ offset
                    }
                    let octet = bytes[offset]
                    offset += 1
                    side.headerCount += 1
                    guard let value = side.varint.feed(octet) else { continue }
                    if !side.readingLength {
                        side.frameType = value
                        side.readingLength = true
                    } else {
                        side.readingLength = false
                        beginFrame(side, length: Int(value))
                    }
                }
            }
        }
        side.offset &+= offset
        return offset
    }

    /// The stream type is read: the side's role, its type octets counted as control.
    private func setType(_ side: HTTP3StreamSide, _ type: UInt64) {
        addControl(side, side.headerCount)
        side.headerCount = 0
        switch type {
        case HTTP3StreamType.control: side.role = .control
        case HTTP3StreamType.qpackEncoder: side.role = .encoder
        default: side.role = .other  // push, QPACK decoder, reserved (0x1f·N + 0x21) and unknown types
        }
        lateOverheadBytes[side.direction.rawValue] &+= side.pendingOverhead
        side.pendingOverhead = 0
    }

    /// The frame header is read (`side.frameType`, `length`): what its payload is, and where its header octets go.
    private func beginFrame(_ side: HTTP3StreamSide, length: Int) {
        let type = side.frameType
        // Until classified (a frame error settles the side on the spot): not the previous frame's kind.
        side.kind = .control
        side.remaining = length
        side.inPayload = true
        side.sectionCaptured = 0
        side.sectionMissing = 0
        side.tooLarge = false
        if side.role == .control {
            addControl(side, side.headerCount)
            side.headerCount = 0
            side.kind = type == HTTP3FrameType.settings && !settingsSeen[side.direction.rawValue] ? .settings : .control
            if side.kind == .settings, length > 4096 { side.kind = .control }  // a real SETTINGS is a few octets
            side.section.removeAll(keepingCapacity: true)
        } else if type == HTTP3FrameType.data {
            guard side.progress == .body, let message = side.current else { return frameError(side) }
            message.record.bodyBytes &+= side.headerCount
            side.headerCount = 0
            side.kind = .data
        } else if type == HTTP3FrameType.headers {
            guard side.progress != .trailers else { return frameError(side) }
            side.kind = .headers
            side.section.removeAll(keepingCapacity: true)
            // The header octets are counted with the frame when it ends (head or trailers).
            if length > limits.maxFieldSectionBytes || bufferedSectionBytes &+ length > limits.maxBufferedSectionBytes {
                side.tooLarge = true
            }
        } else if HTTP3FrameType.isForbiddenOnRequestStream(type)
            || (type == HTTP3FrameType.pushPromise && side.isClient)
        {
            return frameError(side)
        } else {
            // PUSH_PROMISE (a pushed response is not followed), reserved 0x1f·N + 0x21 and unknown types (§9: ignored).
            addControl(side, side.headerCount)
            side.headerCount = 0
            side.kind = .control
        }
        if length == 0 { endFrame(side) }
    }

    /// Payload octets of the frame in progress (not a HEADERS frame read whole in one delivery).
    private func payload(_ side: HTTP3StreamSide, _ bytes: UnsafeRawBufferPointer) {
        switch side.kind {
        case .data:
            guard let message = side.current else { return addUnparsed(side, bytes.count) }
            message.record.bodyBytes &+= bytes.count
            message.record.lastByteTime = side.time
            message.data(
                bytes, scratch: scratch, limits: limits.http.decoding,
                keep: side.isClient ? limits.http.maxKeptRequestBodyBytes : 0)
        case .headers:
            side.sectionCaptured &+= bytes.count
            if !side.tooLarge {
                side.section.append(contentsOf: bytes)
                bufferedSectionBytes &+= bytes.count
            }
        case .settings:
            addControl(side, bytes.count)
            side.section.append(contentsOf: bytes)
        case .control:
            addControl(side, bytes.count)
        }
    }

    /// The frame's last payload octet was read (or skipped).
    func endFrame(_ side: HTTP3StreamSide) {
        side.inPayload = false
        switch side.kind {
        case .headers:
            let section = side.section
            bufferedSectionBytes &-= side.tooLarge ? 0 : section.count
            side.section = []
            if side.tooLarge || side.sectionMissing > 0 {
                headersDone(side, section: nil)
            } else {
                section.withUnsafeBytes { headersDone(side, section: $0) }
            }
        case .settings:
            settings(side)
            side.section = []
        case .data, .control:
            break
        }
    }

    /// A HEADERS frame is complete: its section (nil when it was not kept: over the limit or with a gap) opens a
    /// message or ends one as trailers.
    private func headersDone(_ side: HTTP3StreamSide, section: UnsafeRawBufferPointer?) {
        side.inPayload = false
        let frameBytes = side.headerCount &+ side.sectionCaptured
        side.headerCount = 0
        let missing = side.sectionMissing
        switch side.progress {
        case .body:
            // §4.1: a HEADERS frame after the message's DATA is its trailer section, counted as body.
            if let message = side.current {
                message.record.bodyBytes &+= frameBytes
                message.record.lastByteTime = side.time
                if missing > 0 { message.lose(missing) }
            }
            side.progress = .trailers
            return
        case .trailers:
            preconditionFailure("HEADERS after trailers is refused in beginFrame")
        case .head:
            break
        }
        if !side.isClient, let stream = side.stream { answered(stream) }
        guard let section else {
            var summary = HTTP2HeaderSummary()
            summary.failed = true
            summary.decodedBytes = nil
            summary.cookieDecodedBytes = nil
            makeHead(
                side, summary, frameBytes: frameBytes, missing: missing, time: side.frameTime, offset: side.frameOffset,
                lastTime: side.time, tooLarge: side.tooLarge)
            return
        }
        if let summary = decodeSection(section, side: side, force: false) {
            makeHead(
                side, summary, frameBytes: frameBytes, missing: 0, time: side.frameTime, offset: side.frameOffset,
                lastTime: side.time)
            return
        }
        // Blocked (RFC 9204 §2.1.2): kept until the encoder stream catches up.
        side.blocked = HTTP3StreamSide.Blocked(
            section: Array(section), frameBytes: frameBytes, time: side.frameTime, offset: side.frameOffset,
            lastTime: side.time)
        bufferedSectionBytes &+= section.count
        block(side)
    }

    /// Decodes a field section into a summary; nil when it is blocked (and not `force`d).
    func decodeSection(_ section: [UInt8], side: HTTP3StreamSide, force: Bool) -> HTTP2HeaderSummary? {
        section.withUnsafeBytes { decodeSection($0, side: side, force: force) }
    }

    func decodeSection(_ section: UnsafeRawBufferPointer, side: HTTP3StreamSide, force: Bool) -> HTTP2HeaderSummary? {
        var summary = HTTP2HeaderSummary()
        let request = side.isClient
        let keep = limits.http.maxKeptHeadBytes
        let outcome: QPACKDecoder.Outcome
        do {
            outcome = try qpack[side.direction.rawValue].decode(section: section, force: force) { field in
                summary.add(field, request: request, keep: keep)
            }
        } catch {
            summary.failed = true
            summary.decodedBytes = nil
            summary.cookieDecodedBytes = nil
            return summary
        }
        switch outcome {
        case .blocked: return nil
        case .decoded(let complete):
            if !complete {
                summary.failed = true
                summary.decodedBytes = nil
                summary.cookieDecodedBytes = nil
            }
            return summary
        }
    }

    /// §7.2.4: the first SETTINGS of a control stream. SETTINGS_QPACK_MAX_TABLE_CAPACITY (0x01) is the sender's
    /// limit as a decoder: it bounds the encoder of the other direction (RFC 9204 §3.2.3).
    private func settings(_ side: HTTP3StreamSide) {
        let d = side.direction.rawValue
        settingsSeen[d] = true
        var capacity = 0
        side.section.withUnsafeBytes { p in
            var i = 0
            while case let (id, n)? = QUICVarint.read(p, at: i), case let (value, m)? = QUICVarint.read(p, at: i + n) {
                if id == 0x01 { capacity = Int(value) }
                i += n + m
            }
        }
        let other = side.direction.opposite
        qpack[other.rawValue].maxTableCapacity = capacity
        retryBlocked(other)
    }

    /// A frame a request stream may not carry: the stream direction is given up (H3_FRAME_UNEXPECTED).
    private func frameError(_ side: HTTP3StreamSide) {
        side.current?.record.flag(.frameError)
        giveUp(side, flag: .frameError)
    }
}
