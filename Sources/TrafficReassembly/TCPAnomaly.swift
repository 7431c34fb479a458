/// Named oddities of TCP reassembly, counted per capture.
public enum TCPAnomaly: Int, CaseIterable, Sendable {
    /// Out-of-order data over a memory cap: the hole before it was given up as a gap.
    case bufferOverflow
    /// A connection flushed before it closed because the table was full.
    case connectionEvicted
    /// A connection flushed after the idle timeout.
    case connectionTimedOut
    /// Payload after the connection's streams were finished (after RST, or after both FINs).
    case dataAfterClose

    public var name: String {
        switch self {
        case .bufferOverflow: "reassembly_buffer_overflow"
        case .connectionEvicted: "connection_evicted"
        case .connectionTimedOut: "connection_timed_out"
        case .dataAfterClose: "data_after_close"
        }
    }
}
