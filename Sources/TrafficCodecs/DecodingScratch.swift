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

    deinit { buffer.deallocate() }
}
