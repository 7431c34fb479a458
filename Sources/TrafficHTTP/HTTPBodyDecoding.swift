import TrafficCodecs
import TrafficSessions

/// How the current body's decoded size is obtained: at most one `ContentDecoder` per body, made on its first byte.
/// HTTP/1 and HTTP/2 bodies alike (an HTTP/2 body that is not gRPC's holds one).
package enum HTTPBodyDecoding {
    /// No content coding (or only `identity`): the decoded size is the encoded size.
    case identity
    /// Codings to apply, in header order; the decoder is created when the first body byte arrives.
    case pending([ContentCoding])
    case active(ContentDecoder)
    /// `Content-Encoding` names a coding we cannot decode (flag `unknown_encoding`).
    case unknown
    /// A gap fell inside the body: nothing can be decoded through a hole.
    case lost

    /// The decoding for a `Content-Encoding` list; flags `unknown_encoding` on the record when needed.
    package static func forContentEncoding(_ list: String?, record: inout MessageRecord) -> HTTPBodyDecoding {
        guard let list else { return .identity }
        guard let codings = ContentCoding.parse(contentEncoding: list) else {
            record.flag(.unknownEncoding)
            return .unknown
        }
        let applied = codings.filter { $0 != .identity }
        return applied.isEmpty ? .identity : .pending(applied)
    }

    /// Body bytes as encoded: fed to the decoder when a content coding needs one (made on the first byte).
    @inline(__always)
    package mutating func feed(_ bytes: UnsafeRawBufferPointer, scratch: DecodingScratch, limits: ContentDecodingLimits) {
        switch self {
        case .identity, .unknown, .lost: return
        case .pending(let codings):
            let decoder = ContentDecoder(codings: codings, scratch: scratch, limits: limits)
            self = .active(decoder)
            decoder.feed(bytes)
        case .active(let decoder):
            decoder.feed(bytes)
        }
    }

    /// A hole in the body: without a content coding the decoded size stays the encoded size, holes or not
    /// (issue 3); a coded stream cannot be decoded through a hole.
    package mutating func lose() {
        if case .identity = self { return }
        self = .lost
    }

    /// The body ended: its decoded size onto `record` (nil, flagged, when it is not known exactly).
    package func finish(into record: inout MessageRecord, truncated: Bool) {
        switch self {
        case .identity: record.decodedBodyBytes = record.encodedBodyBytes
        case .pending: record.decodedBodyBytes = 0  // a coded but empty body
        case .unknown, .lost: record.decodedBodyBytes = nil
        case .active(let decoder): record.takeDecoded(decoder.finish(truncated: truncated))
        }
    }
}

extension MessageRecord {
    /// Keeps request body bytes up to `limit` (HAR `postData.text`, `--har-bodies`); a body cut there is flagged
    /// `body_limit` (HAR `_body_cut`).
    package mutating func keepBody(_ bytes: UnsafeRawBufferPointer, limit: Int) {
        let room = limit - body.count
        if bytes.count > room { flag(.bodyLimit) }
        if room > 0 { body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room))) }
    }

    /// A content decoder's outcome as the record's decoded size: exact, or nil with `decode_capped` or
    /// `decode_error` (never a guess). HTTP/1 and HTTP/2 bodies alike.
    package mutating func takeDecoded(_ result: ContentDecodingResult) {
        switch result {
        case .decoded(let n): decodedBodyBytes = n
        case .capped:
            decodedBodyBytes = nil
            flag(.decodeCapped)
        case .failed:
            decodedBodyBytes = nil
            flag(.decodeError)
        }
    }
}
