/// `--h2`: the exchanges of one connection as HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3), planned as
/// alternating flights of frames — the client's, then the server's, and so on — that `SimulatedConnection`
/// cuts into TCP segments like HTTP/1 messages.
///
/// - The client opens with the 24-byte preface, its SETTINGS and a connection WINDOW_UPDATE (browser-like
///   values per User-Agent), then at once the HEADERS of its first requests, on streams 1, 3, 5, …. The server
///   (nginx-like: SETTINGS_MAX_CONCURRENT_STREAMS 128, SETTINGS_INITIAL_WINDOW_SIZE 65536,
///   SETTINGS_MAX_FRAME_SIZE 16777215, a connection WINDOW_UPDATE to 2^31 − 1) answers with its SETTINGS, the
///   ack of the client's, and the first responses; the client acks the server's SETTINGS in its next flight.
/// - Requests go in waves of a few streams: the client opens the next wave when every response of the last one
///   has ended. The server answers each request in the flight after its END_STREAM, HEADERS first, then DATA
///   frames of all its open responses round-robin (frames of 8192 or 16384 bytes per connection, never above
///   the 16384 default SETTINGS_MAX_FRAME_SIZE), so concurrent responses interleave.
/// - Flow control is honoured both ways (RFC 9113 §6.9): a sender stops at the stream's or the connection's
///   window; the receiver sends WINDOW_UPDATE in its next flight for what it took once that is half a window
///   (as nghttp2 and Chrome do). Request bodies over 64 KiB (uploads) thus cross in several flights, with the
///   server's WINDOW_UPDATEs in between, and so do downloads larger than a client's stream window.
/// - Now and then the client sends a PING, acked in the server's next flight. The side that closes sends GOAWAY
///   (NO_ERROR) in its last flight: the server when the model has it close, else the client.
/// - Header blocks are HPACK-encoded (`HPACKEncoder`, one per direction), split into CONTINUATION frames past
///   16384 bytes; Chrome-like clients send the HEADERS PRIORITY fields (exclusive dependency on the previous
///   stream, weight 256). No padding.
struct HTTP2Connection {
    /// The wire flights, alternating, the client's first.
    private(set) var flights: [MessageBytes] = []
    /// Per exchange, in the vocabulary of issue 22's records.
    private(set) var requests: [HTTP2MessageSizes]
    private(set) var responses: [HTTP2MessageSizes]
    /// Bytes of frames that are in no record (preface, SETTINGS, WINDOW_UPDATE, PING, GOAWAY): h2_control_bytes.
    private(set) var clientControlBytes = 0
    private(set) var serverControlBytes = 0
    private(set) var clientBytes = 0
    private(set) var serverBytes = 0
    /// Frames sent, by type number (0 DATA … 9 CONTINUATION).
    private(set) var frames = [Int](repeating: 0, count: 10)

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    static let maxFrameSize = 16384
    static let defaultWindow = 65535
    static let serverSettings: [(UInt16, UInt32)] = [(3, 128), (4, 65536), (5, 16_777_215)]
    static let serverInitialWindow = 65536
    static let serverConnectionIncrement = 2_147_418_112

    private enum Event {
        case settings(initialWindow: Int?)
        case windowUpdate(stream: Int, increment: Int)
        case ping(UInt64)
    }

    private struct Stream {
        var requestSent = 0
        var requestEnded = false
        var responseStarted = false
        var responseSent = 0
        var responseEnded = false
        /// DATA each side may still send on the stream.
        var clientWindow = 0
        var serverWindow = 0
        /// DATA received on the stream since the receiver's last WINDOW_UPDATE for it.
        var serverReceived = 0
        var clientReceived = 0
    }

