import FuzzSupport
import TrafficHTTP
import TrafficReassembly

/// Fuzzes the chunked body decoder through the public parser: the input is the body of a chunked
/// response (optionally gzip-coded), delivered in pieces whose size the first byte chooses, then a
/// second response that must still be parsed or resynchronised over.
// Also exported under libFuzzer\'s name: its (unused) `main` is linked whole and refers to it.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzChunked(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(start: data, count: size)
    let control = input.byte()
    let piece = Int(control & 0x7f) + 1
    let coded = control & 0x80 != 0
    let transcript = FuzzTranscript()
    feed(transcript, "GET /a HTTP/1.1\r\nHost: fuzz\r\n\r\nGET /b HTTP/1.1\r\nHost: fuzz\r\n\r\n", .clientToServer)
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n" + (coded ? "Content-Encoding: gzip\r\n" : "") + "\r\n"
    feed(transcript, head, .serverToClient)
    while !input.isAtEnd { transcript.receive(input.take(piece), .serverToClient) }
    feed(transcript, "HTTP/1.1 204 No Content\r\n\r\n", .serverToClient)
    transcript.finish()
    return 0
}

private func feed(_ transcript: FuzzTranscript, _ text: String, _ direction: Direction) {
    var text = text
    text.withUTF8 { transcript.receive(UnsafeRawBufferPointer($0), direction) }
}

/// libFuzzer drives the target; see `runFuzzer`.
@main
enum FuzzChunkedMain {
    static func main() { runFuzzer(fuzzChunked) }
}
