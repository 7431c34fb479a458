import FuzzSupport
import TrafficCodecs

/// Fuzzes `ContentDecoder` with each coding and stacks of up to three.
///
/// Input: byte 0 = number of codings (0–3, bits 0–1), whether the body is marked truncated (bit 2),
/// and a small scratch (bit 3, so stage regions are tiny and output-pending paths run); bytes 1–3 =
/// the codings (mod 5: identity, gzip, deflate, br, zstd); byte 4 + 1 = feed size; the rest is the body.
/// The cap is 1 MiB so a bomb costs milliseconds, not a GiB.
// Also exported under libFuzzer\'s name: its (unused) `main` is linked whole and refers to it.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzContent(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(start: data, count: size)
    let control = input.byte()
    let all = ContentCoding.allCases
    let choices = (0..<3).map { _ in all[Int(input.byte()) % all.count] }
    let codings = Array(choices.prefix(Int(control & 3)))
    let piece = Int(input.byte()) + 1
    let cap = 1 << 20
    let scratch = DecodingScratch(capacity: control & 8 != 0 ? 0 : 64 * 1024)
    let decoder = ContentDecoder(codings: codings, scratch: scratch, limits: ContentDecodingLimits(maxDecodedBytes: cap))
    var fed = 0
    while !input.isAtEnd {
        let bytes = input.take(piece)
        fed += bytes.count
        decoder.feed(bytes)
    }
    let result = decoder.finish(truncated: control & 4 != 0)
    if case .decoded(let n) = result {
        fuzzCheck(n <= cap, "decoded \(n) bytes past the \(cap)-byte cap")
        if codings.allSatisfy({ $0 == .identity }) { fuzzCheck(n == fed, "identity decoded \(n) of \(fed) bytes") }
    }
    // finish is idempotent.
    fuzzCheck(decoder.finish(truncated: false) == result, "finish changed its result")
    return 0
}

/// libFuzzer drives the target; see `runFuzzer`.
@main
enum FuzzContentMain {
    static func main() { runFuzzer(fuzzContent) }
}
