import TrafficConcurrency
import TrafficCapture

import TrafficSessions

/// Every kept record (`--messages`) in capture, connection and exchange order, requests before their
/// responses. Large lists live in sorted runs in a temporary file and are merged as they are read, so
/// reading them holds one buffered record per run; read them as often as needed.
public struct MessageList: Sequence, ExpressibleByArrayLiteral, Sendable {
    public typealias Element = (capture: Int, record: MessageRecord)

    package enum Storage: Sendable {
        case memory([Element])
        case runs([MessageRun])
    }

    package let storage: Storage
    public let count: Int
    /// Set when reading the temporary file back failed (a short read or a damaged record: an I/O error on
    /// our own file): the listing that was being read stopped early.
    public var readFailure: String? { status.failure.withLock { $0 } }
    package let status = ReadStatus()

    package typealias ReadStatus = SpoolReadStatus

    package init(storage: Storage, count: Int) {
        self.storage = storage
        self.count = count
    }

    public init(arrayLiteral elements: Element...) {
        self.init(storage: .memory(elements), count: elements.count)
    }

    /// The listing order: capture, connection, exchange index, request before response (TLS client to
    /// server first), then time (interim responses before the final one). Sorting and merging compare these
    /// keys, not whole records.
    package struct SortKey: Comparable, Sendable {
        package var capture: Int
        package var connection: Int
        package var index: Int
        package var side: Int
        package var time: CaptureTime

        package init(_ element: Element) {
            capture = element.capture
            connection = element.record.connection
            index = element.record.index
            side = element.record.sideOrder
            time = element.record.time
        }

        package static func < (a: SortKey, b: SortKey) -> Bool {
            (a.capture, a.connection, a.index, a.side, a.time) < (b.capture, b.connection, b.index, b.side, b.time)
        }
    }

    public func makeIterator() -> Iterator {
        switch storage {
        case .memory(let elements): Iterator(elements: elements)
        case .runs(let runs): Iterator(runs: runs, status: status)
        }
    }

    public struct Iterator: IteratorProtocol {
        private var elements: [Element] = []
        private var position = 0
        private var readers: [RunReader] = []
        private var heap = KeyedMergeHeap<SortKey>([]) { _, _ in 0 }

        package init(elements: [Element]) { self.elements = elements }

        package init(runs: [MessageRun], status: ReadStatus) {
            readers = runs.map { RunReader($0, status: status) }
            heap = KeyedMergeHeap(readers.map { $0.head == nil ? nil : $0.key }) { x, y in x < y ? -1 : y < x ? 1 : 0 }
        }

        public mutating func next() -> Element? {
            if readers.isEmpty {
                guard position < elements.count else { return nil }
                defer { position += 1 }
                return elements[position]
            }
            guard let top = heap.top else { return nil }
            let element = readers[top].head!
            readers[top].advance()
            heap.topAdvanced(to: readers[top].head == nil ? nil : readers[top].key)
            return element
        }
    }
}

/// Reads one run in order, a buffer of the spool file at a time.
package struct RunReader {
    private let run: MessageRun
    private let status: MessageList.ReadStatus
    private var memoryPosition = 0
    private var cursor: SpoolCursor?
    package private(set) var head: MessageList.Element? {
        didSet { if let head { key = MessageList.SortKey(head) } }
    }
    /// `head`'s sort key.
    package private(set) var key = MessageList.SortKey((0, MessageRecord(
        connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")))

    package init(_ run: MessageRun, status: MessageList.ReadStatus) {
        self.run = run
        self.status = status
        if case .spilled(let spool, let range, _) = run { cursor = SpoolCursor(spool, range) }
        advance()
    }

    package mutating func advance() {
        switch run {
        case .memory(let entries):
            head = memoryPosition < entries.count ? entries[memoryPosition] : nil
            memoryPosition += 1
        case .spilled(_, _, let renumber):
            // A damaged or short read ends the run (the spool is our own file: an I/O error), reported
            // through `status`; the normal end of the run is no failure.
            guard let entry = cursor?.next(SpooledRecord.decode) else {
                head = nil
                if let failure = cursor?.failure { status.fail(failure) }
                return
            }
            head = renumber.map { MessageRun.renumber(entry, capture: $0.capture, $0.table) } ?? entry
        }
    }
}
