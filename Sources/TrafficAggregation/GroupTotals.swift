import TrafficSessions

/// Byte sums of one side (requests or responses) of a group.
public struct SideTotals: Sendable, Equatable {
    /// Sum of `transfer_bytes`.
    public var bytes = 0
    public var lineBytes = 0
    public var headerBytes = 0
    public var cookieBytes = 0
    public var bodyBytes = 0
    public var encodedBodyBytes = 0
    /// Sum over records whose decoding succeeded; records with an unknown decoded size add nothing
    /// here and are counted in `decodeUnknown` (never a guess).
    public var decodedBodyBytes = 0
    public var decodeUnknown = 0
    /// Encoded body bytes of records that had a content coding, and their decoded size: the saving.
    public var compressedBodyBytes = 0
    public var uncompressedBodyBytes = 0
    /// Bytes after CONNECT or `101 Switching Protocols` on this side: not HTTP/1, but this endpoint's cost.
    public var tunnelBytes: Int { get { rare(0) } set { setRare(0, newValue) } }
    // Connection overhead (`--overhead`): sums 1–4 of the rare ones, kept inline. With `--overhead` every group
    // has them, and keeping them in `rareSums` allocated an array per side of each group (malloc, free, retains
    // and releases: `--overhead all` ran 1.6 times as long as without on the 1 GiB API bench); 64 bytes more a
    // group instead, about 2 MiB at peak with 16 384 groups in memory on each of two threads.
    public var handshakeBytes = 0
    public var teardownBytes = 0
    public var packetOverheadBytes = 0
    public var retransmittedBytes = 0
    /// Decrypted HTTPS: record-layer bytes beyond the plaintext, and (with `--overhead handshake`) the
    /// connections' TLS handshake records.
    public var tlsOverheadBytes: Int { get { rare(5) } set { setRare(5, newValue) } }
    public var tlsHandshakeBytes: Int { get { rare(6) } set { setRare(6, newValue) } }
    /// HTTP/2 control frames attributed to this side's records with `--overhead` (`MessageRecord.h2ControlBytes`).
    public var h2ControlBytes: Int { get { rare(7) } set { setRare(7, newValue) } }
    /// HTTP/2: Σ of the records' header block sizes after HPACK decoding (`MessageRecord.headerDecodedBytes`),
    /// over the records that have one; nil when none has (HTTP/1, or every block's HPACK state lost), so
    /// that "no decoded size" never reads as 0 bytes.
    public var headerDecodedBytes: Int? { headerDecodedRecords > 0 ? headerDecodedSum : nil }
    /// The sum behind `headerDecodedBytes`, and how many records it is over.
    package var headerDecodedSum: Int { get { rare(8) } set { setRare(8, newValue) } }
    public var headerDecodedRecords: Int { get { rare(9) } set { setRare(9, newValue) } }
    /// HTTP/3 (`MessageRecord.quicOverheadBytes`, `h3ControlBytes`, `quicConnectionBytes`).
    public var quicOverheadBytes: Int { get { rare(10) } set { setRare(10, newValue) } }
    public var h3ControlBytes: Int { get { rare(11) } set { setRare(11, newValue) } }
    public var quicConnectionBytes: Int { get { rare(12) } set { setRare(12, newValue) } }
    /// The rare sums other than the overhead ones (whose places 1–4 here stay zero), which stay zero without
    /// tunnels, TLS, HTTP/2 or HTTP/3: empty (8 bytes, no allocation) until one is not, so that tens of thousands
    /// of groups do not carry 72 bytes of zeros; then only as long as the highest one set.
    private var rareSums: [Int] = []
    /// The sums after the ten common ones, in `store(into:)`'s order: tunnel, the four overhead sums, TLS,
    /// HTTP/2, HTTP/3.
    package static let rareCount = 13
    /// Of those, the ones stored as properties (1–4: the overhead sums).
    package static let inlineRareCount = 4

    private func rare(_ i: Int) -> Int {
        switch i {
        case 1: handshakeBytes
        case 2: teardownBytes
        case 3: packetOverheadBytes
        case 4: retransmittedBytes
        default: i < rareSums.count ? rareSums[i] : 0
        }
    }

