import Testing
import TrafficTestSupport
@testable import TrafficAnalysis

/// Capture-wide connection numbers (tshark's `tcp.stream` order) from the shards' first packets: a merge of the
/// shards' ascending lists must number exactly as sorting every connection by first packet does.
@Suite struct CaptureNumbersTests {
    /// The numbering as a sort of every (first packet, shard, local number) gives it.
    static func sorted(_ byShard: [[Int]]) -> [[Int]] {
        var order: [(first: Int, shard: Int, local: Int)] = []
        for (shard, list) in byShard.enumerated() {
            for (local, first) in list.enumerated() { order.append((first, shard, local)) }
        }
        order.sort { ($0.first, $0.shard, $0.local) < ($1.first, $1.shard, $1.local) }
        var global = byShard.map { [Int](repeating: -1, count: $0.count) }
        for (number, entry) in order.enumerated() { global[entry.shard][entry.local] = number }
        return global
    }

    @Test func handWrittenShards() {
        // Packets 0…9 dealt to three shards; shard 2 opened nothing.
        #expect(captureNumbers([[0, 3, 4, 9], [1, 2, 7], []]) == [[0, 3, 4, 6], [1, 2, 5], []])
        #expect(captureNumbers([]) == [])
        #expect(captureNumbers([[5]]) == [[0]])
    }

    @Test(arguments: 0..<50)
    func randomShardsNumberAsTheSortDoes(seed: Int) {
        var generator = SplitMix(state: UInt64(seed))
        let shards = 1 + Int(generator.next() % 5)
        var byShard = Array(repeating: [Int](), count: shards)
        var packet = 0
        for _ in 0..<Int(generator.next() % 300) {
            packet += 1 + Int(generator.next() % 4)
            byShard[Int(generator.next() % UInt64(shards))].append(packet)
        }
        #expect(captureNumbers(byShard) == Self.sorted(byShard))
    }

    /// Lists that do not ascend (a connection left unrecorded reads as first packet 0) are sorted: ties go in
    /// shard and local order.
    @Test func listsThatDoNotAscendAreSorted() {
        let byShard = [[3, 0, 8], [1, 0], [2]]
        #expect(captureNumbers(byShard) == Self.sorted(byShard))
        #expect(captureNumbers(byShard) == [[4, 0, 5], [2, 1], [3]])
    }
}
