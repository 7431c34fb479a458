import CPcap
import TrafficCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The byte source under libpcap: a C `FILE *` over zlib (gzip, stdin) or over read(2) (plain files).
final class CaptureInput {
    /// nil for a plain file, which is read with read(2) straight into stdio's buffer.
    let reader: GzipFileReader?
    let descriptor: Int32
    /// Bytes handed to stdio from a plain file.
    private var plainPosition: Int64 = 0
    /// stdio's buffer; it must outlive the stream, which libpcap closes before `deinit`.
    let stdioBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)

    init(reader: GzipFileReader?, descriptor: Int32) {
        self.reader = reader
        self.descriptor = descriptor
    }

    deinit { stdioBuffer.deallocate() }

    /// Offset in the (decompressed) capture: answered without a system call, so ftell is cheap per packet.
    var position: Int64 { reader?.position ?? plainPosition }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let reader { return reader.read(into: buffer) }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        #if canImport(Glibc)
        let n = Glibc.read(descriptor, base, buffer.count)
        #else
        let n = Darwin.read(descriptor, base, buffer.count)
        #endif
        if n > 0 { plainPosition += Int64(n) }
        return n
    }

    func close() {
        if let reader {
            reader.close()
        } else {
            #if canImport(Glibc)
            _ = Glibc.close(descriptor)
            #else
            _ = Darwin.close(descriptor)
            #endif
        }
    }

    /// The stream holds a strong reference to `self` until libpcap closes it.
    func makeStream() -> UnsafeMutablePointer<FILE>? {
        let cookie = Unmanaged.passRetained(self).toOpaque()
        #if os(Linux)
        let functions = traffic_cookie_io_functions(
            read: { cookie, buffer, size in
                let input = Unmanaged<CaptureInput>.fromOpaque(cookie!).takeUnretainedValue()
                return input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
            },
            write: nil,
            seek: { cookie, offset, whence in
                // Only ftell's query (offset 0 from the current position) is answered: a capture is read forwards.
                let input = Unmanaged<CaptureInput>.fromOpaque(cookie!).takeUnretainedValue()
                guard let offset, whence == SEEK_CUR, offset.pointee == 0 else { return -1 }
                offset.pointee = input.position
                return 0
            },
            close: { cookie in
                let input = Unmanaged<CaptureInput>.fromOpaque(cookie!).takeRetainedValue()
                input.close()
                return 0
            })
        guard let stream = traffic_fopencookie(cookie, "r", functions) else {
            Unmanaged<CaptureInput>.fromOpaque(cookie).release()
            return nil
        }
        return stream
        #else
        guard
            let stream = funopen(
                cookie,
                { cookie, buffer, size in
                    let input = Unmanaged<CaptureInput>.fromOpaque(cookie!).takeUnretainedValue()
                    return Int32(input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size))))
                },
                nil,
                { cookie, offset, whence in
                    let input = Unmanaged<CaptureInput>.fromOpaque(cookie!).takeUnretainedValue()
                    guard whence == SEEK_CUR, offset == 0 else { return -1 }
                    return fpos_t(input.position)
                },
                { cookie in
                    let input = Unmanaged<CaptureInput>.fromOpaque(cookie!).takeRetainedValue()
                    input.close()
                    return 0
                })
        else {
            Unmanaged<CaptureInput>.fromOpaque(cookie).release()
            return nil
        }
        return stream
        #endif
    }
}