    private mutating func setRare(_ i: Int, _ value: Int) {
        switch i {
        case 1: handshakeBytes = value
        case 2: teardownBytes = value
        case 3: packetOverheadBytes = value
        case 4: retransmittedBytes = value
        default:
            if i >= rareSums.count {
                if value == 0 { return }
                rareSums.reserveCapacity(i + 1)
                rareSums.append(contentsOf: repeatElement(0, count: i + 1 - rareSums.count))
            }
            rareSums[i] = value
        }
    }

    public static func == (a: SideTotals, b: SideTotals) -> Bool {
        a.bytes == b.bytes && a.lineBytes == b.lineBytes && a.headerBytes == b.headerBytes
            && a.cookieBytes == b.cookieBytes && a.bodyBytes == b.bodyBytes && a.encodedBodyBytes == b.encodedBodyBytes
            && a.decodedBodyBytes == b.decodedBodyBytes && a.decodeUnknown == b.decodeUnknown
            && a.compressedBodyBytes == b.compressedBodyBytes && a.uncompressedBodyBytes == b.uncompressedBodyBytes
            && (0..<rareCount).allSatisfy { a.rare($0) == b.rare($0) }
    }

    /// Everything together, as each record's `wireBytes` sums it (derived: one field less per group).
    public var wireBytes: Int {
        bytes &+ tunnelBytes &+ handshakeBytes &+ teardownBytes &+ packetOverheadBytes &+ retransmittedBytes
            &+ tlsOverheadBytes &+ tlsHandshakeBytes &+ h2ControlBytes &+ quicOverheadBytes &+ h3ControlBytes
            &+ quicConnectionBytes
    }

    public init() {}

    package mutating func add(_ record: MessageRecord) {
        bytes &+= record.transferBytes
        lineBytes &+= record.lineBytes
        headerBytes &+= record.headerBytes
        cookieBytes &+= record.cookieBytes
        bodyBytes &+= record.bodyBytes
        encodedBodyBytes &+= record.encodedBodyBytes
        // The rare sums are zero for almost every record: one test instead of five reads and writes of them.
        // (Not through a `RecordOverhead` made from the record: a call into the session layer with the record
        // as argument copied the whole record, a retain per string, for every record.)
        let tunnel = record.tunnelBytes, handshake = record.handshakeBytes, teardown = record.teardownBytes
        let packets = record.packetOverheadBytes, retransmitted = record.retransmittedBytes
        let tlsOverhead = record.tlsOverheadBytes, tlsHandshake = record.tlsHandshakeBytes
        let h2Control = record.h2ControlBytes
        let quicOverhead = record.quicOverheadBytes, h3Control = record.h3ControlBytes
        let quicConnection = record.quicConnectionBytes
        if tunnel | handshake | teardown | packets | retransmitted | tlsOverhead | tlsHandshake | h2Control
            | quicOverhead | h3Control | quicConnection != 0
        {
            tunnelBytes &+= tunnel
            handshakeBytes &+= handshake
            teardownBytes &+= teardown
            packetOverheadBytes &+= packets
            retransmittedBytes &+= retransmitted
            tlsOverheadBytes &+= tlsOverhead
            tlsHandshakeBytes &+= tlsHandshake
            h2ControlBytes &+= h2Control
            quicOverheadBytes &+= quicOverhead
            h3ControlBytes &+= h3Control
            quicConnectionBytes &+= quicConnection
        }
        if let decoded = record.headerDecodedBytes {
            headerDecodedSum &+= decoded
            headerDecodedRecords &+= 1
        }
        if let decoded = record.decodedBodyBytes {
            decodedBodyBytes &+= decoded
            if record.contentEncoding != nil {
                compressedBodyBytes &+= record.encodedBodyBytes
                uncompressedBodyBytes &+= decoded
            }
        } else {
            decodeUnknown += 1
        }
    }

