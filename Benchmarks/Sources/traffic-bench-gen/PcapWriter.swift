#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a classic pcap file (microsecond stamps, LINKTYPE_ETHERNET) through one large buffer.
///
/// Packets are built in place in the buffer: `packet(capacity:)` hands out room for one record,
/// the caller fills it and `commit`s the length. The buffer goes to the file in 8 MiB writes.
final class PcapWriter {
    static let bufferCapacity = 8 << 20
    static let snapLength: UInt32 = 262_144

    private let descriptor: Int32
    private let buffer: UnsafeMutableRawPointer
    private var used = 0
    /// Bytes handed to the file so far plus those still buffered.
    private(set) var fileBytes = 0
    private(set) var packets = 0

    init(path: String) throws(GeneratorError) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw .cannotWrite(path, String(cString: strerror(errno))) }
        buffer = .allocate(byteCount: Self.bufferCapacity, alignment: 16)
        // Global header (pcap-savefile(5)): written in host order, which the magic number announces.
        let header = packet(capacity: 24)
        header.storeBytes(of: UInt32(0xa1b2_c3d4), toByteOffset: 0, as: UInt32.self)
        header.storeBytes(of: UInt16(2), toByteOffset: 4, as: UInt16.self)
        header.storeBytes(of: UInt16(4), toByteOffset: 6, as: UInt16.self)
        header.storeBytes(of: Int32(0), toByteOffset: 8, as: Int32.self)  // thiszone
        header.storeBytes(of: UInt32(0), toByteOffset: 12, as: UInt32.self)  // sigfigs
        header.storeBytes(of: Self.snapLength, toByteOffset: 16, as: UInt32.self)
        header.storeBytes(of: UInt32(1), toByteOffset: 20, as: UInt32.self)  // LINKTYPE_ETHERNET
        commit(24, isPacket: false)
    }

    deinit { buffer.deallocate() }

    /// Room for `capacity` bytes at the end of the buffer; valid until the next `commit`.
    func packet(capacity: Int) -> UnsafeMutableRawPointer {
        if used + capacity > Self.bufferCapacity { flush() }
        return buffer + used
    }

    func commit(_ count: Int, isPacket: Bool = true) {
        used += count
        fileBytes += count
        if isPacket { packets += 1 }
    }

    func flush() {
        var offset = 0
        while offset < used {
            let written = write(descriptor, buffer + offset, used - offset)
            if written < 0 {
                if errno == EINTR { continue }
                fatalError("traffic-bench-gen: write failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
        used = 0
    }

    /// Writes what is buffered and closes the file.
    func finish() {
        flush()
        _ = close(descriptor)
    }
}

/// What can stop the generator before it starts writing.
enum GeneratorError: Error, CustomStringConvertible {
    case cannotWrite(String, String)
    case badArgument(String)

    var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .badArgument(let message): message
        }
    }
}
