import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// One request or response: its record and the state of its body's content decoding.
final class HTTP3Message {
    var record: MessageRecord
    var decoding: HTTPBodyDecoding = .identity
    /// The stream's FIN in this direction was read, or the message was cut (reset, gap, end of capture).
    var ended = false
    var emitted = false

    init(record: MessageRecord) { self.record = record }

    /// DATA payload bytes.
    func data(_ bytes: UnsafeRawBufferPointer, scratch: DecodingScratch, limits: ContentDecodingLimits, keep: Int) {
        record.encodedBodyBytes &+= bytes.count
        guard !bytes.isEmpty else { return }
        if keep > 0 { record.keepBody(bytes, limit: keep) }
        if case .identity = decoding { return }
        var content = decoding
        decoding = .identity  // no second reference to the decoder while it is fed
        content.feed(bytes, scratch: scratch, limits: limits)
        decoding = content
    }

    /// `missing` bytes of the body were never captured (0: some may have been lost with the framing).
    func lose(_ missing: Int) {
        record.missingBytes &+= missing
        record.flag(.gap)
        decoding.lose()
    }

    /// The decoded size once the message ends; 0 without DATA payload whatever `content-encoding` says.
    func finishBody(truncated: Bool) {
        defer { decoding = .identity }
        if record.encodedBodyBytes == 0, record.missingBytes == 0 {
            record.decodedBodyBytes = 0
            return
        }
        decoding.finish(into: &record, truncated: truncated)
    }
}

/// One client-initiated bidirectional stream (RFC 9114 §4.1): a request and its responses, interim ones
/// emitted as they are read.
final class HTTP3Stream {
    let id: UInt64
    /// The ordinal of the stream among the connection's request streams, from 1, in order of appearance.
    let index: Int
    var request: HTTP3Message?
    var response: HTTP3Message?
    /// A response head (interim or final) was read: the request's record is `paired`.
    var answered = false
    var requestEnd: CaptureTime?
    var reset = false
    /// A message head was read on the stream (`streamCount`).
    var counted = false
    /// The request's identity, which its responses carry.
    var method: String?
    var host: String?
    var path = "(unknown)"
    var query: String?
    /// Response records read while the request's field section was blocked: they wait for its identity.
    var held: [MessageRecord] = []
    /// The stream's two directions.
    var client: HTTP3StreamSide?
    var server: HTTP3StreamSide?

    init(id: UInt64, index: Int) {
        self.id = id
        self.index = index
    }
}