    /// `add(_:)` of a side read in place.
    package mutating func add(_ other: UnsafePointer<SideTotals>) {
        bytes &+= other.pointee.bytes
        lineBytes &+= other.pointee.lineBytes
        headerBytes &+= other.pointee.headerBytes
        cookieBytes &+= other.pointee.cookieBytes
        bodyBytes &+= other.pointee.bodyBytes
        encodedBodyBytes &+= other.pointee.encodedBodyBytes
        decodedBodyBytes &+= other.pointee.decodedBodyBytes
        decodeUnknown &+= other.pointee.decodeUnknown
        compressedBodyBytes &+= other.pointee.compressedBodyBytes
        uncompressedBodyBytes &+= other.pointee.uncompressedBodyBytes
        handshakeBytes &+= other.pointee.handshakeBytes
        teardownBytes &+= other.pointee.teardownBytes
        packetOverheadBytes &+= other.pointee.packetOverheadBytes
        retransmittedBytes &+= other.pointee.retransmittedBytes
        if !other.pointee.rareSums.isEmpty {
            other.pointee.rareSums.withUnsafeBufferPointer { sums in
                for i in sums.indices where sums[i] != 0 { setRare(i, rare(i) &+ sums[i]) }
            }
        }
    }

    package mutating func add(_ other: SideTotals) { withUnsafePointer(to: other) { add($0) } }

    /// Connection overhead found for a record after the record itself was counted.
    package mutating func add(_ overhead: RecordOverhead) {
        handshakeBytes &+= overhead.handshakeBytes
        teardownBytes &+= overhead.teardownBytes
        packetOverheadBytes &+= overhead.packetOverheadBytes
        retransmittedBytes &+= overhead.retransmittedBytes
        // The rare ones (tunnels, TLS, HTTP/2) only when there are any: each is a read and a write of `rareSums`.
        let tunnel = overhead.tunnelBytes, tlsHandshake = overhead.tlsHandshakeBytes
        let h2Control = overhead.h2ControlBytes, tlsOverhead = overhead.tlsOverheadBytes
        if tunnel | tlsHandshake | h2Control | tlsOverhead != 0 {
            tunnelBytes &+= tunnel
            tlsHandshakeBytes &+= tlsHandshake
            h2ControlBytes &+= h2Control
            tlsOverheadBytes &+= tlsOverhead
        }
    }

    /// Bytes that content coding kept off the wire: decoded minus encoded, over coded bodies.
    public var compressionSavingBytes: Int { uncompressedBodyBytes - compressedBodyBytes }
}

extension SideTotals {
    /// `SpooledGroup.sideFieldCount` sums, in declaration order (the byte form of spilled groups).
    package func store(into sums: UnsafeMutablePointer<Int>) {
        sums[0] = bytes
        sums[1] = lineBytes
        sums[2] = headerBytes
        sums[3] = cookieBytes
        sums[4] = bodyBytes
        sums[5] = encodedBodyBytes
        sums[6] = decodedBodyBytes
        sums[7] = decodeUnknown
        sums[8] = compressedBodyBytes
        sums[9] = uncompressedBodyBytes
        // The overhead sums from their fields, the others from the array as far as it goes (a `rare(i)` per sum,
        // through its switch, cost 4 times as much: +2.7 M instructions for the CSV of the 100 MiB bench).
        sums[11] = handshakeBytes
        sums[12] = teardownBytes
        sums[13] = packetOverheadBytes
        sums[14] = retransmittedBytes
        let stored = rareSums.count
        guard stored > 0 else {
            sums[10] = 0
            for i in (1 + Self.inlineRareCount)..<Self.rareCount { sums[10 + i] = 0 }
            return
        }
        rareSums.withUnsafeBufferPointer { rare in
            sums[10] = rare[0]
            for i in (1 + Self.inlineRareCount)..<Self.rareCount { sums[10 + i] = i < stored ? rare[i] : 0 }
        }
    }

    /// Adds `value` to sum `i` of `store(into:)`'s layout, in place (a spilled group's totals are read and
    /// added this way: no buffer of sums, no `SideTotals` made and copied, the rare array only when a rare
    /// sum is there). Wrapping like `add(_:)`: the numbers come from a temporary file.
    /// (Inlined into the spool's readers, the rare sums out of line: a call per sum read cost a fifth of
    /// reading a spilled group's totals.)
    @inline(__always)
    package mutating func addSum(_ i: Int, _ value: Int) {
        switch i {
        case 0: bytes &+= value
        case 1: lineBytes &+= value
        case 2: headerBytes &+= value
        case 3: cookieBytes &+= value
        case 4: bodyBytes &+= value
        case 5: encodedBodyBytes &+= value
        case 6: decodedBodyBytes &+= value
        case 7: decodeUnknown &+= value
        case 8: compressedBodyBytes &+= value
        case 9: uncompressedBodyBytes &+= value
        case 11: handshakeBytes &+= value
        case 12: teardownBytes &+= value
        case 13: packetOverheadBytes &+= value
        case 14: retransmittedBytes &+= value
        default: addRare(i - 10, value)
        }
    }

