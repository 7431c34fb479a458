/// The Huffman code of RFC 7541 Appendix B, decoded through a table indexed by the next 12 bits of input.
///
/// A window of 12 bits holds one or two whole codes in most header text (lowercase letters, digits and common
/// punctuation have codes of 5 to 8 bits), so one lookup yields up to two octets and the number of bits they
/// took. Only octets with codes longer than 12 bits (rare in header text) take a slower path over the canonical
/// code lengths. The bits come from a 64-bit accumulator refilled 8 octets at a time. This replaced a 4-bit state
/// automaton, whose two dependent lookups per octet made long strings decode about 1.5 times slower.
package enum HPACKHuffman {
    /// Code lengths in bits of symbols 0…255 and EOS (256), from RFC 7541 Appendix B.
    ///
    /// The appendix's code is canonical: codes of one length are consecutive numbers in symbol order, and each
    /// length starts where the previous one ended, shifted. So the lengths alone determine every code, and the
    /// table below is all of Appendix B that needs to be written down.
    static let codeLengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,  // 0…15
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,  // 16…31
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,  // 32…47
        5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,  // 48…63
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  // 64…79
        7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,  // 80…95
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,  // 96…111
        6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,  // 112…127
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,  // 128…143
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,  // 144…159
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,  // 160…175
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,  // 176…191
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,  // 192…207
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,  // 208…223
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,  // 224…239
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,  // 240…255
        30,  // EOS
    ]

    /// The code of each symbol, right-aligned in `codeLengths[symbol]` bits (the canonical assignment).
    static let codes: [UInt32] = {
        let symbols = (0..<codeLengths.count).sorted { (codeLengths[$0], $0) < (codeLengths[$1], $1) }
        var codes = [UInt32](repeating: 0, count: codeLengths.count)
        var code: UInt32 = 0
        var length = codeLengths[symbols[0]]
        for (rank, symbol) in symbols.enumerated() {
            if rank > 0 {
                code = (code + 1) << (codeLengths[symbol] - length)
                length = codeLengths[symbol]
            }
            codes[symbol] = code
        }
        return codes
    }()

    /// Decodes `input` into `output`, which must have room for `maxDecodedCount(input.count)` octets, and
    /// returns how many octets it wrote.
    ///
    /// §5.2: a string whose padding is longer than 7 bits or is not all ones, or that contains EOS, is an error.
    package static func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws(HPACKError)
        -> Int
    {
        guard var next = input.baseAddress, input.count > 0 else { return 0 }
        let end = next + input.count
        let windows = self.windows
        // Input bits not yet decoded, most significant first; `bits` of them are counted. Bits below those are
        // zero or copies of the octets at `next` (the bulk refill loads ahead), which is what they will be when
        // counted.
        var accumulator: UInt64 = 0
        var bits = 0
        var written = 0

        // While 8 octets can be loaded at once: refill to at least 56 bits, then decode up to three windows
        // (36 bits), or fewer and one long code (at most 24 + 30 = 54 bits).
        while end - next >= 8 {
            accumulator |= UInt64(bigEndian: next.loadUnaligned(as: UInt64.self)) >> UInt64(bits)
            next += (63 - bits) >> 3
            bits |= 56
            for _ in 0..<3 {
                let entry = windows[Int(truncatingIfNeeded: accumulator >> 52)]
                if entry & countMask == 0 {
                    let (symbol, length) = decodeLong(accumulator)
                    guard symbol < 256 else { throw .invalidHuffman }
                    output.storeBytes(of: UInt8(truncatingIfNeeded: symbol), toByteOffset: written, as: UInt8.self)
                    written &+= 1
                    accumulator <<= UInt64(length)
                    bits &-= length
                    break
                }
                store(entry, to: output, at: &written)
                let consumed = Int(truncatingIfNeeded: (entry >> consumedShift) & 0xf)
                accumulator <<= UInt64(consumed)
                bits &-= consumed
            }
        }

        // The last octets, one at a time; near the end a window reaches past the input, so it is read with the
        // missing bits set to one (the padding's value) and only codes that end within the input are taken.
        while true {
            while next < end && bits <= 56 {
                accumulator |= UInt64(next.load(as: UInt8.self)) << UInt64(56 - bits)
                next += 1
                bits += 8
            }
            if bits == 0 { break }
            let padded = bits >= 12 ? accumulator : accumulator | (~0 >> UInt64(bits))
            let entry = windows[Int(truncatingIfNeeded: padded >> 52)]
            let firstLength = Int(truncatingIfNeeded: (entry >> firstLengthShift) & 0xf)
            if entry & countMask == 0 {
                let (symbol, length) = decodeLong(padded)
                if length <= bits {
                    guard symbol < 256 else { throw .invalidHuffman }
                    output.storeBytes(of: UInt8(truncatingIfNeeded: symbol), toByteOffset: written, as: UInt8.self)
                    written &+= 1
                    accumulator <<= UInt64(length)
                    bits -= length
                    continue
                }
            } else if firstLength <= bits {
                let consumed = Int(truncatingIfNeeded: (entry >> consumedShift) & 0xf)
                if consumed <= bits {
                    store(entry, to: output, at: &written)
                    accumulator <<= UInt64(consumed)
                    bits -= consumed
                } else {
                    // The second code runs past the input: take the first only.
                    output.storeBytes(of: UInt8(truncatingIfNeeded: entry), toByteOffset: written, as: UInt8.self)
                    written &+= 1
                    accumulator <<= UInt64(firstLength)
                    bits -= firstLength
                }
                continue
            }
            // What is left is no whole code: it must be padding, at most 7 bits, all ones (§5.2).
            guard bits <= 7, accumulator >> UInt64(64 - bits) == (1 << UInt64(bits)) - 1 else {
                throw .invalidHuffman
            }
            break
        }
        return written
    }

    /// Room `decode` needs for `encodedCount` octets: every decoded octet took at least 5 bits, and a window
    /// stores two octets even when it keeps one.
    @inline(__always)
    package static func maxDecodedCount(_ encodedCount: Int) -> Int {
        encodedCount / 5 * 8 + 8 + 2
    }

    // A window entry: the first octet (bits 0–7), the second (8–15), the bits both took (16–19), the bits the
    // first took (20–23), and how many octets the window holds (24–25): 0 when it starts a code longer than 12
    // bits.
    private static let consumedShift: UInt32 = 16
    private static let firstLengthShift: UInt32 = 20
    private static let countShift: UInt32 = 24
    private static let countMask: UInt32 = 3 << 24

    /// Stores the window's octets (always two; `written` advances by as many as it holds).
    @inline(__always)
    private static func store(_ entry: UInt32, to output: UnsafeMutableRawPointer, at written: inout Int) {
        output.storeBytes(of: UInt16(truncatingIfNeeded: entry).littleEndian, toByteOffset: written, as: UInt16.self)
        written &+= Int(truncatingIfNeeded: entry >> countShift) & 3
    }

    /// The symbol whose code starts `bits` (most significant first) and its length, found through the canonical
    /// code: a code of length n is the first code of that length plus the symbol's rank among those of length n.
    /// Every 30-bit pattern starts with some code, since the code is complete.
    @inline(__always)
    private static func decodeLong(_ bits: UInt64) -> (symbol: Int, length: Int) {
        let canonical = self.canonical
        for length in 13...30 {
            let code = Int(truncatingIfNeeded: bits >> UInt64(64 - length))
            let rank = code - canonical[length].firstCode
            if rank >= 0 && rank < canonical[length].count {
                return (Int(canonical.symbols[canonical[length].firstIndex + rank]), length)
            }
        }
        preconditionFailure("the Huffman code of RFC 7541 is complete; no code matches \(bits)")
    }

    /// Per code length: the first code and how many symbols have that length; and the symbols in code order.
    private struct Canonical: @unchecked Sendable {
        struct Length {
            var firstCode = 0
            var count = 0
            var firstIndex = 0
        }
        let lengths: UnsafeMutablePointer<Length>
        let symbols: UnsafeMutablePointer<UInt16>

        subscript(length: Int) -> Length { lengths[length] }
    }

    // Built on first use into memory that lives as long as the process, and never written after that: the
    // decoding loop reads them without bounds checks, retains or uniqueness checks.
    private static let canonical: Canonical = {
        let lengths = UnsafeMutablePointer<Canonical.Length>.allocate(capacity: 31)
        lengths.initialize(repeating: Canonical.Length(), count: 31)
        let symbols = UnsafeMutablePointer<UInt16>.allocate(capacity: codeLengths.count)
        let order = (0..<codeLengths.count).sorted { (codeLengths[$0], $0) < (codeLengths[$1], $1) }
        for (index, symbol) in order.enumerated() {
            symbols[index] = UInt16(symbol)
            let length = Int(codeLengths[symbol])
            if lengths[length].count == 0 {
                lengths[length].firstCode = Int(codes[symbol])
                lengths[length].firstIndex = index
            }
            lengths[length].count += 1
        }
        return Canonical(lengths: lengths, symbols: symbols)
    }()

    private nonisolated(unsafe) static let windows: UnsafePointer<UInt32> = {
        let table = UnsafeMutablePointer<UInt32>.allocate(capacity: 1 << 12)
        // The codes of at most 12 bits, by their bits left-aligned in 12.
        var short: [(code: Int, length: Int, symbol: Int)] = []
        for symbol in codeLengths.indices where codeLengths[symbol] <= 12 {
            short.append((Int(codes[symbol]), Int(codeLengths[symbol]), symbol))
        }
        func firstCode(in window: Int, bits: Int) -> (symbol: Int, length: Int)? {
            short.first { $0.length <= bits && window >> (bits - $0.length) == $0.code }.map { ($0.symbol, $0.length) }
        }
        for window in 0..<(1 << 12) {
            guard let first = firstCode(in: window, bits: 12) else {
                table[window] = 0
                continue
            }
            var entry = UInt32(first.symbol) | UInt32(first.length) << firstLengthShift
            let rest = window & ((1 << (12 - first.length)) - 1)
            if let second = firstCode(in: rest, bits: 12 - first.length) {
                entry |= UInt32(second.symbol) << 8 | UInt32(first.length + second.length) << consumedShift
                entry |= 2 << countShift
            } else {
                entry |= UInt32(first.length) << consumedShift | 1 << countShift
            }
            table[window] = entry
        }
        return UnsafePointer(table)
    }()
}
