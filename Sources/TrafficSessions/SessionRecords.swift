import TrafficReassembly

/// The records of one session on their way to the report, with the connection overhead they carry: what every
/// message-making stage (HTTP/1 today, HTTP/2 and decrypted HTTPS next) shares, so that attribution is written
/// once, by stream position, whatever the protocol.
///
/// Records go to the sink as soon as they are taken. What they can still gain is known only later: with
/// `--overhead`, the connection's pure ACKs and teardown frames come after the messages they belong to, so the
/// overhead of every record is attributed when the reassembler lets go of the connection and added to the groups
/// then (a few words per record are kept, not the record); after a protocol switch, the tunnel's bytes when the
/// streams end. Records that are listed (`--messages`) must be final when they are counted: those are held whole.
///
/// Rules (README, "Connection overhead"): handshake frames go to the first exchange and teardown frames to the
/// last, each direction to its side; data segment headers to the messages whose bytes they carried (the records'
/// `segmentHeaderBytes`); pure ACKs to the message whose bytes they acknowledge and retransmissions to the message
/// they repeat (`OverheadLedger`); bytes after a protocol switch to the exchange that switched.
package final class SessionRecords {
    private let sink: any RecordSink
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
    /// Per direction: bytes after a protocol switch, and segment headers in no record; known when the streams end.
    private var tunnelBytes = PerDirection()
    private var leftoverHeaders = PerDirection()
    /// HTTP/2 control bytes (`--overhead`): per exchange index and sending direction; nil index for the
    /// connection's own (stream 0, the preface), which go to the first exchange like the TCP handshake.
    private var controlCharges: [OverheadLedger.Entry: (bytes: Int, framing: Int)] = [:]
    private var connectionControlBytes = PerDirection()
    private var connectionControlFraming = PerDirection()
    /// Records taken so far.
    package private(set) var count = 0
    /// Per direction: a decrypted connection's TLS handshake, change_cipher_spec and alert records, which go
    /// with the TCP handshake to the first exchange (`--overhead handshake`). Set before `connectionEnded`.
    package var tlsHandshakeBytes = PerDirection()

    package init(sink: any RecordSink, capture: Int, overhead: OverheadOptions) {
        self.sink = sink
        self.capture = capture
        self.overhead = overhead
        // Only ACK and retransmission attribution (`--overhead packets`) reads the spans of the messages.
        if overhead.contains(.packets) { ledger = OverheadLedger() }
    }

    private var holding: Bool { !overhead.isEmpty || switched }
    /// Held records are counted only when final: listed records, and tunnels without `--overhead` (whose
    /// bytes are known at the streams' end, soon). Otherwise a record is counted when taken, its overhead later.
    private var holdsWholeRecords: Bool { sink.keepsRecords || overhead.isEmpty }

    /// What attributing overhead needs of a record, and what it found: the record is counted already (its
    /// group held by `pin`), or waits in `held`.
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
            switches = SessionRecords.switches(record)
        }

        var pin: Int? { storedPin >= 0 ? storedPin : nil }
    }

    private static func switches(_ record: MessageRecord) -> Bool {
        !record.flags.isEmpty && record.flags.contains(where: \.switchesProtocol)
    }

    /// A record as the analyzer made it, in stream order, before any joining: its stream span, for the ledger.
    package func emitted(_ record: MessageRecord) { ledger?.emitted(record) }

    /// Control bytes (HTTP/2 frames that carry no message) sent by `direction`, about exchange `index` or, when
    /// nil, the connection; attributed with the rest of the overhead.
    /// `framing`: the TLS record overhead that came with them, which goes to the same record's
    /// `tlsOverheadBytes` (decrypted connections only).
    package func chargeControl(_ bytes: Int, framing: Int = 0, index: Int?, direction: Direction) {
        guard !overhead.isEmpty, bytes | framing != 0 else { return }
        if let index {
            let entry = OverheadLedger.Entry(index: index, direction: direction)
            var charge = controlCharges[entry] ?? (0, 0)
            charge.bytes &+= bytes
            charge.framing &+= framing
            controlCharges[entry] = charge
        } else {
            connectionControlBytes[direction.rawValue] &+= bytes
            connectionControlFraming[direction.rawValue] &+= framing
        }
    }

    /// A pure ACK or a retransmission of the connection.
    package func note(_ event: TCPPacketEvent) {
        if overhead.contains(.packets) { ledger?.note(event) }
    }

    /// A joined batch is held as a whole when one of its records switches protocols, so that the tunnel's
    /// bytes find the request of the switch (see `attributeTunnels`).
    package func take(_ batch: [MessageRecord]) {
        if batch.contains(where: Self.switches) { switched = true }
        for record in batch { take(record) }
    }

    package func take(_ record: MessageRecord) {
        count += 1
        if Self.switches(record) { switched = true }
        guard holding else {
            sink.add(record, capture: capture)
            return
        }
        // Room for several exchanges at once: growing from one record a keep-alive connection reallocated
        // the list four or five times (`--overhead` on the API bench: 1.2 % of the run).
        if attributions.isEmpty { attributions.reserveCapacity(8) }
        if holdsWholeRecords {
            held.append(record)
            attributions.append(Attribution(record, pin: nil))
        } else {
            attributions.append(Attribution(record, pin: sink.addPinned(record, capture: capture)))
        }
    }

    /// Both streams have ended: `tunnelBytes` after a switch and `leftoverHeaders` (segment headers of stretches
    /// in no record), per direction. Without `--overhead` the records are final now.
    package func streamsEnded(tunnelBytes: PerDirection, leftoverHeaders: PerDirection) {
        self.tunnelBytes = tunnelBytes
        self.leftoverHeaders = leftoverHeaders
        if overhead.isEmpty {
            attributeTunnels()
            release()
        }
    }

    /// The reassembler lets go of the connection: attributes its overhead and counts what waited. Returns the
    /// overhead bytes that found no record.
    package func connectionEnded(_ summary: TCPConnectionSummary) -> Int {
        guard !overhead.isEmpty else { return 0 }
        attributeTunnels()
        let lost = attribute(summary)
        release()
        return lost
    }

    /// Distributes the connection's overhead over its records; returns the bytes that found none.
    private func attribute(_ summary: TCPConnectionSummary) -> Int {
        guard !attributions.isEmpty else { return 0 }
        var lost = 0
        // One pass, no arrays: this runs for every connection.
        var first = Int.max, last = Int.min
        for attribution in attributions {
            first = min(first, attribution.index)
            last = max(last, attribution.index)
        }
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
        func chargeControl(_ index: Int, _ direction: Direction, _ charge: (bytes: Int, framing: Int)) {
            guard charge.bytes | charge.framing != 0 else { return }
            if let target = slot(index, direction) {
                credit(target) {
                    $0.h2ControlBytes &+= charge.bytes
                    $0.tlsOverheadBytes &+= charge.framing
                }
            } else {
                lost &+= charge.bytes &+ charge.framing
            }
        }
        // (HTTP/1 connections have none: no list is made of them.)
        for (entry, charge) in controlCharges { chargeControl(entry.index, entry.direction, charge) }
        for direction in Direction.allCases {
            let d = direction.rawValue
            chargeControl(first, direction, (bytes: connectionControlBytes[d], framing: connectionControlFraming[d]))
        }
        controlCharges = [:]
        connectionControlBytes = PerDirection()
        connectionControlFraming = PerDirection()
        for direction in Direction.allCases {
            let stats = summary[direction]
            if overhead.contains(.handshake) {
                let tls = tlsHandshakeBytes[direction.rawValue]
                if let target = slot(first, direction) {
                    credit(target) {
                        $0.handshakeBytes += stats.handshakeBytes
                        $0.tlsHandshakeBytes += tls
                    }
                } else {
                    lost += stats.handshakeBytes + tls
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
        guard switched, let response = attributions.lastIndex(where: \.switches) else { return }
        let index = attributions[response].index
        credit(response) { $0.tunnelBytes += tunnelBytes[1] }
        if let request = attributions.lastIndex(where: { $0.kind == .request && $0.index == index }) {
            credit(request) { $0.tunnelBytes += tunnelBytes[0] }
        } else {
            credit(response) { $0.tunnelBytes += tunnelBytes[0] }
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
                sink.addOverhead(overheads.isEmpty ? RecordOverhead() : overheads[i], pin: pin, kind: attribution.kind)
            }
        } else {
            assert(held.count == attributions.count, "a held record per attribution")
            for (i, var record) in held.enumerated() {
                if !overheads.isEmpty { overheads[i].apply(to: &record) }
                sink.add(record, capture: capture)
            }
        }
        held = []
        attributions = []
        overheads = []
    }
}
