import Testing
import TrafficCodecs

/// The decoded-size cap: exact at the boundary, prompt on bombs.
@Suite struct ContentDecoderCapTests {
    static let mebibyte = 1 << 20

    /// `count` copies of one gzip member of 1 MiB of zeros: `count` MiB of zeros when decoded.
    static func gzipMembers(_ count: Int) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(count * Fixtures.gzipZeros1MiB.count)
        for _ in 0..<count { body += Fixtures.gzipZeros1MiB }
        return body
    }

    @Test func manyGzipMembersCountExactly() {
        #expect(decode([.gzip], Self.gzipMembers(64), cuts: [1000, 1051, 5000]) == .decoded(64 * Self.mebibyte))
    }

    @Test func gzipBombStopsPromptly() {
        // 1 GiB of zeros from ~1 MiB of input, fed in 16 KiB pieces as TCP would deliver it.
        let body = Self.gzipMembers(1024)
        let cuts = Array(stride(from: 0, to: body.count, by: 16 * 1024))
        let clock = ContinuousClock()
        var result = ContentDecodingResult.decoded(0)
        let elapsed = clock.measure {
            result = decode([.gzip], body, cuts: cuts, limits: .init(maxDecodedBytes: Self.mebibyte, useGzipTrailer: false))
        }
        #expect(result == .capped(Self.mebibyte))
        #expect(elapsed < .seconds(1))
    }

    @Test func singleGzipMemberBombIsCapped() {
        // 4 KiB of a 64 MiB-of-zeros member decodes to about 4 MiB before the input runs out.
        #expect(decode([.gzip], Fixtures.gzipZeros64MiBPrefix, limits: .init(maxDecodedBytes: Self.mebibyte, useGzipTrailer: false))
            == .capped(Self.mebibyte))
        #expect(decode([.gzip], Fixtures.gzipZeros64MiBPrefix) == .failed("gzip: truncated stream"))
        // Capped is still true of a body that did not arrive whole.
        #expect(decode([.gzip], Fixtures.gzipZeros64MiBPrefix, limits: .init(maxDecodedBytes: Self.mebibyte, useGzipTrailer: false),
                       truncated: true) == .capped(Self.mebibyte))
    }

    @Test func brotliBombStopsPromptly() {
        let clock = ContinuousClock()
        var result = ContentDecodingResult.decoded(0)
        let elapsed = clock.measure {
            result = decode([.brotli], Fixtures.brZeros1GiB, limits: .init(maxDecodedBytes: Self.mebibyte, useGzipTrailer: false))
        }
        #expect(result == .capped(Self.mebibyte))
        #expect(elapsed < .seconds(1))
    }

    @Test(arguments: [(ContentCoding.brotli, Fixtures.brZeros64MiB), (.zstd, Fixtures.zstdZeros64MiB)])
    func capBoundaryIsExact(_ coding: ContentCoding, _ body: [UInt8]) {
        let size = 64 * Self.mebibyte
        #expect(decode([coding], body) == .decoded(size))
        #expect(decode([coding], body, limits: .init(maxDecodedBytes: size, useGzipTrailer: false)) == .decoded(size))
        #expect(decode([coding], body, limits: .init(maxDecodedBytes: size - 1)) == .capped(size - 1))
        #expect(decode([coding], body, limits: .init(maxDecodedBytes: 0)) == .capped(0))
    }

    @Test func intermediateOutputIsCapped() {
        // zstd, br: brotli expands to a 64 MiB skippable zstd frame, which decodes to nothing.
        let body = Fixtures.stackZstdBrSkippable64MiB
        #expect(decode([.zstd, .brotli], body) == .decoded(0))
        #expect(decode([.zstd, .brotli], body, limits: .init(maxDecodedBytes: Self.mebibyte, useGzipTrailer: false)) == .capped(0))
    }
}
