import FuzzSupport
import TrafficHTTP
import TrafficReassembly

/// Fuzzes `HTTPConnectionParser` with both directions and gaps chosen by the input.
///
/// Input: a series of operations. Operation byte `op`: bit 0 is the direction (0 client→server);
/// bits 1–2 choose receive (0, 1), skip (2) or receive-then-skip-1 (3); the next byte + 1 is the length.
/// Receives take that many input bytes; skips announce that many missing bytes. Small limits make the
/// `header_limit` and pairing-abandonment paths reachable with short inputs.
// Also exported under libFuzzer\'s name: its (unused) `main` is linked whole and refers to it.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(start: data, count: size)
    let small = input.byte() & 1 == 1
    let limits = small ? HTTPLimits(maxLineBytes: 64, maxHeaderFields: 4, maxPendingRequests: 4) : HTTPLimits()
    let transcript = FuzzTranscript(limits: limits)
    while !input.isAtEnd {
        let op = input.byte()
        let direction: Direction = op & 1 == 0 ? .clientToServer : .serverToClient
        let length = Int(input.byte()) + 1
        switch (op >> 1) & 3 {
        case 2:
            transcript.skip(length, direction)
        case 3:
            transcript.receive(input.take(length), direction)
            transcript.skip(1, direction)
        default:
            transcript.receive(input.take(length), direction)
        }
    }
    transcript.finish()
    return 0
}

/// libFuzzer drives the target; see `runFuzzer`.
@main
enum FuzzHTTPMain {
    static func main() { runFuzzer(fuzzHTTP) }
}
