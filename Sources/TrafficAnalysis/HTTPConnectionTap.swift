import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly
import TrafficSessions

/// Sits between the reassembler and the HTTP parser of one connection: forwards the streams, joins
/// exchanges, attributes connection overhead, and hands records and frame accounting to the report.
///
/// Records go to the report as soon as they are joined. What they can still gain is known only later:
/// with `--overhead`, the connection's pure ACKs and teardown frames come after the messages they belong
/// to, so the overhead of every record is attributed when the reassembler lets go of the connection and
/// added to the groups then (a few words per record are kept, not the record); after a protocol switch,
/// the tunnel's bytes when the streams end. Records that are listed (`--messages`) must be final when
/// they are counted: those are held whole until then.
final class HTTPConnectionTap: SessionStage {
    /// Owned by the tap (retained once here, released at `finish` or in `deinit`) and called unretained: a
    /// call through an optional `var` retains and releases the parser around it, an atomic pair per segment.
    private var parser: Unmanaged<HTTPConnectionParser>?
    private var joiner = HTTPExchangeJoiner()
    private let builder: ReportBuilder
    private let capture: Int
    private let overhead: OverheadOptions
    /// Whole records waiting to be counted (`holdsWholeRecords`), in the order of `attributions`.
    private var held: [MessageRecord] = []
    /// Every record taken while `holding` (32 bytes each: long keep-alive connections take many).
    private var attributions: [Attribution] = []
    /// The overhead found for each of `attributions`, made when the connection's overhead is attributed.
    private var overheads: [RecordOverhead] = []
    private var switched = false
    /// Only with `--overhead`: spans of the connection's messages for attributing ACKs and retransmissions.
    private var ledger: OverheadLedger?
    private var counts: [HTTPByteCounts] = []
    private var leftoverHeaders = [0, 0]
    /// Only groups by method or status and record listings show what the joiner fills in.
    private let joins: Bool

    init(info: TCPConnectionInfo, capture: Int, scratch: DecodingScratch, builder: ReportBuilder,
         overhead: OverheadOptions, limits: HTTPLimits) {
        self.builder = builder
        self.capture = capture
        self.overhead = overhead
        joins = builder.needsJoinedExchanges
        if !overhead.isEmpty { ledger = OverheadLedger() }
        // The tap owns the parser, which owns this closure: self outlives every call (no checked unowned
        // reference per record).
        let parser = HTTPConnectionParser(info: info, scratch: scratch, limits: limits) { [unowned(unsafe) self] record in
            ledger?.emitted(record)
            guard joins else {
                take(record)
                return
            }
            var batch: [MessageRecord] = []
            joiner.add(record) { batch.append($0) }
            take(batch)
        }
        self.parser = Unmanaged.passRetained(parser)
    }

    deinit { parser?.release() }

    private var holding: Bool { !overhead.isEmpty || switched }
    /// Held records are counted only when final: listed records, and tunnels without `--overhead` (whose
    /// bytes are known at finish, soon). Otherwise a record is counted when taken and its overhead later.
    private var holdsWholeRecords: Bool { builder.keepsRecords || overhead.isEmpty }
    private var recordCount = 0

    /// What attributing overhead needs of a record, and what it found: the record is counted already (its
    /// group held by `pin`, see `ReportBuilder.addPinned`; nil when a filter left it out), or waits in `held`.
    private struct Attribution {
        // Words first, then bytes: 32 bytes a record.
        let index: Int
        let segmentHeaderBytes: Int
        /// The pin, or -1.
        private let storedPin: Int
        let kind: MessageRecord.Kind
        let switches: Bool

        init(_ record: MessageRecord, pin: Int?) {
            index = record.index
            segmentHeaderBytes = record.segmentHeaderBytes
            storedPin = pin ?? -1
            kind = record.kind
            switches = HTTPConnectionTap.switches(record)
        }

        var pin: Int? { storedPin >= 0 ? storedPin : nil }
    }

    /// A joined batch is held as a whole when one of its records switches protocols, so that the tunnel's
    /// bytes find the request of the switch (see `attributeTunnels`).
    private func take(_ batch: [MessageRecord]) {
        if batch.contains(where: Self.switches) { switched = true }
        for record in batch { take(record) }
    }

    private func take(_ record: MessageRecord) {
        recordCount += 1
        if Self.switches(record) { switched = true }
        guard holding else {
            builder.add(record, capture: capture)
            return
        }
        if holdsWholeRecords {
            held.append(record)
            attributions.append(Attribution(record, pin: nil))
        } else {
            attributions.append(Attribution(record, pin: builder.addPinned(record, capture: capture)))
        }
    }

    private static func switches(_ record: MessageRecord) -> Bool {
        !record.flags.isEmpty && record.flags.contains(where: \.switchesProtocol)
    }

