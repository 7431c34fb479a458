import Synchronization
import TrafficCapture
import TrafficHTTP

/// Every kept record (`--messages`) in capture, connection and exchange order, requests before their
/// responses. Large lists live in sorted runs in a temporary file and are merged as they are read, so
/// reading them holds one buffered record per run; read them as often as needed.
public struct MessageList: Sequence, ExpressibleByArrayLiteral, Sendable {
    public typealias Element = (capture: Int, record: HTTPMessageRecord)

    enum Storage: Sendable {
        case memory([Element])
        case runs([MessageRun])
    }

    let storage: Storage
    public let count: Int
    /// Set when reading the temporary file back failed (a short read or a damaged record: an I/O error on
    /// our own file): the listing that was being read stopped early.
    public var readFailure: String? { status.failure.withLock { $0 } }
    let status = ReadStatus()

    /// Shared by the iterators of one list (the listing may be read on another thread than the caller's).
    final class ReadStatus: Sendable {
        let failure = Mutex<String?>(nil)

        func fail(_ reason: String) {
            failure.withLock { if $0 == nil { $0 = reason } }
        }
    }

    init(storage: Storage, count: Int) {
        self.storage = storage
        self.count = count
    }

    public init(arrayLiteral elements: Element...) {
        self.init(storage: .memory(elements), count: elements.count)
    }

    /// The listing order: capture, connection, exchange index, request before response (TLS client to
    /// server first), then time (interim responses before the final one). Sorting and merging compare these
    /// keys, not whole records.
    struct SortKey: Comparable, Sendable {
        var capture: Int
        var connection: Int
        var index: Int
        var side: Int
        var time: CaptureTime

        init(_ element: Element) {
            capture = element.capture
            connection = element.record.connection
            index = element.record.index
            side = ReportBuilder.order(element.record)
            time = element.record.time
        }

        static func < (a: SortKey, b: SortKey) -> Bool {
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
        /// Indexes of readers with a record, as a binary min-heap by (record, reader): equal records come
        /// from the earlier run first, as a stable sort of all of them would order them.
        private var heap: [Int] = []

        init(elements: [Element]) { self.elements = elements }

        init(runs: [MessageRun], status: ReadStatus) {
            readers = runs.map { RunReader($0, status: status) }
            for i in readers.indices where readers[i].head != nil { push(i) }
        }

        public mutating func next() -> Element? {
            if readers.isEmpty {
                guard position < elements.count else { return nil }
                defer { position += 1 }
                return elements[position]
            }
            guard let top = heap.first else { return nil }
            let element = readers[top].head!
            readers[top].advance()
            if readers[top].head != nil {
                siftDown(0)
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
                if !heap.isEmpty { siftDown(0) }
            }
            return element
        }

        private func before(_ a: Int, _ b: Int) -> Bool {
            let x = readers[a].key, y = readers[b].key
            if x < y { return true }
            if y < x { return false }
            return a < b
        }

        private mutating func push(_ reader: Int) {
            heap.append(reader)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard before(heap[i], heap[parent]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
        }

        private mutating func siftDown(_ start: Int) {
            var i = start
            while true {
                let left = 2 * i + 1, right = left + 1
                var smallest = i
                if left < heap.count, before(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, before(heap[right], heap[smallest]) { smallest = right }
                if smallest == i { return }
                heap.swapAt(i, smallest)
                i = smallest
            }
        }
    }
}

/// Reads one run in order, a buffer of the spool file at a time.
struct RunReader {
    private let run: MessageRun
    private let status: MessageList.ReadStatus
    private var memoryPosition = 0
    private var offset: Int64 = 0
    private var buffer: [UInt8] = []
    private var start = 0
    private var end = 0
    private(set) var head: MessageList.Element? {
        didSet { if let head { key = MessageList.SortKey(head) } }
    }
    /// `head`'s sort key.
    private(set) var key = MessageList.SortKey((0, HTTPMessageRecord(
        connection: 0, index: 0, kind: .request, time: .zero, client: "", server: "", host: "", path: "")))

    private static let bufferSize = 64 << 10

    init(_ run: MessageRun, status: MessageList.ReadStatus) {
        self.run = run
        self.status = status
        if case .spilled(_, let range, _) = run { offset = range.lowerBound }
        advance()
    }

    mutating func advance() {
        switch run {
        case .memory(let entries):
            head = memoryPosition < entries.count ? entries[memoryPosition] : nil
            memoryPosition += 1
        case .spilled(let spool, let range, let renumber):
            // A damaged or short read ends the run (the spool is our own file: an I/O error), reported
            // through `status`; the normal end of the run is no failure.
            guard let entry = nextSpilled(spool, range) else {
                head = nil
                if lastError != nil || offset < range.upperBound || start < end {
                    status.fail("cannot read back the temporary file in \(spool.directory): \(lastError ?? "the file ended early")")
                }
                return
            }
            head = renumber.map { MessageRun.renumber(entry, capture: $0.capture, $0.table) } ?? entry
        }
    }

    /// Why the last read of the spool came back short.
    private var lastError: String?

    private mutating func nextSpilled(_ spool: RecordSpool, _ range: Range<Int64>) -> MessageList.Element? {
        guard fill(4, spool, range) else { return nil }
        guard let length = buffer.withUnsafeBytes({ SpooledRecord.length(UnsafeRawBufferPointer(rebasing: $0[start..<end])) })
        else {
            lastError = lastError ?? "a damaged record"
            return nil
        }
        guard fill(length, spool, range) else { return nil }
        defer { start += length }
        let entry = buffer.withUnsafeBytes { SpooledRecord.decode(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)])) }
        if entry == nil { lastError = lastError ?? "a damaged record" }
        return entry
    }

    /// Makes sure `count` unread bytes are in the buffer, reading more of the run; false at its end.
    private mutating func fill(_ count: Int, _ spool: RecordSpool, _ range: Range<Int64>) -> Bool {
        if end - start >= count { return true }
        let left = range.upperBound - offset
        guard Int64(end - start) + left >= Int64(count) else { return false }
        // Keep the unread bytes at the front, then read as much as fits (a record longer than the buffer
        // grows it).
        let unread = Array(buffer[start..<end])
        let size = max(Self.bufferSize, count)
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: size) }
        buffer.replaceSubrange(0..<unread.count, with: unread)
        let want = Int(min(Int64(buffer.count - unread.count), left))
        let read = buffer.withUnsafeMutableBytes { spool.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[unread.count..<(unread.count + want)]), at: offset) }
        if read < want { lastError = spool.lastReadError ?? "the file ended early" }
        offset += Int64(read)
        start = 0
        end = unread.count + read
        return end - start >= count
    }
}
