/// One packet record of a capture.
///
/// `bytes` points into libpcap's buffer and is valid only inside the closure that receives the
/// packet; copy what must outlive it.
public struct CapturedPacket {
    public var time: CaptureTime
    /// The bytes that were captured (pcap `caplen`).
    public var bytes: UnsafeRawBufferPointer
    /// The length of the frame on the wire (pcap `len`); larger than `bytes.count` when the snaplen cut it.
    public var originalLength: Int

    public init(time: CaptureTime, bytes: UnsafeRawBufferPointer, originalLength: Int) {
        self.time = time
        self.bytes = bytes
        self.originalLength = originalLength
    }
}
