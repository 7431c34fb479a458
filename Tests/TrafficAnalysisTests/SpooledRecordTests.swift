@testable import TrafficAggregation
import Testing
import TrafficCapture
import TrafficHTTP
import TrafficSessions
@testable import TrafficAnalysis
import TrafficTestSupport

/// The byte form of kept records: every field comes back as it was, and every stored field is written.
@Suite struct SpooledRecordTests {
    static func fields(_ record: MessageRecord) -> [String] {
        Mirror(reflecting: record).children.map { "\($0.label ?? "?")=\($0.value)" } + ["tls=\(String(describing: record.tls))"]
    }

    static var records: [MessageRecord] {
        var plain = MessageRecord(
            connection: 0, index: 1, kind: .request, time: .zero, client: "10.0.0.1:5000", server: "10.0.0.2:80",
            host: "example.com", path: "/")
        plain.decodedBodyBytes = nil
        var full = MessageRecord(
            connection: Int.max, index: -3, kind: .response, time: CaptureTime(nanoseconds: -1_234_567_890_123),
            client: "[2001:db8::1]:443", server: "", host: "ünïcödé.example", path: "/a/" + String(repeating: "x", count: 70_000))
        full.method = "GET"
        full.status = 404
        full.version = "HTTP/1.1"
        full.query = ""
        full.lineBytes = 17
        full.headerBytes = Int.min
        full.cookieBytes = 1 << 40
        full.bodyBytes = 127
        full.encodedBodyBytes = 128
        full.decodedBodyBytes = 16_383
        full.missingBytes = 16_384
        full.handshakeBytes = 1
        full.teardownBytes = 2
        full.packetOverheadBytes = 3
        full.retransmittedBytes = 4
        full.tunnelBytes = 5
        full.streamOffset = 6
        full.segmentHeaderBytes = 7
        full.lastByteTime = CaptureTime(nanoseconds: -1_234_567_000_000)
        full.wait = CaptureTime(nanoseconds: 95_000)
        full.connect = .init(start: CaptureTime(nanoseconds: 5), end: CaptureTime(nanoseconds: 1 << 61))
        full.tlsHandshake = .init(start: CaptureTime(nanoseconds: -7), end: .zero)
        // Binary-safe: a NUL, bytes that are not UTF-8, and LF-separated lines.
        full.head = [0x47, 0x45, 0x54, 0x0A, 0x00, 0xFF, 0xC3, 0x28, 0x0A] + Array(repeating: 0x78, count: 70_000)
        full.contentType = "application/json; charset=utf-8"
        full.contentEncoding = "gzip"
        full.transferEncoding = "chunked"
        full.complete = false
        full.paired = true
        full.flags = [.gap, .decodeError, .resumed]
        full.streamID = 1 << 31 - 1
        full.headerDecodedBytes = 9_000_000_000
        full.cookieDecodedBytes = 1
        full.h2ControlBytes = 4_096
        var tls = MessageRecord(
            connection: 9, index: 1, kind: .tls, time: CaptureTime(nanoseconds: 1), client: "a", server: "b",
            host: "sni.example", path: "(tls)")
        var bytes = MessageRecord.TLSBytes(direction: "server_to_client")
        bytes.handshakeBytes = 5000
        bytes.applicationBytes = 1
        bytes.alertBytes = 2
        bytes.otherBytes = 3
        bytes.recordHeaderBytes = 4
        bytes.version = "TLS 1.3"
        bytes.cipherSuite = "TLS_AES_128_GCM_SHA256"
        bytes.alpnOffered = "h2,http/1.1"
        tls.tls = bytes
        // HTTP/2 (issue 22): zero is not null. A pushed response: stream 2, everything decoded at zero bytes
        // (an empty header block is impossible, but the byte form must not care), no control bytes.
        var pushed = MessageRecord(
            connection: 3, index: 0, kind: .response, time: CaptureTime(nanoseconds: 2), client: "c", server: "s",
            host: "h2.example", path: "/style.css")
        pushed.version = "HTTP/2"
        pushed.streamID = 2
        pushed.headerDecodedBytes = 0
        pushed.cookieDecodedBytes = 0
        pushed.flags = [.pushed, .reset, .hpackError, .frameError]
        // Stream 0 and a decoded header size with its cookie size unknown.
        var zero = pushed
        zero.streamID = 0
        zero.headerDecodedBytes = 37
        zero.cookieDecodedBytes = nil
        zero.h2ControlBytes = 24 + 9
        zero.flags = []
        return [plain, full, tls, pushed, zero]
    }

    @Test func recordsComeBackFieldForField() {
        var bytes: [UInt8] = []
        for (i, record) in Self.records.enumerated() { SpooledRecord.append((i, record), to: &bytes) }
        var position = 0
        for (i, record) in Self.records.enumerated() {
            let decoded = bytes.withUnsafeBytes { all -> SpooledRecord.Entry? in
                let rest = UnsafeRawBufferPointer(rebasing: all[position...])
                guard let length = SpoolReader.entryLength(rest) else { return nil }
                defer { position += length }
                return SpooledRecord.decode(UnsafeRawBufferPointer(rebasing: rest[..<length]))
            }
            #expect(decoded?.capture == i)
            #expect(decoded.map { Self.fields($0.record) } == Self.fields(record))
        }
        #expect(position == bytes.count)
    }

