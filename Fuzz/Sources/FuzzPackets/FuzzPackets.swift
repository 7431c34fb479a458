import FuzzSupport
import TrafficCapture
import TrafficHTTP
import TrafficReassembly
import TrafficWire

/// The link types `CaptureFile` accepts; the first input byte picks one.
private let linkTypes: [LinkType] = [
    .ethernet, .linuxSLL, .linuxSLL2, .raw, .null, .loop, .ipv4, .ipv6, .rawLinktype, .rawOpenBSD, .ppp, .pppHDLC, .nflog,
]

/// Fuzzes frames → `PacketDecoder` → `TCPReassembler` → `HTTPConnectionParser`, the path every packet takes.
///
/// Input: byte 0 = link type (mod the list above) and, in bit 7, tight reassembly limits (4 connections,
/// 2 KiB buffers) so eviction and buffer-overflow paths run on small inputs. Then records: 1 byte time
/// step (× 16 s, so idle timeouts and closed-connection lingers fire), 2 bytes big-endian captured length,
/// 2 bytes extra wire length (pcap `len` − `caplen`: snaplen-cut frames), then the frame bytes.
// Also exported under libFuzzer\'s name: its (unused) `main` is linked whole and refers to it.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPackets(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(start: data, count: size)
    let control = input.byte()
    var limits = TCPReassemblyLimits()
    if control & 0x80 != 0 {
        limits.maxConnections = 4
        limits.maxBufferedBytesPerConnection = 2048
        limits.maxBufferedBytesTotal = 4096
    }
    var decoder = PacketDecoder(linkType: linkTypes[Int(control & 0x7f) % linkTypes.count])
    let reassembler = TCPReassembler(
        limits: limits,
        makeHandler: { info in
            HTTPConnectionParser(info: info) { record in
                fuzzCheck(record.bodyBytes >= 0 && record.missingBytes >= 0, "negative size in \(record.index)")
            }
        },
        connectionEnded: { summary in
            for stats in [summary.clientToServer, summary.serverToClient] {
                fuzzCheck(stats.deliveredBytes >= 0 && stats.missingBytes >= 0, "negative stream counts: \(stats)")
            }
        })
    var time = CaptureTime(seconds: 1_700_000_000, nanoseconds: 0)
    while !input.isAtEnd {
        time = CaptureTime(nanoseconds: time.nanoseconds + Int64(input.byte()) * 16_000_000_000)
        let captured = input.uint16()
        let extra = input.uint16()
        let frame = input.take(captured)
        let packet = CapturedPacket(time: time, bytes: frame, originalLength: frame.count + extra)
        if case .tcp(let segment) = decoder.decode(packet) {
            fuzzCheck(segment.payload.count <= max(0, segment.payloadLength), "payload longer than claimed")
            reassembler.process(segment, time: time)
        }
    }
    reassembler.finish()
    fuzzCheck(reassembler.openConnections == 0, "connections left after finish")
    return 0
}

/// libFuzzer drives the target; see `runFuzzer`.
@main
enum FuzzPacketsMain {
    static func main() { runFuzzer(fuzzPackets) }
}
