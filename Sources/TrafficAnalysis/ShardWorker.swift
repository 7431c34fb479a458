import TrafficCapture
import TrafficConcurrency
import TrafficReassembly
import TrafficWire

/// One worker thread with its reassembler, the batches it receives, and the empty ones it returns.
final class ShardWorker: @unchecked Sendable {
    let reassembler: TCPReassembler
    let inbox = BlockingQueue<SegmentBatch>()
    let freeBatches = BlockingQueue<SegmentBatch>()
    private var thread: WorkerThread?

    /// Four batches per worker: enough to keep both threads busy, few enough to bound memory (~0.5 MiB each).
    /// Called on the worker's thread after each batch with the batch's `position` (record streams only).
    private let batchDone: ((Int) -> Void)?

    init(reassembler: TCPReassembler, batchDone: ((Int) -> Void)? = nil) {
        self.reassembler = reassembler
        self.batchDone = batchDone
        for _ in 0..<4 { freeBatches.push(SegmentBatch()) }
    }

    func start() {
        let thread = WorkerThread { [self] in run() }
        thread.start()
        self.thread = thread
    }

    private func run() {
        while let batch = inbox.pop() {
            let bytes = batch.bytes
            for entry in batch.entries {
                let segment = TCPSegment(
                    source: entry.source, destination: entry.destination, sequenceNumber: entry.sequenceNumber,
                    acknowledgmentNumber: entry.acknowledgmentNumber, flags: entry.flags,
                    payloadLength: entry.payloadLength,
                    payload: UnsafeRawBufferPointer(
                        rebasing: bytes[entry.payloadStart..<(entry.payloadStart + entry.payloadCount)]),
                    frameBytes: entry.frameBytes, frameCount: entry.frameCount, encapsulation: entry.encapsulation)
                reassembler.process(segment, time: entry.time, packetIndex: entry.packetIndex)
            }
            if batch.latest > .zero { reassembler.advance(to: batch.latest) }
            batchDone?(batch.position)
            batch.reset()
            freeBatches.push(batch)
        }
        reassembler.finish()
    }

    func join() {
        thread?.join()
        thread = nil
    }
}
