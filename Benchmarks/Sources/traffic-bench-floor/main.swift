import BenchCPcap

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The floor: the cheapest possible pass over a capture with libpcap. Opens the file with
// `pcap_open_offline`, loops `pcap_next_ex`, and touches every packet (sums caplen, XORs the last
// captured byte) so that nothing can be optimised away. Whatever `traffic` does costs more than this.
//
// Usage: traffic-bench-floor FILE
// Prints: packets=N captured_bytes=N wire_bytes=N file_bytes=N checksum=N

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    printError("usage: traffic-bench-floor FILE")
    exit(2)
}
let path = arguments[1]
var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
guard let handle = pcap_open_offline(path, &errorBuffer) else {
    let message = errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    printError("traffic-bench-floor: \(String(decoding: message, as: UTF8.self))")
    exit(3)
}
defer { pcap_close(handle) }

var packets = 0
var capturedBytes = 0
var wireBytes = 0
var checksum: UInt8 = 0
var header: UnsafeMutablePointer<pcap_pkthdr>?
var data: UnsafePointer<UInt8>?
loop: while true {
    switch pcap_next_ex(handle, &header, &data) {
    case 1:
        guard let header, let data else { continue }
        let caplen = Int(header.pointee.caplen)
        packets += 1
        capturedBytes += caplen
        wireBytes += Int(header.pointee.len)
        if caplen > 0 { checksum ^= data[caplen - 1] }
    case PCAP_ERROR_BREAK:  // end of file
        break loop
    default:
        printError("traffic-bench-floor: \(String(cString: pcap_geterr(handle)))")
        exit(3)
    }
}
var fileBytes = 0
var info = stat()
if stat(path, &info) == 0 { fileBytes = Int(info.st_size) }
print(
    "packets=\(packets) captured_bytes=\(capturedBytes) wire_bytes=\(wireBytes) file_bytes=\(fileBytes) checksum=\(checksum)"
)

/// Writes one line to stderr.
func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
