/// A wire message built from pieces: bytes of its own (frame headers, header blocks, control frames) and
/// slices of bodies shared from the catalogue, so that planning a multi-megabyte response copies nothing.
///
/// Read sequentially (`copy` remembers where the last read ended), as TCP segments are cut.
final class AssembledBytes {
    private var own: [UInt8] = []
    /// A piece is `own[start..<start + count]` when `base` is nil, else `count` bytes at `base + start`.
    private var pieces: [(base: UnsafeRawPointer?, start: Int, count: Int)] = []
    private(set) var count = 0
    /// The piece the last read ended in, and the message offset where that piece starts.
    private var cursorPiece = 0
    private var cursorStart = 0

    var isEmpty: Bool { count == 0 }

    /// Appends bytes of the message's own, written by `write` at the end of `own`.
    func appendOwn(_ write: (inout [UInt8]) -> Void) {
        let before = own.count
        write(&own)
        let added = own.count - before
        guard added > 0 else { return }
        if let last = pieces.last, last.base == nil, last.start + last.count == before {
            pieces[pieces.count - 1].count += added
        } else {
            pieces.append((nil, before, added))
        }
        count += added
    }

    /// Appends a slice of a body that outlives the message.
    func appendShared(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        pieces.append((base, 0, bytes.count))
        count += bytes.count
    }

    /// Copies `count` bytes starting at `offset` to `destination`.
    func copy(from offset: Int, count wanted: Int, to destination: UnsafeMutableRawPointer) {
        precondition(offset >= 0 && offset + wanted <= count, "read past the end of an assembled message")
        guard wanted > 0 else { return }
        if offset < cursorStart {
            cursorPiece = 0
            cursorStart = 0
        }
        while cursorStart + pieces[cursorPiece].count <= offset {
            cursorStart += pieces[cursorPiece].count
            cursorPiece += 1
        }
        var written = 0
        var piece = cursorPiece
        var pieceStart = cursorStart
        while written < wanted {
            let (base, start, length) = pieces[piece]
            let inPiece = offset + written - pieceStart
            let n = min(length - inPiece, wanted - written)
            if let base {
                (destination + written).copyMemory(from: base + start + inPiece, byteCount: n)
            } else {
                own.withUnsafeBytes {
                    (destination + written).copyMemory(from: $0.baseAddress! + start + inPiece, byteCount: n)
                }
            }
            written += n
            if inPiece + n == length, written < wanted {
                pieceStart += length
                piece += 1
            }
        }
        cursorPiece = piece
        cursorStart = pieceStart
    }
}
