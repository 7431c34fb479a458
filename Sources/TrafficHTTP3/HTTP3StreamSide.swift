import TrafficCapture
import TrafficReassembly

/// One direction of one QUIC stream as HTTP/3 reads it: the stream's role, its frame in progress, the message it
/// is sending, and, while a field section waits on the QPACK encoder stream, everything that came after it.
final class HTTP3StreamSide {
    /// RFC 9114 §6.1 (request streams) and §6.2 (unidirectional stream types).
    enum Role {
        /// A unidirectional stream whose type varint is not complete yet.
        case pendingType
        case request
        /// 0x00: frames are read for SETTINGS.
        case control
        /// 0x02: QPACK encoder instructions.
        case encoder
        /// 0x01 push, 0x03 QPACK decoder, reserved and unknown types: counted as control bytes, not read.
        case other
        /// Bytes counted as unparsed: the framing was lost, a frame error, a stream HTTP/3 does not define.
        case unparsed
    }

    /// What the frame in progress is, for the bytes of its payload.
    enum FrameKind { case data, headers, control, settings }

    /// Where a request stream direction is in its message (§4.1): waiting for a head, in the message (DATA
    /// and trailers follow), after its trailers.
    enum Progress { case head, body, trailers }

    /// Calls held while the side is blocked, replayed in order once its section is decoded.
    enum Event {
        case bytes([UInt8], CaptureTime)
        case skip(Int, CaptureTime)
        case end(CaptureTime)
        case reset(CaptureTime)
        case overhead(Int)
    }

    /// A field section that needs encoder-stream inserts not read yet (RFC 9204 §2.1.2).
    struct Blocked {
        var section: [UInt8]
        var frameBytes: Int
        var time: CaptureTime
        var offset: Int
        var lastTime: CaptureTime
    }

    let id: UInt64
    let direction: Direction
    var role: Role
    /// Weak: the stream holds its sides (`client`, `server`), and a strong reference back made a cycle that kept
    /// every stream of a connection alive after the connection ended (440 MB at the 1 GiB QUIC bench).
    weak var stream: HTTP3Stream?
    var isClient: Bool { direction == .clientToServer }

    // The frame (or stream type) being read.
    var varint = QUICVarint()
    var readingLength = false
    var inPayload = false
    var frameType: UInt64 = 0
    var remaining = 0
    /// Octets of the frame header (type and length varints), or of the stream type, read and not yet counted.
    var headerCount = 0
    var kind = FrameKind.control
    var frameTime = CaptureTime.zero
    var frameOffset = 0
    /// HEADERS payload: buffered (unless `tooLarge`), captured and missing octets.
    var section: [UInt8] = []
    var sectionCaptured = 0
    var sectionMissing = 0
    var tooLarge = false

    var progress = Progress.head
    /// The message this side is sending (the request, or the final response).
    var current: HTTP3Message?
    /// FIN, reset or given up: nothing more is read.
    var finished = false
    /// QUIC overhead given before the message it belongs to started.
    var pendingOverhead = 0
    /// Offset in the stream of the next byte (captured and skipped).
    var offset = 0
    var time = CaptureTime.zero

    var blocked: Blocked?
    var queue: [Event] = []
    var queuedBytes = 0

    init(id: UInt64, direction: Direction, role: Role, stream: HTTP3Stream?) {
        self.id = id
        self.direction = direction
        self.role = role
        self.stream = stream
    }

    /// Between frames: no header octet, no payload pending.
    var atFrameBoundary: Bool { !inPayload && headerCount == 0 }
}
