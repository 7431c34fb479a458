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

    /// Raw memory of bodies held earlier, kept for the next: a held body grows by appends, and a new buffer for
    /// every body cost a reallocation and a copy per doubling (2.5 % of a run's instructions). Raw memory rather
    /// than arrays: an array's append, `removeAll(keepingCapacity:)` and uniqueness checks cost ~600 instructions
    /// a gzip body on API captures.
    private var spareBodyBuffers: [UnsafeMutableRawBufferPointer] = []
    /// Capacity kept in `spareBodyBuffers`: bounded, so that a few large bodies do not stay resident.
    private var spareCapacity = 0
    static let maxSpareCapacity = 512 << 10
    static let maxSpareBufferCapacity = 256 << 10

    /// Memory for a held body (empty when none is spare); give it back with `recycleBodyBuffer`.
    func takeBodyBuffer() -> UnsafeMutableRawBufferPointer {
        guard let buffer = spareBodyBuffers.popLast() else { return UnsafeMutableRawBufferPointer(start: nil, count: 0) }
        spareCapacity -= buffer.count
        return buffer
    }

    /// Takes back memory from `takeBodyBuffer` (or grown from it): kept for a later body, or freed.
    func recycleBodyBuffer(_ buffer: UnsafeMutableRawBufferPointer) {
        let capacity = buffer.count
        guard capacity > 0 else { return }
        guard capacity <= Self.maxSpareBufferCapacity, spareCapacity + capacity <= Self.maxSpareCapacity else {
            buffer.deallocate()
            return
        }
        spareCapacity += capacity
        spareBodyBuffers.append(buffer)
    }

    deinit {
        buffer.deallocate()
        for spare in spareBodyBuffers { spare.deallocate() }
    }
}
