/// A FIFO between two threads; `pop` blocks until an item arrives or the queue is closed and empty.
final class BlockingQueue<Element>: @unchecked Sendable {
    private var items: [Element] = []
    private var head = 0
    private var closed = false
    private let condition = ThreadCondition()

    func push(_ item: Element) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count {
            if closed { return nil }
            condition.wait()
        }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }
}
