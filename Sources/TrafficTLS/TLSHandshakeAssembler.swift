/// Reassembles handshake messages from the fragments of one direction's handshake records, keeping
/// only the hellos.
///
/// RFC 8446 §5.1 / RFC 5246 §6.2.1: handshake messages may be split across records and several may
/// share one; each is `msg_type(1) length(3) body(length)` (RFC 8446 §4). Hello bodies are buffered
/// (up to a limit) to be parsed; other messages are skipped by length without being stored.
struct TLSHandshakeAssembler {
    /// Handshake types whose bodies are buffered (RFC 8446 §4): client_hello and server_hello
    /// (which also carries HelloRetryRequest).
    static let clientHello: UInt8 = 1
    static let serverHello: UInt8 = 2
    /// RFC 5246 §7.4.5: ends the server's first flight of a full (not resumed) TLS ≤ 1.2 handshake.
    static let serverHelloDone: UInt8 = 14

    enum State: Equatable {
        /// Reading the 4-byte message header (`headerCount` bytes of it so far).
        case header
        /// Buffering the body of a hello: `remaining` bytes still to come.
        case collecting(type: UInt8, remaining: Int)
        /// Skipping the body of a message that is not parsed.
        case discarding(remaining: Int)
        /// Not parsing any more: the rest is encrypted, or alignment was lost to a gap.
        case stopped
    }

    /// What `advance` found.
    enum Event: Equatable {
        case none
        /// A hello of `type` is complete in `body`.
        case message(type: UInt8)
        /// The header of a message that is skipped, not parsed.
        case skipped(type: UInt8)
        /// A hello announced more than the limit: it is skipped.
        case tooLarge
    }

    private(set) var state = State.header
    private var headerBits: UInt32 = 0
    private var headerCount = 0
    /// The body of the hello being collected, or of the last one completed.
    private(set) var body: [UInt8] = []
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Stops parsing for good (encrypted handshake, or a gap): later fragments are ignored.
    mutating func stop() { state = .stopped }

    /// Whether a partly read message is pending (a gap now would lose it).
    var isInsideMessage: Bool {
        switch state {
        case .header: headerCount > 0
        case .collecting, .discarding: true
        case .stopped: false
        }
    }

    /// Consumes bytes of `bytes[start..<end]` (start < end) up to the end of the next unit and
    /// returns how many, with any completed hello. Always consumes at least one byte.
    mutating func advance(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> (
        consumed: Int, event: Event
    ) {
        switch state {
        case .stopped:
            return (end - start, .none)
        case .discarding(let remaining):
            let n = min(remaining, end - start)
            state = n == remaining ? .header : .discarding(remaining: remaining - n)
            return (n, .none)
        case .collecting(let type, let remaining):
            let n = min(remaining, end - start)
            body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<start + n]))
            if n < remaining {
                state = .collecting(type: type, remaining: remaining - n)
                return (n, .none)
            }
            state = .header
            return (n, .message(type: type))
        case .header:
            headerBits = headerBits << 8 | UInt32(bytes[start])
            headerCount += 1
            guard headerCount == 4 else { return (1, .none) }
            headerCount = 0
            let type = UInt8(truncatingIfNeeded: headerBits >> 24)
            let length = Int(headerBits & 0xff_ffff)
            guard type == Self.clientHello || type == Self.serverHello else {
                state = length == 0 ? .header : .discarding(remaining: length)
                return (1, .skipped(type: type))
            }
            guard length <= limit else {
                state = .discarding(remaining: length)
                return (1, .tooLarge)
            }
            body.removeAll(keepingCapacity: true)
            body.reserveCapacity(length)
            if length == 0 { return (1, .message(type: type)) }
            state = .collecting(type: type, remaining: length)
            return (1, .none)
        }
    }
}
