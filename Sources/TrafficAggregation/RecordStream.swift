import TrafficSessions

/// Takes every counted record as soon as it is final (`--format ndjson`), from several threads at once, in an
/// order that may vary between runs. A record is encoded on the thread that made it, before its connection number
/// is final (a sharded run numbers connections across shards only later): the encoding is split into the line's
/// head up to the connection number, which depends only on the capture, and its tail after it.
public protocol RecordStream: AnyObject, Sendable {
    /// Appends the tail of `record`'s line: everything after its connection number, line end included.
    func encodeTail(of record: MessageRecord, to bytes: inout [UInt8])
    /// Writes whole lines: each record's head, final connection number and tail.
    func write(_ lines: StreamedLines)
}

/// Records encoded for a `RecordStream`, waiting for their connection numbers or for the output.
public struct StreamedLines: Sendable {
    public private(set) var captures: [Int] = []
    public private(set) var connections: [Int] = []
    /// Where each record's tail ends in `tails` (it starts where the one before ends).
    public private(set) var ends: [Int] = []
    public private(set) var tails: [UInt8] = []

    public init() {}

    public var count: Int { captures.count }
    public var isEmpty: Bool { captures.isEmpty }

    public func tail(_ i: Int) -> Range<Int> { (i == 0 ? 0 : ends[i - 1])..<ends[i] }

    /// Encodes `record` through `stream` as the next line.
    package mutating func append(_ record: MessageRecord, capture: Int, stream: any RecordStream) {
        stream.encodeTail(of: record, to: &tails)
        captures.append(capture)
        connections.append(record.connection)
        ends.append(tails.count)
    }

    /// A line whose tail is already encoded (`source`'s line `i`), with its final connection number.
    public mutating func append(_ source: StreamedLines, line i: Int, connection: Int) {
        source.tails.withUnsafeBufferPointer { tails.append(contentsOf: $0[source.tail(i)]) }
        captures.append(source.captures[i])
        connections.append(connection)
        ends.append(tails.count)
    }

    public mutating func removeAll() {
        captures.removeAll(keepingCapacity: true)
        connections.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        tails.removeAll(keepingCapacity: true)
    }
}
