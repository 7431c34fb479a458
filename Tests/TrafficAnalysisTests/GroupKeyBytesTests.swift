@testable import TrafficAggregation
import Testing
import TrafficTestSupport
@testable import TrafficAnalysis

/// Group keys as bytes (the table's and the temporary file's form) against the same keys as `String`s.
@Suite struct GroupKeyBytesTests {
    private static func bytes(_ key: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        GroupKeyBytes.append(key, to: &bytes)
        return bytes
    }

    /// Pieces that make `String` order and byte order part ways: a composed and a decomposed `é` are the same
    /// string; prefixes, empty fields, DEL, and scalars of two, three and four bytes. Combining marks alone
    /// (after any piece: an ASCII byte followed by one is not decided by bytes), two that reorder (dot below
    /// before acute), and Hangul jamo that compose.
    private static let pieces = [
        "", "a", "b", "/", "é", "e\u{301}", "ü", "\u{7F}", "z", "€", "𝄞", "A", "~", "e", "\u{301}", "\u{323}",
        "\u{1100}", "\u{1161}",
    ]

    private static func randomKey(_ rng: inout SplitMix, fields: Int) -> [String] {
        (0..<fields).map { _ in
            (0..<Int(rng.next() % 4)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
        }
    }

    /// The report's order on bytes (`compare`) is `ReportGroup.precedes` on strings, both ways round, and a key's
    /// bytes read back as the key and match it, and no other key.
    @Test(arguments: [UInt64(1), 2, 3])
    func bytesOrderLikeStrings(seed: UInt64) {
        var rng = SplitMix(state: seed)
        for _ in 0..<4_000 {
            let fields = 1 + Int(rng.next() % 3)
            let a = Self.randomKey(&rng, fields: fields), b = Self.randomKey(&rng, fields: fields)
            let x = Self.bytes(a), y = Self.bytes(b)
            x.withUnsafeBytes { x in
                y.withUnsafeBytes { y in
                    let c = GroupKeyBytes.compare(x, y)
                    #expect((c < 0) == ReportGroup.precedes(0, a, 0, b), "\(a) \(b)")
                    #expect((c > 0) == ReportGroup.precedes(0, b, 0, a), "\(a) \(b)")
                    #expect(GroupKeyBytes.compare(y, x).signum() == -c.signum(), "\(a) \(b)")
                    #expect(GroupKeyBytes.decode(x) == a)
                    #expect(GroupKeyBytes.matches(x, a))
                    // Different bytes are different groups (as their hashes are), even where the strings
                    // are canonically equal.
                    #expect(GroupKeyBytes.matches(x, b) == (Array(x) == Array(y)), "\(a) \(b)")
                }
            }
        }
    }

    @Test func damagedKeyBytesAreNoKey() {
        let key = Self.bytes(["api.example.com", "/v1"])
        #expect(key.withUnsafeBytes { GroupKeyBytes.decode(UnsafeRawBufferPointer(rebasing: $0.dropLast())) } == nil)
        #expect([UInt8]([0x04, 0x7F]).withUnsafeBytes { GroupKeyBytes.decode($0) } == nil)
        #expect(!key.withUnsafeBytes { GroupKeyBytes.matches(UnsafeRawBufferPointer(rebasing: $0.dropLast()), ["api.example.com", "/v1"]) })
    }
}
