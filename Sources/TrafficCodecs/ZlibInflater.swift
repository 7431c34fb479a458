import CZlib

/// One zlib inflate stream (gzip, zlib or raw framing chosen by `windowBits`).
final class ZlibInflater {
    /// What one `inflate` call ended with.
    enum Status {
        case ok
        case streamEnd
        case failed(String)
    }

    // zlib's internal state points back at its z_stream and rejects a moved one, so it lives on the heap.
    private let stream: UnsafeMutablePointer<z_stream>
    /// False when `inflateInit2` failed (out of memory); `inflate` then fails.
    let isReady: Bool

    /// `windowBits`: 15 + 16 for gzip, 15 for zlib (RFC 1950), -15 for raw deflate (RFC 1951).
    init(windowBits: Int32) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // inflateInit2 is a C macro; this is its expansion.
        isReady = inflateInit2_(stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    /// Inflates as much of `input` into `output` as fits; both may be empty.
    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        -> (consumed: Int, produced: Int, status: Status)
    {
        guard isReady else { return (0, 0, .failed("out of memory")) }
        guard output.count > 0 else { return (0, 0, .ok) }
        // avail_in/avail_out are 32-bit; larger buffers are simply handled over several calls.
        let inCount = UInt32(clamping: input.count)
        let outCount = UInt32(clamping: output.count)
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = inCount
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = outCount
        let code = CZlib.inflate(stream, Z_NO_FLUSH)
        let consumed = Int(inCount - stream.pointee.avail_in)
        let produced = Int(outCount - stream.pointee.avail_out)
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        switch code {
        case Z_OK:
            return (consumed, produced, .ok)
        case Z_STREAM_END:
            return (consumed, produced, .streamEnd)
        case Z_BUF_ERROR:
            // No progress was possible (needs input or output); not an error for a streaming caller.
            return (consumed, produced, .ok)
        case Z_NEED_DICT:
            return (consumed, produced, .failed("preset dictionary not supported"))
        case Z_MEM_ERROR:
            return (consumed, produced, .failed("out of memory"))
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(code)"
            return (consumed, produced, .failed(message))
        }
    }

    deinit {
        // Safe after a failed init too: zlib checks for a missing state.
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }
}
