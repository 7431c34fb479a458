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
        /// What the piece counts against the buffer caps: its bytes, but at least 1 KiB. Every held piece
        /// costs a header and a step of each scan, so a capture of 1-byte (or snaplen-emptied) out-of-order
        /// segments must not pile up millions of them (quadratic time, gigabytes); real segments are larger.
        var cost: Int { max(bytes.count, 1024) }
    }

    var started = false
    /// The sequence number of stream offset 0: the ISN + 1, or the first sequence number seen.
    var baseSequence: UInt32 = 0
    var nextOffset: Int64 = 0
    var synSequence: UInt32?
    /// Stream offset that the FIN occupies.
    var finOffset: Int64?
    var pending: [Piece] = []
    /// The `cost` of the pieces in `pending`.
    var pendingBytes = 0
    /// The furthest offset the receiver acknowledged past a hole, and when the hole is given up if no late
    /// segment fills it first (`TCPReassemblyLimits.lateSegmentWindow*`); nil while no ACK passed a hole.
    var acknowledgedPastHole: Int64?
    var holeDeadline: (packets: Int, time: CaptureTime)?
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
        // Pieces are sorted and disjoint, so their ends are sorted too: skip those ending before `cursor`
        // by bisection. A segment beyond thousands of held pieces then costs no scan of all of them.
        var low = 0, high = pending.count
        while low < high {
            let mid = (low + high) / 2
            if pending[mid].end <= cursor { low = mid + 1 } else { high = mid }
        }
        for piece in pending[low...] {
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
        pendingBytes += piece.cost
    }
}
