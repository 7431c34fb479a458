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
}

extension SessionStage {
    public func handshakeCompleted(syn: CaptureTime, ack: CaptureTime) {}
    public func packet(_ event: TCPPacketEvent) {}
    public func connectionEnded(_ summary: TCPConnectionSummary) {}
}

/// Owns a stage so that a session can call it through an `Unmanaged` reference (an existential cannot be
/// held as one): the box's `let` is borrowed, so a call costs an indirect call and no reference counting.
public final class SessionStageBox {
    public let stage: any SessionStage

    public init(_ stage: any SessionStage) { self.stage = stage }
}
