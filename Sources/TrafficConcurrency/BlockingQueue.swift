/// A FIFO between two threads; `pop` blocks until an item arrives or the queue is closed and empty. With a
/// `capacity`, `push` blocks while that many items wait (the reader sets the pace, memory stays bounded).
package final class BlockingQueue<Element>: @unchecked Sendable {
    /// `items[head...]` wait; the slots before `head` are emptied as they are popped. A queue whose reader
    /// never quite catches up (the report's group prefetch: JSON made slower than the merge reads) never runs
    /// empty, and kept every batch it ever carried until the end: 23 MiB of 96 000 groups on the 1 GiB API bench.
    private var items: [Element?] = []
    private var head = 0
    private var closed = false
    /// Set by the reader when it stops reading: pushes are refused from then on.
    private var cancelled = false
    private let capacity: Int
    private let condition = ThreadCondition()

    package init(capacity: Int = .max) { self.capacity = max(1, capacity) }

    /// False when the reader has cancelled (the item is dropped).
    @discardableResult
    package func push(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count - head >= capacity, !cancelled { condition.wait() }
        if cancelled { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    package func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The reader stops: waiting and later pushes return false.
    package func cancel() {
        condition.lock()
        cancelled = true
        items.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }

    package func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count {
            if closed { return nil }
            condition.wait()
        }
        let item = items[head].take()
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            // Amortised O(1): the emptied slots go once they are the larger part.
            items.removeFirst(head)
            head = 0
        }
        // A writer may be waiting for room.
        if capacity != .max { condition.broadcast() }
        return item!
    }
}
