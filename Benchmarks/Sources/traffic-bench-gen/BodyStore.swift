import BenchCZlib

/// A response or request body in every form the capture sends it, built once and shared.
///
/// All storage is allocated once and lives as long as the process: message heads point into it.
final class Body {
    /// The decoded body (what the application produced).
    let identity: UnsafeRawBufferPointer
    let contentType: String
    private var gzipped: UnsafeRawBufferPointer?
    private var chunkedForms: [Bool: UnsafeRawBufferPointer] = [:]

    init(_ bytes: [UInt8], contentType: String) {
        identity = Body.keep(bytes)
        self.contentType = contentType
    }

    init(sharing bytes: UnsafeRawBufferPointer, contentType: String) {
        identity = bytes
        self.contentType = contentType
    }

    /// The body gzip-compressed (RFC 1952) with zlib at level 6, computed on first use.
    var gzip: UnsafeRawBufferPointer {
        if let gzipped { return gzipped }
        let compressed = Body.keep(Body.deflate(identity))
        gzipped = compressed
        return compressed
    }

    /// The content (gzipped or not) in chunked framing (RFC 9112 §7.1), computed on first use.
    ///
    /// Chunks of 8 KiB, like a server flushing its output buffer, then the last chunk and no trailers.
    func chunked(gzipped: Bool) -> UnsafeRawBufferPointer {
        if let form = chunkedForms[gzipped] { return form }
        let content = gzipped ? gzip : identity
        var framed: [UInt8] = []
        framed.reserveCapacity(content.count + content.count / 1000 + 16)
        var start = 0
        while start < content.count {
            let size = min(8192, content.count - start)
            framed.append(contentsOf: String(size, radix: 16).utf8)
            framed.append(contentsOf: [13, 10])
            framed.append(contentsOf: content[start..<(start + size)])
            framed.append(contentsOf: [13, 10])
            start += size
        }
        framed.append(contentsOf: Array("0\r\n\r\n".utf8))
        let form = Body.keep(framed)
        chunkedForms[gzipped] = form
        return form
    }

    static func keep(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(rebasing: storage[0..<bytes.count])
    }

    /// gzip framing through zlib's deflate (window bits 15 + 16), mtime 0, so output is deterministic.
    static func deflate(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var stream = z_stream()
        let status = deflateInit2_(
            &stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "deflateInit2 failed: \(status)")
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let produced = output.withUnsafeMutableBytes { out -> Int in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(out.count)
            let result = BenchCZlib.deflate(&stream, Z_FINISH)
            precondition(result == Z_STREAM_END, "deflate did not finish: \(result)")
            return out.count - Int(stream.avail_out)
        }
        output.removeLast(output.count - produced)
        return output
    }
}