    @inline(never)
    private mutating func addRare(_ i: Int, _ value: Int) { setRare(i, rare(i) &+ value) }

    package init(sums: UnsafePointer<Int>) {
        bytes = sums[0]
        lineBytes = sums[1]
        headerBytes = sums[2]
        cookieBytes = sums[3]
        bodyBytes = sums[4]
        encodedBodyBytes = sums[5]
        decodedBodyBytes = sums[6]
        decodeUnknown = sums[7]
        compressedBodyBytes = sums[8]
        uncompressedBodyBytes = sums[9]
        handshakeBytes = sums[11]
        teardownBytes = sums[12]
        packetOverheadBytes = sums[13]
        retransmittedBytes = sums[14]
        // Almost always all zero: one test, and the array made at once (up to the last sum set) when not.
        var last = -1
        for i in 0..<Self.rareCount where !(1...Self.inlineRareCount).contains(i) && sums[10 + i] != 0 { last = i }
        if last >= 0 {
            rareSums = Array(UnsafeBufferPointer(start: sums + 10, count: last + 1))
            for i in 1...Self.inlineRareCount where i <= last { rareSums[i] = 0 }
        }
    }
}

/// The totals of one group of records.
public struct GroupTotals: Sendable, Equatable {
    public var requests = 0
    public var responses = 0
    public var request = SideTotals()
    public var response = SideTotals()
    /// Records cut by a gap or by the capture's edge; counted with the bytes actually seen.
    public var incomplete = 0
    /// Responses' `transfer_bytes` in buckets, for approximate percentiles and the exact maximum (the HTML
    /// report's p50/p95/max). Bounded per group, merged like the sums; not part of the CSV/JSON columns.
    public var responseSizes = SizeHistogram()
    /// Responses' `wait` in whole microseconds, rounded to the nearest (request's last byte to response's
    /// first; pcap's usual precision), for `wait_median_seconds`/`wait_p95_seconds`: approximate like
    /// `responseSizes` (within 6.25 %), exact below 16 µs and at the maximum. Collected only when a report
    /// shows it (`ReportOptions.collectWaits`).
    public var waits = SizeHistogram()

    public init() {}

    public var totalBytes: Int { request.bytes &+ response.bytes }

    /// Counts `record`; `sizes` also counts a response's size in `responseSizes` (only the HTML report shows
    /// them, and keeping a histogram per group cost 12 % more instructions on the bench capture).
    package mutating func add(_ record: MessageRecord, sizes: Bool = false, waits collectWaits: Bool = false) {
        switch record.kind {
        case .request:
            requests += 1
            request.add(record)
        case .response:
            responses += 1
            response.add(record)
            if sizes { responseSizes.add(record.transferBytes) }
            if collectWaits, let wait = record.wait { waits.add(Int((wait.nanoseconds + 500) / 1000)) }
        case .tls, .quic:
            // TLS and QUIC bytes count on their side without being requests or responses (issues 9, 23).
            if record.sideOrder == 0 { request.add(record) } else { response.add(record) }
        }
        if !record.complete { incomplete += 1 }
    }

    /// Overhead of a request or response counted earlier (`add(_:)` of its record).
    package mutating func add(_ overhead: RecordOverhead, kind: MessageRecord.Kind) {
        if kind == .request { request.add(overhead) } else { response.add(overhead) }
    }

    /// Every sum (`SpooledGroup.sumCount`): the counts, then each side's `SideTotals.store(into:)`.
    package func store(into sums: UnsafeMutablePointer<Int>) {
        sums[0] = requests
        sums[1] = responses
        sums[2] = incomplete
        request.store(into: sums + 3)
        response.store(into: sums + 3 + SpooledGroup.sideFieldCount)
    }

