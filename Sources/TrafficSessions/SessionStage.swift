import TrafficCapture
import TrafficReassembly

/// The top analyzer of a TCP session: besides the streams it hears of the connection's packets that carry
/// no new bytes and of its final accounting, which overhead attribution needs.
public protocol SessionStage: StreamAnalyzer {
    /// A pure ACK or a retransmission was seen (also after `finish`, until `connectionEnded`).
    func packet(_ event: TCPPacketEvent)
    /// The reassembler lets go of the connection. Called once, after `finish`.
    func connectionEnded(_ summary: TCPConnectionSummary)
    /// The connection's TCP handshake, SYN to the ACK completing it (see `TCPStreamHandler`).
    func handshakeCompleted(syn: CaptureTime, ack: CaptureTime)
    /// Called once, right after `finish`: a smaller stage that takes this one's place until `connectionEnded`, or
    /// nil to stay. A closed connection lingers in the reassembler for late packets (`closedLinger`, thousands of
    /// connections at a time on API traffic); the stand-in keeps only what those packets and the connection's end
    /// still need, so that the stage, its records and what they hold are freed at once (issue 25's memory goal).
    func lingeringStage() -> (any SessionStage)?
}

extension SessionStage {
    public func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {}
    public func packet(_ event: TCPPacketEvent) {}
    public func connectionEnded(_ summary: TCPConnectionSummary) {}
    public func lingeringStage() -> (any SessionStage)? { nil }
}

/// Owns a stage so that a session can call it through an `Unmanaged` reference (an existential cannot be
/// held as one): the box's `let` is borrowed, so a call costs an indirect call and no reference counting.
public final class SessionStageBox {
    public let stage: any SessionStage

    public init(_ stage: any SessionStage) { self.stage = stage }
}
