import TrafficCapture

/// Reassembly state of one direction: where the stream is, and the out-of-order data held back.
///
/// Invariant: `pending` is sorted by offset, its pieces do not overlap, and every piece starts
/// after `nextOffset`. Stream offsets are 64-bit, so sequence-number wrap-around (RFC 9293 §3.4)
/// is handled by `offset(of:)`, which reads a 32-bit sequence number relative to `nextOffset`.
struct TCPStreamState {
    /// A held-back piece: captured bytes, or a hole of `gapLength` bytes the snaplen cut off.
    struct Piece {
        var offset: Int64
        var bytes: [UInt8]
        var gapLength: Int
        var context: TCPSegmentContext
        var length: Int { bytes.isEmpty ? gapLength : bytes.count }
        var end: Int64 { offset + Int64(length) }
    }

    var started = false
    /// The sequence number of stream offset 0: the ISN + 1, or the first sequence number seen.
    var baseSequence: UInt32 = 0
    var nextOffset: Int64 = 0
    var synSequence: UInt32?
    /// Stream offset that the FIN occupies.
    var finOffset: Int64?
    var pending: [Piece] = []
    var pendingBytes = 0
    var stats = TCPDirectionStats()

    mutating func start(at sequence: UInt32) {
        started = true
        baseSequence = sequence
        nextOffset = 0
    }

    /// The stream offset of `sequence`, read within ±2 GiB of the next expected byte.
    func offset(of sequence: UInt32) -> Int64 {
        let reference = baseSequence &+ UInt32(truncatingIfNeeded: nextOffset)
        return nextOffset + Int64(Int32(bitPattern: sequence &- reference))
    }

    /// Stream bytes in `range` not yet delivered and not held in `pending`.
    func uncovered(_ range: Range<Int64>) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        var cursor = max(range.lowerBound, nextOffset)
        for piece in pending {
            if cursor >= range.upperBound { break }
            if piece.end <= cursor { continue }
            if piece.offset >= range.upperBound { break }
            if piece.offset > cursor { result.append(cursor..<piece.offset) }
            cursor = max(cursor, piece.end)
        }
        if cursor < range.upperBound { result.append(cursor..<range.upperBound) }
        return result
    }

    mutating func insert(_ piece: Piece) {
        var low = 0, high = pending.count
        while low < high {
            let mid = (low + high) / 2
            if pending[mid].offset < piece.offset { low = mid + 1 } else { high = mid }
        }
        pending.insert(piece, at: low)
        pendingBytes += piece.bytes.count
    }
}