    /// `store(into:)` of the totals at `totals`, read where they are: called as `pointee.store(into:)` from another
    /// module, the totals were copied first (a retain and release of each of their arrays, for every group written).
    package static func store(_ totals: UnsafePointer<GroupTotals>, into sums: UnsafeMutablePointer<Int>) {
        totals.pointee.store(into: sums)
    }

    package init(sums: UnsafePointer<Int>) {
        requests = sums[0]
        responses = sums[1]
        incomplete = sums[2]
        request = SideTotals(sums: sums + 3)
        response = SideTotals(sums: sums + 3 + SpooledGroup.sideFieldCount)
    }

    /// Adds `value` to sum `i` of `store(into:)`'s layout (`SideTotals.addSum`).
    @inline(__always)
    package mutating func addSum(_ i: Int, _ value: Int) {
        switch i {
        case 0: requests &+= value
        case 1: responses &+= value
        case 2: incomplete &+= value
        case 3..<(3 + SpooledGroup.sideFieldCount): request.addSum(i - 3, value)
        default: response.addSum(i - 3 - SpooledGroup.sideFieldCount, value)
        }
    }

    /// `add(_:)` of totals read in place (a copy retains and releases their arrays).
    package mutating func add(_ other: UnsafePointer<GroupTotals>) {
        requests &+= other.pointee.requests
        responses &+= other.pointee.responses
        // Each side read through its own pointer: `other.pointee.request` copied the side (a retain and release).
        request.add(other.pointer(to: \.request)!)
        response.add(other.pointer(to: \.response)!)
        incomplete &+= other.pointee.incomplete
        if !other.pointee.responseSizes.entries.isEmpty { responseSizes.add(other.pointee.responseSizes) }
        if !other.pointee.waits.entries.isEmpty { waits.add(other.pointee.waits) }
    }

    /// Adds another group's totals (merging shards and runs; the HTML report's "other" row).
    public mutating func add(_ other: GroupTotals) { withUnsafePointer(to: other) { add($0) } }
}

/// One row of the report: the values of the group-by fields, and the totals.
public struct ReportGroup: Sendable {
    public var keys: [String]
    public var totals: GroupTotals

    public init(keys: [String], totals: GroupTotals) {
        self.keys = keys
        self.totals = totals
    }
}

extension GroupTotals {
    /// The names of `store(into:)`'s sums, in order: JSON reports carry each group's sums in this layout
    /// (`merge_state`) and the layout once (`merge_layout`), so that `traffic merge` refuses reports whose
    /// layout differs (written by another version) instead of adding unlike numbers.
    public static let sumNames: [String] = {
        let side = [
            "transfer_bytes", "line_bytes", "header_bytes", "cookie_bytes", "body_bytes", "encoded_body_bytes",
            "decoded_body_bytes", "decode_unknown", "compressed_body_bytes", "uncompressed_body_bytes",
            "tunnel_bytes", "handshake_bytes", "teardown_bytes", "packet_overhead_bytes", "retransmitted_bytes",
            "tls_overhead_bytes", "tls_handshake_bytes", "h2_control_bytes", "header_decoded_sum",
            "header_decoded_records", "quic_overhead_bytes", "h3_control_bytes", "quic_connection_bytes",
        ]
        precondition(side.count == SpooledGroup.sideFieldCount, "a side sum without a name")
        return ["requests", "responses", "incomplete_messages"] + side.map { "request_" + $0 } + side.map { "response_" + $0 }
    }()

    /// Every sum, in `sumNames`' order.
    public var sums: [Int] {
        [Int](unsafeUninitializedCapacity: SpooledGroup.sumCount) { buffer, count in
            store(into: buffer.baseAddress!)
            count = SpooledGroup.sumCount
        }
    }

    /// Totals from `sums` (in `sumNames`' order) and the wait histogram; nil when the count is wrong.
    public init?(sums: [Int], waits: SizeHistogram) {
        guard sums.count == SpooledGroup.sumCount else { return nil }
        self = sums.withUnsafeBufferPointer { GroupTotals(sums: $0.baseAddress!) }
        self.waits = waits
    }
}
