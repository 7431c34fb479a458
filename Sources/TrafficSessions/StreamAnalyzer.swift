import TrafficCapture
import TrafficReassembly

/// Reads the two byte streams of one session and turns them into whatever its protocol holds (messages,
/// records, a child's streams). The seam of the session layer: HTTP/1, TLS and later HTTP/2 and HTTP/3 are
/// analyzers, and a transforming analyzer (TLS decrypting to HTTP) feeds a child analyzer the same way the
/// session feeds it, as Zeek's SSL analyzer forwards plaintext to an HTTP child or a NIO handler passes
/// to the next. An analyzer never learns where its bytes came from: TCP segments, TLS records or QUIC
/// frames are `WireSpan`s to it.
///
/// Call order, per direction: any mix of `receive` and `skip` in stream order, each stream byte exactly
/// once (the two directions interleave as they were captured); then `finish` once, after which nothing
/// else is called.
///
/// The no-retain rule of the packet path: `receive` is called once per segment, and calling a method on
/// a reference loaded from a `var` (or an optional) retains and releases it around the call, an atomic pair
/// per segment. Whoever owns an analyzer holds it as an `Unmanaged` reference, retained once when made and
/// released once when done, and calls it through `_withUnsafeGuaranteedRef` (see `TCPSession` and
/// `SessionStageBox`); a `let` property of a class is borrowed and needs nothing.
public protocol StreamAnalyzer: AnyObject {
    /// In-order bytes of `direction`, valid only during the call: copy what must outlive it.
    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan)
    /// `byteCount` bytes of `direction` are missing (never captured, or lost below a transforming analyzer).
    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime)
    /// Both directions have ended.
    func finish(time: CaptureTime)
}
