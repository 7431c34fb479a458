import CBrotli

/// Decodes `br` (RFC 7932) with the streaming decoder of libbrotlidec.
final class BrotliStage: DecodingStage {
    private var state: OpaquePointer?
    private var ended = false

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> StageStep {
        if ended { return trailingStep(input, coding: "br") }
        if state == nil {
            if input.isEmpty { return StageStep() }
            // Default allocator; the large-window extension stays off, as RFC 7932 streams require.
            guard let created = BrotliDecoderCreateInstance(nil, nil, nil) else { return .failed("br: out of memory") }
            state = created
        }
        guard let outBase = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return StageStep() }
        var availableIn = input.count
        var nextIn = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var availableOut = output.count
        var nextOut: UnsafeMutablePointer<UInt8>? = outBase
        let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
        var step = StageStep(consumed: input.count - availableIn, produced: output.count - availableOut)
        switch result {
        case BROTLI_DECODER_RESULT_SUCCESS:
            release()
            ended = true
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
            step.outputPending = true
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
            break
        default:
            let code = BrotliDecoderGetErrorCode(state)
            var reason = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error"
            // libbrotli names errors like "_ERROR_FORMAT_PADDING_1"; drop the leading underscore.
            if reason.first == "_" { reason.removeFirst() }
            release()
            step.failure = "br: " + reason
        }
        return step
    }

    func finish() -> String? {
        defer { release() }
        return state == nil ? nil : "br: truncated stream"
    }

    private func release() {
        if let state { BrotliDecoderDestroyInstance(state) }
        state = nil
    }

    deinit { release() }
}