    private let exchanges: [HTTP2Exchange]
    private let profile: HTTP2ClientProfile
    private let serverCloses: Bool
    private let serverFrameSize: Int
    private let waveSizes: ClosedRange<Int>
    private var streams: [Stream]
    private var opened = 0
    private var requestEncoder = HPACKEncoder()
    private var responseEncoder = HPACKEncoder()
    /// What each side knows of its peer's settings, and the connection windows it may still send into.
    private var clientConnectionWindow = defaultWindow
    private var streamWindowForClient = defaultWindow
    private var serverConnectionWindow = defaultWindow
    private var streamWindowForServer = defaultWindow
    /// Connection-level DATA received since the receiver's last WINDOW_UPDATE on stream 0.
    private var serverReceived = 0
    private var clientReceived = 0
    /// Frames in flight to each side, taken into account at the start of its next flight.
    private var toServer: [Event] = []
    private var toClient: [Event] = []
    private var finished = false

    init(
        _ exchanges: [HTTP2Exchange], profile: HTTP2ClientProfile, serverCloses: Bool, generator: inout SeededGenerator
    ) {
        self.exchanges = exchanges
        self.profile = profile
        self.serverCloses = serverCloses
        serverFrameSize = generator.chance(0.5) ? 16384 : 8192
        waveSizes = 1...(exchanges.count > 4 ? 4 : max(1, exchanges.count))
        streams = Array(repeating: Stream(), count: exchanges.count)
        requests = Array(repeating: HTTP2MessageSizes(), count: exchanges.count)
        responses = Array(repeating: HTTP2MessageSizes(), count: exchanges.count)
        var flightCount = 0
        while !finished {
            let flight =
                flightCount % 2 == 0
                ? clientFlight(first: flightCount == 0, &generator) : serverFlight(first: flightCount == 1, &generator)
            precondition(!flight.isEmpty, "an empty HTTP/2 flight")
            if flightCount % 2 == 0 { clientBytes += flight.count } else { serverBytes += flight.count }
            flights.append(MessageBytes(assembled: flight))
            flightCount += 1
            precondition(flightCount < 1_000_000, "the HTTP/2 plan does not end")
        }
        let requestBytes = requests.reduce(0) { $0 + $1.headerBytes + $1.bodyBytes }
        let responseBytes = responses.reduce(0) { $0 + $1.headerBytes + $1.bodyBytes }
        precondition(requestBytes + clientControlBytes == clientBytes, "client bytes do not add up")
        precondition(responseBytes + serverControlBytes == serverBytes, "server bytes do not add up")
    }

    private var allResponsesEnded: Bool { streams[..<opened].allSatisfy(\.responseEnded) }

    // MARK: Flights

