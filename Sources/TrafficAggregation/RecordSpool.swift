import TrafficConcurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An unlinked temporary file holding sorted runs of `--messages` records: with every record of a large
/// capture kept in memory, the run's memory grew with the capture (235 MiB for 1 GiB).
///
/// Written only by the builder that owns it, before the report exists; afterwards only read, with `pread`,
/// which any number of readers may do at once.
package final class RecordSpool: @unchecked Sendable {
    private let descriptor: Int32
    package private(set) var size: Int64 = 0
    /// Where the file was made, for messages.
    package let directory: String

    /// `$TMPDIR`, else `/tmp`.
    package static var defaultDirectory: String {
        let tmp = getenv("TMPDIR").map { String(cString: $0) } ?? ""
        return tmp.isEmpty ? "/tmp" : tmp
    }

    /// In `directory` (by default `defaultDirectory`); nil when no file can be made there.
    package init?(directory: String? = nil) {
        self.directory = directory ?? Self.defaultDirectory
        var template = Array((self.directory + "/traffic-messages-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { return nil }
        // Unlinked at once: the file disappears with the process, however it ends.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `bytes` and returns where they are; nil when the write failed (e.g. the disk is full).
    package func append(_ bytes: [UInt8]) -> Range<Int64>? {
        bytes.withUnsafeBytes { append(raw: $0) }
    }

    /// `append` of bytes wherever they are.
    package func append(raw buffer: UnsafeRawBufferPointer) -> Range<Int64>? {
        let start = size
        var done = 0
        while done < buffer.count {
            let n = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(start + Int64(done)))
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return nil }
            done += n
        }
        size += Int64(buffer.count)
        return start..<size
    }

    /// Reads up to `buffer.count` bytes at `offset`; the count read (short only at the end of the file or on
    /// an error).
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            if n < 0, errno == EINTR { continue }
            if n < 0 { lastReadErrorValue.withLock { $0 = String(cString: strerror(errno)) } }
            if n <= 0 { break }
            done += n
        }
        return done
    }

    /// The error of the last failed read, if any.
    package var lastReadError: String? { lastReadErrorValue.withLock { $0 } }
    private let lastReadErrorValue = LockedValue<String?>(nil)
}
