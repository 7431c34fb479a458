// TEMPORARY stand-in for the TrafficCodecs content decoder (same API); identity only. Deleted on merge.
import TrafficCodecs


/// Stand-in: scratch memory shared by decoders.
public final class DecodingScratch {
    public init(capacity: Int = 64 * 1024) {}
}

/// Stand-in: decoder limits.
public struct ContentDecodingLimits: Sendable {
    public var maxDecodedBytes: Int
    public init(maxDecodedBytes: Int = 1 << 30) { self.maxDecodedBytes = maxDecodedBytes }
}

/// Stand-in: outcome of decoding one body.
public enum ContentDecodingResult: Equatable, Sendable {
    case decoded(Int), capped(Int), failed(String)
}

/// Stand-in: counts identity bytes, fails on any real coding.
public final class ContentDecoder {
    private let codings: [ContentCoding]
    private var count = 0
    private let limits: ContentDecodingLimits

    public init(codings: [ContentCoding], scratch: DecodingScratch, limits: ContentDecodingLimits = .init()) {
        self.codings = codings
        self.limits = limits
    }

    public func feed(_ bytes: UnsafeRawBufferPointer) { count += bytes.count }

    public func finish(truncated: Bool = false) -> ContentDecodingResult {
        if codings.contains(where: { $0 != .identity }) { return .failed("stand-in decodes identity only") }
        return count > limits.maxDecodedBytes ? .capped(limits.maxDecodedBytes) : .decoded(count)
    }
}

extension ContentCoding {
    /// Stand-in: parses a `Content-Encoding` list; nil when a coding is unknown.
    public static func parse(contentEncoding value: some StringProtocol) -> [ContentCoding]? {
        var result: [ContentCoding] = []
        for part in value.split(separator: ",") {
            let name = String(part)[...].trimmingCharacters(in: " \t").lowercased()
            if name.isEmpty { continue }
            switch name {
            case "identity": result.append(.identity)
            case "gzip", "x-gzip": result.append(.gzip)
            case "deflate": result.append(.deflate)
            case "br": result.append(.brotli)
            case "zstd": result.append(.zstd)
            default: return nil
            }
        }
        return result
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
