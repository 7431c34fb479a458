import Testing
import TrafficCodecs

/// Decodes a hex literal from `Fixtures` (whitespace ignored).
func hex(_ text: String) -> [UInt8] {
    let digits = text.utf8.compactMap { byte -> UInt8? in
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
    return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

/// Runs `data` through a fresh decoder, fed in pieces that end at each of `cuts`. These tests are about
/// inflating, so the gzip trailer shortcut is off unless `limits` turns it on (GzipTrailerTests do).
func decode(
    _ codings: [ContentCoding], _ data: [UInt8], cuts: [Int] = [],
    scratch: DecodingScratch = DecodingScratch(), limits: ContentDecodingLimits = .init(useGzipTrailer: false),
    truncated: Bool = false
) -> ContentDecodingResult {
    let decoder = ContentDecoder(codings: codings, scratch: scratch, limits: limits)
    data.withUnsafeBytes { bytes in
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            decoder.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<cut]))
            start = cut
        }
    }
    return decoder.finish(truncated: truncated)
}

/// Runs `data` through a fresh decoder one byte per feed.
func decodeBytewise(_ codings: [ContentCoding], _ data: [UInt8], scratch: DecodingScratch = DecodingScratch())
    -> ContentDecodingResult
{
    decode(codings, data, cuts: Array(0..<data.count), scratch: scratch)
}

extension ContentDecodingResult {
    /// The failure reason, or nil when this is not a failure.
    var failure: String? {
        if case .failed(let reason) = self { return reason }
        return nil
    }
}

/// One body with its codings and the decoded size its encoder was given.
struct Sample: Sendable, CustomTestStringConvertible {
    let name: String
    let codings: [ContentCoding]
    let data: [UInt8]
    let decodedSize: Int

    var testDescription: String { name }

    /// Bodies that decode completely to the 8000-byte plaintext.
    static let text: [Sample] = [
        Sample(name: "gzip", codings: [.gzip], data: Fixtures.gzipText, decodedSize: Fixtures.textLength),
        Sample(name: "gzip two members", codings: [.gzip], data: Fixtures.gzipTwoMembers, decodedSize: Fixtures.textLength),
        Sample(name: "deflate zlib", codings: [.deflate], data: Fixtures.zlibText, decodedSize: Fixtures.textLength),
        Sample(name: "deflate raw", codings: [.deflate], data: Fixtures.rawDeflateText, decodedSize: Fixtures.textLength),
        Sample(name: "br", codings: [.brotli], data: Fixtures.brText, decodedSize: Fixtures.textLength),
        Sample(name: "zstd", codings: [.zstd], data: Fixtures.zstdText, decodedSize: Fixtures.textLength),
        Sample(name: "zstd two frames + skippable", codings: [.zstd], data: Fixtures.zstdTwoFramesAndSkippable,
               decodedSize: Fixtures.textLength),
        Sample(name: "gzip, br", codings: [.gzip, .brotli], data: Fixtures.stackGzipBr, decodedSize: Fixtures.textLength),
        Sample(name: "zstd, deflate", codings: [.zstd, .deflate], data: Fixtures.stackZstdDeflate,
               decodedSize: Fixtures.textLength),
        Sample(name: "br, gzip, zstd", codings: [.brotli, .gzip, .zstd], data: Fixtures.stackBrGzipZstd,
               decodedSize: Fixtures.textLength),
        Sample(name: "identity", codings: [.identity], data: Fixtures.garbage, decodedSize: Fixtures.garbage.count),
    ]

    /// Single-stream bodies: every proper prefix of these is incomplete.
    static let singleStream: [Sample] = text.filter { !$0.name.contains("two") && $0.codings != [.identity] }
}