    private mutating func clientFlight(first: Bool, _ generator: inout SeededGenerator) -> AssembledBytes {
        let flight = AssembledBytes()
        if first {
            let settings = profile.settings
            let increment = profile.connectionWindowIncrement
            control(flight, client: true) { bytes in
                bytes += Self.preface
                Self.settings(settings, into: &bytes)
                Self.windowUpdate(stream: 0, increment: increment, into: &bytes)
            }
            frames[4] += 1
            frames[8] += 1
            toServer += [
                .settings(initialWindow: profile.initialWindow),
                .windowUpdate(stream: 0, increment: profile.connectionWindowIncrement),
            ]
        }
        var ackSettings = false
        var pingAck: UInt64?
        for event in toClient {
            switch event {
            case .settings(let initialWindow):
                ackSettings = true
                if let initialWindow {
                    let delta = initialWindow - streamWindowForServer
                    for index in 0..<opened { streams[index].clientWindow += delta }
                    streamWindowForServer = initialWindow
                }
            case .windowUpdate(0, let increment): clientConnectionWindow += increment
            case .windowUpdate(let stream, let increment): streams[stream / 2].clientWindow += increment
            case .ping(let data): pingAck = data
            }
        }
        toClient.removeAll()
        if ackSettings {
            control(flight, client: true, type: 4) { Self.frameHeader(0, type: 4, flags: 1, stream: 0, into: &$0) }
        }
        if let pingAck { control(flight, client: true, type: 6) { Self.ping(pingAck, ack: true, into: &$0) } }

        // WINDOW_UPDATE for response DATA taken.
        let connectionWindow = Self.defaultWindow + profile.connectionWindowIncrement
        if clientReceived >= connectionWindow / 2 {
            let increment = clientReceived
            control(flight, client: true, type: 8) { Self.windowUpdate(stream: 0, increment: increment, into: &$0) }
            toServer.append(.windowUpdate(stream: 0, increment: increment))
            clientReceived = 0
        }
        for index in 0..<opened
        where !streams[index].responseEnded && streams[index].clientReceived >= profile.initialWindow / 2 {
            let increment = streams[index].clientReceived
            control(flight, client: true, type: 8) {
                Self.windowUpdate(stream: 2 * index + 1, increment: increment, into: &$0)
            }
            toServer.append(.windowUpdate(stream: 2 * index + 1, increment: increment))
            streams[index].clientReceived = 0
        }

        // The next wave of requests once the last one is answered.
        if allResponsesEnded, opened < exchanges.count {
            let count = min(exchanges.count - opened, generator.int(waveSizes))
            for index in opened..<(opened + count) {
                streams[index].clientWindow = streamWindowForServer
                streams[index].serverWindow = streamWindowForClient
                let message = exchanges[index].request
                let dependency = index == 0 ? 0 : 2 * index - 1
                let sizes = headerBlock(
                    message, stream: 2 * index + 1, endStream: message.body.isEmpty,
                    priority: profile.priority ? dependency : nil, client: true, into: flight)
                requests[index].add(sizes)
                if message.body.isEmpty { streams[index].requestEnded = true }
            }
            opened += count
        }

        // Request bodies, one frame per stream in turn, within the windows.
        var progress = true
        while progress {
            progress = false
            for index in 0..<opened where !streams[index].requestEnded {
                let body = exchanges[index].request.body
                let size = min(
                    Self.maxFrameSize, body.count - streams[index].requestSent, streams[index].clientWindow,
                    clientConnectionWindow)
                guard size > 0 else { continue }
                let start = streams[index].requestSent
                let end = start + size == body.count
                requests[index].addData(size)
                data(
                    UnsafeRawBufferPointer(rebasing: body[start..<(start + size)]), stream: 2 * index + 1,
                    endStream: end, into: flight)
                streams[index].requestSent += size
                streams[index].requestEnded = end
                streams[index].clientWindow -= size
                clientConnectionWindow -= size
                streams[index].serverReceived += size
                serverReceived += size
                progress = true
            }
        }

        if opened == exchanges.count, allResponsesEnded {
            if !serverCloses {
                control(flight, client: true, type: 7) { Self.goaway(lastStream: 0, into: &$0) }
            }
            finished = true
        } else if !first, generator.chance(0.05) || flight.isEmpty {
            let data = generator.next()
            control(flight, client: true, type: 6) { Self.ping(data, ack: false, into: &$0) }
            toServer.append(.ping(data))
        }
        return flight
    }

