import TrafficCapture
import TrafficConcurrency
import TrafficQUIC
import TrafficWire

/// QUIC on a thread of its own (`--jobs` of 2 and more): the reading thread copies each UDP datagram into a batch
/// and goes on reading while this thread finds connections, opens packets and feeds HTTP/3. One thread, not one per
/// shard: a datagram's connection is found by connection IDs that any path may carry, so the table is one.
final class QUICWorker: @unchecked Sendable {
    /// Datagrams copied out of packets: metadata in an array, payloads in one byte buffer.
    final class Batch: @unchecked Sendable {
        struct Entry {
            var source: Endpoint
            var destination: Endpoint
            var payloadLength: Int
            var payloadStart: Int
            var payloadCount: Int
            var frameBytes: Int
            var encapsulation: Encapsulation
            var time: CaptureTime
            var packetIndex: Int
        }

        static let maxEntries = 512
        static let maxBytes = 1 << 19
        var entries: [Entry] = []
        var bytes: [UInt8] = []

        init() {
            entries.reserveCapacity(Self.maxEntries)
            bytes.reserveCapacity(Self.maxBytes + 65_536)
        }

        var isFull: Bool { entries.count >= Self.maxEntries || bytes.count >= Self.maxBytes }
    }

    let table: QUICConnectionTable
    private let inbox = BlockingQueue<Batch>()
    private let free = BlockingQueue<Batch>()
    private var filling: Batch
    private var thread: WorkerThread?
    /// Datagrams the table found not to be QUIC, and their frame bytes (known only on the worker's thread).
    private(set) var rejectedDatagrams = 0
    private(set) var rejectedFrameBytes = 0

    init(table: QUICConnectionTable) {
        self.table = table
        // Four batches of at most 0.5 MiB circulate between the threads: memory stays bounded.
        for _ in 0..<3 { free.push(Batch()) }
        filling = Batch()
        let thread = WorkerThread { [self] in run() }
        thread.start()
        self.thread = thread
    }

    /// On the reading thread: the datagram is copied for the worker; whether it is QUIC is settled there.
    func take(_ datagram: UDPDatagram, time: CaptureTime, packetIndex: Int) -> Bool {
        let start = filling.bytes.count
        filling.bytes.append(contentsOf: datagram.payload)
        filling.entries.append(Batch.Entry(
            source: datagram.source, destination: datagram.destination, payloadLength: datagram.payloadLength,
            payloadStart: start, payloadCount: datagram.payload.count, frameBytes: datagram.frameBytes,
            encapsulation: datagram.encapsulation, time: time, packetIndex: packetIndex))
        if filling.isFull {
            inbox.push(filling)
            filling = free.pop() ?? Batch()
        }
        return true
    }

    private func run() {
        while let batch = inbox.pop() {
            batch.bytes.withUnsafeBytes { bytes in
                for entry in batch.entries {
                    let datagram = UDPDatagram(
                        source: entry.source, destination: entry.destination, payloadLength: entry.payloadLength,
                        payload: UnsafeRawBufferPointer(
                            rebasing: bytes[entry.payloadStart..<(entry.payloadStart + entry.payloadCount)]),
                        frameBytes: entry.frameBytes, encapsulation: entry.encapsulation)
                    if !table.process(datagram, time: entry.time, packetIndex: entry.packetIndex) {
                        rejectedDatagrams += 1
                        rejectedFrameBytes += entry.frameBytes
                    }
                }
            }
            batch.entries.removeAll(keepingCapacity: true)
            batch.bytes.removeAll(keepingCapacity: true)
            free.push(batch)
        }
    }

    /// The reading ended: the last batch goes, the worker drains its inbox and stops. The table is not finished.
    func finish() {
        inbox.push(filling)
        inbox.close()
        thread?.join()
        thread = nil
    }
}
