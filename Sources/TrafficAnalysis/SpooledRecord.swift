import TrafficCapture
import TrafficHTTP

/// The byte form of a kept record in a `RecordSpool`: a little-endian UInt32 length, then every field of
/// `HTTPMessageRecord` in declaration order. Integers are zigzag varints (most sizes fit in one or two
/// bytes); strings are a length and UTF-8 (a missing one: the length -1); an optional number is a 0/1 flag,
/// then the number.
///
/// Every stored field is written: `fieldCount` is checked against the record's fields by a test, so a field
/// added to the record without being added here fails the build's tests instead of vanishing from output.
enum SpooledRecord {
    typealias Entry = (capture: Int, record: HTTPMessageRecord)

    /// Stored properties of `HTTPMessageRecord` that are written (its `tlsStorage` is written as `tls`).
    static let fieldCount = 33

    static func append(_ entry: Entry, to bytes: inout [UInt8]) {
        let lengthAt = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0])
        let r = entry.record
        bytes.spool(entry.capture)
        bytes.spool(r.connection)
        bytes.spool(r.index)
        bytes.spool(r.kind == .request ? 0 : r.kind == .response ? 1 : 2)
        bytes.spool(Int(r.time.nanoseconds))
        bytes.spool(r.client)
        bytes.spool(r.server)
        bytes.spool(r.method)
        bytes.spool(r.status)
        bytes.spool(r.version)
        bytes.spool(r.host)
        bytes.spool(r.path)
        bytes.spool(r.query)
        bytes.spool(r.lineBytes)
        bytes.spool(r.headerBytes)
        bytes.spool(r.cookieBytes)
        bytes.spool(r.bodyBytes)
        bytes.spool(r.encodedBodyBytes)
        bytes.spool(r.decodedBodyBytes)
        bytes.spool(r.missingBytes)
        if let tls = r.tls {
            bytes.spool(1)
            bytes.spool(tls.direction)
            bytes.spool(tls.handshakeBytes)
            bytes.spool(tls.applicationBytes)
            bytes.spool(tls.alertBytes)
            bytes.spool(tls.otherBytes)
            bytes.spool(tls.recordHeaderBytes)
            bytes.spool(tls.version)
            bytes.spool(tls.cipherSuite)
            bytes.spool(tls.alpn)
            bytes.spool(tls.alpnOffered)
        } else {
            bytes.spool(0)
        }
        bytes.spool(r.handshakeBytes)
        bytes.spool(r.teardownBytes)
        bytes.spool(r.packetOverheadBytes)
        bytes.spool(r.retransmittedBytes)
        bytes.spool(r.tunnelBytes)
        bytes.spool(r.streamOffset)
        bytes.spool(r.segmentHeaderBytes)
        bytes.spool(r.contentType)
        bytes.spool(r.contentEncoding)
        bytes.spool(r.transferEncoding)
        bytes.spool(r.complete ? 1 : 0)
        bytes.spool(r.paired ? 1 : 0)
        bytes.spool(r.flags.count)
        for flag in r.flags { bytes.spool(flag) }
        let length = UInt32(truncatingIfNeeded: bytes.count - lengthAt - 4)
        for i in 0..<4 { bytes[lengthAt + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i))) }
    }

    /// The length of the record starting at `bytes` (its 4 length bytes included), if they are there.
    static func length(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var length = 0
        for i in 0..<4 { length |= Int(bytes[i]) << (8 * i) }
        return 4 + length
    }

    /// Decodes one record written by `append` (all of its bytes, the length included); nil if they are not
    /// one (a damaged spool file).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Entry? {
        var r = Reader(bytes: bytes, position: 4)
        guard let capture = r.int(), let connection = r.int(), let index = r.int(), let kindCode = r.int(),
            let time = r.int(), let client = r.string(), let server = r.string()
        else { return nil }
        let kind: HTTPMessageRecord.Kind = kindCode == 0 ? .request : kindCode == 1 ? .response : .tls
        guard let method = r.optionalString(), let status = r.optionalInt(), let version = r.optionalString(),
            let host = r.string(), let path = r.string()
        else { return nil }
        var record = HTTPMessageRecord(
            connection: connection, index: index, kind: kind, time: CaptureTime(nanoseconds: Int64(time)),
            client: client, server: server, host: host, path: path)
        record.method = method
        record.status = status
        record.version = version
        guard let query = r.optionalString(), let line = r.int(), let header = r.int(), let cookie = r.int(),
            let body = r.int(), let encoded = r.int(), let decoded = r.optionalInt(), let missing = r.int(),
            let hasTLS = r.int()
        else { return nil }
        record.query = query
        record.lineBytes = line
        record.headerBytes = header
        record.cookieBytes = cookie
        record.bodyBytes = body
        record.encodedBodyBytes = encoded
        record.decodedBodyBytes = decoded
        record.missingBytes = missing
        if hasTLS == 1 {
            guard let direction = r.string() else { return nil }
            var tls = HTTPMessageRecord.TLSBytes(direction: direction)
            guard let handshake = r.int(), let application = r.int(), let alert = r.int(), let other = r.int(),
                let headers = r.int(), let version = r.optionalString(), let cipher = r.optionalString(),
                let alpn = r.optionalString(), let offered = r.optionalString()
            else { return nil }
            tls.handshakeBytes = handshake
            tls.applicationBytes = application
            tls.alertBytes = alert
            tls.otherBytes = other
            tls.recordHeaderBytes = headers
            tls.version = version
            tls.cipherSuite = cipher
            tls.alpn = alpn
            tls.alpnOffered = offered
            record.tls = tls
        }
        guard let handshake = r.int(), let teardown = r.int(), let overhead = r.int(), let retransmitted = r.int(),
            let tunnel = r.int(), let offset = r.int(), let segmentHeaders = r.int(),
            let contentType = r.optionalString(), let contentEncoding = r.optionalString(),
            let transferEncoding = r.optionalString(), let complete = r.int(), let paired = r.int(),
            let flagCount = r.int(), flagCount >= 0
        else { return nil }
        record.handshakeBytes = handshake
        record.teardownBytes = teardown
        record.packetOverheadBytes = overhead
        record.retransmittedBytes = retransmitted
        record.tunnelBytes = tunnel
        record.streamOffset = offset
        record.segmentHeaderBytes = segmentHeaders
        record.contentType = contentType
        record.contentEncoding = contentEncoding
        record.transferEncoding = transferEncoding
        record.complete = complete == 1
        record.paired = paired == 1
        for _ in 0..<flagCount {
            guard let flag = r.string() else { return nil }
            record.flags.append(flag)
        }
        return r.position == bytes.count ? (capture, record) : nil
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position: Int

        mutating func int() -> Int? {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count, shift < 64 {
                let b = bytes[position]
                position += 1
                v |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return Int(Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)) }
                shift += 7
            }
            return nil
        }

        /// nil when the bytes are damaged; .some(nil) for a missing value.
        mutating func optionalInt() -> Int?? {
            guard let present = int() else { return nil }
            if present == 0 { return .some(nil) }
            guard let value = int() else { return nil }
            return .some(value)
        }

        mutating func string() -> String? {
            guard let count = int(), count >= 0, count <= bytes.count - position else { return nil }
            defer { position += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)]), as: UTF8.self)
        }

        mutating func optionalString() -> String?? {
            guard let count = int(), count >= -1, count <= bytes.count - position else { return nil }
            if count == -1 { return .some(nil) }
            defer { position += count }
            return .some(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)]), as: UTF8.self))
        }
    }
}

extension Array where Element == UInt8 {
    /// Zigzag varint: small negative numbers stay short too.
    fileprivate mutating func spool(_ value: Int) {
        var v = UInt64(bitPattern: Int64(value) << 1 ^ Int64(value) >> 63)
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    fileprivate mutating func spool(_ value: Int?) {
        guard let value else { return spool(0) }
        spool(1)
        spool(value)
    }

    fileprivate mutating func spool(_ text: String) {
        spool(text.utf8.count)
        append(contentsOf: text.utf8)
    }

    fileprivate mutating func spool(_ text: String?) {
        guard let text else { return spool(-1) }
        spool(text)
    }
}
