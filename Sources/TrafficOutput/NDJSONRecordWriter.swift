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

    public func write(_ lines: StreamedLines) {
        // Assembled before the lock: threads wait only for each other's output call.
        var out: [UInt8] = []
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
    static func encodeTail(of r: MessageRecord, to b: inout [UInt8]) {
        keys.bytes.withUnsafeBufferPointer { keyBytes in
            keys.ends.withUnsafeBufferPointer { keyEnds in encodeTail(of: r, to: &b, keyBytes: keyBytes, keyEnds: keyEnds) }
        }
    }

    private static func encodeTail(
        of r: MessageRecord, to b: inout [UInt8], keyBytes: UnsafeBufferPointer<UInt8>, keyEnds: UnsafeBufferPointer<Int>
    ) {
        var k = 0
        func key(_ b: inout [UInt8]) {
            b.append(contentsOf: UnsafeBufferPointer(rebasing: keyBytes[(k == 0 ? 0 : keyEnds[k - 1])..<keyEnds[k]]))
            k += 1
        }
        func number(_ value: Int?, _ b: inout [UInt8]) {
            key(&b)
            if let value { b.appendDecimal(value) } else { b.appendUTF8("null") }
        }
        func text(_ value: String?, _ b: inout [UInt8]) {
            key(&b)
            if let value { b.appendJSONString(value) } else { b.appendUTF8("null") }
        }
        func time(_ value: CaptureTime?, _ b: inout [UInt8]) {
            key(&b)
            if let value { value.withDecimalBytes { b.append(contentsOf: $0) } } else { b.appendUTF8("null") }
        }
        func flag(_ value: Bool, _ b: inout [UInt8]) {
            key(&b)
            b.appendUTF8(value ? "true" : "false")
        }
        number(r.flags.contains(.pushed) ? nil : r.index, &b)
        text(r.kind.rawValue, &b)
        time(r.time, &b)
        text(r.client, &b)
        text(r.server, &b)
        text(r.method, &b)
        number(r.status, &b)
        text(r.version, &b)
        text(r.host, &b)
        text(r.path, &b)
        text(r.query, &b)
        number(r.lineBytes, &b)
        number(r.headerBytes, &b)
        number(r.cookieBytes, &b)
        number(r.bodyBytes, &b)
        number(r.encodedBodyBytes, &b)
        number(r.decodedBodyBytes, &b)
        number(r.transferBytes, &b)
        number(r.missingBytes, &b)
        text(r.contentType, &b)
        text(r.contentEncoding, &b)
        text(r.transferEncoding, &b)
        flag(r.complete, &b)
        flag(r.paired, &b)
        key(&b)
        b.append(UInt8(ascii: "["))
        for (i, anomaly) in r.flags.enumerated() {
            if i > 0 { b.append(UInt8(ascii: ",")) }
            b.appendJSONString(anomaly.name)
        }
        b.append(UInt8(ascii: "]"))
        number(r.tunnelBytes, &b)
        number(r.handshakeBytes, &b)
        number(r.teardownBytes, &b)
        number(r.packetOverheadBytes, &b)
        number(r.retransmittedBytes, &b)
        number(r.wireBytes, &b)
        let tls = r.tls, quic = r.quic
        text(tls?.direction ?? quic?.direction, &b)
        number(tls?.handshakeBytes ?? (r.decrypted ? r.tlsHandshakeBytes : nil), &b)
        number(tls?.applicationBytes, &b)
        number(tls?.alertBytes, &b)
        number(tls?.recordHeaderBytes, &b)
        text(tls?.version, &b)
        text(tls?.cipherSuite, &b)
        text(tls?.alpn, &b)
        text(tls?.alpnOffered ?? quic?.alpnOffered, &b)
        number(r.decrypted ? r.tlsOverheadBytes : nil, &b)
        time(r.time, &b)
        time(r.kind == .tls || r.kind == .quic ? nil : r.lastByteTime, &b)
        number(r.streamID, &b)
        number(r.headerDecodedBytes, &b)
        number(r.cookieDecodedBytes, &b)
        number(r.h2ControlBytes, &b)
        text(quic?.version, &b)
        number(quic?.packets, &b)
        number(r.quicOverheadBytes, &b)
        number(r.h3ControlBytes, &b)
        number(r.quicConnectionBytes, &b)
        assert(k == keyEnds.count, "every field written")
    }
}
