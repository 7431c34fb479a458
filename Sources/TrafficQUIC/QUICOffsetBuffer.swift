/// Data that arrives by offset (CRYPTO frames, one direction of a stream) put back in order (RFC 9000 §2.2,
/// §19.6): in-order bytes are handed on at once, bytes past a hole are held (bounded) until the hole fills.
/// Counts which bytes are new: a frame's bytes that were delivered or held before are retransmitted.
struct QUICOffsetBuffer {
    /// Everything before this offset was handed on (or declared lost).
    private(set) var delivered: UInt64 = 0
    /// Held chunks past holes: sorted by offset, never overlapping.
    private var held: [(offset: UInt64, bytes: [UInt8])] = []
    private(set) var heldBytes = 0

    var isEmpty: Bool { held.isEmpty }

    /// Adds `data` at `offset`; returns how many of its bytes were new. `deliver` gets in-order bytes.
    /// When holding would pass `limit` bytes, the oldest hole is given up: `lose` gets its size and the held
    /// bytes after it are delivered.
    mutating func add(
        offset: UInt64, _ data: UnsafeRawBufferPointer, limit: Int,
        deliver: (UnsafeRawBufferPointer) -> Void, lose: (Int) -> Void
    ) -> Int {
        let end = offset &+ UInt64(data.count)
        guard end > delivered, !data.isEmpty else { return 0 }
        let start = max(offset, delivered)
        var new = 0
        if start == delivered {
            // In order: deliver up to each held chunk (held bytes are not new), then past it, to the end.
            while delivered < end {
                let stop = held.first.map { min($0.offset, end) } ?? end
                if stop > delivered {
                    let piece = UnsafeRawBufferPointer(rebasing: data[Int(delivered - offset)..<Int(stop - offset)])
                    deliver(piece)
                    new += piece.count
                    delivered = stop
                }
                drain(deliver: deliver)
            }
            return new
        }
        // Past a hole: keep the parts no held chunk covers.
        var cursor = start
        var index = 0
        while cursor < end {
            while index < held.count, held[index].offset + UInt64(held[index].bytes.count) <= cursor { index += 1 }
            let nextStart = index < held.count ? held[index].offset : end
            if cursor < nextStart {
                let pieceEnd = min(nextStart, end)
                let piece = Array(UnsafeRawBufferPointer(rebasing: data[Int(cursor - offset)..<Int(pieceEnd - offset)]))
                held.insert((cursor, piece), at: index)
                heldBytes += piece.count
                new += piece.count
                index += 1
                cursor = pieceEnd
            } else {
                cursor = held[index].offset + UInt64(held[index].bytes.count)
                index += 1
            }
        }
        while heldBytes > limit, let first = held.first {
            lose(Int(clamping: first.offset - delivered))
            delivered = first.offset
            drain(deliver: deliver)
        }
        return new
    }

    /// Hands on every held chunk in order, declaring the holes before them lost (the end of the data).
    mutating func flush(deliver: (UnsafeRawBufferPointer) -> Void, lose: (Int) -> Void) {
        while let first = held.first {
            if first.offset > delivered { lose(Int(clamping: first.offset - delivered)) }
            delivered = max(delivered, first.offset)
            drain(deliver: deliver)
        }
    }

    /// Declares everything up to `offset` lost or done (a reset stream's final size).
    mutating func skip(to offset: UInt64) {
        while let first = held.first, first.offset + UInt64(first.bytes.count) <= offset {
            heldBytes -= first.bytes.count
            held.removeFirst()
        }
        delivered = max(delivered, offset)
        // A chunk that straddles the new start keeps only its part after it: held chunks start past `delivered`.
        if let first = held.first, first.offset < delivered {
            let cut = Int(delivered - first.offset)
            held[0] = (delivered, Array(first.bytes[cut...]))
            heldBytes -= cut
        }
    }

    private mutating func drain(deliver: (UnsafeRawBufferPointer) -> Void) {
        while let first = held.first, first.offset <= delivered {
            held.removeFirst()
            heldBytes -= first.bytes.count
            let chunkEnd = first.offset + UInt64(first.bytes.count)
            if chunkEnd > delivered {
                first.bytes.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[Int(delivered - first.offset)...])) }
                delivered = chunkEnd
            }
        }
    }
}

extension QUICOffsetBuffer {
    /// How many of the bytes `offset..<offset + count` were neither delivered nor held: what `add` would count
    /// as new.
    func newByteCount(offset: UInt64, count: Int) -> Int {
        let end = offset &+ UInt64(count)
        var cursor = max(offset, delivered)
        guard cursor < end else { return 0 }
        var new = 0
        for chunk in held {
            let chunkEnd = chunk.offset + UInt64(chunk.bytes.count)
            if chunkEnd <= cursor { continue }
            if chunk.offset >= end { break }
            if chunk.offset > cursor { new += Int(chunk.offset - cursor) }
            cursor = max(cursor, chunkEnd)
            if cursor >= end { break }
        }
        if cursor < end { new += Int(end - cursor) }
        return new
    }
}
