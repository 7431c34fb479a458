import TrafficCapture
import TrafficWire

/// Reassembles TCP connections from decoded segments and pushes in-order bytes to stream handlers.
///
/// Feed segments in capture order with `process`, then call `finish` once at the end of the
/// capture. Connections are numbered like tshark's `tcp.stream`. Each connection's handler gets
/// its bytes exactly once in sequence order, with holes as explicit skips, and `finish` exactly
/// once. `connectionEnded` receives every connection's final accounting exactly once, when the
/// reassembler lets go of it (after a linger for late packets, on eviction, or at the end).
public final class TCPReassembler {
    public typealias HandlerFactory = (TCPConnectionInfo) -> (any TCPStreamHandler)?

    /// A connection's table key: its two endpoints in a canonical order (also the key by which a parallel run
    /// routes a connection's packets to the reassembler that has it).
    package struct FlowKey: FlowTableKey {
        // Each endpoint as three words (address high, address low, port with the IPv6 bit), the smaller
        // endpoint first: ordering and comparing words costs a fraction of comparing `Endpoint`s through
        // their tuples (about 60 instructions a packet for the key, 110 for the lookup).
        var low: (UInt64, UInt64, UInt64)
        var high: (UInt64, UInt64, UInt64)

        /// Where a segment's source sits in its flow's key: the lower endpoint, the higher one, or both ends are
        /// the same endpoint. With the side the client took at the connection's first segment it gives the
        /// segment's direction without comparing endpoints again.
        package enum Side { case low, high, both }

        @inline(__always)
        private init(low: (UInt64, UInt64, UInt64), high: (UInt64, UInt64, UInt64)) {
            self.low = low
            self.high = high
        }

        @inline(__always)
        package static func make(_ source: Endpoint, _ destination: Endpoint) -> (key: FlowKey, source: Side) {
            let x = Self.words(source), y = Self.words(destination)
            if x < y { return (FlowKey(low: x, high: y), .low) }
            if x == y { return (FlowKey(low: x, high: y), .both) }
            return (FlowKey(low: y, high: x), .high)
        }

        @inline(__always)
        private static func words(_ e: Endpoint) -> (UInt64, UInt64, UInt64) {
            (e.address.high, e.address.low, UInt64(e.port) | (e.address.isIPv6 ? 1 << 16 : 0))
        }

        @inline(__always)
        package static func == (a: FlowKey, b: FlowKey) -> Bool {
            // Ports first: flows between the same two hosts differ only there.
            a.low.2 == b.low.2 && a.high.2 == b.high.2 && a.low.1 == b.low.1 && a.high.1 == b.high.1
                && a.low.0 == b.low.0 && a.high.0 == b.high.0
        }

        /// Every field mixed into one word (FlowTable spreads it further).
        package var mixed: UInt64 {
            var x = low.1 &* 0x9E37_79B9_7F4A_7C15
            x ^= low.0 &* 0xC2B2_AE3D_27D4_EB4F
            x ^= high.1 &* 0x1656_67B1_9E37_79F9
            x ^= high.0 &* 0x85EB_CA77_C2B2_AE63
            return x ^ (low.2 << 16 | high.2 & 0xFFFF)
        }
    }

