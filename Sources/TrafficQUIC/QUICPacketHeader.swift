/// The header of one QUIC packet in a datagram, as far as it can be read without keys (RFC 9000 §17), with
/// offsets into the datagram's captured bytes.
struct QUICPacketHeader {
    var type: QUICPacketType
    /// The long header's version; for a short header the one the caller passed.
    var version: QUICVersion
    var start: Int
    /// Where the packet ends: its Length field's end for Initial, 0-RTT and Handshake, the datagram's end for
    /// short headers, Retry and Version Negotiation.
    var end: Int
    var dcid: Range<Int>
    /// Long headers only.
    var scid: Range<Int> = 0..<0
    /// Initial (its token) and Retry (the retry token) only.
    var token: Range<Int> = 0..<0
    /// The (protected) packet number's offset: Initial, 0-RTT, Handshake, 1-RTT.
    var pnOffset = 0
    /// The Length field (or the rest of the datagram) would run past what the capture holds.
    var truncated = false

    var isLong: Bool { type != .oneRTT }

    /// Reads the packet at `start` of a datagram whose captured bytes are `bytes` and whose real end (the UDP
    /// payload length) is `end`. `shortDCIDLength`: the Destination Connection ID length of short headers on
    /// this path, when known (a short header does not say). nil when the bytes are not a QUIC packet header.
    static func read(
        _ bytes: UnsafeRawBufferPointer, at start: Int, end: Int, version shortVersion: QUICVersion,
        shortDCIDLength: Int?
    ) -> QUICPacketHeader? {
        var r = QUICByteReader(bytes, from: start, to: end)
        guard let first = r.byte() else { return nil }
        if first & 0x80 == 0 {
            // RFC 9000 §17.3.1: the fixed bit is 1 (RFC 9287 lets peers grease it only once both agreed; then
            // the DCID still has to match).
            guard let length = shortDCIDLength, r.skip(length) else { return nil }
            return QUICPacketHeader(
                type: .oneRTT, version: shortVersion, start: start, end: end, dcid: (start + 1)..<(start + 1 + length),
                pnOffset: start + 1 + length, truncated: end > bytes.count)
        }
        guard let rawVersion = r.uint32(), let dcidLength = r.byte().map(Int.init), dcidLength <= 255,
            r.skip(dcidLength)
        else { return nil }
        let dcid = (r.position - dcidLength)..<r.position
        guard let scidLength = r.byte().map(Int.init), r.skip(scidLength) else { return nil }
        let scid = (r.position - scidLength)..<r.position
        let version = QUICVersion(rawValue: rawVersion)
        if version == .negotiation {
            // RFC 9000 §17.2.1: a list of versions to the datagram's end.
            return QUICPacketHeader(
                type: .versionNegotiation, version: version, start: start, end: end, dcid: dcid, scid: scid,
                truncated: end > bytes.count)
        }
        // RFC 8999 §5.1: a version-independent long header's CIDs may be up to 255 bytes; v1 and v2 allow 20.
        if version.isKnown, dcidLength > QUICConnectionID.maxLength || scidLength > QUICConnectionID.maxLength {
            return nil
        }
        // An unknown version's packet: its length field cannot be read; it fills the datagram.
        guard version.isKnown, first & 0x40 != 0 else {
            return QUICPacketHeader(
                type: .initial, version: version, start: start, end: end, dcid: dcid, scid: scid,
                truncated: end > bytes.count)
        }
        let type = version.longPacketType(first >> 4)
        var header = QUICPacketHeader(type: type, version: version, start: start, end: end, dcid: dcid, scid: scid)
        switch type {
        case .retry:
            // RFC 9000 §17.2.5: Retry Token, then a 16-byte integrity tag, to the end of the datagram.
            guard r.remaining >= 16 else { return nil }
            header.token = r.position..<(end - 16)
            header.truncated = end > bytes.count
            return header
        case .initial:
            guard let tokenLength = r.length(), r.skip(tokenLength) else { return nil }
            header.token = (r.position - tokenLength)..<r.position
        default:
            break
        }
        guard let length = r.varint() else { return nil }
        header.pnOffset = r.position
        // A Length past the datagram: the packet is damaged; it is counted up to the datagram's end.
        let claimed = UInt64(end - r.position)
        header.end = length <= claimed ? r.position + Int(length) : end
        header.truncated = length > claimed || header.end > bytes.count
        // The packet number (1–4 bytes) and the 16-byte AEAD tag at least (RFC 9001 §5.4.2 samples 4 bytes in).
        if length < 20 { header.truncated = true }
        return header
    }
}

/// The packets of one datagram (RFC 9000 §12.2: coalesced packets), and its padding.
struct QUICDatagramPackets {
    var packets: [QUICPacketHeader] = []
    /// Bytes after the last packet that are no packet: zeros, or a packet with another DCID (RFC 9000 §12.2:
    /// "receivers MAY route based on the first packet"; such bytes are padding to us).
    var paddingBytes = 0

    static func read(
        _ bytes: UnsafeRawBufferPointer, end: Int, version: QUICVersion, shortDCIDLength: Int?
    ) -> QUICDatagramPackets? {
        var result = QUICDatagramPackets()
        guard let padding = forEach(bytes, end: end, version: version, shortDCIDLength: shortDCIDLength, { header, _ in
            result.packets.append(header)
        }) else { return nil }
        result.paddingBytes = padding
        return result
    }

    /// Walks the datagram's packets without collecting them: `body` gets each packet and the bytes it stands for
    /// (the last one's padding included), one packet behind the walk, so that the last is known as such. Returns
    /// the padding, or nil when the datagram does not start with a packet.
    static func forEach(
        _ bytes: UnsafeRawBufferPointer, end: Int, version: QUICVersion, shortDCIDLength: Int?,
        _ body: (QUICPacketHeader, Int) -> Void
    ) -> Int? {
        var offset = 0
        var padding = 0
        var first: Range<Int> = 0..<0
        var pending: QUICPacketHeader?
        while offset < end {
            if offset > 0, offset >= bytes.count || bytes[offset] == 0 {
                padding = end - offset
                break
            }
            guard var header = QUICPacketHeader.read(
                bytes, at: offset, end: end, version: version, shortDCIDLength: offset == 0 ? shortDCIDLength : first.count)
            else {
                if offset == 0 { return nil }
                padding = end - offset
                break
            }
            if offset == 0 {
                first = header.dcid
            } else if !Self.sameBytes(bytes, header.dcid, first) {
                padding = end - offset
                break
            }
            if header.end <= offset { header.end = end }
            if let pending { body(pending, pending.end - pending.start) }
            pending = header
            offset = header.end
        }
        if let pending { body(pending, pending.end - pending.start + padding) }
        return padding
    }

    static func sameBytes(_ bytes: UnsafeRawBufferPointer, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count, a.upperBound <= bytes.count, b.upperBound <= bytes.count else { return false }
        for i in 0..<a.count where bytes[a.lowerBound + i] != bytes[b.lowerBound + i] { return false }
        return true
    }
}
