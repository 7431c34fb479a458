import TrafficCapture

/// Memory and time bounds of the reassembler: memory follows open connections, never capture size.
public struct TCPReassemblyLimits: Sendable {
    /// Out-of-order bytes buffered for one connection; beyond it the oldest hole becomes a gap.
    /// Each held segment counts at least 1 KiB (`TCPStreamState.Piece.cost`), which also bounds their number.
    public var maxBufferedBytesPerConnection = 4 << 20
    /// Out-of-order bytes buffered across all connections.
    public var maxBufferedBytesTotal = 32 << 20
    /// Connections tracked at once; beyond it closed, then least recently active, connections are flushed.
    /// A SYN scan of millions of ports therefore costs at most this many table entries.
    public var maxConnections = 50_000
    /// An open connection silent this long (capture time) is flushed. Zeek's tcp_inactivity_timeout is 5 minutes;
    /// a longer one keeps tshark's stream numbering on captures with long idle keep-alive connections.
    public var idleTimeout = CaptureTime(nanoseconds: 600_000_000_000)
    /// A closed connection lingers this long so that late ACKs and retransmitted FINs still count to it.
    /// Long enough for any retransmission timer in practice, short enough that a busy capture's closed
    /// connections do not pile up (memory follows open connections plus ten seconds of closed ones).
    public var closedLinger = CaptureTime(nanoseconds: 10_000_000_000)

    /// A hole that the receiver's ACK has passed is kept open this many packets of the connection, or this
    /// long in capture time, whichever ends first, before it becomes a gap. On mirror ports, bridges and
    /// multi-queue NICs the two directions are stamped by different queues, and a data segment can be written
    /// after the ACK that covers it: within the window it still fills its hole (issue 24). Past it, the bytes
    /// were lost by the capture, and no retransmission will bring them.
    public var lateSegmentWindowPackets = 64
    public var lateSegmentWindowTime = CaptureTime(nanoseconds: 1_000_000_000)

    /// Whether handlers hear of frames that bring no new stream bytes (pure ACKs, whole retransmissions, the old
    /// part of a partly repeated segment: `TCPStreamHandler.packet`). Only packet-overhead attribution reads them;
    /// the analyzer turns them off without it. Each one was called down the connection's chain of stage objects
    /// (session, stage, tap, its records) to do nothing: 1.3 M instructions on the 100 MiB API bench (cachegrind:
    /// no fewer cache misses, as an ACK follows its connection's data while those objects are still cached). The
    /// counters (`TCPDirectionStats`) are kept either way.
    public var packetEvents = true

    public init() {}
}