    public let limits: TCPReassemblyLimits
    /// `limits`' times as `sweepIfDue` compares them, worked out once instead of per packet.
    private let closedLingerNanoseconds: Int64
    private let sweepIntervalNanoseconds: Int64
    private let makeHandler: HandlerFactory
    private let connectionEnded: (TCPConnectionSummary) -> Void
    private var table = FlowTable<FlowKey, TCPConnection>()
    /// Connections whose streams finished, oldest first, to expire after `closedLinger`.
    private var closedQueue: [(key: FlowKey, id: Int, time: CaptureTime)] = []
    private var closedQueueHead = 0
    private var bufferedTotal = 0
    private var lastSweep: CaptureTime?
    /// The capture time after which `sweepIfDue` sweeps: the earlier of the closed queue's first linger end and the
    /// next idle scan (`updateSweepDue`), so that a packet pays one comparison.
    private var sweepDue = Int64.min
    /// The connection found for the last segment, and its key: about half the packets of the API bench follow one
    /// of the same connection, and skip the hash and the probe. Unretained like the table's lookup; cleared whenever
    /// a connection leaves the table (`end`, `finish`), and set only from the table.
    private var recentKey = FlowKey.make(Endpoint(address: IPAddress(ipv4: 0), port: 0),
                                         Endpoint(address: IPAddress(ipv4: 0), port: 0)).key
    private var recent: Unmanaged<TCPConnection>?
    public private(set) var connectionCount = 0
    /// Off only in tests: every segment then takes `TCPConnection`'s general path.
    package var inOrderFastPath = true
    public private(set) var anomalies = [Int](repeating: 0, count: TCPAnomaly.allCases.count)

    public init(limits: TCPReassemblyLimits = .init(), makeHandler: @escaping HandlerFactory,
                connectionEnded: @escaping (TCPConnectionSummary) -> Void) {
        self.limits = limits
        closedLingerNanoseconds = limits.closedLinger.nanoseconds
        sweepIntervalNanoseconds = limits.idleTimeout.nanoseconds / 10
        self.makeHandler = makeHandler
        self.connectionEnded = connectionEnded
    }

    public func count(of anomaly: TCPAnomaly) -> Int { anomalies[anomaly.rawValue] }

    /// Connections currently held in the table.
    public var openConnections: Int { table.count }

    /// Lets capture time advance without a packet (a shard of a parallel run sees only some packets): idle
    /// connections and lingering closed ones expire as they would in a single reassembler.
    public func advance(to time: CaptureTime) { sweepIfDue(now: time) }

    /// `packetIndex` is the packet's position in the capture, kept as the connection's `firstPacket`.
    public func process(_ segment: TCPSegment, time: CaptureTime, packetIndex: Int = 0) {
        let (key, side) = FlowKey.make(segment.source, segment.destination)
        // Almost every packet belongs to a known connection: the table's reference is used unretained.
        // Nothing in `process(_:on:)` removes table entries (sweeps come after it), so it stays alive.
        var found = recent
        if found == nil || recentKey != key {
            found = table.unretained(key)
            if found != nil {
                recentKey = key
                recent = found
            }
        }
        if let known = found, known._withUnsafeGuaranteedRef({ !Self.reusesPort(segment, of: $0) }) {
            if known._withUnsafeGuaranteedRef({ process(segment, on: $0, side: side, time: time) }) {
                lingerBegins(key: key, id: known._withUnsafeGuaranteedRef { $0.info.id }, time: time)
            }
        } else {
            processNewFlow(segment, key: key, side: side, time: time, packetIndex: packetIndex)
        }
        sweepIfDue(now: time)
    }

    // Out of line, as `lingerBegins`: the rare paths' code and stack kept out of the per-packet function.
    @inline(never)
    private func processNewFlow(_ segment: TCPSegment, key: FlowKey, side: FlowKey.Side, time: CaptureTime,
                                packetIndex: Int) {
        // A new flow, or port reuse: the closed connection on this 4-tuple ends first.
        if let existing = table[key] { end(existing, key: key, time: time, evicted: false) }
        let connection = open(segment, key: key, side: side, time: time, packetIndex: packetIndex)
        if process(segment, on: connection, side: side, time: time) {
            lingerBegins(key: key, id: connection.info.id, time: time)
        }
    }

    /// The connection's streams finished at `time`: it lingers in `closedQueue` for late packets.
    @inline(never)
    private func lingerBegins(key: FlowKey, id: Int, time: CaptureTime) {
        closedQueue.append((key, id, time))
        updateSweepDue()
    }

