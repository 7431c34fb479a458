import TrafficCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS key logs embedded in a pcapng file as Decryption Secrets Blocks (pcapng §4.7: block type 0x0000000A,
/// secrets type 0x544C534B "TLSK", the NSS key log text), as `editcap --inject-secrets` and eCapture write them.
///
/// libpcap skips these blocks, so the file is walked block by block before it is analysed: eCapture writes a
/// secret when it learns it, often after the packets of the handshake it belongs to, and those packets must
/// still be decrypted. Only the 8-byte block headers and the secrets are read; packet blocks are skipped.
/// Classic pcap files hold no such blocks and are not read at all.
public enum CaptureSecrets {
    /// The key log texts of every TLSK Decryption Secrets Block in `path`, in file order; empty for a pcap
    /// file or a pcapng without them. Standard input is not walked (it cannot be read twice).
    public static func tlsKeyLogs(path: String) throws(CaptureError) -> [[UInt8]] {
        guard path != "-" else { return [] }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        var magic: (UInt8, UInt8) = (0, 0)
        let gzip = withUnsafeMutableBytes(of: &magic) { pread(descriptor, $0.baseAddress, 2, 0) } == 2
            && magic.0 == 0x1f && magic.1 == 0x8b
        var reader = BlockReader(descriptor: descriptor, gzip: gzip)
        defer { reader.close() }
        return reader.secrets()
    }

    /// Reads a text file in pieces of whole lines (the last piece may end without a line end), so that a large
    /// key log (80 000 lines for 20 000 connections) is never in memory whole next to the secrets parsed from it.
    public static func readLines(path: String, _ body: ([UInt8]) -> Void) throws(CaptureError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { _ = close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw .cannotOpen(path: path, reason: "is a directory")
        }
        var carried: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            carried += chunk[0..<n]
            // Hand on everything up to the last line end; keep the unfinished line for the next read.
            if let last = carried.lastIndex(of: 0x0a) {
                body(Array(carried[...last]))
                carried.removeSubrange(...last)
            }
        }
        if !carried.isEmpty { body(carried) }
    }

    /// Reads forwards through a plain or gzip file with a buffer; skips by reading (a gzip stream can't seek).
    private struct BlockReader {
        let descriptor: Int32
        let gzip: GzipFileReader?
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var start = 0
        var end = 0

        init(descriptor: Int32, gzip: Bool) {
            self.descriptor = descriptor
            self.gzip = gzip ? GzipFileReader(descriptor: descriptor) : nil
        }

        mutating func close() {
            if let gzip { gzip.close() } else { _ = closeDescriptor(descriptor) }
        }

        private func closeDescriptor(_ d: Int32) -> Int32 {
            #if canImport(Glibc)
            Glibc.close(d)
            #else
            Darwin.close(d)
            #endif
        }

        /// Refills the buffer; false at the end of the file or on an error.
        private mutating func fill() -> Bool {
            if start > 0 {
                buffer.withUnsafeMutableBytes { b in
                    _ = memmove(b.baseAddress!, b.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            }
            let n = buffer.withUnsafeMutableBytes { b -> Int in
                let room = UnsafeMutableRawBufferPointer(rebasing: b[end...])
                if let gzip { return gzip.read(into: room) }
                return read(descriptor, room.baseAddress, room.count)
            }
            guard n > 0 else { return false }
            end += n
            return true
        }

        /// The next `count` bytes (at most the buffer's size), or nil at the end.
        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count <= buffer.count else { return nil }
            while end - start < count { if !fill() { return nil } }
            defer { start += count }
            return buffer[start..<start + count]
        }

        /// Skips `count` bytes; false if the file ends first.
        mutating func skip(_ count: Int) -> Bool {
            var left = count
            while left > 0 {
                if start == end, !fill() { return false }
                let n = min(left, end - start)
                start += n
                left -= n
            }
            return true
        }

        mutating func secrets() -> [[UInt8]] {
            var found: [[UInt8]] = []
            var bigEndian = false
            var first = true
            while let header = take(8) {
                let raw = header.withUnsafeBytes { (UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)),
                                                    $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }
                if raw.0 == 0x0A0D_0D0A {
                    // A Section Header Block (its type reads the same either way): the byte-order magic that
                    // follows the length says how this section's numbers are written.
                    guard let bom = take(4) else { break }
                    bigEndian = bom.elementsEqual([0x1A, 0x2B, 0x3C, 0x4D])
                    let length = Int(bigEndian ? UInt32(bigEndian: raw.1) : UInt32(littleEndian: raw.1))
                    guard length >= 16, length % 4 == 0, skip(length - 12) else { break }
                    first = false
                    continue
                }
                // Not pcapng: classic pcap files begin with another magic.
                if first { break }
                let type = bigEndian ? UInt32(bigEndian: UInt32(littleEndian: raw.0)) : raw.0
                let length = Int(bigEndian ? UInt32(bigEndian: raw.1) : UInt32(littleEndian: raw.1))
                guard length >= 12, length % 4 == 0 else { break }
                if type == 0x0000_000A, length >= 20, let fields = take(8) {
                    let (secretsType, secretsLength) = fields.withUnsafeBytes { b in
                        (b.loadUnaligned(as: UInt32.self), b.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                    }
                    let kind = bigEndian ? UInt32(bigEndian: secretsType) : UInt32(littleEndian: secretsType)
                    let count = Int(bigEndian ? UInt32(bigEndian: secretsLength) : UInt32(littleEndian: secretsLength))
                    var rest = length - 16
                    if kind == 0x544C_534B, count <= rest - 4 {
                        // Secrets may be larger than the buffer: read them in pieces.
                        var text: [UInt8] = []
                        var left = count
                        while left > 0, let piece = take(min(left, 1 << 15)) {
                            text += piece
                            left -= piece.count
                        }
                        guard left == 0 else { break }
                        found.append(text)
                        rest -= count
                    }
                    guard skip(rest) else { break }
                    continue
                }
                guard skip(length - 8) else { break }
            }
            return found
        }
    }
}
