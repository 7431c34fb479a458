import TrafficHTTP

/// Completes the two records of an exchange with what only the other one knows: a response gets
/// its request's method, a request gets its final response's status, so that grouping by method
/// or status keeps an exchange's request and response bytes together.
///
/// The HTTP stage may emit a request after its response (it waits until pairing is known); records
/// are held per exchange index until both are in, so memory follows the pipelining depth.
struct HTTPExchangeJoiner {
    private var held: [Int: (request: HTTPMessageRecord?, responses: [HTTPMessageRecord])] = [:]

    mutating func add(_ record: HTTPMessageRecord, release: (HTTPMessageRecord) -> Void) {
        guard record.paired else {
            release(record)
            return
        }
        // An interim (1xx) response has its request's method from pairing and gives the request no status:
        // nothing to wait for. Holding them let a flood of `100 Continue` grow without bound, and each
        // add copied and scanned all of them (quadratic). The report sorts records, so order is kept.
        if record.kind == .response, Self.isInterim(record), record.method != nil {
            release(record)
            return
        }
        var entry = held[record.index] ?? (nil, [])
        if record.kind == .request {
            entry.request = record
        } else {
            entry.responses.append(record)
        }
        guard var request = entry.request, let final = entry.responses.last(where: { !Self.isInterim($0) }) else {
            held[record.index] = entry
            return
        }
        held[record.index] = nil
        if request.status == nil { request.status = final.status }
        release(request)
        for var response in entry.responses {
            if response.method == nil { response.method = request.method }
            release(response)
        }
    }

    /// The connection ended: everything still held goes out as it is, in exchange order.
    mutating func flush(release: (HTTPMessageRecord) -> Void) {
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

    static func isInterim(_ record: HTTPMessageRecord) -> Bool {
        guard let status = record.status else { return false }
        return status >= 100 && status < 200 && status != 101
    }
}