    /// A SYN on the 4-tuple of a connection that has closed starts a new connection.
    private static func reusesPort(_ segment: TCPSegment, of existing: TCPConnection) -> Bool {
        segment.flags.contains(.syn) && !segment.flags.contains(.ack)
            && (existing.sawFIN || existing.sawRST || existing.streamsFinished)
    }

    /// Returns whether the segment finished the connection's streams (its linger in `closedQueue` begins): the caller
    /// appends it, so that the flow key is not copied into the per-packet closure.
    @inline(__always)
    private func process(_ segment: TCPSegment, on connection: TCPConnection, side: FlowKey.Side, time: CaptureTime) -> Bool {
        let wasFinished = connection.streamsFinished
        // Both ends one endpoint: every segment counts as the client's (its source is the client's endpoint).
        let direction: Direction = side == .both || (side == .low) == connection.clientIsLow
            ? .clientToServer : .serverToClient
        connection.process(segment, direction: direction, time: time, bufferedTotal: &bufferedTotal, anomalies: &anomalies)
        return !wasFinished && connection.streamsFinished
    }

    /// Ends every connection still open: the end of the capture.
    public func finish() {
        let remaining = table.entries
        // Every entry goes: the table is emptied at once rather than by a lookup and a removal per connection
        // (`end`), and nothing reads it while the connections end.
        table = FlowTable()
        recent = nil
        for at in Self.connectionOrder(remaining) {
            let connection = remaining[at].value
            connection.finishStreams(time: connection.lastSeen, bufferedTotal: &bufferedTotal)
            connectionEnded(connection.end(evicted: false))
        }
        closedQueue = []
        closedQueueHead = 0
        updateSweepDue()
    }

    /// Positions of `entries` in connection order. Connection numbers are distinct, and those still open at
    /// the end usually span little more than their count: then each goes straight to its place (a sort of the
    /// entries moved 56-byte elements and loaded both numbers through their references per comparison).
    private static func connectionOrder(_ entries: [(key: FlowKey, value: TCPConnection)]) -> [Int] {
        guard let first = entries.first else { return [] }
        var low = first.value.info.id, high = low
        for entry in entries {
            low = min(low, entry.value.info.id)
            high = max(high, entry.value.info.id)
        }
        // `high - low` cannot overflow: numbers count connections from 0.
        guard high - low < 4 * entries.count else {
            return entries.indices.sorted { entries[$0].value.info.id < entries[$1].value.info.id }
        }
        var slots = [Int](repeating: -1, count: high - low + 1)
        for (at, entry) in entries.enumerated() { slots[entry.value.info.id - low] = at }
        return slots.filter { $0 >= 0 }
    }

    private func open(
        _ segment: TCPSegment, key: FlowKey, side: FlowKey.Side, time: CaptureTime, packetIndex: Int
    ) -> TCPConnection {
        let flags = segment.flags
        let sourceIsClient: Bool
        if flags.contains(.syn) {
            sourceIsClient = !flags.contains(.ack)
        } else if segment.source.port != segment.destination.port {
            // Without a SYN, clients are recognised by their ephemeral (higher) port.
            sourceIsClient = segment.source.port > segment.destination.port
        } else {
            sourceIsClient = true
        }
        var info = TCPConnectionInfo(
            id: connectionCount,
            client: sourceIsClient ? segment.source : segment.destination,
            server: sourceIsClient ? segment.destination : segment.source,
            start: time, firstPacket: packetIndex)
        info.encapsulation = segment.encapsulation
        connectionCount += 1
        let connection = TCPConnection(info: info, handler: makeHandler(info), limits: limits)
        connection.inOrderFastPath = inOrderFastPath
        connection.clientIsLow = (side == .low) == sourceIsClient
        table[key] = connection
        if table.count > limits.maxConnections { evictForRoom(now: time) }
        return connection
    }

    private func end(_ connection: TCPConnection, key: FlowKey, time: CaptureTime, evicted: Bool) {
        connection.finishStreams(time: max(time, connection.lastSeen), bufferedTotal: &bufferedTotal)
        recent = nil
        if table[key] === connection { table[key] = nil }
        connectionEnded(connection.end(evicted: evicted))
    }

