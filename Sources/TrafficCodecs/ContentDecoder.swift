#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts the decoded size of a body with stacked content codings, fed piece by piece.
///
/// Stages run innermost-last: for `Content-Encoding: gzip, br` the body is br-decoded, then gunzipped
/// (RFC 9110 §8.4: codings are listed in the order they were applied). Each stage writes into its own
/// slice of the shared scratch and hands that output straight to the next stage within the same
/// `feed` call; only the last stage's output is counted.
///
/// Edge cases: an empty body is `.decoded(0)` whatever the coding (servers send `Content-Encoding`
/// on empty 204/304/HEAD responses); with no non-identity coding the count is the body size and no
/// cap applies; a complete stream followed by zero bytes is accepted, by other bytes is `.failed`.
public final class ContentDecoder {
    /// More stages than this is an attack, not a server: each one holds C state.
    public static let maxStages = 8

    private let scratch: DecodingScratch
    private let maxDecodedBytes: Int
    /// Innermost coding first (the decoding order); emptied once the outcome is known.
    private var stages: [any DecodingStage]
    /// Bytes from the last stage (or the body size with no stages).
    private var decoded = 0
    /// Total output of the stages before the last; bounded by the same cap.
    private var intermediate = 0
    /// Set on failure, cap or finish; feeds are then ignored.
    private var outcome: ContentDecodingResult?
    /// Memory of a lone gzip body held back for the trailer shortcut (its first `heldCount` bytes are the body,
    /// the rest capacity); nil once inflating (or never eligible). From the scratch's spares, and back there.
    private var held: UnsafeMutableRawBufferPointer?
    private var heldCount = 0
    /// The codings of a held body, made into `stages` only if it must be inflated after all: most gzip
    /// bodies never are, and the stage list, the gzip stage and their arrays cost more than reading the trailer.
    private var deferredCodings: [ContentCoding]?

    /// RFC 1952 §2.3.1: ISIZE is the decoded size modulo 2^32, and deflate expands at most 1032:1, so
    /// a member under 2^32 / 1032 compressed bytes has an ISIZE that is its exact decoded size.
    static let trailerExactBelow = 4_000_000

    /// `codings` in the order they were APPLIED (the order of the Content-Encoding header); identity entries are ignored.
    public init(codings: [ContentCoding], scratch: DecodingScratch, limits: ContentDecodingLimits = .init()) {
        self.scratch = scratch
        self.maxDecodedBytes = max(0, limits.maxDecodedBytes)
        // Inflating is most of the cost of a run; a lone gzip coding's trailer states the size. The body
        // is held (bounded per body and per worker) so that it can still be inflated when the shortcut
        // cannot be exact. It assumes one gzip member, as HTTP servers send; --verify-decoding inflates all.
        var applied = 0
        var loneGzip = true
        for coding in codings where coding != .identity {
            applied += 1
            if coding != .gzip { loneGzip = false }
        }
        if limits.useGzipTrailer, applied == 1, loneGzip {
            held = scratch.takeBodyBuffer()
            deferredCodings = codings
            stages = []
            return
        }
        stages = []
        makeStages(codings)
    }

    /// `stages` for `codings`, innermost first; a failure when there are too many.
    private func makeStages(_ codings: [ContentCoding]) {
        var stages: [any DecodingStage] = []
        for coding in codings.reversed() {
            switch coding {
            case .identity: continue
            case .gzip: stages.append(GzipStage())
            case .deflate: stages.append(DeflateStage())
            case .brotli: stages.append(BrotliStage())
            case .zstd: stages.append(ZstdStage())
            }
        }
        if stages.count > Self.maxStages {
            self.stages = []
            outcome = .failed("too many content codings (\(stages.count))")
        } else {
            self.stages = stages
        }
    }

    /// Feeds the next encoded bytes. Cheap to call with tiny buffers. After a failure further input is ignored.
    public func feed(_ bytes: UnsafeRawBufferPointer) {
        guard outcome == nil, !bytes.isEmpty else { return }
        if let storage = held {
            // No overflow: `heldCount` stays below `trailerExactBelow`, and no buffer comes near Int.max bytes.
            let total = heldCount + bytes.count
            if total < Self.trailerExactBelow, scratch.retainedBytes + bytes.count <= scratch.retainedBudget {
                var target = storage
                if total > storage.count { target = grow(storage, toHold: total) }
                UnsafeMutableRawBufferPointer(rebasing: target[heldCount..<total]).copyMemory(from: bytes)
                heldCount = total
                scratch.retainedBytes += bytes.count
                return
            }
            inflateHeld()
            guard outcome == nil else { return }
        }
        if stages.isEmpty {
            decoded = Self.saturatingAdd(decoded, bytes.count)
            return
        }
        _ = push(bytes, into: 0)
    }

    /// The body ended. `truncated` is true when the body did not arrive whole (then an incomplete stream is not an error in itself, but the count is not exact: return .failed("truncated")) — unless you already hold a failure.
    ///
    /// A `.capped` result stays `.capped` when truncated: "more than the cap" is still true.
    /// Releases all C state; later calls return the same result.
    public func finish(truncated: Bool = false) -> ContentDecodingResult {
        if let outcome { return outcome }
        if held != nil {
            if truncated {
                releaseHeld()
                stop(.failed("truncated"))
                return outcome!
            }
            if let size = Self.trailerSize(UnsafeRawBufferPointer(rebasing: held![..<heldCount])), size <= maxDecodedBytes {
                releaseHeld()
                stop(.decoded(size))
                return outcome!
            }
            // Not a plain gzip member, or over the cap: inflate it for the real verdict.
            inflateHeld()
            if let outcome { return outcome }
        }
        var result = ContentDecodingResult.decoded(decoded)
        for stage in stages {
            if let reason = stage.finish(), !truncated {
                result = .failed(reason)
                break
            }
        }
        if truncated { result = .failed("truncated") }
        stop(result)
        return result
    }

