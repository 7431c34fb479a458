import TrafficHTTP

/// The records `--messages` keeps, in fixed-size chunks: a growing array would double its capacity (and
/// briefly hold the old and the new storage) at every step; here the slack is at most one chunk.
struct RecordStore {
    typealias Entry = (capture: Int, record: HTTPMessageRecord)
    private static let chunkSize = 4096

    private var chunks: [[Entry]] = []
    private(set) var count = 0

    mutating func append(_ entry: Entry) {
        if count % Self.chunkSize == 0 {
            chunks.append([])
            chunks[chunks.count - 1].reserveCapacity(Self.chunkSize)
        }
        chunks[chunks.count - 1].append(entry)
        count += 1
    }

    /// Calls `body` with every entry in the order they came and leaves the store empty; each chunk is
    /// freed as soon as it has been passed on.
    mutating func drain(_ body: (Entry) -> Void) {
        for c in chunks.indices {
            for entry in chunks[c] { body(entry) }
            chunks[c] = []
        }
        chunks = []
        count = 0
    }
}