    func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        parser?._withUnsafeGuaranteedRef { $0.receive(bytes, direction: direction, span: span) }
    }

    func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        parser?._withUnsafeGuaranteedRef { $0.skip(byteCount, direction: direction, time: time) }
    }

    func packet(_ event: TCPPacketEvent) {
        if overhead.contains(.packets) { ledger?.note(event) }
    }

    func finish(time: CaptureTime) {
        guard let owned = self.parser else { return }
        // The parser's last use: this local reference now owns it, and frees it when finish returns
        // (a connection's entry can linger in the reassembler for late packets).
        self.parser = nil
        let parser = owned.takeRetainedValue()
        parser.finish(time: time)
        var batch: [MessageRecord] = []
        joiner.flush { batch.append($0) }
        take(batch)
        counts = [parser.counts(for: .clientToServer), parser.counts(for: .serverToClient)]
        leftoverHeaders = [parser.unattributedSegmentHeaderBytes(for: .clientToServer),
                           parser.unattributedSegmentHeaderBytes(for: .serverToClient)]
        builder.summary.nonHTTPBytes += counts[0].nonHTTPBytes + counts[1].nonHTTPBytes
        builder.summary.tunnelBytes += counts[0].tunnelBytes + counts[1].tunnelBytes
        builder.summary.missingBytes += counts[0].missingBytes + counts[1].missingBytes
        if parser.isHTTP { builder.summary.httpConnections += 1 }
        if parser.speaksHTTP2 {
            builder.summary.http2Connections += 1
        } else if !parser.isHTTP, counts[0].nonHTTPBytes + counts[1].nonHTTPBytes > 0 {
            builder.summary.otherProtocolConnections += 1
        }
        if overhead.isEmpty {
            attributeTunnels()
            release()
        }
    }

    func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        guard recordCount > 0 else {
            builder.summary.nonHTTPFrameBytes += summary.clientToServer.frameBytes + summary.serverToClient.frameBytes
            return
        }
        var unattributed = 0
        for direction in Direction.allCases {
            // Captured payload in no record or tunnel (non-HTTP stretches), and overhead the user did not choose.
            unattributed += summary[direction].unattributedFrameBytes(
                unanalysedBytes: counts[direction.rawValue].nonHTTPBytes, handshake: overhead.contains(.handshake),
                teardown: overhead.contains(.teardown), packets: overhead.contains(.packets))
        }
        if !overhead.isEmpty {
            attributeTunnels()
            unattributed += attribute(summary)
            release()
        }
        builder.summary.unattributedFrameBytes += unattributed
    }

    /// Distributes the connection's overhead over its records; returns the bytes that found none.
    private func attribute(_ summary: TCPConnectionSummary) -> Int {
        guard !attributions.isEmpty else { return 0 }
        var lost = 0
        let first = attributions.map(\.index).min()!, last = attributions.map(\.index).max()!
        /// The record on `direction`'s side of exchange `index` (the final response for responses),
        /// else the other side's record of that exchange.
        func slot(_ index: Int, _ direction: Direction) -> Int? {
            let kind: MessageRecord.Kind = direction == .clientToServer ? .request : .response
            return attributions.lastIndex { $0.index == index && $0.kind == kind }
                ?? attributions.lastIndex { $0.index == index }
        }
        if overhead.contains(.packets) {
            for i in attributions.indices {
                credit(i) { $0.packetOverheadBytes += attributions[i].segmentHeaderBytes }
            }
            for direction in Direction.allCases {
                // Headers of tunnel or trailing non-HTTP stretches: the direction's last message.
                let kind: MessageRecord.Kind = direction == .clientToServer ? .request : .response
                if let target = attributions.lastIndex(where: { $0.kind == kind }) ?? attributions.indices.last {
                    credit(target) { $0.packetOverheadBytes += leftoverHeaders[direction.rawValue] }
                }
            }
            ledger?.settle()
            for (entry, charge) in ledger?.charges ?? [:] {
                guard let target = slot(entry.index, entry.direction) else {
                    lost += charge.ack + charge.retransmitted
                    continue
                }
                credit(target) {
                    $0.packetOverheadBytes += charge.ack
                    $0.retransmittedBytes += charge.retransmitted
                }
            }
            lost += ledger?.unsettledBytes ?? 0
        }
        for direction in Direction.allCases {
            let stats = summary[direction]
            if overhead.contains(.handshake) {
                if let target = slot(first, direction) {
                    credit(target) { $0.handshakeBytes += stats.handshakeBytes }
                } else {
                    lost += stats.handshakeBytes
                }
            }
            if overhead.contains(.teardown) {
                if let target = slot(last, direction) {
                    credit(target) { $0.teardownBytes += stats.teardownBytes }
                } else {
                    lost += stats.teardownBytes
                }
            }
        }
        return lost
    }

    /// Bytes after a protocol switch belong to the exchange that switched, each direction to its side.
    private func attributeTunnels() {
        guard switched, counts.count == 2, let response = attributions.lastIndex(where: \.switches) else { return }
        let index = attributions[response].index
        credit(response) { $0.tunnelBytes += counts[1].tunnelBytes }
        if let request = attributions.lastIndex(where: { $0.kind == .request && $0.index == index }) {
            credit(request) { $0.tunnelBytes += counts[0].tunnelBytes }
        } else {
            credit(response) { $0.tunnelBytes += counts[0].tunnelBytes }
        }
        switched = false
    }

    private func credit(_ i: Int, _ update: (inout RecordOverhead) -> Void) {
        if overheads.isEmpty { overheads = Array(repeating: RecordOverhead(), count: attributions.count) }
        update(&overheads[i])
    }

    /// Counts what was attributed: held records with their overhead, or the overhead of counted ones.
    private func release() {
        if held.isEmpty {
            // Every pin is released, with or without overhead to add.
            for (i, attribution) in attributions.enumerated() {
                guard let pin = attribution.pin else { continue }
                builder.addOverhead(overheads.isEmpty ? RecordOverhead() : overheads[i], pin: pin, kind: attribution.kind)
            }
        } else {
            assert(held.count == attributions.count, "a held record per attribution")
            for (i, var record) in held.enumerated() {
                if !overheads.isEmpty { overheads[i].apply(to: &record) }
                builder.add(record, capture: capture)
            }
        }
        held = []
        attributions = []
        overheads = []
    }
}
