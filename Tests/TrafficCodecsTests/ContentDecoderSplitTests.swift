import Testing
import TrafficCodecs

/// Every coding decodes to the plaintext size however the body is split into feeds.
@Suite struct ContentDecoderSplitTests {
    @Test(arguments: Sample.text)
    func wholeFeed(_ sample: Sample) {
        #expect(decode(sample.codings, sample.data) == .decoded(sample.decodedSize))
    }

    @Test(arguments: Sample.text)
    func oneByteAtATime(_ sample: Sample) {
        // The smallest scratch: output regions of a few hundred bytes exercise the output loop too.
        #expect(decodeBytewise(sample.codings, sample.data, scratch: DecodingScratch(capacity: 0))
            == .decoded(sample.decodedSize))
    }

    @Test(arguments: Sample.text)
    func splitAtEveryOffset(_ sample: Sample) {
        let scratch = DecodingScratch(capacity: 4096)
        for cut in 0...sample.data.count {
            let result = decode(sample.codings, sample.data, cuts: [cut], scratch: scratch)
            #expect(result == .decoded(sample.decodedSize), "cut at \(cut)")
            if result != .decoded(sample.decodedSize) { return }
        }
    }

    @Test(arguments: Sample.singleStream)
    func everyProperPrefixFails(_ sample: Sample) {
        let scratch = DecodingScratch()
        for length in 1..<sample.data.count {
            let result = decode(sample.codings, Array(sample.data[..<length]), scratch: scratch)
            #expect(result.failure != nil, "prefix of \(length) bytes gave \(result)")
            if result.failure == nil { return }
        }
    }

    @Test(arguments: Sample.text)
    func emptyBodyIsEmpty(_ sample: Sample) {
        #expect(decode(sample.codings, []) == .decoded(0))
    }

    @Test(arguments: Sample.text)
    func truncatedBodyIsNotExact(_ sample: Sample) {
        #expect(decode(sample.codings, sample.data, truncated: true) == .failed("truncated"))
    }

    @Test func interleavedDecodersShareOneScratch() {
        let scratch = DecodingScratch(capacity: 4096)
        let samples = Sample.text
        let decoders = samples.map { ContentDecoder(codings: $0.codings, scratch: scratch) }
        var offset = 0
        while samples.contains(where: { offset < $0.data.count }) {
            for (sample, decoder) in zip(samples, decoders) where offset < sample.data.count {
                let end = min(offset + 7, sample.data.count)
                sample.data.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[offset..<end])) }
            }
            offset += 7
        }
        for (sample, decoder) in zip(samples, decoders) {
            #expect(decoder.finish() == .decoded(sample.decodedSize), "\(sample.name)")
        }
    }
}
