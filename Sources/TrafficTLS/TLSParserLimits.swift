/// Memory limits of a `TLSConnectionParser`.
public struct TLSParserLimits: Sendable {
    /// Largest handshake message buffered to parse a hello. Real hellos are well under 2 KiB; a
    /// post-quantum key share adds about 1.2 KiB, so 64 KiB leaves ample room and bounds memory.
    public var maximumHandshakeMessageBytes = 64 * 1024

    public init(maximumHandshakeMessageBytes: Int = 64 * 1024) {
        self.maximumHandshakeMessageBytes = maximumHandshakeMessageBytes
    }
}
