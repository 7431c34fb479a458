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

    /// Six batches per worker (~0.5 MiB each): a batch of 512 small packets is ~0.25 ms of the worker's
    /// work, and with four the threads stalled each other whenever one of them spent a few milliseconds
    /// on something else (writing groups out, sweeping connections). Eight were no faster than six, and
    /// took `--overhead all` on the 8 GiB API bench past 64 MiB.
    /// Called on the worker's thread after each batch with the batch's `position` (record streams only).
    private let batchDone: ((Int) -> Void)?

    init(reassembler: TCPReassembler, batchDone: ((Int) -> Void)? = nil) {
        self.reassembler = reassembler
        self.batchDone = batchDone
        for _ in 0..<6 { freeBatches.push(SegmentBatch()) }
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
