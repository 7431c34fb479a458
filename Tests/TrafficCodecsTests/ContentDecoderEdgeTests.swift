import Testing
import TrafficCodecs

/// Trailing data, corrupt input and identity bodies.
@Suite struct ContentDecoderEdgeTests {
    static let trailingZeros = [UInt8](repeating: 0, count: 16)
    static let junk = Array("junk".utf8)

    @Test(arguments: Sample.singleStream + [Sample.text[1], Sample.text[6]])
    func trailingZerosAreIgnored(_ sample: Sample) {
        #expect(decode(sample.codings, sample.data + Self.trailingZeros) == .decoded(sample.decodedSize))
        #expect(decodeBytewise(sample.codings, sample.data + Self.trailingZeros) == .decoded(sample.decodedSize))
    }

    @Test(arguments: Sample.singleStream + [Sample.text[1], Sample.text[6]])
    func trailingGarbageFails(_ sample: Sample) {
        #expect(decode(sample.codings, sample.data + Self.junk).failure != nil)
        #expect(decode(sample.codings, sample.data + Self.trailingZeros + Self.junk).failure != nil)
    }

    @Test(arguments: [ContentCoding.gzip, .deflate, .brotli, .zstd])
    func garbageFails(_ coding: ContentCoding) {
        let result = decode([coding], Fixtures.garbage)
        let reason = result.failure ?? ""
        #expect(reason.hasPrefix(coding.rawValue + ":"), "\(result)")
        #expect(decodeBytewise([coding], Fixtures.garbage).failure != nil)
    }

    @Test func gzipFailureNamesZlibReason() {
        // A gzip header (1f 8b 08 00 ...) followed by a block of reserved type 3 (bits 111).
        let body: [UInt8] = [0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03, 0x07]
        #expect(decode([.gzip], body) == .failed("gzip: invalid block type"))
    }

    @Test func gzipTruncatedTrailerFails() {
        let body = Array(Fixtures.gzipText.dropLast(4))
        #expect(decode([.gzip], body) == .failed("gzip: truncated stream"))
    }

    @Test func gzipBadChecksumFails() {
        var body = Fixtures.gzipText
        body[body.count - 8] ^= 0xff  // CRC-32 in the member trailer (RFC 1952 §2.3.1)
        #expect(decode([.gzip], body).failure != nil)
    }

    @Test func rawDeflateOfNothing() {
        // Python: zlib.compressobj(9, zlib.DEFLATED, -15) on b"" gives 03 00, an empty fixed block.
        #expect(decode([.deflate], [0x03, 0x00]) == .decoded(0))
        #expect(decodeBytewise([.deflate], [0x03, 0x00]) == .decoded(0))
    }

    @Test func zlibPresetDictionaryFails() {
        #expect(decode([.deflate], Fixtures.zlibWithDictionary) == .failed("deflate: preset dictionary not supported"))
    }

    @Test func zstdWindowOver8MiBFails() {
        let result = decode([.zstd], Fixtures.zstdLargeWindow)
        #expect(result.failure?.hasPrefix("zstd:") == true, "\(result)")
    }

    @Test func failureIgnoresLaterInput() {
        let scratch = DecodingScratch()
        let decoder = ContentDecoder(codings: [.gzip], scratch: scratch)
        Fixtures.garbage.withUnsafeBytes { decoder.feed($0) }
        Fixtures.gzipText.withUnsafeBytes { decoder.feed($0) }
        let result = decoder.finish()
        #expect(result.failure != nil)
        #expect(decoder.finish(truncated: true) == result)
        #expect(decoder.finish() == result)
    }

    @Test(arguments: [[ContentCoding](), [.identity], [.identity, .identity]])
    func identityCountsBodyBytes(_ codings: [ContentCoding]) {
        #expect(decode(codings, Fixtures.garbage, cuts: [1, 5, 5, 30]) == .decoded(Fixtures.garbage.count))
        #expect(decode(codings, []) == .decoded(0))
        #expect(decode(codings, Fixtures.garbage, truncated: true) == .failed("truncated"))
    }

    @Test func identityEntriesInAStackAreSkipped() {
        #expect(decode([.identity, .gzip, .identity, .brotli], Fixtures.stackGzipBr) == .decoded(Fixtures.textLength))
    }

    @Test func tooManyCodingsFail() {
        let codings = [ContentCoding](repeating: .gzip, count: ContentDecoder.maxStages + 1)
        #expect(decode(codings, Fixtures.gzipText).failure != nil)
    }
}
