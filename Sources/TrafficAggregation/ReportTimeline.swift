import TrafficCapture
import TrafficSessions

/// When the bytes crossed, in bounded memory, for the HTML report's timeline: the earliest `eventLimit`
/// messages one by one (a waterfall of a small capture is all of its messages), and every message's bytes
/// in time buckets by host, the buckets widened (1 s, 2 s, 4 s, …) whenever there would be more than
/// `bucketLimit` of them.
///
/// Collected only when asked (`ReportOptions.collectTimeline`): it costs a dictionary update per record.
/// Shards collect their own and are merged; the result does not depend on how records were sharded (the
/// earliest events by a total order; buckets aligned to multiples of their width, widened only as needed).
public struct ReportTimeline: Sendable {
    /// One message of the waterfall.
    public struct Event: Sendable, Equatable {
        public var capture: Int
        public var connection: Int
        /// The record's exchange index; for an HTTP/2 server push (no client ordinal), -1 − its stream, so that
        /// it is a bar of its own rather than the response of the exchange it came with.
        public var index: Int
        public var kind: MessageRecord.Kind
        public var time: CaptureTime
        public var bytes: Int
        public var host: String
        public var path: String
        public var method: String?
        public var status: Int?

        /// Time, then capture, connection, exchange, requests before responses: a total order for records.
        static func precedes(_ a: Event, _ b: Event) -> Bool {
            if a.time != b.time { return a.time < b.time }
            if a.capture != b.capture { return a.capture < b.capture }
            if a.connection != b.connection { return a.connection < b.connection }
            if a.index != b.index { return a.index < b.index }
            return a.kind.order < b.kind.order
        }
    }

    /// Bytes of one host in one time bucket.
    public struct BucketKey: Hashable, Sendable {
        public var host: String
        /// Seconds since the epoch, a multiple of `bucketSeconds`.
        public var start: Int64
    }

    public var eventLimit: Int
    public var bucketLimit: Int
    /// The earliest messages, sorted, at most `eventLimit` once `finish()` ran.
    public private(set) var events: [Event] = []
    /// Messages seen in all; the waterfall is complete when this is at most `eventLimit`.
    public private(set) var messageCount = 0
    public private(set) var bucketSeconds: Int64 = 1
    public private(set) var bytesByHostAndTime: [BucketKey: Int] = [:]
    /// Once `eventLimit` events are kept: the latest time among them. A later record cannot be among the
    /// earliest, and records come roughly in time order, so most are turned away by this one comparison.
    private var cutoff: CaptureTime?

    /// `eventLimit`: a waterfall of a few thousand rows is still readable and fast to draw.
    /// `bucketLimit`: host × bucket cells kept before they are widened.
    public init(eventLimit: Int = 3000, bucketLimit: Int = 8192) {
        self.eventLimit = Swift.max(0, eventLimit)
        self.bucketLimit = Swift.max(16, bucketLimit)
    }

    /// Whether every message of the report is in `events`.
    public var isComplete: Bool { messageCount <= eventLimit }

    package mutating func add(_ record: MessageRecord, capture: Int) {
        messageCount += 1
        addBytes(record.transferBytes, host: record.host, at: record.time)
        if let cutoff, record.time > cutoff { return }
        let event = Event(
            capture: capture, connection: record.connection,
            index: record.flags.contains(.pushed) ? -1 &- (record.streamID ?? 0) : record.index, kind: record.kind, time: record.time,
            bytes: record.transferBytes, host: record.host, path: record.path, method: record.method, status: record.status)
        if eventLimit > 0 {
            events.append(event)
            // Sorting twice the limit and dropping half keeps this O(log n) a record, amortized.
            if events.count >= 2 * eventLimit { trimEvents() }
        }
    }

    private mutating func addBytes(_ bytes: Int, host: String, at time: CaptureTime) {
        let seconds = time.nanoseconds >= 0 ? time.nanoseconds / 1_000_000_000 : (time.nanoseconds + 1) / 1_000_000_000 - 1
        let key = BucketKey(host: host, start: seconds - Self.modulo(seconds, bucketSeconds))
        bytesByHostAndTime[key, default: 0] &+= bytes
        widenIfNeeded()
    }

    /// `value mod width` in 0..<width (so buckets of negative times align too).
    private static func modulo(_ value: Int64, _ width: Int64) -> Int64 {
        let r = value % width
        return r < 0 ? r + width : r
    }

    /// Doubles the width until the cells fit; stops at about a day per bucket, where the cells are bounded by
    /// hosts × days, and hosts are bounded by the groups the report holds anyway.
    private mutating func widenIfNeeded() {
        while bytesByHostAndTime.count > bucketLimit, bucketSeconds < 1 << 16 {
            regroup(width: bucketSeconds * 2)
        }
    }

    private mutating func regroup(width: Int64) {
        bucketSeconds = width
        var wider: [BucketKey: Int] = [:]
        for (key, bytes) in bytesByHostAndTime {
            wider[BucketKey(host: key.host, start: key.start - Self.modulo(key.start, width)), default: 0] &+= bytes
        }
        bytesByHostAndTime = wider
    }

    private mutating func trimEvents() {
        events.sort(by: Event.precedes)
        if events.count > eventLimit {
            events.removeLast(events.count - eventLimit)
            cutoff = events.last?.time
        }
    }

    /// Takes in a shard's timeline; `renumber` maps its connection numbers of `capture` to the capture's.
    package mutating func merge(_ shard: ReportTimeline, capture: Int, renumber: [Int]) {
        messageCount += shard.messageCount
        for var event in shard.events {
            if event.capture == capture, event.connection >= 0, event.connection < renumber.count {
                event.connection = renumber[event.connection]
            }
            events.append(event)
        }
        if events.count >= 2 * eventLimit { trimEvents() }
        if shard.bucketSeconds > bucketSeconds { regroup(width: shard.bucketSeconds) }
        for (key, bytes) in shard.bytesByHostAndTime {
            bytesByHostAndTime[BucketKey(host: key.host, start: key.start - Self.modulo(key.start, bucketSeconds)), default: 0] &+= bytes
        }
        widenIfNeeded()
    }

    /// Sorts the events and keeps the earliest `eventLimit`. Within a shard, connection numbers are the shard's
    /// own until `merge` maps them: they only break ties between messages of the very same nanosecond.
    package mutating func finish() { trimEvents() }
}

extension MessageRecord.Kind {
    /// Requests (and a client's TLS bytes) before responses at the same instant.
    package var order: Int { self == .response ? 1 : 0 }
}
