/// A decoded UDP datagram that is not a tunnel: what the QUIC stage consumes.
///
/// `payload` points into the packet and is valid only until the next packet is decoded.
public struct UDPDatagram {
    public var source: Endpoint
    public var destination: Endpoint
    /// UDP length − 8 (RFC 768): the payload the header claims, whatever the snaplen kept.
    public var payloadLength: Int
    /// The captured payload bytes: shorter than `payloadLength` when the snaplen cut the packet.
    public var payload: UnsafeRawBufferPointer
    /// Frame bytes on the wire (pcap `len`).
    public var frameBytes: Int
    /// The tunnels and tags around the IP packet, outermost first; empty for a plain frame.
    public var encapsulation: Encapsulation

    public init(
        source: Endpoint, destination: Endpoint, payloadLength: Int, payload: UnsafeRawBufferPointer, frameBytes: Int,
        encapsulation: Encapsulation = Encapsulation()
    ) {
        self.source = source
        self.destination = destination
        self.payloadLength = payloadLength
        self.payload = payload
        self.frameBytes = frameBytes
        self.encapsulation = encapsulation
    }
}