    /// Called for every packet: one comparison here, the sweep when it says one is due.
    @inline(__always)
    private func sweepIfDue(now: CaptureTime) {
        if now.nanoseconds > sweepDue { sweep(now: now) }
    }

    /// `sweepDue` after the closed queue's head or `lastSweep` changed. A sweep is due when the head's linger has
    /// ended (`now - head > closedLinger`), when there was none yet, or a tenth of the idle timeout after the last
    /// (`now - last > interval`); the sums saturate, and capture times stay within ±2^62, so `now > sum` says the same.
    private func updateSweepDue() {
        func sum(_ a: Int64, _ b: Int64) -> Int64 {
            let (value, overflow) = a.addingReportingOverflow(b)
            return overflow ? (b < 0 ? .min : .max) : value
        }
        var due = lastSweep.map { sum($0.nanoseconds, sweepIntervalNanoseconds) } ?? .min
        if closedQueueHead < closedQueue.count {
            due = min(due, sum(closedQueue[closedQueueHead].time.nanoseconds, closedLingerNanoseconds))
        }
        sweepDue = due
    }

    private func sweep(now: CaptureTime) {
        defer { updateSweepDue() }
        // Expire closed connections as their linger ends: cheap, from the front of a FIFO.
        while closedQueueHead < closedQueue.count,
            now.nanoseconds - closedQueue[closedQueueHead].time.nanoseconds > closedLingerNanoseconds
        {
            let entry = closedQueue[closedQueueHead]
            closedQueueHead += 1
            if let connection = table[entry.key], connection.info.id == entry.id {
                end(connection, key: entry.key, time: now, evicted: false)
            }
        }
        if closedQueueHead > 1024, closedQueueHead * 2 > closedQueue.count {
            closedQueue.removeFirst(closedQueueHead)
            closedQueueHead = 0
        }
        // Idle open connections: a full scan, at most once per tenth of the idle timeout.
        guard let last = lastSweep else {
            lastSweep = now
            return
        }
        guard now.nanoseconds - last.nanoseconds > sweepIntervalNanoseconds else { return }
        lastSweep = now
        let idle = table.entries.filter { now.nanoseconds - $0.value.lastSeen.nanoseconds > limits.idleTimeout.nanoseconds }
        for (key, connection) in idle.sorted(by: { $0.value.info.id < $1.value.info.id }) {
            if !connection.streamsFinished { anomalies[TCPAnomaly.connectionTimedOut.rawValue] += 1 }
            end(connection, key: key, time: now, evicted: !connection.streamsFinished)
        }
    }

    /// The table is full: end closed connections first, then about the least recently active tenth.
    /// The tenth is found from a sample of activity times, so a round costs one pass over the table
    /// instead of a sort (a SYN flood triggers a round every few thousand packets).
    private func evictForRoom(now: CaptureTime) {
        let closed = table.entries.filter { $0.value.streamsFinished }
        for (key, connection) in closed.sorted(by: { $0.value.info.id < $1.value.info.id }) {
            end(connection, key: key, time: now, evicted: false)
        }
        guard table.count > limits.maxConnections * 9 / 10 else { return }
        var sample: [Int64] = []
        sample.reserveCapacity(1024)
        let stride = max(1, table.count / 1024)
        var index = 0
        for (_, connection) in table.entries {
            if index % stride == 0 { sample.append(connection.lastSeen.nanoseconds) }
            index += 1
        }
        sample.sort()
        let threshold = sample[min(sample.count - 1, sample.count / 10)]
        let victims = table.entries.filter { $0.value.lastSeen.nanoseconds <= threshold }
            .sorted { $0.value.info.id < $1.value.info.id }
        for (key, connection) in victims {
            anomalies[TCPAnomaly.connectionEvicted.rawValue] += 1
            end(connection, key: key, time: now, evicted: true)
        }
    }
}