    deinit { releaseHeld() }

    /// The shortcut cannot apply: inflate what was held, then go on streaming.
    private func inflateHeld() {
        guard let storage = held.take() else { return }
        let count = heldCount
        heldCount = 0
        scratch.retainedBytes -= count
        if let codings = deferredCodings.take() { makeStages(codings) }
        if count > 0 { _ = push(UnsafeRawBufferPointer(rebasing: storage[..<count]), into: 0) }
        scratch.recycleBodyBuffer(storage)
    }

    private func releaseHeld() {
        guard let storage = held.take() else { return }
        scratch.retainedBytes -= heldCount
        heldCount = 0
        scratch.recycleBodyBuffer(storage)
    }

    /// Held memory with room for `count` bytes, the held bytes moved over (the old memory freed).
    private func grow(_ storage: UnsafeMutableRawBufferPointer, toHold count: Int) -> UnsafeMutableRawBufferPointer {
        // Doubling (from 1 KiB), bounded by what can be held at all.
        let doubled = storage.count > Self.trailerExactBelow / 2 ? Self.trailerExactBelow : max(storage.count * 2, 1024)
        let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, doubled), alignment: 16)
        if heldCount > 0 { bigger.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[..<heldCount])) }
        // Freed, not kept: spares too small for the bodies they are taken for would have to grow again.
        storage.deallocate()
        held = bigger
        return bigger
    }

    /// ISIZE of a complete single gzip member: magic and method checked (RFC 1952 §2.3), at least a
    /// header and a trailer long; nil when the body does not look like one.
    static func trailerSize(_ body: UnsafeRawBufferPointer) -> Int? {
        let n = body.count
        guard n >= 20, body[0] == 0x1f, body[1] == 0x8b, body[2] == 8, body[3] & 0xe0 == 0,
            let base = body.baseAddress
        else { return nil }
        // Zero padding after a member (accepted when inflating) would read as a trailer: inflate instead.
        if base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == 0 { return nil }
        // A second member starts with 1f 8b 08 and its ISIZE would hide the first's: wherever those bytes
        // appear past the start (rarely by chance in deflate data), inflate instead.
        var i = 1
        while i + 2 < n {
            guard let hit = memchr(base + i, 0x1f, n - 2 - i) else { break }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if body[at + 1] == 0x8b, body[at + 2] == 8 { return nil }
            i = at + 1
        }
        let size = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)))
        // Plausibility (RFC 1951): deflate expands at most 1032:1, and stored blocks add 5 bytes per 65535
        // at worst. A body cut short or damaged reads a random ISIZE that almost never fits: inflate then.
        let payload = n - 18
        guard size <= payload * 1032, payload <= size + 5 * (size / 65535 + 1) + 2 else { return nil }
        return size
    }

    /// Runs `input` through stage `index` and everything after it; false once decoding stopped.
    private func push(_ input: UnsafeRawBufferPointer, into index: Int) -> Bool {
        let stage = stages[index]
        let isLast = index == stages.count - 1
        let region = self.region(index)
        var rest = input
        while true {
            var output = region
            if isLast {
                // Ask for at most one byte past the cap: enough to know it was exceeded.
                let remaining = maxDecodedBytes - decoded
                if remaining < output.count { output = UnsafeMutableRawBufferPointer(rebasing: output[..<(remaining + 1)]) }
            }
            let step = stage.step(rest, into: output)
            if let failure = step.failure {
                stop(.failed(failure))
                return false
            }
            rest = rest.dropping(step.consumed)
            if step.produced > 0 {
                if isLast {
                    decoded += step.produced
                    if decoded > maxDecodedBytes {
                        stop(.capped(maxDecodedBytes))
                        return false
                    }
                } else {
                    intermediate = Self.saturatingAdd(intermediate, step.produced)
                    if intermediate > maxDecodedBytes {
                        stop(.capped(decoded))
                        return false
                    }
                    let produced = UnsafeRawBufferPointer(rebasing: output[..<step.produced])
                    if !push(produced, into: index + 1) { return false }
                }
            }
            if rest.isEmpty && !step.outputPending { return true }
            if step.consumed == 0 && step.produced == 0 {
                if rest.isEmpty { return true }
                // A stage that neither consumes nor produces would spin forever; never trap, report.
                stop(.failed("decoder stalled"))
                return false
            }
        }
    }

    /// Stage `index`'s output space: an equal slice of the scratch per stage, so a stage's output
    /// stays intact while the next stage consumes it.
    private func region(_ index: Int) -> UnsafeMutableRawBufferPointer {
        let size = scratch.capacity / stages.count
        return UnsafeMutableRawBufferPointer(rebasing: scratch.buffer[(index * size)..<((index + 1) * size)])
    }

    /// Records the outcome and frees every stage's C state.
    private func stop(_ result: ContentDecodingResult) {
        releaseHeld()
        outcome = result
        for stage in stages { _ = stage.finish() }
        stages = []
    }

    private static func saturatingAdd(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
