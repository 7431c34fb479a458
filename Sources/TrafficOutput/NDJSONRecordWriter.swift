import TrafficAggregation
import TrafficCapture
import TrafficConcurrency
import TrafficSessions

/// `--format ndjson`: every record as one line of JSON (the `--messages` JSON fields, with `capture` first),
/// written as records complete, from whichever thread completes them. Nothing is kept or sorted, so memory
/// stays flat however large the capture; the order of lines may differ between runs with several jobs.
/// DuckDB (`read_json_auto`), ClickHouse (`JSONEachRow`), BigQuery and Spark load the lines as they are.
public final class NDJSONRecordWriter: RecordStream {
    /// Per capture, the start of its lines: `{"capture":"PATH","connection":`.
    private let heads: [[UInt8]]
    /// Called only under `lock` (a pthread mutex, which ThreadSanitizer follows).
    nonisolated(unsafe) private let sink: ByteSink
    private let lock = ThreadCondition()

    /// `write` receives whole lines, one call at a time.
    public init(capturePaths: [String], write: @escaping ByteSink) {
        heads = capturePaths.map { path in
            var head = Array("{\"capture\":".utf8)
            head.appendJSONString(path)
            head += Array(",\"connection\":".utf8)
            return head
        }
        sink = write
    }

    public func encodeTail(of record: MessageRecord, to bytes: inout [UInt8]) {
        Self.encodeTail(of: record, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Output buffers kept between calls, at most one per thread that writes at once; under `lock`. A buffer made
    /// per call (256 lines, ~300 KiB) went to glibc's `mmap` or the heap's top and back every time: page faults,
    /// zeroed pages and `munmap`'s TLB shootdowns were ~10 % of a `--format ndjson` run (perf, 1 GiB bulk bench).
    nonisolated(unsafe) private var spareBuffers: [[UInt8]] = []

    public func write(_ lines: StreamedLines) {
        // Assembled outside the lock (taken only to pick a kept buffer and to write): threads wait only for each
        // other's output call.
        lock.lock()
        var out = spareBuffers.popLast() ?? []
        lock.unlock()
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(lines.tails.count + lines.count * 64)
        lines.tails.withUnsafeBufferPointer { tails in
            for i in 0..<lines.count {
                out += heads[lines.captures[i]]
                out.appendDecimal(lines.connections[i])
                out.append(contentsOf: UnsafeBufferPointer(rebasing: tails[lines.tail(i)]))
            }
        }
        lock.lock()
        out.withUnsafeBytes(sink)
        spareBuffers.append(out)
        lock.unlock()
    }

    /// The keys after `connection`, each with its comma and colon (`,"index":`), in `MessageFields`' order: the
    /// record encoder below writes the fields in that order, and `NDJSONTests` checks every line against the
    /// `--messages` JSON that `MessageFields.forEach` writes.
    /// In one array with their ends: an array per key cost a retain and a release per field of every record.
    private static let keys: (bytes: [UInt8], ends: [Int]) = {
        let names = MessageFields.fields(MessageRecord(
            connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")).map(\.0)
        precondition(names.first == "connection" && names.count == fieldCount, "NDJSON encodes every record field")
        var bytes: [UInt8] = [], ends: [Int] = []
        for name in names.dropFirst() {
            bytes += Array(",\"\(name)\":".utf8)
            ends.append(bytes.count)
        }
        return (bytes, ends)
    }()

    private static let fieldCount = 53

    /// Every field after `connection`, as `MessageFields.forEach` lists them; no string or list made per record.
    /// Written into room made once for the record's longest possible tail (`tailBound`) and appended at once: an
    /// append per key and value cost ~150 instructions each, 8 800 a record (a quarter of a `--jobs 1` run).
    static func encodeTail(of r: MessageRecord, to b: inout [UInt8]) {
        keys.bytes.withUnsafeBufferPointer { keyBytes in
            keys.ends.withUnsafeBufferPointer { keyEnds in
                let bound = tailBound(r, keyBytes: keyBytes.count)
                // On the stack when it fits there (a record's tail is a few KiB): no allocation per record.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { room in
                    var w = TailWriter(room.baseAddress!)
                    encodeTail(of: r, to: &w, keyBytes: keyBytes, keyEnds: keyEnds)
                    // The bound is what makes the writes safe: a field added without it must fail loudly.
                    precondition(w.count <= bound, "an NDJSON record's bound is short")
                    b.append(contentsOf: UnsafeBufferPointer(rebasing: room[..<w.count]))
                }
            }
        }
    }

    /// The most bytes `encodeTail` can write for `r`: every key, 20 a number (`Int.min`), 32 a time, quotes and
    /// at most 6 bytes a byte of text (`\u001f`), 5 a flag.
    static func tailBound(_ r: MessageRecord, keyBytes: Int) -> Int {
        func text(_ value: String?) -> Int { value.map { 2 &+ 6 &* $0.utf8.count } ?? 4 }
        let tls = r.tls, quic = r.quic
        var texts = text(r.kind.rawValue) &+ text(r.client) &+ text(r.server) &+ text(r.method) &+ text(r.version)
        texts &+= text(r.host) &+ text(r.path) &+ text(r.query) &+ text(r.contentType) &+ text(r.contentEncoding)
        texts &+= text(r.transferEncoding) &+ text(tls?.direction ?? quic?.direction) &+ text(tls?.version)
        texts &+= text(tls?.cipherSuite) &+ text(tls?.alpn) &+ text(tls?.alpnOffered ?? quic?.alpnOffered)
        texts &+= text(quic?.version)
        var flags = 2
        for anomaly in r.flags { flags &+= 1 &+ text(anomaly.name) }
        return keyBytes &+ texts &+ flags &+ 20 &* numberFields &+ 32 &* 3 &+ 5 &* 2
    }

    /// At least the number fields `encodeTail` writes (29; each at most 20 bytes), for `tailBound`.
    private static let numberFields = 33

    /// Writes bytes at a pointer into room known to be large enough (`tailBound`).
    struct TailWriter {
        private let start: UnsafeMutablePointer<UInt8>
        private var at: UnsafeMutablePointer<UInt8>

        init(_ start: UnsafeMutablePointer<UInt8>) {
            self.start = start
            at = start
        }

        var count: Int { at - start }

        mutating func byte(_ value: UInt8) {
            at.pointee = value
            at += 1
        }

        mutating func bytes(_ value: UnsafeBufferPointer<UInt8>) {
            guard let source = value.baseAddress, !value.isEmpty else { return }
            at.update(from: source, count: value.count)
            at += value.count
        }

        mutating func null() {
            at[0] = UInt8(ascii: "n")
            at[1] = UInt8(ascii: "u")
            at[2] = UInt8(ascii: "l")
            at[3] = UInt8(ascii: "l")
            at += 4
        }

        mutating func decimal(_ value: Int) { at += writeDecimal(value, to: at) }

        /// `value` as a JSON string, quoted and escaped exactly as `Array.appendJSONString`.
        mutating func jsonString(_ value: String) {
            byte(UInt8(ascii: "\""))
            if value.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
                var value = value
                value.withUTF8 { escaped($0) }
            }
            byte(UInt8(ascii: "\""))
        }

        private mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
            var plain = 0
            var i = 0
            let count = utf8.count
            // Eight bytes a step while none needs an escape (a byte below 0x20, a quote or a backslash; bytes of
            // UTF-8 sequences, 0x80 and up, never do): nearly all text is plain. Exact for "any" (the borrow of
            // the subtraction only reaches bytes above one that matched).
            if let base = utf8.baseAddress {
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                while i &+ 8 <= count {
                    let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                    let control = (w &- ones &* 0x20) & ~w
                    let q = w ^ (ones &* 0x22), bs = w ^ (ones &* 0x5C)
                    let quote = (q &- ones) & ~q, backslash = (bs &- ones) & ~bs
                    if (control | quote | backslash) & highs != 0 { break }
                    i &+= 8
                }
            }
            while i < count {
                let value = utf8[i]
                i &+= 1
                guard value < 0x20 || value == UInt8(ascii: "\"") || value == UInt8(ascii: "\\") else { continue }
                bytes(UnsafeBufferPointer(rebasing: utf8[plain..<(i - 1)]))
                plain = i
                at += writeJSONEscape(value, to: at)
            }
            bytes(UnsafeBufferPointer(rebasing: utf8[plain...]))
        }

    }

    static func encodeTail(
        of r: MessageRecord, to w: inout TailWriter, keyBytes: UnsafeBufferPointer<UInt8>, keyEnds: UnsafeBufferPointer<Int>
    ) {
        var k = 0
        func key(_ w: inout TailWriter) {
            w.bytes(UnsafeBufferPointer(rebasing: keyBytes[(k == 0 ? 0 : keyEnds[k - 1])..<keyEnds[k]]))
            k += 1
        }
        func number(_ value: Int?, _ w: inout TailWriter) {
            key(&w)
            if let value { w.decimal(value) } else { w.null() }
        }
        func text(_ value: String?, _ w: inout TailWriter) {
            key(&w)
            if let value { w.jsonString(value) } else { w.null() }
        }
        func time(_ value: CaptureTime?, _ w: inout TailWriter) {
            key(&w)
            if let value { value.withDecimalBytes { w.bytes($0) } } else { w.null() }
        }
        func flag(_ value: Bool, _ w: inout TailWriter) {
            key(&w)
            if value {
                for c in "true".utf8 { w.byte(c) }
            } else {
                for c in "false".utf8 { w.byte(c) }
            }
        }
        number(r.flags.contains(.pushed) ? nil : r.index, &w)
        text(r.kind.rawValue, &w)
        time(r.time, &w)
        text(r.client, &w)
        text(r.server, &w)
        text(r.method, &w)
        number(r.status, &w)
        text(r.version, &w)
        text(r.host, &w)
        text(r.path, &w)
        text(r.query, &w)
        number(r.lineBytes, &w)
        number(r.headerBytes, &w)
        number(r.cookieBytes, &w)
        number(r.bodyBytes, &w)
        number(r.encodedBodyBytes, &w)
        number(r.decodedBodyBytes, &w)
        number(r.transferBytes, &w)
        number(r.missingBytes, &w)
        text(r.contentType, &w)
        text(r.contentEncoding, &w)
        text(r.transferEncoding, &w)
        flag(r.complete, &w)
        flag(r.paired, &w)
        key(&w)
        w.byte(UInt8(ascii: "["))
        for (i, anomaly) in r.flags.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.jsonString(anomaly.name)
        }
        w.byte(UInt8(ascii: "]"))
        number(r.tunnelBytes, &w)
        number(r.handshakeBytes, &w)
        number(r.teardownBytes, &w)
        number(r.packetOverheadBytes, &w)
        number(r.retransmittedBytes, &w)
        number(r.wireBytes, &w)
        let tls = r.tls, quic = r.quic
        text(tls?.direction ?? quic?.direction, &w)
        number(tls?.handshakeBytes ?? (r.decrypted ? r.tlsHandshakeBytes : nil), &w)
        number(tls?.applicationBytes, &w)
        number(tls?.alertBytes, &w)
        number(tls?.recordHeaderBytes, &w)
        text(tls?.version, &w)
        text(tls?.cipherSuite, &w)
        text(tls?.alpn, &w)
        text(tls?.alpnOffered ?? quic?.alpnOffered, &w)
        number(r.decrypted ? r.tlsOverheadBytes : nil, &w)
        time(r.time, &w)
        time(r.kind == .tls || r.kind == .quic ? nil : r.lastByteTime, &w)
        number(r.streamID, &w)
        number(r.headerDecodedBytes, &w)
        number(r.cookieDecodedBytes, &w)
        number(r.h2ControlBytes, &w)
        text(quic?.version, &w)
        number(quic?.packets, &w)
        number(r.quicOverheadBytes, &w)
        number(r.h3ControlBytes, &w)
        number(r.quicConnectionBytes, &w)
        assert(k == keyEnds.count, "every field written")
    }
}
