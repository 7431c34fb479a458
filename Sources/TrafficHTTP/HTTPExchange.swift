/// A request waiting for its response: what the response needs from it (framing, identity) and the
/// request's own record, held until it is known whether a response came (then `paired` is final).
final class HTTPExchange {
    let index: Int
    let method: String?
    let host: String
    let path: String
    let query: String?
    let isHTTP09: Bool
    /// The request asked to switch protocols (an `Upgrade` field, or CONNECT).
    let wantsSwitch: Bool
    /// A response (interim or final) started for this request.
    var paired = false
    /// No response can be matched any more (pairing was abandoned): emit the request as soon as it completes.
    var unpairable = false
    /// The response said whether the protocol switches (a final or 101 response arrived).
    var switchDecided = false
    /// The finished request record, held while `paired` is not known yet.
    var heldRecord: HTTPMessageRecord?

    init(index: Int, method: String?, host: String, path: String, query: String?, isHTTP09: Bool, wantsSwitch: Bool) {
        self.index = index
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.isHTTP09 = isHTTP09
        self.wantsSwitch = wantsSwitch
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

    mutating func append(_ entry: Entry) { entries.append(entry) }

    mutating func removeFirst() {
        guard head < entries.count else { return }
        head += 1
        // Amortised O(1): drop consumed entries once they are the larger part.
        if head >= 32, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// Removes and returns every entry, oldest first.
    mutating func drain() -> [Entry] {
        let rest = Array(entries[head...])
        entries.removeAll()
        head = 0
        return rest
    }
}
