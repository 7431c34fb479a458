/// The byte form of a group in a `RecordSpool` (when a report has more groups than `groupsInMemory`): the
/// key's hash, the keys, then every sum of `GroupTotals` in declaration order, in the entries of
/// `SpoolFormat` (zigzag varints: most sums of a small group take a byte or two).
///
/// Every stored sum is written: a test counts the stored properties of `GroupTotals` and `SideTotals`
/// against `totalsFieldCount` and `sideFieldCount`, so that a sum added there without being added here
/// fails the tests instead of vanishing from large reports only.
enum SpooledGroup {
    static let totalsFieldCount = 5
    /// `SideTotals`' stored sums, the five rare ones included (stored together as `rareSums`: 11 properties).
    static let sideFieldCount = 15

    static func append(hash: UInt64, _ group: ReportGroup, to bytes: inout [UInt8]) {
        withUnsafePointer(to: group.totals) { append(hash: hash, keys: group.keys, totals: $0, to: &bytes) }
    }

    /// The totals are read in place: a copy retains and releases their arrays. The numbers are encoded into a
    /// stack buffer and appended at once (appending varints byte by byte cost 500 ns a group).
    static func append(hash: UInt64, keys: [String], totals t: UnsafePointer<GroupTotals>, to bytes: inout [UInt8]) {
        let lengthAt = bytes.beginSpoolEntry()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 10 * (2 + 3 + 2 * sideFieldCount)) { buffer in
            var out = VarintWriter(base: buffer.baseAddress!)
            out.put(Int(Int64(bitPattern: hash)))
            out.put(keys.count)
            bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: out.count))
            for key in keys {
                out.count = 0
                out.put(key.utf8.count)
                bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: out.count))
                bytes.append(contentsOf: key.utf8)
            }
            out.count = 0
            out.put(t.pointee.requests)
            out.put(t.pointee.responses)
            out.put(t.pointee.incomplete)
            func put(_ side: UnsafePointer<SideTotals>) {
                let s = side.pointee
                out.put(s.bytes)
                out.put(s.lineBytes)
                out.put(s.headerBytes)
                out.put(s.cookieBytes)
                out.put(s.bodyBytes)
                out.put(s.encodedBodyBytes)
                out.put(s.decodedBodyBytes)
                out.put(s.decodeUnknown)
                out.put(s.compressedBodyBytes)
                out.put(s.uncompressedBodyBytes)
                out.put(s.tunnelBytes)
                out.put(s.handshakeBytes)
                out.put(s.teardownBytes)
                out.put(s.packetOverheadBytes)
                out.put(s.retransmittedBytes)
            }
            put(t.pointer(to: \.request)!)
            put(t.pointer(to: \.response)!)
            bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: out.count))
        }
        bytes.endSpoolEntry(lengthAt)
    }

    /// Zigzag varints (as `Array.spool`) into memory with room for them.
    private struct VarintWriter {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        mutating func put(_ value: Int) {
            var v = UInt64(bitPattern: Int64(value) << 1 ^ Int64(value) >> 63)
            while v >= 0x80 {
                base[count] = UInt8(truncatingIfNeeded: v) | 0x80
                count += 1
                v >>= 7
            }
            base[count] = UInt8(v)
            count += 1
        }
    }

    /// Decodes one group written by `append` (all of its bytes, the length included); nil if they are not
    /// one (a damaged spool file).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> SpilledGroup? {
        var r = SpoolReader(bytes: bytes, position: 4)
        guard let hash = r.int(), let keyCount = r.int(), keyCount >= 0, keyCount <= bytes.count else { return nil }
        var keys: [String] = []
        keys.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            guard let key = r.string() else { return nil }
            keys.append(key)
        }
        var totals = GroupTotals()
        guard let requests = r.int(), let responses = r.int(), let incomplete = r.int(),
            let request = side(&r), let response = side(&r), r.position == bytes.count
        else { return nil }
        totals.requests = requests
        totals.responses = responses
        totals.incomplete = incomplete
        totals.request = request
        totals.response = response
        return SpilledGroup(hash: UInt64(bitPattern: Int64(hash)), group: ReportGroup(keys: keys, totals: totals))
    }

    private static func side(_ r: inout SpoolReader) -> SideTotals? {
        var s = SideTotals()
        guard let bytes = r.int(), let line = r.int(), let header = r.int(), let cookie = r.int(),
            let body = r.int(), let encoded = r.int(), let decoded = r.int(), let unknown = r.int(),
            let compressed = r.int(), let uncompressed = r.int(), let tunnel = r.int(), let handshake = r.int(),
            let teardown = r.int(), let packets = r.int(), let retransmitted = r.int()
        else { return nil }
        s.bytes = bytes
        s.lineBytes = line
        s.headerBytes = header
        s.cookieBytes = cookie
        s.bodyBytes = body
        s.encodedBodyBytes = encoded
        s.decodedBodyBytes = decoded
        s.decodeUnknown = unknown
        s.compressedBodyBytes = compressed
        s.uncompressedBodyBytes = uncompressed
        s.tunnelBytes = tunnel
        s.handshakeBytes = handshake
        s.teardownBytes = teardown
        s.packetOverheadBytes = packets
        s.retransmittedBytes = retransmitted
        return s
    }
}

/// A group read back from a spool, with the hash of its key (the order of spilled runs).
struct SpilledGroup: Sendable {
    var hash: UInt64
    var group: ReportGroup
}