    /// A field added to the record must be added to the byte form too.
    @Test func everyStoredFieldIsWritten() {
        #expect(Mirror(reflecting: Self.records[0]).children.count == SpooledRecord.fieldCount)
    }

    /// Reading runs back from the temporary file: a normal run ends without a failure; a run cut short (the
    /// file ends before the run) or holding a damaged record stops there and says why.
    @Test func spoolReadFailuresAreReported() throws {
        let spool = try #require(RecordSpool())
        var bytes: [UInt8] = []
        for record in Self.records { SpooledRecord.append((0, record), to: &bytes) }
        let whole = try #require(spool.append(bytes))
        func read(_ run: MessageRun) -> (count: Int, failure: String?) {
            let list = MessageList(storage: .runs([run]), count: Self.records.count)
            return (Array(list).count, list.readFailure)
        }
        let normal = read(.spilled(spool, whole, renumber: nil))
        #expect(normal.count == Self.records.count && normal.failure == nil)
        // The run claims 100 bytes more than the file has: the last read comes back short.
        let short = read(.spilled(spool, whole.lowerBound..<(whole.upperBound + 100), renumber: nil))
        #expect(short.count == Self.records.count)
        #expect(short.failure?.contains("cannot read back the temporary file") == true)
        // A record with its last bytes cut off (the run ends inside it).
        let cut = read(.spilled(spool, whole.lowerBound..<(whole.upperBound - 3), renumber: nil))
        #expect(cut.count == Self.records.count - 1 && cut.failure != nil)
        // A record whose bytes are damaged (its length field says 3 bytes).
        var damaged = bytes
        damaged.replaceSubrange(0..<4, with: [3, 0, 0, 0])
        let bad = try #require(spool.append(damaged))
        let garbled = read(.spilled(spool, bad, renumber: nil))
        #expect(garbled.count == 0 && garbled.failure?.contains("damaged") == true)
    }

    /// Records with large heads (HAR) are written out by bytes, not only by count: memory holds a few MiB of
    /// records, not a whole run of them. The list still comes back in order.
    @Test func largeHeadsAreWrittenOutBeforeTheRunIsFull() {
        var store = MessageStore(runLength: 1_000_000)
        var record = Self.records[0]
        record.head = [UInt8](repeating: 0x41, count: 256 << 10)
        for index in (1...40).reversed() {
            record.index = index
            store.append((0, record))
        }
        let list = store.finish()
        guard case .runs(let runs) = list.storage else {
            Issue.record("10 MiB of heads stayed in memory")
            return
        }
        #expect(runs.count >= 2)
        #expect(Array(list).map(\.record.index) == Array(1...40))
        #expect(Array(list).allSatisfy { $0.record.head.count == 256 << 10 })
    }

    /// More runs than the fan-in are merged in groups into longer runs before the list is read (memory holds a
    /// buffer per run read at once). The list is the one a sort of all the records gives: ties (same capture,
    /// connection, index, side and time, as an interim and a final response can be) in the order they came,
    /// and each shard's connection numbers mapped as before.
    @Test(arguments: [2, 3, 5, 64])
    func runsBeyondTheFanInAreMergedFirst(fanIn: Int) {
        var generator = SplitMix(state: UInt64(fanIn))
        var store = MessageStore(runLength: 7, fanIn: fanIn)
        var shard = MessageStore(runLength: 5, fanIn: fanIn)
        var expected: [(key: MessageList.SortKey, order: Int, tag: Int)] = []
        let renumber = Array((0..<40).map { 100 + 3 * $0 })
        for tag in 0..<600 {
            var record = Self.records[0]
            record.connection = Int(generator.next() % 40)
            record.index = Int(generator.next() % 6)
            record.time = CaptureTime(nanoseconds: Int64(generator.next() % 3))
            record.kind = generator.next() % 2 == 0 ? .request : .response
            record.lineBytes = tag
            if tag % 3 == 0 {
                shard.append((1, record))
                record.connection = renumber[record.connection]
                expected.append((MessageList.SortKey((1, record)), 1_000 + tag, tag))
            } else {
                store.append((1, record))
                expected.append((MessageList.SortKey((1, record)), tag, tag))
            }
        }
        store.adopt(&shard, capture: 1, renumber: renumber)
        let list = store.finish()
        guard case .runs(let runs) = list.storage else {
            Issue.record("no runs")
            return
        }
        #expect(runs.count <= fanIn)
        // Runs of the store first, then the shard's (adopted after): equal keys come in that run order.
        let order = expected.sorted { $0.key != $1.key ? $0.key < $1.key : $0.order < $1.order }
        let read = Array(list)
        #expect(list.readFailure == nil)
        #expect(read.count == 600)
        #expect(read.map(\.record.lineBytes) == order.map(\.tag))
        #expect(read.map { MessageList.SortKey($0) } == order.map(\.key))
    }

    @Test func damagedBytesAreRejected() {
        var bytes: [UInt8] = []
        SpooledRecord.append((0, Self.records[1]), to: &bytes)
        for cut in [4, 5, 20, bytes.count - 1] {
            let decoded = bytes.withUnsafeBytes { SpooledRecord.decode(UnsafeRawBufferPointer(rebasing: $0[..<cut])) }
            #expect(decoded == nil, "cut at \(cut)")
        }
    }
}

