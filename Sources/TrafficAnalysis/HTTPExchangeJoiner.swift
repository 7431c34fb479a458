import TrafficHTTP
import TrafficSessions

/// Completes the two records of an exchange with what only the other one knows: a response gets
/// its request's method, a request gets its final response's status, so that grouping by method
/// or status keeps an exchange's request and response bytes together.
///
/// A request waits for its final response; responses wait only while their request is unknown (the
/// HTTP stage may emit a request after its response, when the server answered before the request
/// ended). Interim responses of a known request pass straight through, so a flood of `100 Continue`
/// costs nothing, and at most `maxHeldResponses` wait per exchange.
struct HTTPExchangeJoiner {
    private struct Entry {
        var request: MessageRecord?
        var responses: [MessageRecord] = []
    }

    static let maxHeldResponses = 64
    private var held: [Int: Entry] = [:]

    mutating func add(_ record: MessageRecord, release: (MessageRecord) -> Void) {
        guard record.paired else {
            release(record)
            return
        }
        let index = record.index
        if record.kind == .request {
            var entry = held.removeValue(forKey: index) ?? Entry()
            var request = record
            if let final = entry.responses.last(where: { !Self.isInterim($0) }) {
                if request.status == nil { request.status = final.status }
                release(request)
                for var response in entry.responses {
                    if response.method == nil { response.method = request.method }
                    release(response)
                }
                return
            }
            for var response in entry.responses {
                if response.method == nil { response.method = request.method }
                release(response)
            }
            entry.responses = []
            entry.request = request
            held[index] = entry
            return
        }
        var response = record
        if let request = held[index]?.request {
            if response.method == nil { response.method = request.method }
            if Self.isInterim(response) {
                release(response)
                return
            }
            var finished = request
            if finished.status == nil { finished.status = response.status }
            held[index] = nil
            release(finished)
            release(response)
            return
        }
        // The request is not known yet: wait for it, within bounds.
        if held[index, default: Entry()].responses.count >= Self.maxHeldResponses {
            release(response)
        } else {
            held[index, default: Entry()].responses.append(response)
        }
    }

    /// Whether nothing was ever held: `flush` has nothing to do, and the joiner no storage to free. (Most
    /// connections, and every one of a report that does not join exchanges.)
    var isUnused: Bool { held.capacity == 0 }

    /// The connection ended: everything still held goes out as it is, in exchange order.
    mutating func flush(release: (MessageRecord) -> Void) {
        for index in held.keys.sorted() {
            let entry = held[index]!
            if var request = entry.request {
                if request.status == nil { request.status = entry.responses.last?.status }
                release(request)
            }
            for var response in entry.responses {
                if response.method == nil { response.method = entry.request?.method }
                release(response)
            }
        }
        held = [:]
    }

    static func isInterim(_ record: MessageRecord) -> Bool {
        guard let status = record.status else { return false }
        return status >= 100 && status < 200 && status != 101
    }
}
