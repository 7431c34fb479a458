import Testing
import TrafficTestSupport
@testable import TrafficReassembly

/// The flow table against a Dictionary under random inserts, replacements and removals: keys crowd
/// few home slots (a weak mix) so that probe clusters, wrap-around and backward-shift deletion are hit.
@Suite struct FlowTableTests {
    struct Key: FlowTableKey, Hashable {
        var id: UInt64
        var mixed: UInt64 { id % 97 }  // many keys share a home slot
    }

    final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func behavesLikeADictionary(seed: UInt64) {
        var rng = SplitMix(state: seed)
        var table = FlowTable<Key, Box>()
        var reference: [Key: Int] = [:]
        for step in 0..<40_000 {
            let key = Key(id: rng.next() % 3_000)
            switch rng.next() % 10 {
            case 0..<5:
                table[key] = Box(step)
                reference[key] = step
            case 5..<8:
                table[key] = nil
                reference[key] = nil
            default:
                #expect(table[key]?.value == reference[key])
            }
            if step % 5_000 == 0 {
                #expect(table.count == reference.count)
                for (key, value) in reference { #expect(table[key]?.value == value) }
            }
        }
        #expect(table.count == reference.count)
        #expect(Dictionary(uniqueKeysWithValues: table.entries.map { ($0.key, $0.value.value) }) == reference)
    }
}
