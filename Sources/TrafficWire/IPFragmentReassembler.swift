import TrafficCapture

/// Reassembles fragmented IPv4 and IPv6 datagrams that carry TCP, within a bounded buffer.
///
/// Fragments are copied (they must outlive their packet); a datagram is handed out once all its
/// bytes are present. Memory is capped in total and per datagram; datagrams that never complete
/// are dropped after `timeout` of capture time. Overlaps keep the first copy, like TCP.
public struct IPFragmentReassembler {
    public struct Key: Hashable {
        public var source: IPAddress
        public var destination: IPAddress
        public var identification: UInt32
    }

    public enum Outcome {
        case held
        case dropped
        /// The datagram's IP payload (TCP header onwards), valid until the next `add`.
        case complete(UnsafeRawBufferPointer, frameBytes: Int, frameCount: Int)
    }

    private struct Datagram {
        var bytes: [UInt8] = []
        /// Byte ranges present, kept sorted and merged.
        var present: [Range<Int>] = []
        var totalLength: Int?
        var frameBytes = 0
        var frameCount = 0
        var firstSeen: CaptureTime
        /// What this datagram counts against `maxTotalBytes`: its bytes plus `entryCost`.
        var charged = 0
    }

    /// What holding a datagram costs besides its bytes (table entry, range list). Charged against
    /// `maxTotalBytes` so that a flood of empty fragments cannot fill the table for free.
    static let entryCost = 256

    /// 64 KiB is the largest IPv4 datagram; IPv6 jumbograms are not fragmented in practice.
    public var maxDatagramBytes = 65_535
    /// A fragment flood cannot hold more than this in total.
    public var maxTotalBytes = 4 << 20
    public var timeout = CaptureTime(nanoseconds: 30_000_000_000)

    private var datagrams: [Key: Datagram] = [:]
    private var totalBytes = 0
    private var completed: [UInt8] = []
    private var lastSweep = CaptureTime.zero

    public init() {}

    public mutating func add(
        key: Key, time: CaptureTime, offset: Int, claimedLength: Int, bytes: UnsafeRawBufferPointer, last: Bool,
        frameBytes: Int
    ) -> Outcome {
        sweep(now: time)
        let end = offset + claimedLength
        guard end <= maxDatagramBytes, claimedLength >= 0 else {
            discard(key)
            return .dropped
        }
        var datagram: Datagram
        if let existing = datagrams[key] {
            datagram = existing
        } else {
            guard totalBytes + Self.entryCost <= maxTotalBytes else { return .dropped }
            datagram = Datagram(firstSeen: time, charged: Self.entryCost)
            totalBytes += Self.entryCost
        }
        datagram.frameBytes += frameBytes
        datagram.frameCount += 1
        if last {
            if let total = datagram.totalLength, total != end {
                discard(key, datagram)
                return .dropped
            }
            datagram.totalLength = end
        }
        // Bytes the snaplen cut off never arrive: the datagram cannot complete.
        let capturedEnd = offset + bytes.count
        if datagram.bytes.count < capturedEnd {
            let growth = capturedEnd - datagram.bytes.count
            guard totalBytes + growth <= maxTotalBytes else {
                discard(key, datagram)
                return .dropped
            }
            totalBytes += growth
            datagram.charged += growth
            datagram.bytes.append(contentsOf: repeatElement(0, count: growth))
        }
        // First copy wins: write only the parts not yet present.
        var cursor = offset
        for range in datagram.present + [capturedEnd..<capturedEnd] where cursor < capturedEnd {
            let stop = min(range.lowerBound, capturedEnd)
            if stop > cursor {
                for i in cursor..<stop { datagram.bytes[i] = bytes[i - offset] }
            }
            cursor = max(cursor, range.upperBound)
        }
        datagram.present.append(offset..<capturedEnd)
        datagram.present = Self.merge(datagram.present)
        if let total = datagram.totalLength, datagram.present.count == 1, datagram.present[0] == 0..<total {
            completed = datagram.bytes
            discard(key, datagram)
            return completed.withUnsafeBytes { buffer in
                // `completed` is owned by self and stays unchanged until the next `add`.
                .complete(UnsafeRawBufferPointer(start: buffer.baseAddress, count: total),
                          frameBytes: datagram.frameBytes, frameCount: datagram.frameCount)
            }
        }
        datagrams[key] = datagram
        return .held
    }

    /// Datagrams still incomplete; at the end of a capture their frames are counted as dropped fragments.
    public var pendingCount: Int { datagrams.count }

    private static func merge(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var merged: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    private mutating func discard(_ key: Key, _ known: Datagram? = nil) {
        if let datagram = known ?? datagrams[key] { totalBytes -= datagram.charged }
        datagrams[key] = nil
    }

    private mutating func sweep(now: CaptureTime) {
        guard !datagrams.isEmpty, now.nanoseconds - lastSweep.nanoseconds > timeout.nanoseconds else { return }
        lastSweep = now
        for (key, datagram) in datagrams where now.nanoseconds - datagram.firstSeen.nanoseconds > timeout.nanoseconds {
            discard(key, datagram)
        }
    }
}
