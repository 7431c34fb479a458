import Synchronization
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
    /// Where the reassembler's ended connections are noted (`ConnectionEndNotices`); they go back with each batch.
    let notices: ConnectionEndNotices
    /// Batches done so far: the reading thread compares it with the batches it handed over (`ShardedSegmentSink`'s
    /// placement of new connections by how far behind each worker is).
    let completed = Atomic<Int>(0)
    /// Segments processed so far (the n of `ConnectionEndNotices.position`).
    private var processed = 0

    /// Six batches per worker (~0.5 MiB each): a batch of 512 small packets is ~0.25 ms of the worker's
    /// work, and with four the threads stalled each other whenever one of them spent a few milliseconds
    /// on something else (writing groups out, sweeping connections). Eight were no faster than six, and
    /// took `--overhead all` on the 8 GiB API bench past 64 MiB.
    /// Called on the worker's thread after each batch with the batch's `position` (record streams only).
    private let batchDone: ((Int) -> Void)?

    init(reassembler: TCPReassembler, notices: ConnectionEndNotices, batchDone: ((Int) -> Void)? = nil) {
        self.reassembler = reassembler
        self.notices = notices
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
            var processed = processed
            for entry in batch.entries {
                processed += 1
                notices.position = 2 &* processed
                let segment = TCPSegment(
                    source: entry.source, destination: entry.destination, sequenceNumber: entry.sequenceNumber,
                    acknowledgmentNumber: entry.acknowledgmentNumber, flags: entry.flags,
                    payloadLength: entry.payloadLength,
                    payload: UnsafeRawBufferPointer(
                        rebasing: bytes[entry.payloadStart..<(entry.payloadStart + entry.payloadCount)]),
                    frameBytes: entry.frameBytes, frameCount: entry.frameCount, encapsulation: entry.encapsulation)
                reassembler.process(segment, time: entry.time, packetIndex: entry.packetIndex)
            }
            self.processed = processed
            notices.position = 2 &* processed &+ 1
            if batch.latest > .zero { reassembler.advance(to: batch.latest) }
            batchDone?(batch.position)
            batch.reset()
            if !notices.ended.isEmpty { swap(&batch.ended, &notices.ended) }
            completed.add(1, ordering: .releasing)
            freeBatches.push(batch)
        }
        reassembler.finish()
    }

    func join() {
        thread?.join()
        thread = nil
    }
}
