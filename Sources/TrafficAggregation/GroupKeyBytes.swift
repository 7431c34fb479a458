#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A group's key as bytes: the field count, then each field's UTF-8 length and bytes (zigzag varints, as
/// `SpoolFormat` writes them).
///
/// The group table keeps every key this way in one buffer (no `String` and no array per group: a spilled
/// table is freed in one go, and written by copying), the temporary file stores the same bytes, and the run
/// merges compare them without making strings: 77 000 groups cost about 300 000 string allocations when
/// each merge decoded its keys.
package enum GroupKeyBytes {
    package static func append(_ key: [String], to bytes: inout [UInt8]) {
        bytes.spool(key.count)
        for field in key { bytes.spool(field) }
    }

    /// `append([first, second], to:)` of the two fields' UTF-8.
    package static func append(pair first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        bytes.spool(2)
        bytes.spool(first.count)
        bytes.append(contentsOf: first)
        bytes.spool(second.count)
        bytes.append(contentsOf: second)
    }

    /// The length of `append(pair:)`'s bytes for fields of `first` and `second` bytes: the field count and
    /// each length as a zigzag varint (`spool`), and the fields.
    @inline(__always)
    package static func pairLength(_ first: Int, _ second: Int) -> Int {
        @inline(__always) func varint(_ n: Int) -> Int {
            var v = UInt64(n) << 1, count = 1  // lengths are never negative: zigzag is a shift
            while v >= 0x80 { v >>= 7; count += 1 }
            return count
        }
        return 1 + varint(first) + first + varint(second) + second
    }

    /// `matches(block, [first, second])` of the two fields' UTF-8.
    @inline(__always)
    package static func matches(_ block: UnsafeRawBufferPointer, pair first: UnsafeRawBufferPointer,
                                _ second: UnsafeRawBufferPointer) -> Bool {
        var r = SpoolReader(bytes: block, position: 0)
        guard r.int() == 2 else { return false }
        @inline(__always) func field(_ field: UnsafeRawBufferPointer) -> Bool {
            guard let length = r.int(), length == field.count, length <= block.count - r.position else { return false }
            if length > 0, memcmp(block.baseAddress! + r.position, field.baseAddress!, length) != 0 { return false }
            r.position += length
            return true
        }
        return field(first) && field(second) && r.position == block.count
    }

    /// Whether `block` is the bytes of `key`.
    package static func matches(_ block: UnsafeRawBufferPointer, _ key: [String]) -> Bool {
        var r = SpoolReader(bytes: block, position: 0)
        guard r.int() == key.count else { return false }
        for field in key {
            guard let length = r.int(), length == field.utf8.count, length <= block.count - r.position else { return false }
            let start = r.position
            r.position += length
            let same = field.utf8.withContiguousStorageIfAvailable { utf8 in
                length == 0 || memcmp(block.baseAddress! + start, utf8.baseAddress!, length) == 0
            }
            if let same {
                if !same { return false }
            } else if !field.utf8.elementsEqual(block[start..<(start + length)]) {
                return false
            }
        }
        return r.position == block.count
    }

    /// The key's fields; nil when `block` is not a key (a damaged spool file).
    package static func decode(_ block: UnsafeRawBufferPointer) -> [String]? {
        var r = SpoolReader(bytes: block, position: 0)
        guard let count = r.int(), count >= 0, count <= block.count else { return nil }
        var key: [String] = []
        key.reserveCapacity(count)
        for _ in 0..<count {
            guard let field = r.string() else { return nil }
            key.append(field)
        }
        return r.position == block.count ? key : nil
    }

    /// Calls `body` with each field's bytes, in order; false when `block` is damaged.
    ///
    /// Self-contained (the varints read here as `SpoolReader.int` reads them) and inlinable: tables call it
    /// for every row from another module, where an unspecialized call through a closure cost more than
    /// reading the fields.
    @inlinable
    @discardableResult
    package static func forEachField(_ block: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        var position = 0
        /// A zigzag varint, nil past the end.
        func int() -> Int? {
            var v: UInt64 = 0
            var shift: UInt64 = 0
            while position < block.count, shift < 64 {
                let b = block[position]
                position += 1
                v |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return Int(Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)) }
                shift += 7
            }
            return nil
        }
        guard let count = int(), count >= 0 else { return false }
        for _ in 0..<count {
            guard let length = int(), length >= 0, length <= block.count - position else { return false }
            body(UnsafeRawBufferPointer(rebasing: block[position..<(position + length)]))
            position += length
        }
        return position == block.count
    }

    /// The order of spilled runs after the hash (any total order works there, as long as equal keys meet):
    /// the bytes as they are.
    package static func bytesPrecede(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let common = min(a.count, b.count)
        if common > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, common)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }

    package static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// Writes the key's fields joined by NUL at `out` (room for `key.count` bytes: each field's length took at
    /// least a byte) and returns their length, when every field is ASCII without NUL; nil otherwise (what was
    /// written is then of no use). Such keys order as `compare` orders them by one `memcmp` of the joined
    /// bytes (as `GroupTable.slotsInReportOrder` sorts them): `String`s of ASCII order by their bytes, a
    /// field that is a prefix of the other's comes first (NUL orders before any other byte), and equal fields
    /// go on to the next.
    package static func joinASCII(_ key: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int? {
        var at = 0, plain = true, first = true
        let complete = forEachField(key) { field in
            guard plain else { return }
            if !first {
                out.storeBytes(of: 0, toByteOffset: at, as: UInt8.self)
                at += 1
            }
            first = false
            guard GroupTable.isPlainASCII(field) else { return plain = false }
            if !field.isEmpty { (out + at).copyMemory(from: field.baseAddress!, byteCount: field.count) }
            at += field.count
        }
        return plain && complete ? at : nil
    }

    /// Orders two keys' `joinASCII` bytes (`count` -1: not joined, then `compare` of their keys decides):
    /// negative, zero or positive.
    @inline(__always)
    package static func compareJoined(
        _ a: UnsafeRawPointer, _ aCount: Int, _ aKey: UnsafeRawBufferPointer,
        _ b: UnsafeRawPointer, _ bCount: Int, _ bKey: UnsafeRawBufferPointer
    ) -> Int {
        compareJoined(a, aCount, b, bCount) { (aKey, bKey) }
    }

    /// `compareJoined`, with the keys' bytes asked for only when one of them has no joined form (a field that is
    /// not ASCII): reading them costs a cache miss per key in a large run.
    @inline(__always)
    package static func compareJoined(
        _ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int,
        keys: () -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer)
    ) -> Int {
        guard aCount >= 0, bCount >= 0 else {
            let (aKey, bKey) = keys()
            return compare(aKey, bKey)
        }
        let common = min(aCount, bCount)
        let c = common == 0 ? 0 : memcmp(a, b, common)
        return c != 0 ? Int(c) : aCount - bCount
    }

    /// The keys' order in the report (`ReportGroup.precedes`: field by field, as `String`s compare):
    /// negative, zero or positive. UTF-8 bytes order like the Unicode scalars they encode, which is how
    /// `String` orders ASCII; a field with other bytes is compared as `String`s (canonical equivalence).
    package static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        // (Keys compared here differ nearly always: no test of the whole keys first, and each field's
        // equality comes from the same pass that finds where it differs, not from a `memcmp` of its own.)
        var x = SpoolReader(bytes: a, position: 0), y = SpoolReader(bytes: b, position: 0)
        guard let countA = x.int(), let countB = y.int() else { return equal(a, b) ? 0 : a.count - b.count }
        for _ in 0..<min(countA, countB) {
            guard let fa = x.field(), let fb = y.field() else { return equal(a, b) ? 0 : a.count - b.count }
            if fa.count == fb.count, fa.baseAddress == fb.baseAddress { continue }
            if let order = bytesOrder(fa, fb) {
                if order == 0 { continue }
                return order
            }
            let sa = String(decoding: fa, as: UTF8.self), sb = String(decoding: fb, as: UTF8.self)
            // As `precedes`: the first field that differs decides, even when `String` orders neither
            // before the other (a decomposed "é" against "éz" compares so).
            if sa != sb { return sa < sb ? -1 : sb < sa ? 1 : 0 }
        }
        return countA - countB
    }

    /// Whether `a` orders before `b` as `String`s, decided at their first differing byte when that is safe;
    /// nil when only `String`s can tell. Checking both fields whole for non-ASCII on every comparison cost a
    /// pass over each path per comparison while sorting and merging the report order.
    ///
    /// The identical bytes before the difference normalize alike; an ASCII byte is a starter that composes
    /// with nothing before it, so when both differing bytes are ASCII and neither is followed by a byte that
    /// could compose with it (non-ASCII), the normalized scalars differ first there, as the bytes do. When
    /// one field ends where the other goes on with an ASCII byte, the shorter one is a prefix of the other's
    /// scalars. (Fields of ASCII only always take this path.)
    package static func bytesDecide(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool? {
        bytesOrder(a, b).map { $0 < 0 }
    }

    /// `bytesDecide` telling equal bytes apart: negative, zero (the same bytes) or positive; nil when only
    /// `String`s can tell.
    @inline(__always)
    package static func bytesOrder(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int? {
        let common = min(a.count, b.count)
        var i = 0
        // Keys of one report share long prefixes (a host, `/api/v1/users/`): the first difference is found
        // eight bytes at a time, then byte by byte.
        if common >= 8, let x = a.baseAddress, let y = b.baseAddress {
            var differs = false
            while i + 8 <= common {
                let d = UInt64(littleEndian: x.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                    ^ UInt64(littleEndian: y.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if d != 0 {
                    i += d.trailingZeroBitCount >> 3
                    differs = true
                    break
                }
                i += 8
            }
            // The last bytes as one word ending at `common` (overlapping the ones compared): equal fields, a
            // host most often, end here instead of byte by byte.
            if !differs, i < common {
                let j = common - 8
                let d = UInt64(littleEndian: x.loadUnaligned(fromByteOffset: j, as: UInt64.self))
                    ^ UInt64(littleEndian: y.loadUnaligned(fromByteOffset: j, as: UInt64.self))
                i = d == 0 ? common : j + d.trailingZeroBitCount >> 3
            }
        }
        while i < common, a[i] == b[i] { i += 1 }
        if i == common {
            if a.count == b.count { return 0 }
            return (a.count > b.count ? a[common] : b[common]) < 0x80 ? (a.count < b.count ? -1 : 1) : nil
        }
        guard a[i] < 0x80, b[i] < 0x80, i + 1 == a.count || a[i + 1] < 0x80, i + 1 == b.count || b[i + 1] < 0x80
        else { return nil }
        return a[i] < b[i] ? -1 : 1
    }
}

extension SpoolReader {
    /// A length-prefixed field's bytes, without making a `String`.
    package mutating func field() -> UnsafeRawBufferPointer? {
        guard let length = int(), length >= 0, length <= bytes.count - position else { return nil }
        defer { position += length }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + length)])
    }
}
