@testable import TrafficAggregation
import Testing
import TrafficTestSupport
@testable import TrafficAnalysis

/// The group store against a plain dictionary, across several chunks, and the in-place row permutation
/// against building a second array.
@Suite struct GroupTableTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func slotsAndTotalsMatchADictionary(seed: UInt64) {
        var rng = SplitMix(state: seed)
        var table = GroupTable()
        var reference: [[String]: GroupTotals] = [:]
        for _ in 0..<30_000 {
            let key = ["h\(rng.next() % 3)", "/p/\(rng.next() % 9_000)"]
            var totals = GroupTotals()
            totals.requests = Int(rng.next() % 5)
            totals.request.bytes = Int(rng.next() % 1_000)
            table[table.slot(for: key)].add(totals)
            reference[key, default: GroupTotals()].add(totals)
        }
        #expect(table.count == reference.count)
        #expect(table.count > 8_192)  // more than two chunks
        for slot in 0..<table.count { #expect(table[slot] == reference[table.withKey(ofSlot: slot) { GroupKeyBytes.decode($0)! }]) }
        var drained: [[String]: GroupTotals] = [:]
        table.drain { key, _, totals in drained[GroupKeyBytes.decode(key)!] = totals }
        #expect(drained == reference)
        #expect(table.count == 0)
    }

    /// The default grouping's lookup from two fields' bytes (with the last slot as a hint) makes the same
    /// slots, key bytes and stored hashes as the lookup by `[String]`, whatever the hint: empty fields,
    /// non-ASCII, lengths that take two varint bytes, and hints that are right, wrong or absent.
    @Test func pairLookupMatchesStringKeys() {
        var rng = SplitMix(state: 11)
        var byPair = GroupTable(), byStrings = GroupTable()
        var hint = -1
        let lengths = [0, 1, 30, 63, 64, 200]
        for _ in 0..<20_000 {
            let host = ["", "h\(rng.next() % 3)", "hôte.example"][Int(rng.next() % 3)]
            let path = "/p/\(rng.next() % 4_000)" + String(repeating: "x", count: lengths[Int(rng.next() % 6)])
            let expected = byStrings.slot(for: [host, path])
            var h = host, p = path
            let slot = h.withUTF8 { hb in p.withUTF8 { pb in
                byPair.slot(forPair: UnsafeRawBufferPointer(hb), UnsafeRawBufferPointer(pb), hint: hint) } }
            #expect(slot == expected)
            hint = rng.next() % 4 == 0 ? Int(rng.next() % UInt64(byPair.count)) : (rng.next() % 2 == 0 ? slot : -1)
        }
        #expect(byPair.count == byStrings.count)
        for slot in 0..<byPair.count {
            #expect(byPair.withKey(ofSlot: slot) { Array($0) } == byStrings.withKey(ofSlot: slot) { Array($0) })
            #expect(byPair.hash(ofSlot: slot) == byStrings.hash(ofSlot: slot))
        }
    }

    /// The key hash reads a field eight bytes at a time, the last word overlapping: every length from 0 to 40
    /// hashes the same from strings and from bytes, a changed byte anywhere changes it, and bytes moved from one
    /// field to the next do too (each field's length is hashed first).
    @Test func keyHashTakesEveryByteAndKeepsFieldsApart() {
        for length in 0...40 {
            let path = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            var host = "api.example", p = path
            let fromBytes = host.withUTF8 { h in p.withUTF8 { GroupTable.hash(pair: UnsafeRawBufferPointer(h), UnsafeRawBufferPointer($0)) } }
            #expect(fromBytes == GroupTable.hash(["api.example", path]), "length \(length)")
            for i in 0..<length {
                var changed = Array(path.utf8)
                changed[i] ^= 0x20
                #expect(GroupTable.hash(["api.example", String(decoding: changed, as: UTF8.self)]) != fromBytes, "byte \(i) of \(length)")
            }
            if length > 0 {
                #expect(GroupTable.hash(["api.example" + path.prefix(1), String(path.dropFirst())]) != fromBytes)
            }
        }
        #expect(GroupTable.hash(["ab", "c"]) != GroupTable.hash(["a", "bc"]))
        #expect(GroupTable.hash(["", "x"]) != GroupTable.hash(["x", ""]))
        #expect(GroupTable.hash(["x"]) != GroupTable.hash(["x", ""]))
    }

    /// The hint's length check: `pairLength` is the length `append(pair:)` writes, at the varint boundaries of a
    /// field's length (zigzag: 63 bytes take one, 64 two, 8 191 two, 8 192 three).
    @Test func pairLengthIsTheAppendedLength() {
        for a in [0, 1, 63, 64, 200, 8_191, 8_192] {
            for b in [0, 5, 63, 64, 8_191, 8_192, 70_000] {
                let first = [UInt8](repeating: 0x61, count: a), second = [UInt8](repeating: 0x2F, count: b)
                var bytes: [UInt8] = []
                first.withUnsafeBytes { f in second.withUnsafeBytes { GroupKeyBytes.append(pair: f, $0, to: &bytes) } }
                #expect(GroupKeyBytes.pairLength(a, b) == bytes.count, "\(a), \(b)")
            }
        }
    }

    /// Shard tables merge by the hashes stored per slot: groups in both tables add up, the others are
    /// carried over, and each stored hash is the one of its own key (a hash stored against the wrong slot
    /// would make duplicate groups here).
    @Test func mergingByStoredHashesMatchesADictionary() {
        var rng = SplitMix(state: 7)
        var tables = [GroupTable(), GroupTable()]
        var reference: [[String]: GroupTotals] = [:]
        for i in 0..<20_000 {
            let key = ["h\(rng.next() % 2)", "/p/\(rng.next() % 6_000)"]
            var totals = GroupTotals()
            totals.requests = 1
            totals.request.bytes = Int(rng.next() % 1_000)
            tables[i % 2][tables[i % 2].slot(for: key)].add(totals)
            reference[key, default: GroupTotals()].add(totals)
        }
        var merged = tables[0]
        var wrongHashes = 0
        tables[1].drain { key, hash, totals in
            if hash != GroupTable.hash(GroupKeyBytes.decode(key)!) { wrongHashes += 1 }
            merged[merged.slot(forKeyBytes: key, hash: hash)].add(totals)
        }
        #expect(wrongHashes == 0)
        #expect(merged.count == reference.count)
        var drained: [[String]: GroupTotals] = [:]
        merged.drain { key, _, totals in drained[GroupKeyBytes.decode(key)!] = totals }
        #expect(drained == reference)
    }

    @Test(arguments: [0, 1, 2, 5, 4_097])
    func permuteEqualsGathering(count: Int) {
        var rng = SplitMix(state: UInt64(count) + 7)
        let rows = (0..<count).map { i -> ReportGroup in
            var totals = GroupTotals()
            totals.requests = i
            return ReportGroup(keys: ["k\(i)"], totals: totals)
        }
        let source = Array(0..<count).shuffled(using: &rng)
        var permuted = rows
        Permutation.apply(&permuted, by: source)
        #expect(permuted.map(\.keys) == source.map { rows[$0].keys })
        #expect(permuted.map(\.totals.requests) == source)
    }
}
