import CZstd

/// Decodes `zstd` (RFC 8878); concatenated frames (skippable ones included) decode as one stream.
final class ZstdStage: DecodingStage {
    /// RFC 9659: `zstd` content must not need a window over 8 MiB, and browsers reject larger ones;
    /// this also bounds the decoder's memory per body.
    static let windowLogMax: Int32 = 23

    private var stream: OpaquePointer?
    /// A frame has started and not yet ended (with all its output flushed).
    private var inFrame = false
    /// At least one frame ended.
    private var frameEnded = false
    /// Zero padding started after the last frame; only zeros may follow.
    private var inPadding = false

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> StageStep {
        if !inFrame {
            guard let first = input.first else { return StageStep() }
            // No zstd frame (magic 0xFD2FB528 or skippable 0x184D2A5?, little-endian) starts with 0.
            if frameEnded && (inPadding || first == 0) {
                inPadding = true
                release()
                return trailingStep(input, coding: "zstd")
            }
            if stream == nil {
                guard let created = ZSTD_createDStream() else { return .failed("zstd: out of memory") }
                stream = created
                ZSTD_DCtx_setParameter(created, ZSTD_d_windowLogMax, Self.windowLogMax)
            }
            inFrame = true
        }
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let hint = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
        var step = StageStep(consumed: inBuffer.pos, produced: outBuffer.pos)
        if ZSTD_isError(hint) != 0 {
            step.failure = "zstd: " + String(cString: ZSTD_getErrorName(hint))
            release()
            inFrame = false
        } else if hint == 0 {
            // 0: the frame is complete and flushed; the stream is reused for a following frame.
            inFrame = false
            frameEnded = true
        } else {
            // Output space left over means zstd flushed all it could (zstd.h, ZSTD_decompressStream).
            step.outputPending = outBuffer.pos == outBuffer.size
        }
        return step
    }

    func finish() -> String? {
        defer { release() }
        return inFrame ? "zstd: truncated stream" : nil
    }

    private func release() {
        if let stream { ZSTD_freeDStream(stream) }
        stream = nil
    }

    deinit { release() }
}
