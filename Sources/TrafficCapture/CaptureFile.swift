import CPcap
import TrafficCodecs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pcap or pcapng capture opened through libpcap, possibly gzip-compressed, possibly stdin (`-`).
///
/// Read it once, start to end, with `readPackets`. Not thread-safe.
public final class CaptureFile {
    public let path: String
    public let linkType: LinkType
    /// The size of the file on disk, when known (not for stdin); progress compares `compressedBytesRead` with it.
    public let fileSize: Int64?

    @usableFromInline let handle: OpaquePointer
    private let input: CaptureInput
    private let stream: UnsafeMutablePointer<FILE>

    /// Link types the wire decoder understands; others are rejected at open, by name.
    public static let supportedLinkTypes: Set<LinkType> = [
        .null, .ethernet, .ppp, .pppHDLC, .raw, .rawOpenBSD, .rawLinktype, .loop, .linuxSLL, .ipv4, .ipv6, .nflog,
        .linuxSLL2,
    ]

    public init(path: String) throws(CaptureError) {
        self.path = path
        let descriptor: Int32
        if path == "-" {
            descriptor = dup(0)
            fileSize = nil
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
            }
            var info = stat()
            if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                close(descriptor)
                throw .cannotOpen(path: path, reason: "is a directory")
            }
            fileSize = (info.st_mode & S_IFMT) == S_IFREG ? Int64(info.st_size) : nil
        }
        // A plain capture on disk is read with read(2) straight into stdio's buffer: zlib's pass-through
        // would copy every byte once more. Gzip, and stdin, which cannot be peeked at, go through zlib,
        // which passes plain data through unchanged. Either way libpcap reads a stream whose position we
        // know without a system call (ftell per packet gives the offset of any damage).
        var magic: UInt32 = 0
        let peeked = path == "-" ? 0 : withUnsafeMutableBytes(of: &magic) { pread(descriptor, $0.baseAddress, 4, 0) }
        let plain = peeked >= 2 && !(UInt8(truncatingIfNeeded: magic) == 0x1f && UInt8(truncatingIfNeeded: magic >> 8) == 0x8b)
        // A plain classic pcap file (16-byte record headers, either byte order, µs or ns) goes to libpcap as a
        // plain stdio stream: glibc copies a cookie stream's small reads byte by byte (libpcap reads every
        // 16-byte record header on its own), 3 % of a run. Its position is then summed per record instead.
        let classic = plain && peeked == 4 && Self.classicMagics.contains(magic)
        var reader: GzipFileReader?
        if !plain {
            reader = GzipFileReader(descriptor: descriptor)
            guard reader != nil else {
                close(descriptor)
                throw .cannotOpen(path: path, reason: "out of memory")
            }
        }
        let input = CaptureInput(reader: reader, descriptor: descriptor)
        guard let stream = classic ? fdopen(descriptor, "r") : input.makeStream() else {
            if classic { close(descriptor) }
            throw .cannotOpen(path: path, reason: "cannot create a stream for libpcap")
        }
        setvbuf(stream, input.stdioBuffer.baseAddress!.assumingMemoryBound(to: CChar.self), _IOFBF, input.stdioBuffer.count)
        #if os(Linux)
        // Only the reading thread touches the stream, but once worker threads exist glibc locks it around
        // each of libpcap's two freads per packet (atomic operations on the reading thread, the busier one).
        _ = traffic_fsetlocking(stream, 2)
        #endif
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        // Nanosecond precision: libpcap scales microsecond captures up, so one code path serves both.
        guard
            let handle = pcap_fopen_offline_with_tstamp_precision(
                stream, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
        else {
            fclose(stream)
            let reason = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let gzipError = input.reader?.lastError { throw .notACapture(path: path, reason: gzipError) }
            throw .notACapture(path: path, reason: reason.isEmpty ? "unknown format" : reason)
        }
        // Checked before `self` is fully initialised: a throw after that runs `deinit`, which would close
        // the handle a second time (a double free on an unsupported link type).
        let linkType = LinkType(rawValue: pcap_datalink(handle))
        guard Self.supportedLinkTypes.contains(linkType) else {
            pcap_close(handle)
            throw .unsupportedLinkType(path: path, linkType: linkType.description)
        }
        self.handle = handle
        self.input = input
        self.stream = stream
        self.linkType = linkType
        if classic {
            recordOffset = Self.classicFileHeaderBytes
            snapshot = Int(pcap_snapshot(handle))
        }
    }

    /// The magic numbers of classic pcap files as read in host order: microsecond and nanosecond files, each
    /// in both byte orders. (Other variants, with longer record headers, and pcapng go through the cookie.)
    private static let classicMagics: Set<UInt32> = [0xa1b2_c3d4, 0xd4c3_b2a1, 0xa1b2_3c4d, 0x4d3c_b2a1]
    private static let classicFileHeaderBytes: Int64 = 24
    @usableFromInline static let classicRecordHeaderBytes: Int64 = 16
    /// A plain classic pcap file: the offset after the last record read (nil for other captures).
    @usableFromInline var recordOffset: Int64?
    /// libpcap's snapshot length: a record longer than it is cut to it, with the rest skipped in the file.
    @usableFromInline var snapshot = 0

    deinit { pcap_close(handle) }

    /// Compiles a BPF expression with libpcap and applies it to every packet read after this call.
    /// Compiles `expression` for Ethernet without any capture (pcap_open_dead + pcap_compile): a typo is
    /// then a usage error before anything is read. A filter that only fails for a capture's own link type
    /// still fails in `setFilter`.
    public static func checkFilter(_ expression: String) throws(CaptureError) {
        guard let dead = pcap_open_dead(DLT_EN10MB, 65535) else { return }
        defer { pcap_close(dead) }
        var program = bpf_program()
        guard pcap_compile(dead, &program, expression, 1, PCAP_NETMASK_UNKNOWN) == 0 else {
            throw .invalidFilter(expression: expression, reason: String(cString: pcap_geterr(dead)))
        }
        pcap_freecode(&program)
    }

    public func setFilter(_ expression: String) throws(CaptureError) {
        var program = bpf_program()
        guard pcap_compile(handle, &program, expression, 1, PCAP_NETMASK_UNKNOWN) == 0 else {
            throw .invalidFilter(expression: expression, reason: String(cString: pcap_geterr(handle)))
        }
        defer { pcap_freecode(&program) }
        guard pcap_setfilter(handle, &program) == 0 else {
            throw .invalidFilter(expression: expression, reason: String(cString: pcap_geterr(handle)))
        }
    }

    /// Bytes consumed from the file on disk (compressed bytes for a gzip capture).
    public var compressedBytesRead: Int64 { recordOffset ?? input.reader?.compressedPosition ?? input.position }

    /// Where libpcap is in the (decompressed) capture: what `ftello` answers. On glibc it is worked out from
    /// the stream's buffer pointers, as ftello does, without ftello's call back into the input for every packet.
    @usableFromInline func position() -> Int64 {
        if let recordOffset { return recordOffset }
        #if canImport(Glibc)
        if let end = stream.pointee._IO_read_end, let next = stream.pointee._IO_read_ptr,
            stream.pointee._IO_save_base == nil
        {
            return input.position - Int64(next.distance(to: end))
        }
        #endif
        return Int64(ftello(stream))
    }

    /// Calls `body` for every packet, in file order. Returns the damage that stopped reading early,
    /// or nil when the capture ended cleanly. The packet's bytes are valid only during the call.
    ///
    /// Inlined into the caller: `body` is then part of the loop, not a closure called through a context that
    /// holds each of its captured variables (the call and the context cost ~45 instructions a packet).
    @inlinable
    public func readPackets(_ body: (CapturedPacket) -> Void) -> CaptureDamage? {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        var goodOffset = position()
        while true {
            let status = pcap_next_ex(handle, &header, &data)
            guard status == 1, let header, let data else { return end(status: status, goodOffset: goodOffset) }
            let h = header.pointee
            let caplen = Int(h.caplen)
            // pcap and pcapng store unsigned seconds, but libpcap reads a pcap record's into a signed
            // 32-bit field first: 0xFFFFFFFF (the year 2106) arrives as -1. Negative is never meant.
            var seconds = Int64(h.ts.tv_sec)
            if seconds < 0, seconds >= -(1 << 31) { seconds += 1 << 32 }
            let time = CaptureTime(seconds: seconds, nanoseconds: Int64(h.ts.tv_usec))
            body(CapturedPacket(
                time: time, bytes: UnsafeRawBufferPointer(start: data, count: caplen), originalLength: Int(h.len)))
            if let offset = recordOffset {
                // A record shorter than the snapshot was read whole; one as long may have been cut from a
                // longer one (its size on disk is unknown here): then stdio is asked (a system call).
                let next = caplen < snapshot ? offset &+ Self.classicRecordHeaderBytes &+ Int64(caplen) : streamOffset()
                recordOffset = next
                goodOffset = next
            } else {
                goodOffset = position()
            }
        }
    }

    /// Where stdio is in the file (`ftello`, a system call).
    @usableFromInline func streamOffset() -> Int64 { Int64(ftello(stream)) }

    /// What ended `readPackets`: nil for the end of the capture, else the damage and where it starts.
    @usableFromInline func end(status: Int32, goodOffset: Int64) -> CaptureDamage? {
        if status == PCAP_ERROR_BREAK || status == -2 {
            if let gzipError = input.reader?.lastError {
                return CaptureDamage(offset: goodOffset, reason: "gzip: \(gzipError)")
            }
            return nil
        }
        var reason = String(cString: pcap_geterr(handle))
        if let gzipError = input.reader?.lastError { reason = "gzip: \(gzipError)" }
        return CaptureDamage(offset: goodOffset, reason: reason)
    }
}
