import TrafficTestSupport
import Testing
import TrafficCodecs

/// Damaged input never traps and never claims more than the cap.
@Suite struct ContentDecoderRobustnessTests {
    /// SplitMix64: a fixed, seedable sequence so failures reproduce.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: Sample.text)
    func mutatedBodiesDoNotTrap(_ sample: Sample) {
        var random = Generator(state: UInt64(sample.data.count))
        let scratch = DecodingScratch(capacity: 4096)
        let cap = 3 * Fixtures.textLength
        for _ in 0..<150 {
            var body = sample.data
            for _ in 0..<Int.random(in: 1...4, using: &random) where !body.isEmpty {
                let at = Int.random(in: 0..<body.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: body[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                case 1: body.removeSubrange(at...)
                default: body.insert(UInt8.random(in: 0...255, using: &random), at: at)
                }
            }
            let cuts = (0..<5).map { _ in Int.random(in: 0...body.count, using: &random) }.sorted()
            switch decode(sample.codings, body, cuts: cuts, scratch: scratch, limits: .init(maxDecodedBytes: cap)) {
            case .decoded(let size): #expect(size >= 0 && size <= cap)
            case .capped(let size): #expect(size >= 0 && size <= cap)
            case .failed(let reason): #expect(!reason.isEmpty)
            }
        }
    }

    @Test(arguments: [[ContentCoding.gzip], [.deflate], [.brotli], [.zstd], [.gzip, .brotli], [.zstd, .deflate]])
    func randomBytesDoNotTrap(_ codings: [ContentCoding]) {
        var random = Generator(state: 42)
        for length in [1, 2, 3, 10, 100, 1000] {
            for _ in 0..<20 {
                let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                if case .decoded(let size) = decode(codings, body) { #expect(size >= 0) }
            }
        }
    }
}
