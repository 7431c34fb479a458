import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficSessions

/// How a message's decoded body size is found: content coding as for HTTP/1, or gRPC's length-prefixed
/// messages (each counted 5 + its payload after `grpc-encoding`).
enum HTTP2BodyDecoding {
    case content(HTTPBodyDecoding)
    case grpc(GRPCMessageCounter)
}

/// One request or response of a stream: its record and the state of its body. A class: the stream holds it, the
/// parser changes it in place many times per message, and a large struct read out of a class's optional
/// property is copied (every string of its record retained) where a reference is one load.
final class HTTP2Message {
    var record: MessageRecord
    var decoding: HTTP2BodyDecoding = .content(.identity)
    /// END_STREAM was seen in this direction (or, for an interim response, its block ended).
    var ended = false
    /// The record was handed on.
    var emitted = false
    /// The header block that opened the message was read (later blocks are trailers).
    var headersDone = false

    init(record: MessageRecord) { self.record = record }

    /// Body bytes as sent (DATA frame bytes) and their payload without padding.
    func data(
        _ bytes: UnsafeRawBufferPointer, scratch: DecodingScratch, limits: ContentDecodingLimits, keep: Int
    ) {
        record.encodedBodyBytes &+= bytes.count
        guard !bytes.isEmpty else { return }
        // HAR `postData.text` (`--har-bodies`), as for HTTP/1.
        if keep > 0 { record.keepBody(bytes, limit: keep) }
        switch decoding {
        case .content(var content):
            if case .identity = content { return }
            decoding = .content(.identity)  // no second reference to the decoder while it is fed
            content.feed(bytes, scratch: scratch, limits: limits)
            decoding = .content(content)
        case .grpc(var counter):
            decoding = .content(.identity)
            counter.consume(bytes)
            decoding = .grpc(counter)
        }
    }

    /// `missing` bytes of the message were never captured (0: some may have been, in a gap that lost the
    /// framing): the decoded size can no longer be known under a coding.
    func lose(_ missing: Int) {
        record.missingBytes &+= missing
        record.flag(.gap)
        switch decoding {
        case .content(var content):
            content.lose()
            decoding = .content(content)
        case .grpc(var counter):
            decoding = .content(.identity)
            counter.lose()
            decoding = .grpc(counter)
        }
    }

    /// The decoded size, once the message ends (complete or not). With no DATA payload it is 0 whatever
    /// `content-encoding` says (HEAD, 204, 304, 1xx, trailers-only answers).
    func finishBody(truncated: Bool) {
        defer { decoding = .content(.identity) }
        if record.encodedBodyBytes == 0, record.missingBytes == 0 {
            record.decodedBodyBytes = 0
            return
        }
        switch decoding {
        case .content(let content): content.finish(into: &record, truncated: truncated)
        case .grpc(var counter):
            let (bytes, anomaly) = counter.finish()
            record.decodedBodyBytes = bytes
            if let anomaly { record.flag(anomaly) }
        }
    }

}

/// One HTTP/2 stream: a request and its responses (interim ones are emitted as they end), or a pushed
/// response alone.
final class HTTP2Stream {
    let id: UInt32
    /// The exchange number records carry: the ordinal of a client-initiated stream, or for a pushed one the
    /// index of the stream its PUSH_PROMISE came on (printed as null).
    let index: Int
    let pushed: Bool
    var request: HTTP2Message?
    var response: HTTP2Message?
    /// A response (interim or final) started: the request's record is `paired`.
    var answered = false
    /// The request's last byte, for the response's `wait`.
    var requestEnd: CaptureTime?
    var reset = false
    /// The request's identity, which its responses carry (kept here: an emitted record gives its strings away).
    var method: String?
    var host: String?
    var path = "(unknown)"
    var query: String?

    init(id: UInt32, index: Int, pushed: Bool) {
        self.id = id
        self.index = index
        self.pushed = pushed
    }

    /// Both sides are done: the stream can be forgotten.
    var isFinished: Bool { (request?.emitted ?? true) && (response?.emitted ?? false) }
}
