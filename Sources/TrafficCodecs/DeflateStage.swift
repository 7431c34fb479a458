/// Decodes `deflate`: zlib-wrapped (RFC 1950) as specified, or raw deflate (RFC 1951) as some servers send.
final class DeflateStage: DecodingStage {
    /// The first two bytes, which decide the framing.
    private var header: (UInt8, UInt8) = (0, 0)
    private var headerCount = 0
    /// How many of the header bytes zlib has taken.
    private var headerFed = 0
    private var inflater: ZlibInflater?
    private var ended = false

    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> StageStep {
        if ended { return trailingStep(input, coding: "deflate") }
        var step = StageStep()
        if headerCount < 2 {
            // Buffer the header: the first feed may be a single byte.
            while headerCount < 2, step.consumed < input.count {
                if headerCount == 0 { header.0 = input[step.consumed] } else { header.1 = input[step.consumed] }
                headerCount += 1
                step.consumed += 1
            }
            guard headerCount == 2 else { return step }
            inflater = ZlibInflater(windowBits: Self.isZlibHeader(header) ? 15 : -15)
        }
        guard let inflater else { return step }
        if headerFed < 2 {
            let header = self.header
            let result = withUnsafeBytes(of: header) { bytes in
                inflater.inflate(bytes.dropping(headerFed), into: output)
            }
            headerFed += result.consumed
            step.produced += result.produced
            if apply(result.status, to: &step) { return step }
            if headerFed < 2 {
                step.outputPending = true
                return step
            }
        }
        let result = inflater.inflate(input.dropping(step.consumed), into: output.dropping(step.produced))
        step.consumed += result.consumed
        step.produced += result.produced
        if apply(result.status, to: &step) { return step }
        step.outputPending = step.produced == output.count
        return step
    }

    /// Records an end or failure in `step`; true when the stream is over.
    private func apply(_ status: ZlibInflater.Status, to step: inout StageStep) -> Bool {
        switch status {
        case .ok:
            return false
        case .streamEnd:
            inflater = nil
            ended = true
            // A stream that ends inside the buffered header leaves header bytes behind as trailing data.
            if headerFed < 2 {
                let header = self.header
                let rest = withUnsafeBytes(of: header) { trailingStep($0.dropping(headerFed), coding: "deflate") }
                step.failure = rest.failure
            }
            return true
        case .failed(let reason):
            inflater = nil
            step.failure = "deflate: " + reason
            return true
        }
    }

    func finish() -> String? {
        defer { inflater = nil }
        return ended || headerCount == 0 ? nil : "deflate: truncated stream"
    }

    /// RFC 1950 §2.2: CM = 8, CINFO ≤ 7 and CMF·256 + FLG a multiple of 31. A raw stream cannot match
    /// in practice: CM = 8 would mean a stored block with non-zero padding bits, which no encoder writes.
    static func isZlibHeader(_ header: (UInt8, UInt8)) -> Bool {
        let (cmf, flg) = header
        return cmf & 0x0f == 8 && cmf >> 4 <= 7 && (Int(cmf) * 256 + Int(flg)) % 31 == 0
    }
}
