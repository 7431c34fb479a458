/// Decodes `gzip` / `x-gzip` (RFC 1952); concatenated members decode as one stream, like `gzip -dc`.
final class GzipStage: DecodingStage {
    /// The member being decoded; nil before the first byte and between members.
    private var inflater: ZlibInflater?
    /// At least one member ended: what follows is another member or trailing data.
    private var memberEnded = false
    /// Zero padding started after the last member; only zeros may follow.
    private var inPadding = false

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> StageStep {
        if inflater == nil {
            guard let first = input.first else { return StageStep() }
            if memberEnded {
                if inPadding || first == 0 {
                    inPadding = true
                    return trailingStep(input, coding: "gzip")
                }
                // RFC 1952 §2.2: a gzip file is a series of members, each starting with ID1 = 0x1f.
                guard first == 0x1f else { return .failed("gzip: trailing data after end of stream") }
            }
            // 15 + 16: 32 KiB window, gzip framing only (deflate framings are the `deflate` stage's job).
            inflater = ZlibInflater(windowBits: 15 + 16)
        }
        guard let inflater else { return StageStep() }
        let result = inflater.inflate(input, into: output)
        var step = StageStep(consumed: result.consumed, produced: result.produced)
        switch result.status {
        case .ok:
            step.outputPending = result.produced == output.count
        case .streamEnd:
            // The member's trailer (CRC-32, ISIZE) checked out; free the C state now, a following
            // member gets a fresh one.
            self.inflater = nil
            memberEnded = true
        case .failed(let reason):
            self.inflater = nil
            step.failure = "gzip: " + reason
        }
        return step
    }

    func finish() -> String? {
        defer { inflater = nil }
        return inflater == nil ? nil : "gzip: truncated stream"
    }
}
