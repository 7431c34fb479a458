/// Memory the decoder writes Huffman-decoded strings into, so that a field can point at them.
///
/// It grows only to the largest representation seen (its decoded strings take at most 8/5 of its octets) and is
/// reused by every field after that: decoding allocates nothing per field.
package final class HPACKScratchBuffer {
    package private(set) var base: UnsafeMutableRawPointer?
    package private(set) var capacity = 0

    package init() {}

    deinit { base?.deallocate() }

    /// Makes room for `byteCount` octets, keeping the first `keeping` octets, and returns the start of the buffer.
    /// Earlier pointers into the buffer are invalid after this.
    @inline(__always)
    package func reserve(_ byteCount: Int, keeping: Int) -> UnsafeMutableRawPointer {
        if byteCount <= capacity, let base { return base }
        return grow(to: byteCount, keeping: keeping)
    }

    private func grow(to byteCount: Int, keeping: Int) -> UnsafeMutableRawPointer {
        // Rounded up a little so that a run of slightly longer strings does not reallocate each time.
        let newCapacity = max(256, (byteCount + 255) & ~255)
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if keeping > 0, let base { newBase.copyMemory(from: base, byteCount: keeping) }
        base?.deallocate()
        base = newBase
        capacity = newCapacity
        return newBase
    }
}
