/// Frames one direction's byte stream into TLS records and counts their bytes, incrementally.
///
/// Holds at most one record header (5 bytes) between calls; fragments are counted, never stored.
/// Invariant: between calls, every stream byte not in `pendingCount` is counted in exactly one
/// bucket of `stats`.
struct TLSRecordReader {
    /// Where the next byte falls.
    enum State: Equatable {
        /// At a record boundary: the next bytes are a header (some may already be pending).
        case header
        /// Inside a record's fragment.
        case fragment(TLSContentType, remaining: Int)
        /// Out of sync: scanning byte by byte for a plausible header, counting the rest as non-TLS.
        case searching
    }

    /// What `advance` found besides counting.
    enum Event: Equatable {
        case none
        /// A record header was read (`resynchronized` when it ended a search).
        case record(TLSRecordHeader, resynchronized: Bool)
        /// Bytes `range` of the input are handshake-record fragment bytes.
        case handshakeFragment(Range<Int>)
        /// An implausible header where one was due: the stream is now searched for the next record.
        case lostSync
    }

    private(set) var state = State.header
    private(set) var stats = TLSDirectionStats()
    /// Up to five bytes of a header split across calls (or the search window), oldest in the high bits.
    private var pendingBits: UInt64 = 0
    private(set) var pendingCount = 0
    /// The version of the last record, which a resynchronising header must repeat.
    private var lastRecordVersion: UInt16?

    /// Counts `count` bytes as received; call once per `receive` before `advance`.
    mutating func noteReceived(_ count: Int) { stats.streamBytes += count }

    /// Consumes bytes from `start` (which is before `bytes.count`) up to the end of the next unit
    /// (header, fragment part, or search), and returns how many it consumed and what it found.
    /// Consumes zero bytes only together with `.lostSync`.
    mutating func advance(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (consumed: Int, event: Event) {
        let available = bytes.count - start
        switch state {
        case .fragment(let type, let remaining):
            let n = min(remaining, available)
            count(type, n)
            state = n == remaining ? .header : .fragment(type, remaining: remaining - n)
            return (n, type == .handshake ? .handshakeFragment(start..<start + n) : .none)
        case .header:
            // Fast path: a whole header in this buffer.
            if pendingCount == 0, available >= TLSRecordHeader.byteCount {
                guard let header = TLSRecordHeader(bytes, at: start) else {
                    state = .searching
                    return (0, .lostSync)
                }
                begin(header)
                return (TLSRecordHeader.byteCount, .record(header, resynchronized: false))
            }
            push(bytes[start])
            guard pendingCount == TLSRecordHeader.byteCount else { return (1, .none) }
            if let header = pendingHeader() {
                pendingCount = 0
                begin(header)
                return (1, .record(header, resynchronized: false))
            }
            dropOldestPending()
            state = .searching
            return (1, .lostSync)
        case .searching:
            return search(bytes, from: start)
        }
    }

    /// Accounts for a gap of `byteCount` bytes. Returns the content type of the record the gap fell
    /// inside, or nil when framing is lost (the reader then searches for the next plausible header).
    mutating func skip(_ byteCount: Int) -> TLSContentType? {
        stats.streamBytes += byteCount
        stats.missingBytes += byteCount
        if case .fragment(let type, let remaining) = state, byteCount <= remaining {
            state = byteCount == remaining ? .header : .fragment(type, remaining: remaining - byteCount)
            return type
        }
        // A gap at a record boundary or past the record's end: where the next record starts is
        // unknown, so the bytes after it must prove themselves with a plausible header.
        stats.nonTLSBytes += pendingCount
        pendingCount = 0
        state = .searching
        return nil
    }

    /// Ends the stream: pending header bytes become non-TLS. Returns true if it ended inside a record.
    mutating func finish() -> Bool {
        let truncated: Bool
        switch state {
        case .fragment: truncated = true
        case .header: truncated = pendingCount > 0
        case .searching: truncated = false
        }
        stats.nonTLSBytes += pendingCount
        pendingCount = 0
        return truncated
    }

    /// The `.searching` state: tries every offset for a plausible header. Windows that start in
    /// earlier calls go through the pending bytes; the rest is scanned in place.
    private mutating func search(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (consumed: Int, event: Event) {
        var offset = start
        while pendingCount > 0, offset < bytes.count {
            push(bytes[offset])
            offset += 1
            if pendingCount == TLSRecordHeader.byteCount {
                if let header = pendingHeader(), isPlausibleResynchronization(header) {
                    pendingCount = 0
                    begin(header)
                    return (offset - start, .record(header, resynchronized: true))
                }
                dropOldestPending()
            }
            if pendingCount <= offset - start {
                // The window holds only this call's bytes now: rescan them in place.
                offset -= pendingCount
                pendingCount = 0
            }
        }
        let scanStart = offset
        while offset + TLSRecordHeader.byteCount <= bytes.count {
            // Cheap filter first: a content type 20–23 followed by major version 3.
            if bytes[offset] &- 20 < 4, bytes[offset + 1] == 3, let header = TLSRecordHeader(bytes, at: offset),
                isPlausibleResynchronization(header)
            {
                stats.nonTLSBytes += offset - scanStart
                begin(header)
                return (offset + TLSRecordHeader.byteCount - start, .record(header, resynchronized: true))
            }
            offset += 1
        }
        stats.nonTLSBytes += offset - scanStart
        while offset < bytes.count {
            push(bytes[offset])
            offset += 1
        }
        return (offset - start, .none)
    }

    private mutating func begin(_ header: TLSRecordHeader) {
        stats.records += 1
        stats.recordHeaderBytes += TLSRecordHeader.byteCount
        count(header.contentType, TLSRecordHeader.byteCount)
        lastRecordVersion = header.version
        state = header.length == 0 ? .header : .fragment(header.contentType, remaining: header.length)
    }

    private mutating func count(_ type: TLSContentType, _ n: Int) {
        switch type {
        case .handshake, .changeCipherSpec: stats.handshakeBytes += n
        case .applicationData: stats.applicationBytes += n
        case .alert: stats.alertBytes += n
        case .heartbeat: stats.otherRecordBytes += n
        }
    }

    private mutating func push(_ byte: UInt8) {
        pendingBits = (pendingBits << 8 | UInt64(byte)) & 0xff_ffff_ffff
        pendingCount += 1
    }

    /// The oldest pending byte leaves the window as non-TLS.
    private mutating func dropOldestPending() {
        pendingCount -= 1
        stats.nonTLSBytes += 1
    }

    private func pendingHeader() -> TLSRecordHeader? {
        let b = pendingBits
        return TLSRecordHeader(
            UInt8(truncatingIfNeeded: b >> 32), UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 16),
            UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b))
    }

    /// Stricter than `TLSRecordHeader`'s check, because a search tries every offset of arbitrary
    /// (often encrypted) bytes: the version must repeat the last record's (or be a real record
    /// version, 0x0300–0x0303, before any record), heartbeats are not accepted, and the record
    /// must not be empty. That leaves about one false match per 10^7 random offsets.
    private func isPlausibleResynchronization(_ header: TLSRecordHeader) -> Bool {
        guard header.contentType != .heartbeat, header.length > 0 else { return false }
        if let lastRecordVersion { return header.version == lastRecordVersion }
        return header.version <= 0x0303
    }
}
