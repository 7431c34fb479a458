/// The connection overhead of one record (`--overhead`, and bytes after a protocol switch): known only when
/// its connection ends, while the record was counted when it was complete.
package struct RecordOverhead {
    package var tunnelBytes = 0
    package var handshakeBytes = 0
    package var teardownBytes = 0
    package var packetOverheadBytes = 0
    package var retransmittedBytes = 0
    package var tlsHandshakeBytes = 0
    package var h2ControlBytes = 0
    /// TLS record overhead that came with attributed control bytes (HTTP/2 inside TLS).
    package var tlsOverheadBytes = 0

    package init() {}

    package var isZero: Bool {
        tunnelBytes | handshakeBytes | teardownBytes | packetOverheadBytes | retransmittedBytes | tlsHandshakeBytes
            | h2ControlBytes | tlsOverheadBytes == 0
    }

    /// Adds these bytes to the record's own fields.
    package func apply(to record: inout MessageRecord) {
        record.tunnelBytes += tunnelBytes
        record.handshakeBytes += handshakeBytes
        record.teardownBytes += teardownBytes
        record.packetOverheadBytes += packetOverheadBytes
        record.retransmittedBytes += retransmittedBytes
        record.tlsHandshakeBytes += tlsHandshakeBytes
        record.h2ControlBytes += h2ControlBytes
        record.tlsOverheadBytes += tlsOverheadBytes
    }
}
