/// One content-coding decoder in a `ContentDecoder` chain: bytes in, decoded bytes out.
protocol DecodingStage: AnyObject {
    /// Decodes from `input` into `output`. Must consume or produce something unless `input` is empty
    /// or `output` cannot take more; C state is created lazily on the first input byte.
    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> StageStep

    /// The input ended: nil when the stream is complete (or never started), else the reason it is not.
    /// Releases C state either way.
    func finish() -> String?
}

/// What one `DecodingStage.step` did.
struct StageStep {
    var consumed = 0
    var produced = 0
    /// The decoder may hold more output: call again, even with no new input.
    var outputPending = false
    var failure: String? = nil

    static func failed(_ reason: String) -> StageStep { StageStep(failure: reason) }
}

extension UnsafeRawBufferPointer {
    /// True when every byte is zero (also for an empty buffer).
    var isAllZero: Bool {
        for byte in self where byte != 0 { return false }
        return true
    }

    /// The bytes from `offset` on; empty when `offset` is past the end.
    @inline(__always)
    func dropping(_ offset: Int) -> UnsafeRawBufferPointer {
        offset >= count ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: self[offset...])
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The bytes from `offset` on; empty when `offset` is past the end.
    @inline(__always)
    func dropping(_ offset: Int) -> UnsafeMutableRawBufferPointer {
        offset >= count ? UnsafeMutableRawBufferPointer(start: nil, count: 0) : UnsafeMutableRawBufferPointer(rebasing: self[offset...])
    }
}

/// Trailing bytes after a complete stream.
///
/// No content-coding format allows padding, but zero bytes after the end are a known server quirk
/// (block-padded writers) that gzip(1) and browsers ignore; so zeros are ignored and anything else
/// is reported, because a count that silently skips data would not be exact.
func trailingStep(_ input: UnsafeRawBufferPointer, coding: String) -> StageStep {
    input.isAllZero
        ? StageStep(consumed: input.count)
        : .failed("\(coding): trailing data after end of stream")
}
