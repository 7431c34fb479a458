#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collapses identifier segments of paths so that `/users/123/profile` and `/users/456/profile`
/// form one group, and applies user-given templates such as `/users/{id}/orders/{order}`.
public struct PathNormalizer: Sendable {
    public var collapseIdentifiers: Bool
    public var templates: [[Substring]]

    public init(collapseIdentifiers: Bool, templates: [String] = []) {
        self.collapseIdentifiers = collapseIdentifiers
        self.templates = templates.map { $0.split(separator: "/", omittingEmptySubsequences: false) }
    }

    public var isIdentity: Bool { !collapseIdentifiers && templates.isEmpty }

    public func normalize(_ path: String) -> String {
        if isIdentity { return path }
        if !templates.isEmpty {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false)
            for template in templates where Self.matches(segments, template) {
                return template.joined(separator: "/")
            }
        }
        guard collapseIdentifiers, path.utf8.first == UInt8(ascii: "/") else { return path }
        // Integer offsets over the UTF-8 bytes: String indices and Substrings cost far more, and this
        // runs for every distinct path (and every group, to count what normalizing would merge).
        if let collapsed = path.utf8.withContiguousStorageIfAvailable(Self.collapse) { return collapsed ?? path }
        var contiguous = path
        contiguous.makeContiguousUTF8()
        return contiguous.utf8.withContiguousStorageIfAvailable(Self.collapse)! ?? path
    }

    /// The path with identifier segments replaced by `{id}`; nil when it has none. The string is made only
    /// when there is a first identifier, and written in place, in runs between identifiers.
    private static func collapse(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var first: Range<Int>?
        forEachIdentifier(in: bytes, from: 0) { first = $0; return false }
        guard let first else { return nil }
        // `{id}` (4 bytes) replaces at least one byte: the result is at most 4 times as long.
        return String(unsafeUninitializedCapacity: bytes.count * 4) { output in
            var written = 0
            func put(_ run: some Sequence<UInt8>) {
                for b in run {
                    output[written] = b
                    written += 1
                }
            }
            var copied = 0
            forEachIdentifier(in: bytes, from: first.lowerBound) { segment in
                put(bytes[copied..<segment.lowerBound])
                put("{id}".utf8)
                copied = segment.upperBound
                return true
            }
            put(bytes[copied...])
            return written
        }
    }

    /// Calls `body` with the bytes of `collapseIdentifiers`' result in pieces (runs of the path, and `{id}`
    /// for each identifier), without making it: counting distinct results only needs to hash them.
    public static func forEachCollapsedPiece(_ path: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var path = path
        path.withUTF8 { forEachCollapsedPiece(utf8: $0, body) }
    }

    /// `forEachCollapsedPiece` of a path's UTF-8 bytes.
    package static func forEachCollapsedPiece(utf8 bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard bytes.first == UInt8(ascii: "/") else { return body(bytes) }
        var copied = 0
        forEachIdentifier(in: bytes, from: 0) { segment in
            body(UnsafeBufferPointer(rebasing: bytes[copied..<segment.lowerBound]))
            StaticString("{id}").withUTF8Buffer(body)
            copied = segment.upperBound
            return true
        }
        body(UnsafeBufferPointer(rebasing: bytes[copied...]))
    }

    /// Calls `body` with the range of every identifier segment at or after `start` (a segment start), in order,
    /// until it returns false.
    private static func forEachIdentifier(
        in bytes: UnsafeBufferPointer<UInt8>, from start: Int, _ body: (Range<Int>) -> Bool
    ) {
        precondition(start >= 0 && start <= bytes.count, "a segment start within the path")
        var segmentStart = start
        while true {
            let index = slash(in: bytes, from: segmentStart)
            if index > segmentStart, isIdentifier(UnsafeBufferPointer(rebasing: bytes[segmentStart..<index])) {
                guard body(segmentStart..<index) else { return }
            }
            guard index < bytes.count else { return }
            segmentStart = index + 1
        }
    }

    /// Where the next `/` at or after `start` is (`bytes.count` when there is none). Every group's path is
    /// scanned so when the rows `--normalize-paths` would leave are counted: a test and a branch per byte
    /// were most of that count. Eight bytes at a time: a byte equal to `/` is a zero byte of the word XORed
    /// with `/`s, and the lowest byte flagged by `(x - 0x01…) & ~x & 0x80…` is the first zero byte (a borrow
    /// can only flag bytes above a zero one).
    @inline(__always)
    private static func slash(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ 0x2F2F_2F2F_2F2F_2F2F
                let zero = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
                if zero != 0 { return i + zero.trailingZeroBitCount >> 3 }
                i += 8
            }
        }
        while i < bytes.count, bytes[i] != UInt8(ascii: "/") { i += 1 }
        return i
    }

    package static func matches(_ segments: [Substring], _ template: [Substring]) -> Bool {
        guard segments.count == template.count else { return false }
        for (segment, pattern) in zip(segments, template) {
            if pattern.hasPrefix("{") && pattern.hasSuffix("}") {
                if segment.isEmpty { return false }
            } else if segment != pattern {
                return false
            }
        }
        return true
    }

    /// Decimal numbers, UUIDs, long hex strings, long base64/base64url tokens, and ISO dates.
    package static func isIdentifier(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isHex(_ b: UInt8) -> Bool { isDigit(b) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66) }
        func isLetter(_ b: UInt8) -> Bool { b | 0x20 >= 0x61 && b | 0x20 <= 0x7a }
        guard !bytes.isEmpty else { return false }
        if bytes.allSatisfy(isDigit) { return true }
        // Short words (`api`, `v1`, `users`) are the common case and never identifiers unless all digits.
        if bytes.count < 10 { return false }
        // UUID: 8-4-4-4-12 hex digits.
        if bytes.count == 36 {
            var uuid = true
            for (i, b) in bytes.enumerated() {
                let dash = i == 8 || i == 13 || i == 18 || i == 23
                if dash ? b != 0x2d : !isHex(b) {
                    uuid = false
                    break
                }
            }
            if uuid { return true }
        }
        // Dates: 2024-01-31 or 20240131 (the latter is already all digits).
        if bytes.count == 10, bytes[4] == 0x2d, bytes[7] == 0x2d,
            bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || isDigit($0.element) })
        {
            return true
        }
        if bytes.count >= 16, bytes.allSatisfy(isHex), bytes.contains(where: isDigit) { return true }
        // Tokens: long runs of base64/base64url characters mixing letters and digits.
        if bytes.count >= 20,
            bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x2d || $0 == 0x5f || $0 == 0x2b || $0 == 0x3d }),
            bytes.contains(where: isDigit), bytes.contains(where: isLetter)
        {
            return true
        }
        return false
    }
}

