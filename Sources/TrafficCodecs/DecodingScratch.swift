/// Scratch output memory, reused by every decoder of one worker thread (decoded bytes are counted, then discarded).
///
/// Decoders use it only as temporary output space inside one `feed` call and never keep data in it
/// between calls, so any number of live decoders (interleaved connections) may share one scratch.
/// Not thread-safe: one scratch per worker thread.
public final class DecodingScratch {
    /// Below this a stack of decoders would make too many tiny C calls; also keeps every region non-empty.
    static let minimumCapacity = 4096

    let buffer: UnsafeMutableRawBufferPointer

    public init(capacity: Int = 64 * 1024) {
        buffer = .allocate(byteCount: max(capacity, Self.minimumCapacity), alignment: 16)
    }

    /// The usable size in bytes (at least 4 KiB).
    public var capacity: Int { buffer.count }

    /// Gzip bodies held back for the trailer shortcut, across all decoders of this worker.
    var retainedBytes = 0
    /// Beyond this, decoders inflate as they go instead of holding bodies back.
    let retainedBudget = 8 << 20

    /// Emptied buffers of bodies held earlier, capacity kept: a held body grows by appends, and a new
    /// array for every body cost a reallocation and a copy per doubling (2.5 % of a run's instructions).
    private var spareBodyBuffers: [[UInt8]] = []
    /// Capacity kept in `spareBodyBuffers`: bounded, so that a few large bodies do not stay resident.
    private var spareCapacity = 0
    static let maxSpareCapacity = 512 << 10
    static let maxSpareBufferCapacity = 256 << 10

    func takeBodyBuffer() -> [UInt8] {
        guard let buffer = spareBodyBuffers.popLast() else { return [] }
        spareCapacity -= buffer.capacity
        return buffer
    }

    func recycleBodyBuffer(_ buffer: inout [UInt8]) {
        let capacity = buffer.capacity
        guard capacity > 0, capacity <= Self.maxSpareBufferCapacity,
            spareCapacity + capacity <= Self.maxSpareCapacity
        else {
            buffer = []
            return
        }
        buffer.removeAll(keepingCapacity: true)
        spareCapacity += capacity
        spareBodyBuffers.append(buffer)
        buffer = []
    }

    deinit { buffer.deallocate() }
}
