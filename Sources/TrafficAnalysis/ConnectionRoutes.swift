import TrafficReassembly
import TrafficWire

/// A connection's two endpoints in a canonical order: the reassembler's own flow key, so that a route and a
/// connection are the same flow by construction (both directions one key).
typealias RouteKey = TCPReassembler.FlowKey

extension TCPReassembler.FlowKey {
    @inline(__always)
    init(_ a: Endpoint, _ b: Endpoint) { self = Self.make(a, b).key }
}

/// A connection's end as its shard's reassembler let go of it, and where that shard was then in the segments
/// routed to it (`ConnectionRoutes.Slot.last`'s scale).
struct EndedRoute {
    var client: Endpoint
    var server: Endpoint
    var position: Int
}

/// What a shard's reassembler let go of, written on the shard's thread. `position` is set before each segment
/// the shard processes (2 n for its n-th segment) and after its last one of a batch (2 n + 1), so that an ended
/// connection says how far the shard had got: a flow none of whose routed segments is beyond that is gone from
/// the shard.
final class ConnectionEndNotices: @unchecked Sendable {
    var position = 0
    var ended: [EndedRoute] = []

    func connectionEnded(_ info: TCPConnectionInfo) {
        ended.append(EndedRoute(client: info.client, server: info.server, position: position))
    }
}

/// The shard each open connection was placed on, for the reading thread (`ShardedSegmentSink`): an
/// open-addressing table (linear probing, deletion by backward shift) keyed by the connection's endpoints. An entry
/// lives from the connection's first segment until its shard says it let go of the connection and no segment routed
/// to it since is still unprocessed; so every segment that one reassembler would give the same connection goes to
/// the same shard, wherever the first went.
/// Memory: one 64-byte slot per open connection, at most half the slots used.
final class ConnectionRoutes {
    /// One cache line, aligned to it: the probe of a packet's route reads one line. (With the hash stored beside
    /// the key a slot was 72 bytes and every probe read two lines, each a likely miss: the reading thread's most
    /// expensive load, issue 25.) The hash is worked out again where an entry moves, from the key.
    struct Slot {
        var key: RouteKey
        /// The shard (−1: an empty slot).
        var shard: Int32
        /// 2 n where the flow's last segment was the n-th routed to its shard (`ConnectionEndNotices.position`).
        var last: Int
    }

    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    /// 64 − log2(slots): the home slot is the product's top bits.
    private var shift: UInt64
    private(set) var count = 0
    /// Entries per shard: an upper bound of the connections its reassembler holds (an entry goes only after its
    /// connection ended there), which placement keeps under the shard's cap.
    private let open: UnsafeMutablePointer<Int>
    /// Tests only: a hash that makes keys collide on purpose (long clusters).
    private let testHash: ((RouteKey) -> UInt64)?

    init(shards: Int, testHash: ((RouteKey) -> UInt64)? = nil) {
        precondition(MemoryLayout<Slot>.stride == 64, "a slot is one cache line")
        self.testHash = testHash
        mask = 63
        shift = 58
        slots = Self.allocate(64)
        open = .allocate(capacity: shards)
        open.initialize(repeating: 0, count: shards)
    }

    deinit {
        UnsafeMutableRawPointer(slots).deallocate()
        open.deallocate()
    }

    /// A route's hash: the same for both directions, as the key is. Worked out where it is needed (not stored: the
    /// slot stays one line).
    @inline(__always)
    func hash(_ key: RouteKey) -> UInt64 { testHash?(key) ?? key.mixed }

    /// The entries on `shard`.
    @inline(__always)
    func openCount(_ shard: Int) -> Int { open[shard] }

    private static func allocate(_ count: Int) -> UnsafeMutablePointer<Slot> {
        let slots = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Slot>.stride, alignment: 64)
            .bindMemory(to: Slot.self, capacity: count)
        let empty = Slot(key: RouteKey(Endpoint(address: IPAddress(ipv4: 0), port: 0),
                                       Endpoint(address: IPAddress(ipv4: 0), port: 0)), shard: -1, last: 0)
        slots.initialize(repeating: empty, count: count)
        return slots
    }

    @inline(__always)
    private func home(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slot holding `key`, or the empty slot where it would go.
    @inline(__always)
    func find(_ key: RouteKey) -> (slot: Int, found: Bool) {
        var slot = home(hash(key))
        while true {
            let stored = slots + slot
            if stored.pointee.shard < 0 { return (slot, false) }
            if stored.pointee.key == key { return (slot, true) }
            slot = (slot + 1) & mask
        }
    }

    @inline(__always)
    func shard(at slot: Int) -> Int { Int(slots[slot].shard) }

    @inline(__always)
    func setLast(_ last: Int, at slot: Int) { slots[slot].last = last }

    /// Adds `key` at `slot`, the empty slot `find` gave for it; returns its slot then (−1 when the table grew and
    /// every entry moved).
    @discardableResult
    func insert(_ key: RouteKey, shard: Int, last: Int, at slot: Int) -> Int {
        slots[slot] = Slot(key: key, shard: Int32(truncatingIfNeeded: shard), last: last)
        count += 1
        open[shard] += 1
        if count * 2 > mask + 1 {
            grow()
            return -1
        }
        return slot
    }

    /// The shard's connection on these endpoints ended when the shard was at `position`: the entry goes when it
    /// is that shard's and no segment of the flow was routed to it after that point. Otherwise a later segment is
    /// on its way to the shard (and opens a connection there, as it would in one reassembler): the entry stays
    /// until that connection ends too.
    func ended(_ route: EndedRoute, shard: Int) {
        ended(RouteKey(route.client, route.server), shard: shard, position: route.position)
    }

    /// `ended(_:shard:)` with the key worked out.
    func ended(_ key: RouteKey, shard: Int, position: Int) {
        let (slot, found) = find(key)
        guard found, slots[slot].shard == shard, slots[slot].last < position else { return }
        remove(at: slot)
    }

    /// Every entry's key, shard and `last`, in no particular order (tests).
    var entries: [(key: RouteKey, shard: Int, last: Int)] {
        (0...mask).compactMap { i in slots[i].shard < 0 ? nil : (slots[i].key, Int(slots[i].shard), slots[i].last) }
    }

    private func remove(at slot: Int) {
        count -= 1
        open[Int(slots[slot].shard)] -= 1
        var hole = slot
        // Backward shift (Knuth 6.4, algorithm R): later entries of the cluster move into the hole unless their
        // home slot lies cyclically between the hole and where they are.
        var next = slot
        while true {
            next = (next + 1) & mask
            if slots[next].shard < 0 { break }
            let want = home(hash(slots[next].key))
            let stays = hole <= next ? (hole < want && want <= next) : (hole < want || want <= next)
            if stays { continue }
            slots[hole] = slots[next]
            hole = next
        }
        slots[hole].shard = -1
    }

    private func grow() {
        let old = slots, oldCount = mask + 1
        slots = Self.allocate(oldCount * 2)
        mask = oldCount * 2 - 1
        shift -= 1
        for i in 0..<oldCount where old[i].shard >= 0 {
            let (slot, _) = find(old[i].key)
            slots[slot] = old[i]
        }
        UnsafeMutableRawPointer(old).deallocate()
    }
}
