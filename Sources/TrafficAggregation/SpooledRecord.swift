import TrafficCapture

import TrafficSessions

/// The byte form of a kept record in a `RecordSpool`: a little-endian UInt32 length, then every field of
/// `MessageRecord` in declaration order. Integers are zigzag varints (most sizes fit in one or two
/// bytes); strings are a length and UTF-8 (a missing one: the length -1); an optional number is a 0/1 flag,
/// then the number.
///
/// Every stored field is written: `fieldCount` is checked against the record's fields by a test, so a field
/// added to the record without being added here fails the build's tests instead of vanishing from output.
package enum SpooledRecord {
    package typealias Entry = (capture: Int, record: MessageRecord)

    /// Stored properties of `MessageRecord` that are written (its `tlsStorage` is written as `tls`, `quicStorage` as `quic`).
    package static let fieldCount = 50

    package static func append(_ entry: Entry, to bytes: inout [UInt8]) {
        let lengthAt = bytes.beginSpoolEntry()
        let r = entry.record
        bytes.spool(entry.capture)
        bytes.spool(r.connection)
        bytes.spool(r.index)
        bytes.spool(r.kind == .request ? 0 : r.kind == .response ? 1 : r.kind == .tls ? 2 : 3)
        bytes.spool(Int(r.time.nanoseconds))
        bytes.spool(r.client)
        bytes.spool(r.server)
        bytes.spool(r.method)
        bytes.spool(r.status)
        bytes.spool(r.version)
        bytes.spool(r.streamID)
        bytes.spool(r.host)
        bytes.spool(r.path)
        bytes.spool(r.query)
        bytes.spool(r.lineBytes)
        bytes.spool(r.headerBytes)
        bytes.spool(r.cookieBytes)
        bytes.spool(r.headerDecodedBytes)
        bytes.spool(r.cookieDecodedBytes)
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
        if let quic = r.quic {
            bytes.spool(1)
            bytes.spool(quic.direction)
            bytes.spool(quic.udpPayloadBytes)
            bytes.spool(quic.datagrams)
            bytes.spool(quic.packets)
            bytes.spool(quic.version)
            bytes.spool(quic.alpnOffered)
        } else {
            bytes.spool(0)
        }
        bytes.spool(r.handshakeBytes)
        bytes.spool(r.teardownBytes)
        bytes.spool(r.packetOverheadBytes)
        bytes.spool(r.retransmittedBytes)
        bytes.spool(r.tunnelBytes)
        bytes.spool(r.tlsOverheadBytes)
        bytes.spool(r.tlsHandshakeBytes)
        bytes.spool(r.h2ControlBytes)
        bytes.spool(r.quicOverheadBytes)
        bytes.spool(r.h3ControlBytes)
        bytes.spool(r.quicConnectionBytes)
        bytes.spool(r.streamOffset)
        bytes.spool(r.segmentHeaderBytes)
        bytes.spool(r.decrypted ? 1 : 0)
        bytes.spool(Int(r.lastByteTime.nanoseconds))
        bytes.spool(r.wait.map { Int($0.nanoseconds) })
        // One at a time, not through an array of the two: that allocated for every spooled record.
        func spool(_ span: MessageRecord.TimeSpan?) {
            if let span {
                bytes.spool(1)
                bytes.spool(Int(span.start.nanoseconds))
                bytes.spool(Int(span.end.nanoseconds))
            } else {
                bytes.spool(0)
            }
        }
        spool(r.connect)
        spool(r.tlsHandshake)
        bytes.spool(bytes: r.head)
        bytes.spool(bytes: r.body)
        bytes.spool(r.contentType)
        bytes.spool(r.contentEncoding)
        bytes.spool(r.transferEncoding)
        bytes.spool(r.complete ? 1 : 0)
        bytes.spool(r.paired ? 1 : 0)
        bytes.spool(r.flags.count)
        for flag in r.flags { bytes.spool(flag.name) }
        bytes.endSpoolEntry(lengthAt)
    }

    /// Decodes one record written by `append` (all of its bytes, the length included); nil if they are not
    /// one (a damaged spool file).
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> Entry? {
        var r = SpoolReader(bytes: bytes, position: 4)
        guard let capture = r.int(), let connection = r.int(), let index = r.int(), let kindCode = r.int(),
            let time = r.int(), let client = r.string(), let server = r.string()
        else { return nil }
        let kinds: [MessageRecord.Kind] = [.request, .response, .tls, .quic]
        guard kinds.indices.contains(kindCode) else { return nil }
        let kind = kinds[kindCode]
        guard let method = r.optionalString(), let status = r.optionalInt(), let version = r.optionalString(),
            let streamID = r.optionalInt(), let host = r.string(), let path = r.string()
        else { return nil }
        var record = MessageRecord(
            connection: connection, index: index, kind: kind, time: CaptureTime(nanoseconds: Int64(time)),
            client: client, server: server, host: host, path: path)
        record.method = method
        record.status = status
        record.version = version
        record.streamID = streamID
        guard let query = r.optionalString(), let line = r.int(), let header = r.int(), let cookie = r.int(),
            let headerDecoded = r.optionalInt(), let cookieDecoded = r.optionalInt(), let body = r.int(),
            let encoded = r.int(), let decoded = r.optionalInt(), let missing = r.int(), let hasTLS = r.int()
        else { return nil }
        record.query = query
        record.lineBytes = line
        record.headerBytes = header
        record.cookieBytes = cookie
        record.headerDecodedBytes = headerDecoded
        record.cookieDecodedBytes = cookieDecoded
        record.bodyBytes = body
        record.encodedBodyBytes = encoded
        record.decodedBodyBytes = decoded
        record.missingBytes = missing
        if hasTLS == 1 {
            guard let direction = r.string() else { return nil }
            var tls = MessageRecord.TLSBytes(direction: direction)
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
        guard let hasQUIC = r.int() else { return nil }
        if hasQUIC == 1 {
            guard let direction = r.string(), let payload = r.int(), let datagrams = r.int(), let packets = r.int(),
                let version = r.optionalString(), let offered = r.optionalString()
            else { return nil }
            var quic = MessageRecord.QUICBytes(direction: direction)
            quic.udpPayloadBytes = payload
            quic.datagrams = datagrams
            quic.packets = packets
            quic.version = version
            quic.alpnOffered = offered
            record.quic = quic
        }
        guard let handshake = r.int(), let teardown = r.int(), let overhead = r.int(), let retransmitted = r.int(),
            let tunnel = r.int(), let tlsOverhead = r.int(), let tlsHandshake = r.int(), let h2Control = r.int(),
            let quicOverhead = r.int(), let h3Control = r.int(), let quicConnection = r.int(), let offset = r.int(), let segmentHeaders = r.int(), let decrypted = r.int(), let lastByte = r.int(),
            let wait = r.optionalInt(), let connect = Self.span(&r), let tlsHandshakeTime = Self.span(&r),
            let head = r.byteArray(), let body = r.byteArray(),
            let contentType = r.optionalString(), let contentEncoding = r.optionalString(),
            let transferEncoding = r.optionalString(), let complete = r.int(), let paired = r.int(),
            let flagCount = r.int(), flagCount >= 0
        else { return nil }
        record.handshakeBytes = handshake
        record.teardownBytes = teardown
        record.packetOverheadBytes = overhead
        record.retransmittedBytes = retransmitted
        record.tunnelBytes = tunnel
        record.tlsOverheadBytes = tlsOverhead
        record.tlsHandshakeBytes = tlsHandshake
        record.h2ControlBytes = h2Control
        record.quicOverheadBytes = quicOverhead
        record.h3ControlBytes = h3Control
        record.quicConnectionBytes = quicConnection
        record.streamOffset = offset
        record.segmentHeaderBytes = segmentHeaders
        record.decrypted = decrypted == 1
        record.lastByteTime = CaptureTime(nanoseconds: Int64(lastByte))
        record.connect = connect
        record.wait = wait.map { CaptureTime(nanoseconds: Int64($0)) }
        record.tlsHandshake = tlsHandshakeTime
        record.head = head
        record.body = body
        record.contentType = contentType
        record.contentEncoding = contentEncoding
        record.transferEncoding = transferEncoding
        record.complete = complete == 1
        record.paired = paired == 1
        for _ in 0..<flagCount {
            // A spool is written and read by the same run: an unknown name is damage.
            guard let name = r.string(), let flag = RecordAnomaly(name: name) else { return nil }
            record.flags.append(flag)
        }
        return r.position == bytes.count ? (capture, record) : nil
    }

    /// An optional time span as `append` writes it: nil when damaged, .some(nil) when absent.
    private static func span(_ r: inout SpoolReader) -> MessageRecord.TimeSpan?? {
        guard let present = r.int() else { return nil }
        if present == 0 { return .some(nil) }
        guard let start = r.int(), let end = r.int() else { return nil }
        return .some(MessageRecord.TimeSpan(
            start: CaptureTime(nanoseconds: Int64(start)), end: CaptureTime(nanoseconds: Int64(end))))
    }
}