    private mutating func serverFlight(first: Bool, _ generator: inout SeededGenerator) -> AssembledBytes {
        let flight = AssembledBytes()
        if first {
            control(flight, client: false) { bytes in
                Self.settings(Self.serverSettings, into: &bytes)
                Self.windowUpdate(stream: 0, increment: Self.serverConnectionIncrement, into: &bytes)
            }
            frames[4] += 1
            frames[8] += 1
            toClient += [
                .settings(initialWindow: Self.serverInitialWindow),
                .windowUpdate(stream: 0, increment: Self.serverConnectionIncrement),
            ]
        }
        var ackSettings = false
        var pingAck: UInt64?
        for event in toServer {
            switch event {
            case .settings(let initialWindow):
                ackSettings = true
                if let initialWindow {
                    let delta = initialWindow - streamWindowForClient
                    for index in 0..<opened { streams[index].serverWindow += delta }
                    streamWindowForClient = initialWindow
                }
            case .windowUpdate(0, let increment): serverConnectionWindow += increment
            case .windowUpdate(let stream, let increment): streams[stream / 2].serverWindow += increment
            case .ping(let data): pingAck = data
            }
        }
        toServer.removeAll()
        if ackSettings {
            control(flight, client: false, type: 4) { Self.frameHeader(0, type: 4, flags: 1, stream: 0, into: &$0) }
        }
        if let pingAck { control(flight, client: false, type: 6) { Self.ping(pingAck, ack: true, into: &$0) } }

        // WINDOW_UPDATE for request DATA taken (uploads).
        if serverReceived >= (Self.defaultWindow + Self.serverConnectionIncrement) / 2 {
            let increment = serverReceived
            control(flight, client: false, type: 8) { Self.windowUpdate(stream: 0, increment: increment, into: &$0) }
            toClient.append(.windowUpdate(stream: 0, increment: increment))
            serverReceived = 0
        }
        for index in 0..<opened
        where !streams[index].requestEnded && streams[index].serverReceived >= Self.serverInitialWindow / 2 {
            let increment = streams[index].serverReceived
            control(flight, client: false, type: 8) {
                Self.windowUpdate(stream: 2 * index + 1, increment: increment, into: &$0)
            }
            toClient.append(.windowUpdate(stream: 2 * index + 1, increment: increment))
            streams[index].serverReceived = 0
        }

        // Answers to the requests that have ended: HEADERS now, DATA below.
        for index in 0..<opened where streams[index].requestEnded && !streams[index].responseStarted {
            let message = exchanges[index].response
            let sizes = headerBlock(
                message, stream: 2 * index + 1, endStream: message.body.isEmpty, priority: nil, client: false,
                into: flight)
            responses[index].add(sizes)
            streams[index].responseStarted = true
            if message.body.isEmpty { streams[index].responseEnded = true }
        }

        // Response bodies, one frame per stream in turn, within the windows: concurrent responses interleave.
        var progress = true
        while progress {
            progress = false
            for index in 0..<opened where streams[index].responseStarted && !streams[index].responseEnded {
                let body = exchanges[index].response.body
                let size = min(
                    serverFrameSize, body.count - streams[index].responseSent, streams[index].serverWindow,
                    serverConnectionWindow)
                guard size > 0 else { continue }
                let start = streams[index].responseSent
                let end = start + size == body.count
                responses[index].addData(size)
                data(
                    UnsafeRawBufferPointer(rebasing: body[start..<(start + size)]), stream: 2 * index + 1,
                    endStream: end, into: flight)
                streams[index].responseSent += size
                streams[index].responseEnded = end
                streams[index].serverWindow -= size
                serverConnectionWindow -= size
                streams[index].clientReceived += size
                clientReceived += size
                progress = true
            }
        }

        if serverCloses, opened == exchanges.count, allResponsesEnded {
            let last = 2 * exchanges.count - 1
            control(flight, client: false, type: 7) { Self.goaway(lastStream: last, into: &$0) }
            finished = true
        } else if flight.isEmpty {
            // Nothing to answer yet (never expected; keeps every flight non-empty, which the segment plan assumes).
            let data = generator.next()
            control(flight, client: false, type: 6) { Self.ping(data, ack: false, into: &$0) }
            toClient.append(.ping(data))
        }
        return flight
    }

    // MARK: Frames

    /// Appends control frames written by `write`, counted as h2_control_bytes of the side; `type` counts one frame.
    private mutating func control(
        _ flight: AssembledBytes, client: Bool, type: Int? = nil, _ write: (inout [UInt8]) -> Void
    ) {
        let before = flight.count
        flight.appendOwn(write)
        if client { clientControlBytes += flight.count - before } else { serverControlBytes += flight.count - before }
        if let type { frames[type] += 1 }
    }

