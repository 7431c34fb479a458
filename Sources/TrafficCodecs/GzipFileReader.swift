import CZlib

/// Reads a file descriptor through zlib's `gzread`: gzip data comes out decompressed, anything
/// else comes out unchanged. This is how tshark reads `.pcap.gz`: by magic number, not by name.
///
/// Owns the descriptor from `init` on and closes it in `close()`.
public final class GzipFileReader {
    private var file: gzFile?
    /// Bytes handed out so far: the offset in the decompressed stream.
    public private(set) var position: Int64 = 0

    /// Takes ownership of `descriptor`. Returns nil when zlib cannot allocate its state.
    public init?(descriptor: Int32) {
        guard let file = gzdopen(descriptor, "rb") else { return nil }
        // A large buffer: captures are read start to end, and zlib's default of 8 KiB costs syscalls.
        gzbuffer(file, 256 * 1024)
        self.file = file
    }

    /// Fills up to `buffer.count` bytes; returns 0 at the end and -1 on an error (see `lastError`).
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let file, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let chunk = UInt32(min(buffer.count, Int(Int32.max)))
        let n = gzread(file, base, chunk)
        if n > 0 { position += Int64(n) }
        return Int(n)
    }

    /// The compressed bytes consumed from the file so far; for progress against the file size.
    public var compressedPosition: Int64 {
        guard let file else { return 0 }
        return Int64(gzoffset(file))
    }

    /// zlib's description of the last error, e.g. "unexpected end of file" for a truncated gzip.
    public var lastError: String? {
        guard let file else { return nil }
        var code: Int32 = 0
        guard let message = gzerror(file, &code), code != Z_OK else { return nil }
        return String(cString: message)
    }

    public func close() {
        if let file { gzclose_r(file) }
        file = nil
    }

    deinit { close() }
}
