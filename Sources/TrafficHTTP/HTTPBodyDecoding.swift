import TrafficCodecs
import TrafficSessions

/// How the current body's decoded size is obtained: at most one `ContentDecoder` per body, made on its first byte.
enum HTTPBodyDecoding {
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
    static func forContentEncoding(_ list: String?, record: inout MessageRecord) -> HTTPBodyDecoding {
        guard let list else { return .identity }
        guard let codings = ContentCoding.parse(contentEncoding: list) else {
            record.flag(.unknownEncoding)
            return .unknown
        }
        let applied = codings.filter { $0 != .identity }
        return applied.isEmpty ? .identity : .pending(applied)
    }
}

extension MessageRecord {
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