    /// HEADERS (+ CONTINUATION) carrying the message's header block; returns the record's header sizes.
    private mutating func headerBlock(
        _ message: HTTP2Message, stream: Int, endStream: Bool, priority dependency: Int?, client: Bool,
        into flight: AssembledBytes
    ) -> HTTP2MessageSizes {
        var sizes = HTTP2MessageSizes()
        var block: [UInt8] = []
        block.reserveCapacity(512)
        for field in message.fields {
            let size =
                client
                ? requestEncoder.encode(field.name, field.value, policy: field.policy, into: &block)
                : responseEncoder.encode(field.name, field.value, policy: field.policy, into: &block)
            let decoded = field.name.utf8.count + field.value.utf8.count
            sizes.headerDecodedBytes += decoded
            if field.name == message.cookieName {
                sizes.cookieBytes += size
                sizes.cookieDecodedBytes += decoded
            }
        }
        let priorityLength = dependency == nil ? 0 : 5
        let before = flight.count
        var framesWritten = 0
        flight.appendOwn { bytes in
            var offset = 0
            var type: UInt8 = 1
            repeat {
                let room = Self.maxFrameSize - (type == 1 ? priorityLength : 0)
                let fragment = min(room, block.count - offset)
                let last = offset + fragment == block.count
                var flags: UInt8 = last ? 0x4 : 0  // END_HEADERS
                if type == 1 {
                    if endStream { flags |= 0x1 }
                    if dependency != nil { flags |= 0x20 }
                }
                Self.frameHeader(
                    fragment + (type == 1 ? priorityLength : 0), type: type, flags: flags, stream: stream, into: &bytes)
                if type == 1, let dependency {
                    Self.uint32(UInt32(dependency) | 0x8000_0000, into: &bytes)  // exclusive
                    bytes.append(255)  // weight 256
                }
                bytes += block[offset..<(offset + fragment)]
                offset += fragment
                framesWritten += 1
                type = 9
            } while offset < block.count
        }
        frames[1] += 1
        frames[9] += framesWritten - 1
        sizes.headerBytes = flight.count - before
        return sizes
    }

    private mutating func data(
        _ payload: UnsafeRawBufferPointer, stream: Int, endStream: Bool, into flight: AssembledBytes
    ) {
        flight.appendOwn {
            Self.frameHeader(payload.count, type: 0, flags: endStream ? 1 : 0, stream: stream, into: &$0)
        }
        flight.appendShared(payload)
        frames[0] += 1
    }

    static func frameHeader(_ length: Int, type: UInt8, flags: UInt8, stream: Int, into bytes: inout [UInt8]) {
        bytes += [UInt8(length >> 16), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags]
        uint32(UInt32(stream), into: &bytes)
    }

    static func uint32(_ value: UInt32, into bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    static func settings(_ parameters: [(UInt16, UInt32)], into bytes: inout [UInt8]) {
        frameHeader(6 * parameters.count, type: 4, flags: 0, stream: 0, into: &bytes)
        for (identifier, value) in parameters {
            bytes += [UInt8(identifier >> 8), UInt8(identifier & 0xff)]
            uint32(value, into: &bytes)
        }
    }

    static func windowUpdate(stream: Int, increment: Int, into bytes: inout [UInt8]) {
        frameHeader(4, type: 8, flags: 0, stream: stream, into: &bytes)
        uint32(UInt32(increment), into: &bytes)
    }

    static func ping(_ data: UInt64, ack: Bool, into bytes: inout [UInt8]) {
        frameHeader(8, type: 6, flags: ack ? 1 : 0, stream: 0, into: &bytes)
        uint32(UInt32(truncatingIfNeeded: data >> 32), into: &bytes)
        uint32(UInt32(truncatingIfNeeded: data), into: &bytes)
    }

    static func goaway(lastStream: Int, into bytes: inout [UInt8]) {
        frameHeader(8, type: 7, flags: 0, stream: 0, into: &bytes)
        uint32(UInt32(lastStream), into: &bytes)
        uint32(0, into: &bytes)  // NO_ERROR
    }
}

/// One field of a header block, its name in lower case.
struct HTTP2Field {
    var name: String
    var value: String
    var policy: HPACKEncoder.Policy = .index
}

/// What one side sends for a message: its header fields, pseudo-header fields first, and its DATA payload
/// (the content as sent: gzip'd or not).
struct HTTP2Message {
    var fields: [HTTP2Field]
    var body: UnsafeRawBufferPointer
    /// `cookie` for a request, `set-cookie` for a response: the fields cookie_bytes counts.
    var cookieName: String
}

struct HTTP2Exchange {
    var request: HTTP2Message
    var response: HTTP2Message
}

/// One record's sizes as issue 22 defines them.
struct HTTP2MessageSizes {
    /// Σ (9 + payload) over the HEADERS frame and its CONTINUATION frames (priority fields included).
    var headerBytes = 0
    /// Σ (len(name) + len(value)) over the decoded fields, pseudo-header fields included.
    var headerDecodedBytes = 0
    /// HPACK representation bytes of the cookie / set-cookie fields, and their decoded name + value bytes.
    var cookieBytes = 0
    var cookieDecodedBytes = 0
    /// Σ (9 + payload) over the DATA frames; the payloads alone are the encoded body bytes.
    var bodyBytes = 0
    var dataFrames = 0

