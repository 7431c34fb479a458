import TrafficCapture
import TrafficReassembly

/// One direction of an HTTP/2 connection: its framing state, its header block in progress and the HPACK
/// decoder of the blocks it sends.
final class HTTP2Side {
    enum State { case preface, header, payload, resync, lost }

    /// Who the bytes of the current frame belong to.
    enum Owner {
        /// DATA of a stream: the stream's message on this side.
        case message(HTTP2Stream)
        /// A HEADERS block in progress (its record is known when it ends).
        case block
        /// The preface, control frames, a PUSH_PROMISE block, non-HTTP bytes.
        case control

        var isControl: Bool {
            if case .control = self { return true }
            return false
        }
    }

    let direction: Direction
    var counts = HTTP2ByteCounts()
    var state: State = .header
    /// Bytes of the client preface seen so far (the server side starts past it).
    var prefaceMatched = 24 {
        didSet { if prefaceMatched < 24 { state = .preface } }
    }
    /// Stream offset of the current delivery's first byte, and its capture time.
    var base = 0
    var time = CaptureTime.zero

    // The frame being read.
    var header = [UInt8](repeating: 0, count: 9)
    var headerFill = 0
    var type: UInt8 = 0
    var flags: UInt8 = 0
    var stream: UInt32 = 0
    var length = 0
    var remaining = 0
    var frameTime = CaptureTime.zero
    var frameOffset = 0
    /// Captured bytes of the current frame (header included), for control charges.
    var frameCaptured = 0
    var owner: Owner = .control
    /// A DATA frame's Pad Length byte is next; then how many padding bytes end the frame.
    var padPending = false
    var padRemaining = 0
    /// Payload of header-block, SETTINGS and RST_STREAM frames, kept until the frame ends.
    var payload: [UInt8] = []
    /// Part of this frame's payload was not captured.
    var payloadLost = false

    // The header block in progress (HEADERS or PUSH_PROMISE, then CONTINUATION until END_HEADERS).
    var blockStream: UInt32?
    var blockIsPush = false
    var blockPromised: UInt32?
    /// The exchange index of the stream a PUSH_PROMISE came on.
    var blockParent: Int?
    var blockEndStream = false
    var block: [UInt8] = []
    /// Its frames as sent (9 + payload each), captured bytes only; `blockMissing` were not captured.
    var blockFrameBytes = 0
    var blockMissing = 0
    var blockLost = false
    var blockTooLarge = false
    var blockTime = CaptureTime.zero
    var blockOffset = 0
    var blockHeaderShare = 0
    var blockFramingShare = 0

    var hpack: HPACKDecoder
    /// The largest frame this side may send: the peer's SETTINGS_MAX_FRAME_SIZE (§6.5.2), default 2^14.
    var maxFrameSize = 16_384
    /// This side sent SETTINGS (so the limits it advertised are known).
    var settingsSeen = false
    /// SETTINGS_HEADER_TABLE_SIZE of each SETTINGS this side sent and the peer has not acknowledged yet
    /// (nil: that SETTINGS did not set it).
    var advertisedTableSizes: [Int?] = []

    // Overhead shares of bytes in no record, and of a frame header whose owner is not known yet.
    var headerShare = 0
    var framingShare = 0
    /// TLS framing of control bytes not yet charged with them.
    var controlFraming = 0
    var heldHeaderShare = 0
    var heldFramingShare = 0

    init(direction: Direction, limits: HPACKLimits) {
        self.direction = direction
        hpack = HPACKDecoder(limits: limits)
    }
}
