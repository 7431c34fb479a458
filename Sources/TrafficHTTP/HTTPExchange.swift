import TrafficCapture
import TrafficSessions
/// A request waiting for its response: what the response needs from it (framing, identity), and whether
/// its record is held (in the parser's FIFO) until it is known whether a response came (then `paired` is
/// final).
final class HTTPExchange {
    private(set) var index = 0
    /// Moved into the final response's record when it is paired (`HTTPConnectionParser.pairResponse`): read only
    /// before that.
    var method: String?
    var host = ""
    var path = ""
    var query: String?
    private(set) var isHTTP09 = false
    /// The request asked to switch protocols (an `Upgrade` field, or CONNECT).
    private(set) var wantsSwitch = false
    /// Its `Upgrade` field offers `h2c` (RFC 7540 §3.2): a 101 makes it stream 1 of an HTTP/2 connection.
    var offersH2C = false
    /// The 101 switched to HTTP/2: both records of the exchange are stream 1's.
    var upgradedToHTTP2 = false
    /// A response (interim or final) started for this request.
    var paired = false
    /// No response can be matched any more (pairing was abandoned): emit the request as soon as it completes.
    var unpairable = false
    /// The response said whether the protocol switches (a final or 101 response arrived).
    var switchDecided = false
    /// Capture time of the request's last byte, once it is complete (a response's `wait` starts there).
    var requestEnd: CaptureTime?
    /// The finished request's record is held (by the connection parser) while `paired` is not known yet.
    var isHolding = false
    /// Where the request began in the client's stream (-1 unknown): after a client-side hole, a response whose
    /// server had acknowledged no byte from here answers a request lost in the hole.
    var startOffset: Int64 = -1

    init(index: Int, method: String?, host: String, path: String, query: String?, isHTTP09: Bool, wantsSwitch: Bool) {
        reuse(index: index, method: method, host: host, path: path, query: query, isHTTP09: isHTTP09, wantsSwitch: wantsSwitch)
    }

    /// Sets every stored property as for a new exchange with these values (`init` is this on a new object): a
    /// parser reuses an exchange nothing else refers to any more, an allocation and a deallocation a request less.
    func reuse(index: Int, method: String?, host: String, path: String, query: String?, isHTTP09: Bool, wantsSwitch: Bool) {
        self.index = index
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.isHTTP09 = isHTTP09
        self.wantsSwitch = wantsSwitch
        offersH2C = false
        upgradedToHTTP2 = false
        paired = false
        unpairable = false
        switchDecided = false
        requestEnd = nil
        isHolding = false
        startOffset = -1
    }
}

/// The FIFO of requests awaiting responses (RFC 9112 §9.3.2: responses come in request order).
struct HTTPPendingQueue {
    /// A request, or the mark of a gap on the client side that may have swallowed requests.
    enum Entry {
        case exchange(HTTPExchange)
        case lostRequests
    }

    private var entries: [Entry] = []
    private var head = 0

    var count: Int { entries.count - head }
    var first: Entry? { head < entries.count ? entries[head] : nil }
    var second: Entry? { head + 1 < entries.count ? entries[head + 1] : nil }

    /// Whether `exchange` heads the queue.
    func startsWith(_ exchange: HTTPExchange) -> Bool {
        if case .exchange(let first)? = first { return first === exchange }
        return false
    }

    mutating func append(_ entry: Entry) { entries.append(entry) }

    mutating func removeFirst() {
        guard head < entries.count else { return }
        head += 1
        if head == entries.count {
            // Empty (the usual state between exchanges): start over in the same storage, which then never
            // grows past the deepest pipeline instead of reallocating as consumed entries pile up. Entry by entry
            // (nearly always one): `removeAll(keepingCapacity:)` went through a generic `replaceSubrange`, ~160
            // instructions a response.
            repeat { entries.removeLast() } while !entries.isEmpty
            head = 0
        } else if head >= 32, head * 2 >= entries.count {
            // Amortised O(1): drop consumed entries once they are the larger part.
            entries.removeFirst(head)
            head = 0
        }
    }

    /// Removes and returns every entry, oldest first.
    mutating func drain() -> [Entry] {
        // Usually nothing waits when a connection finishes: the storage is kept then, as a finished parser goes
        // back to its pool (`reuse`) and the next connection's first request would allocate it again. (A copy
        // of the whole array shares its storage, so emptying it in place would allocate new storage.)
        guard head < entries.count else { return [] }
        let rest = Array(entries[head...])
        entries.removeAll()
        head = 0
        return rest
    }
}

/// Records of complete requests whose exchange `isHolding`, oldest first, in slots that are reused: a record
/// moves in by swapping places with the request parser's record (which is restarted for the next request),
/// and is emitted where it is. An optional record per exchange cost ~250 instructions a request in generic
/// value witnesses, and removing array elements copies them.
struct HeldRequestRecords {
    private var slots: [MessageRecord] = []
    /// `slots[head..<end]` are held; the others are used records waiting to be swapped out again.
    private var head = 0
    private var end = 0
    /// Slots allocated (held or reusable).
    var slotCount: Int { slots.count }
    var isEmpty: Bool { head == end }

    /// Moves the parser's completed record in.
    mutating func hold(from parser: HTTPMessageParser) {
        if end == slots.count, head > 0 {
            // Pipelining that never drains: move the held records down so that the slots stay bounded.
            for i in 0..<(end - head) { slots.swapAt(i, head + i) }
            end -= head
            head = 0
        }
        if end < slots.count {
            swap(&slots[end], &parser.record)
            parser.recordIsFresh = false
        } else {
            slots.append(parser.takeRecord())
        }
        end += 1
    }

    /// Calls `body` with the oldest held record, which is then no longer held.
    mutating func releaseOldest(_ body: (inout MessageRecord) -> Void) {
        guard head < end else { return }
        body(&slots[head])
        head += 1
        if head == end {
            head = 0
            end = 0
        }
    }
}

extension HTTPPendingQueue {
    /// Entries whose storage a pooled parser keeps (a deeper pipeline's is freed).
    static let keptCapacity = 32

    /// Empty again, for a connection parser going back to its pool (`HTTPConnectionParser.retire`).
    mutating func retire() {
        entries.removeAll(keepingCapacity: entries.capacity <= Self.keptCapacity)
        head = 0
    }
}

extension HeldRequestRecords {
    /// Slots kept by a pooled connection parser (`HTTPConnectionParser.retire`): a pipelining connection's
    /// deeper queue is not kept for the next connection.
    static let keptSlots = 4

    /// Holds nothing again, and the kept slots nothing of the connection: restarted (no kept head or body,
    /// no long strings left in an idle pooled parser), with any time and host, which the request parser's
    /// restart replaces when a slot's record is swapped in. Reusing slots is cheaper than destroying their
    /// records and making new ones.
    mutating func retire(host: String) {
        if slots.count > Self.keptSlots { slots.removeLast(slots.count - Self.keptSlots) }
        for i in slots.indices { slots[i].restart(time: .zero, host: host, decrypted: false) }
        head = 0
        end = 0
    }

    /// The kept slots' records take the next connection's identity, which a swapped-in record keeps.
    mutating func reuse(connection: Int, client: String, server: String) {
        precondition(head == 0 && end == 0, "reuse of held records that were not retired")
        for i in slots.indices {
            slots[i].connection = connection
            slots[i].client = client
            slots[i].server = server
        }
    }
}