    mutating func add(_ header: HTTP2MessageSizes) {
        headerBytes += header.headerBytes
        headerDecodedBytes += header.headerDecodedBytes
        cookieBytes += header.cookieBytes
        cookieDecodedBytes += header.cookieDecodedBytes
    }

    mutating func addData(_ payload: Int) {
        bodyBytes += 9 + payload
        dataFrames += 1
    }
}

/// How a client speaks HTTP/2, by User-Agent: its SETTINGS, connection window, pseudo-header order, whether it
/// sends priority fields and splits `cookie` into crumbs (RFC 9113 §8.2.3), as the browsers do.
struct HTTP2ClientProfile {
    var settings: [(UInt16, UInt32)]
    var connectionWindowIncrement: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE (65535 when not sent).
    var initialWindow: Int
    var pseudoHeaderOrder: [String]
    var priority: Bool
    var splitsCookies: Bool

    static func forUserAgent(_ userAgent: String) -> HTTP2ClientProfile {
        if userAgent.contains("Chrome/") {
            return HTTP2ClientProfile(
                settings: [(1, 65536), (2, 0), (4, 6_291_456), (6, 262_144)], connectionWindowIncrement: 15_663_105,
                initialWindow: 6_291_456, pseudoHeaderOrder: [":method", ":authority", ":scheme", ":path"],
                priority: true, splitsCookies: true)
        }
        if userAgent.contains("Firefox/") {
            return HTTP2ClientProfile(
                settings: [(1, 65536), (4, 131_072), (5, 16384)], connectionWindowIncrement: 12_517_377,
                initialWindow: 131_072, pseudoHeaderOrder: [":method", ":path", ":authority", ":scheme"],
                priority: false, splitsCookies: true)
        }
        if userAgent.contains("Safari/") || userAgent.contains("iPhone") {
            return HTTP2ClientProfile(
                settings: [(2, 0), (3, 100), (4, 2_097_152)], connectionWindowIncrement: 10_420_225,
                initialWindow: 2_097_152, pseudoHeaderOrder: [":method", ":scheme", ":path", ":authority"],
                priority: false, splitsCookies: true)
        }
        if userAgent.hasPrefix("okhttp") {
            return HTTP2ClientProfile(
                settings: [(4, 16_777_216)], connectionWindowIncrement: 16_711_681, initialWindow: 16_777_216,
                pseudoHeaderOrder: [":method", ":path", ":authority", ":scheme"], priority: false, splitsCookies: false)
        }
        // nghttp2-based clients (curl and the like).
        return HTTP2ClientProfile(
            settings: [(3, 100), (4, 33_554_432), (2, 0)], connectionWindowIncrement: 33_488_897,
            initialWindow: 33_554_432, pseudoHeaderOrder: [":method", ":path", ":scheme", ":authority"],
            priority: false, splitsCookies: false)
    }
}
