import TrafficCodecs
import TrafficSessions

/// The decoded size of one direction of a gRPC stream (content-type `application/grpc*`), fed its DATA
/// payload piece by piece.
///
/// gRPC over HTTP/2 (grpc/doc/PROTOCOL-HTTP2.md) sends a sequence of Length-Prefixed-Messages: a 1-byte
/// Compressed-Flag, a 4-byte big-endian Message-Length, then the message. The decoded size is
/// Σ (5 + payload length), where a message whose flag is 1 counts its payload after decompressing it with
/// the stream's `grpc-encoding`; with nothing compressed it equals the encoded size.
///
/// Incremental and bounded: a prefix or a message may span any number of `consume` calls (and DATA
/// frames); no message is stored. A compressed message goes through its own `ContentDecoder`, made on its
/// first payload byte and finished on its last, so at most one decoder (and its C state) is alive per
/// stream direction. `limits.maxDecodedBytes` bounds the decompressed output of the whole direction, not
/// of each message: many small messages cannot add up to more work than one large body.
///
/// Edge cases:
/// - `grpc-encoding` absent, `identity`, or not a coding TrafficCodecs knows (`snappy`, a custom name):
///   flag-0 messages count as sent; a flag-1 message makes the size unknown (`decode_error`: nothing
///   to decompress it with; PROTOCOL-HTTP2.md calls a flag of 1 without an encoding a protocol error).
/// - A flag-1 message of length 0 counts 5 (there is nothing to decompress).
/// - A flag other than 0 or 1 is not gRPC framing: the size is unknown (`decode_error`) and the rest of the
///   direction is not read.
/// - After the first anomaly the size stays unknown; framing goes on (`messageCount` keeps counting) but no
///   further message is decompressed.
public struct GRPCMessageCounter {
    /// How flag-1 messages are decompressed.
    private enum Decompression {
        /// No usable `grpc-encoding` (absent or identity).
        case none
        case codings([ContentCoding])
        /// An encoding TrafficCodecs cannot decode.
        case unknown
    }

    private let decompression: Decompression
    private let scratch: DecodingScratch
    private let limits: ContentDecodingLimits

    /// Bytes of the current prefix read so far (0 between messages, 1…4 inside a prefix).
    private var prefixRead = 0
    private var flag: UInt8 = 0
    /// The Message-Length being read (big-endian, a byte at a time when the prefix is split).
    private var length = 0
    /// Payload bytes of the current message still to come; 0 between messages.
    private var remaining = 0
    /// The current compressed message's decoder; nil before its first byte and for other messages.
    private var decoder: ContentDecoder?
    /// Σ (5 + decoded payload) over the complete messages.
    private var decodedBytes = 0
    /// Decompressed payload so far, against `limits.maxDecodedBytes`.
    private var decompressedBytes = 0
    /// The first reason the decoded size is unknown; nil while it is exact.
    private var anomaly: RecordAnomaly?
    /// Nothing more is read: bytes were lost, the framing is not gRPC's, or `finish` was called.
    private var stopped = false
    /// `finish`'s answer, kept so that a second call gives the same.
    private var result: (decodedBytes: Int?, anomaly: RecordAnomaly?)?

    /// Complete messages so far.
    public private(set) var messageCount = 0

    /// `encoding`: the stream's `grpc-encoding` value (nil when absent). `scratch` is the worker's shared
    /// decoding scratch; `limits` bounds the decompressed bytes of this direction.
    public init(encoding: String?, scratch: DecodingScratch, limits: ContentDecodingLimits) {
        self.scratch = scratch
        self.limits = limits
        if let encoding, let codings = ContentCoding.parse(contentEncoding: encoding) {
            let applied = codings.filter { $0 != .identity }
            decompression = applied.isEmpty ? .none : .codings(applied)
        } else {
            decompression = encoding == nil ? .none : .unknown
        }
    }

