import TrafficReassembly

extension TCPDirectionStats {
    /// Payload of data segments that repeated bytes delivered before (the old part of partly new segments).
    public var repeatedPayloadBytes: Int {
        dataPayloadBytes - deliveredBytes - truncatedPayloadBytes - undeliveredPayloadBytes
    }

    /// The frame bytes of this direction that no record holds, whatever the protocol: the one formula of the
    /// frame-byte reconciliation (the groups' wire bytes + non-HTTP + non-TCP + unattributed = the capture's
    /// frame bytes). `unanalysedBytes` are the stream bytes the stage put in no record (not HTTP, not TLS);
    /// `handshake`, `teardown` and `packets` say which overheads records carry (`--overhead`). With
    /// `packets`, ACKs, retransmissions and data headers go to records; only the headers of segments whose
    /// bytes were never delivered (after the close, over a memory cap) stay unattributed.
    public func unattributedFrameBytes(unanalysedBytes: Int, handshake: Bool, teardown: Bool, packets: Bool) -> Int {
        var bytes = unanalysedBytes + truncatedPayloadBytes + undeliveredPayloadBytes
        if !handshake { bytes += handshakeBytes }
        if !teardown { bytes += teardownBytes }
        if packets {
            bytes += undeliveredHeaderBytes
        } else {
            bytes += ackBytes + retransmissionFrameBytes + dataHeaderBytes + repeatedPayloadBytes
        }
        return bytes
    }
}
