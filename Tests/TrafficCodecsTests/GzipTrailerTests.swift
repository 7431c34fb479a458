import Testing
import TrafficCodecs

/// The gzip trailer shortcut (issue 7) must give exactly what inflating gives, or fall back to inflating.
@Suite struct GzipTrailerTests {
    static let fast = ContentDecodingLimits(useGzipTrailer: true)

    /// Every gzip fixture, whole and split at every offset: the shortcut equals full decoding.
    @Test(arguments: [("one member", Fixtures.gzipText), ("two members", Fixtures.gzipTwoMembers),
                      ("1 MiB of zeros", Fixtures.gzipZeros1MiB)])
    func equalsInflating(name: String, body: [UInt8]) {
        let full = decode([.gzip], body)
        #expect(decode([.gzip], body, limits: Self.fast) == full, "\(name)")
        for cut in stride(from: 1, to: body.count, by: max(1, body.count / 97)) {
            #expect(decode([.gzip], body, cuts: [cut], limits: Self.fast) == full, "\(name) cut at \(cut)")
        }
    }

    @Test func twoMembersAreNotReadFromTheLastTrailer() {
        // The last trailer holds only the second member's size; the shortcut must see the second header.
        #expect(decode([.gzip], Fixtures.gzipTwoMembers, limits: Self.fast) == .decoded(Fixtures.textLength))
    }

    @Test func damagedBodiesStillFail() {
        // Cut short: the last four bytes are not an ISIZE; the plausibility bound sends it to zlib.
        for length in [30, 100, Fixtures.gzipText.count / 2, Fixtures.gzipText.count - 5] {
            let result = decode([.gzip], Array(Fixtures.gzipText.prefix(length)), limits: Self.fast)
            #expect(result.failure != nil, "prefix of \(length) bytes: \(result)")
        }
        #expect(decode([.gzip], Array("not gzip at all, not at all".utf8), limits: Self.fast).failure != nil)
    }

    @Test func truncatedBodiesFail() {
        #expect(decode([.gzip], Fixtures.gzipText, limits: Self.fast, truncated: true) == .failed("truncated"))
    }

    @Test func otherCodingsAreUntouched() {
        // Only a lone gzip coding takes the shortcut; stacks inflate as before.
        for sample in Sample.text where sample.codings != [.gzip] {
            #expect(decode(sample.codings, sample.data, limits: Self.fast) == .decoded(sample.decodedSize), "\(sample.name)")
        }
    }

    /// Held bodies go back to the worker's scratch and are reused: interleaved decoders on one scratch, some
    /// ending in the shortcut, some inflating, some truncated, some abandoned, must each give their own
    /// answer (a recycled buffer must never carry bytes of an earlier body).
    @Test func recycledBuffersKeepBodiesApart() {
        let scratch = DecodingScratch()
        let bodies = [Fixtures.gzipText, Fixtures.gzipTwoMembers, Array(Fixtures.gzipText.prefix(40)),
                      Fixtures.gzipZeros1MiB, Array("not gzip at all, not at all".utf8)]
        let expected = bodies.map { decode([.gzip], $0) }
        for round in 0..<6 {
            var open: [(decoder: ContentDecoder, body: Int)] = []
            for (i, body) in bodies.enumerated() {
                let decoder = ContentDecoder(codings: [.gzip], scratch: scratch, limits: Self.fast)
                body.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[..<(body.count / 2)])) }
                open.append((decoder, i))
            }
            // A decoder dropped half-way hands its buffer back on deinit.
            if round % 2 == 1 { open.removeLast() }
            for (decoder, i) in open.reversed() {
                bodies[i].withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[(bodies[i].count / 2)...])) }
                let truncated = round == 4 && i == 0
                #expect(decoder.finish(truncated: truncated) == (truncated ? .failed("truncated") : expected[i]),
                        "round \(round) body \(i)")
            }
        }
    }

    /// Held bodies live in raw memory taken from the scratch's spares and grown while they arrive: on one scratch,
    /// bodies of very different sizes in turn (a spare too small for the next body grows, a grown one is kept or
    /// freed), fed in pieces of every size, each give exactly what inflating it with a fresh decoder gives;
    /// so do damaged, truncated, padded and two-member bodies, and a body over the decoding cap.
    @Test func heldBodiesOfEverySizeOnOneScratch() {
        var padded = Fixtures.gzipText
        padded.append(contentsOf: [UInt8](repeating: 0, count: 8))
        var trailingJunk = Fixtures.gzipText
        trailingJunk.append(contentsOf: Array("junk".utf8))
        let bodies = [Fixtures.gzipText, Fixtures.gzipZeros1MiB, Array(Fixtures.gzipText.prefix(40)), padded,
                      Fixtures.gzipTwoMembers, trailingJunk, Array(Fixtures.gzipText.dropLast(3)), [0x1f, 0x8b],
                      Fixtures.gzipZeros1MiB, Fixtures.gzipText]
        let scratch = DecodingScratch()
        for piece in [1, 7, 100, 1500, 1 << 20] {
            for (i, body) in bodies.enumerated() {
                let cuts = Array(stride(from: piece, to: body.count, by: piece))
                let full = decode([.gzip], body, scratch: DecodingScratch())
                #expect(decode([.gzip], body, cuts: cuts, scratch: scratch, limits: Self.fast) == full,
                        "body \(i) in pieces of \(piece)")
                // A cap below the decoded size: held, then inflated for the verdict, as a fresh inflating decoder says.
                let capped = ContentDecodingLimits(maxDecodedBytes: 1000, useGzipTrailer: true)
                let fresh = decode([.gzip], body, scratch: DecodingScratch(),
                                   limits: ContentDecodingLimits(maxDecodedBytes: 1000, useGzipTrailer: false))
                #expect(decode([.gzip], body, cuts: cuts, scratch: scratch, limits: capped) == fresh,
                        "body \(i) capped, in pieces of \(piece)")
            }
        }
    }
}