    /// True for the content types whose body is gRPC's Length-Prefixed-Messages: `application/grpc`,
    /// optionally followed by `+format` (`+proto`, `+json`) or parameters; case-insensitive. gRPC-Web
    /// (`application/grpc-web*`) frames trailers into the body and is not matched.
    public static func isGRPC(contentType: some StringProtocol) -> Bool {
        let prefix = "application/grpc".utf8
        let bytes = contentType.utf8
        guard bytes.count >= prefix.count else { return false }
        var index = bytes.startIndex
        for expected in prefix {
            let byte = bytes[index]
            guard expected == (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte) else {
                return false
            }
            index = bytes.index(after: index)
        }
        guard index != bytes.endIndex else { return true }
        let next = bytes[index]
        return next == UInt8(ascii: "+") || next == UInt8(ascii: ";") || next == UInt8(ascii: " ")
            || next == UInt8(ascii: "\t")
    }

    /// Feeds the next DATA payload bytes of the direction (padding already removed).
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        guard !stopped, let base = bytes.baseAddress else { return }
        let count = bytes.count
        var offset = 0
        while offset < count {
            if remaining > 0 {
                let n = min(remaining, count - offset)
                payload(UnsafeRawBufferPointer(start: base + offset, count: n))
                remaining -= n
                offset += n
                if remaining == 0 { endMessage() }
                continue
            }
            if prefixRead == 0, count - offset >= 5 {
                // The whole prefix in this piece: the usual case.
                flag = base.load(fromByteOffset: offset, as: UInt8.self)
                length = Int(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self)))
                offset += 5
            } else {
                let byte = base.load(fromByteOffset: offset, as: UInt8.self)
                if prefixRead == 0 {
                    flag = byte
                    length = 0
                } else {
                    length = length << 8 | Int(byte)
                }
                prefixRead += 1
                offset += 1
                guard prefixRead == 5 else { continue }
                prefixRead = 0
            }
            startMessage()
            if stopped { return }
        }
    }

    /// Bytes were lost: the decoded size is unknown from here, and so is the framing.
    public mutating func lose() {
        guard !stopped else { return }
        note(.gap)
        stopped = true
        releaseDecoder()
    }

    /// The direction ended (complete or not): the decoded size, or nil when unknown, with the anomaly to
    /// flag — `decode_error` (a bad compressed message, a compressed message without a known
    /// `grpc-encoding`, a flag other than 0/1, a message cut by the end), `decode_capped` (over the limits)
    /// or `gap` (after `lose()`); the first one that happened. Later calls return the same.
    public mutating func finish() -> (decodedBytes: Int?, anomaly: RecordAnomaly?) {
        if let result { return result }
        if !stopped, prefixRead > 0 || remaining > 0 { note(.decodeError) }
        stopped = true
        releaseDecoder()
        let answer = (decodedBytes: anomaly == nil ? decodedBytes : nil, anomaly: anomaly)
        result = answer
        return answer
    }

    // MARK: Messages

    /// A prefix was read: `flag` and `length` hold it.
    private mutating func startMessage() {
        switch flag {
        case 0: break
        case 1:
            switch decompression {
            case .codings: break
            case .none, .unknown: note(.decodeError)
            }
        default:
            note(.decodeError)
            stopped = true
            return
        }
        remaining = length
        if length == 0 { endMessage() }
    }

    /// Bytes of the current message's payload.
    private mutating func payload(_ bytes: UnsafeRawBufferPointer) {
        guard flag == 1, anomaly == nil, case .codings(let codings) = decompression else { return }
        if decoder == nil {
            var messageLimits = limits
            messageLimits.maxDecodedBytes = limits.maxDecodedBytes - decompressedBytes
            decoder = ContentDecoder(codings: codings, scratch: scratch, limits: messageLimits)
        }
        decoder!.feed(bytes)
    }

    /// The current message's last byte was consumed.
    private mutating func endMessage() {
        messageCount += 1
        if flag == 0 {
            decodedBytes += 5 + length
            return
        }
        guard let decoder = decoder.take() else {
            // A compressed message of length 0, or one not decoded after an anomaly.
            if anomaly == nil { decodedBytes += 5 }
            return
        }
        switch decoder.finish() {
        case .decoded(let size):
            decompressedBytes += size
            decodedBytes += 5 + size
        case .capped: note(.decodeCapped)
        case .failed: note(.decodeError)
        }
    }

    private mutating func note(_ reason: RecordAnomaly) {
        if anomaly == nil { anomaly = reason }
    }

    /// Frees the C state of a message cut short.
    private mutating func releaseDecoder() {
        if let decoder = decoder.take() { _ = decoder.finish(truncated: true) }
    }
}