/// Counts the distinct keys left when identifier segments of the path column are collapsed
/// (`--normalize-paths`), from the groups' keys.
package struct NormalizedKeyCounter {
    package let pathColumn: Int
    // The normalized keys are hashed and compared as bytes, never made: tens of thousands of paths
    // collapse into a few dozen keys, and making each one (to look it up) cost most of the count.
    // Each distinct key is kept as bytes, fields separated by 0xFF (never in UTF-8), all in one buffer,
    // found through an open-addressing index of their hashes and compared with memcmp: a dictionary of
    // arrays of byte arrays cost a hashed lookup, an array copy and an element-by-element comparison per key.
    private var store: [UInt8] = []
    /// Where each distinct key ends in `store`, and its hash.
    private var ends: [Int] = []
    private var hashes: [UInt64] = []
    /// Key numbers by hash (linear probing, -1 empty), at most half full.
    private var index: [Int32] = Array(repeating: -1, count: 64)
    /// The key being looked up, written in place: its first `length` bytes (the array is kept at least as
    /// long as the longest key so far, so that a key is written with no append per piece).
    private var bytes: [UInt8] = []
    package var count: Int { ends.count }

    package init(pathColumn: Int) { self.pathColumn = pathColumn }

    package mutating func add(_ key: [String]) {
        var keyBytes: [UInt8] = []
        GroupKeyBytes.append(key, to: &keyBytes)
        keyBytes.withUnsafeBytes { add(keyBytes: $0) }
    }

    /// `add`, of a key as `GroupKeyBytes`.
    package mutating func add(keyBytes: UnsafeRawBufferPointer) {
        // `{id}` (4 bytes) replaces at least one byte, and a separator follows each field, whose length took
        // at least a byte: the normalized key is at most 4 times as long as these bytes, plus one.
        let bound = 4 * keyBytes.count + 1
        if bytes.count < bound { bytes.append(contentsOf: repeatElement(0, count: max(bound, 2 * bytes.count) - bytes.count)) }
        let pathColumn = pathColumn
        let length = bytes.withUnsafeMutableBufferPointer { out in
            var length = 0
            func put(_ piece: UnsafeBufferPointer<UInt8>) {
                guard let source = piece.baseAddress, !piece.isEmpty else { return }
                (out.baseAddress! + length).update(from: source, count: piece.count)
                length += piece.count
            }
            var i = 0
            GroupKeyBytes.forEachField(keyBytes) { field in
                let utf8 = field.assumingMemoryBound(to: UInt8.self)
                if i == pathColumn {
                    PathNormalizer.forEachCollapsedPiece(utf8: utf8, put)
                } else {
                    put(utf8)
                }
                out[length] = 0xFF
                length += 1
                i += 1
            }
            return length
        }
        bytes.withUnsafeBufferPointer { bytes in
            let key = UnsafeBufferPointer(rebasing: bytes[..<length])
            insert(key, hash: Self.hash(key))
        }
    }

    /// A hash of a normalized key, eight bytes at a time (FNV-1a byte by byte cost a dependent multiply
    /// per byte of every key), then a final mix so that the low bits the index uses depend on every byte.
    private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(key.count)
        let raw = UnsafeRawBufferPointer(key)
        var i = 0
        while i + 8 <= key.count {
            h = (h ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < key.count {
            tail |= UInt64(key[i]) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        return h ^ (h >> 32)
    }

    private mutating func insert(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) {
        let mask = index.count - 1
        var probe = Int(truncatingIfNeeded: hash) & mask
        while index[probe] >= 0 {
            let known = Int(index[probe])
            if hashes[known] == hash {
                let start = known == 0 ? 0 : ends[known - 1]
                let same = store.withUnsafeBufferPointer { store in
                    ends[known] - start == key.count
                        && (key.isEmpty || memcmp(store.baseAddress! + start, key.baseAddress!, key.count) == 0)
                }
                if same { return }
            }
            probe = (probe + 1) & mask
        }
        index[probe] = Int32(truncatingIfNeeded: ends.count)
        store.append(contentsOf: key)
        ends.append(store.count)
        hashes.append(hash)
        if 2 * ends.count > index.count { growIndex() }
    }

    private mutating func growIndex() {
        index = Array(repeating: -1, count: 2 * index.count)
        let mask = index.count - 1
        for (known, hash) in hashes.enumerated() {
            var probe = Int(truncatingIfNeeded: hash) & mask
            while index[probe] >= 0 { probe = (probe + 1) & mask }
            index[probe] = Int32(truncatingIfNeeded: known)
        }
    }

    /// Adds the keys another counter saw (of other groups of the same report).
    package mutating func add(_ other: NormalizedKeyCounter) {
        other.store.withUnsafeBufferPointer { store in
            for known in other.ends.indices {
                let start = known == 0 ? 0 : other.ends[known - 1]
                insert(UnsafeBufferPointer(rebasing: store[start..<other.ends[known]]), hash: other.hashes[known])
            }
        }
    }
}
