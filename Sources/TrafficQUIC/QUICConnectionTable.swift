import TrafficCapture
import TrafficReassembly
import TrafficTLS
import TrafficWire

/// Finds the QUIC connection of each UDP datagram: by its path (the address/port pair), else by its Destination
/// Connection ID (RFC 9000 §5.2: a new path of a known connection, after NAT rebinding or migration), else a new
/// connection when it is a client's Initial whose protection verifies (RFC 9001 §5.2), on any port.
public final class QUICConnectionTable {
    private struct PathKey: Hashable {
        let a: Endpoint
        let b: Endpoint
        init(_ x: Endpoint, _ y: Endpoint) {
            if x < y { (a, b) = (x, y) } else { (a, b) = (y, x) }
        }

        /// One word into the hasher instead of eight fields: the path lookup is done for every datagram.
        func hash(into hasher: inout Hasher) {
            var h = a.address.low &* 0x9E37_79B9_7F4A_7C15 ^ a.address.high
            h = (h ^ UInt64(a.port) << 48 ^ UInt64(b.port) << 32) &* 0xBF58_476D_1CE4_E5B9
            h ^= b.address.low &* 0x94D0_49BB_1331_11EB ^ b.address.high
            hasher.combine(h)
        }
    }
    private struct PathEntry {
        let connection: QUICConnection
        /// The client's endpoint on this path.
        let client: Endpoint
    }

    private var paths: [PathKey: PathEntry] = [:]
    /// Connection IDs to their connection, and whether the server chose them (they are the client's destinations).
    private var ids: [QUICConnectionID: (connection: QUICConnection, byServer: Bool)] = [:]
    /// Lengths of the registered IDs: a short header does not tell its DCID's length (RFC 9000 §17.3).
    private var idLengths: Set<Int> = []
    private var open: [ObjectIdentifier: QUICConnection] = [:]
    private var pathsOf: [ObjectIdentifier: [PathKey]] = [:]
    private var nextID = 0
    /// Connections that sent CONNECTION_CLOSE, oldest first: they end once their draining period passed.
    private var closing: [QUICConnection] = []
    private var closingStart = 0
    private var nextExpiry: Int64 = .min

    public let limits: QUICLimits
    let keyLog: TLSKeyLog?
    let makeConsumer: (QUICConnection) -> QUICStreamConsumer?
    let ended: (QUICConnection) -> Void
    /// Datagrams taken as QUIC whose connection was never confirmed (a long header of an unknown version that
    /// no Version Negotiation answered): not QUIC after all.
    public private(set) var unconfirmedDatagrams = 0
    public private(set) var unconfirmedFrameBytes = 0
    public private(set) var connectionCount = 0

    public init(
        keyLog: TLSKeyLog?, limits: QUICLimits = QUICLimits(),
        makeConsumer: @escaping (QUICConnection) -> QUICStreamConsumer? = { _ in nil },
        ended: @escaping (QUICConnection) -> Void
    ) {
        self.keyLog = keyLog
        self.limits = limits
        self.makeConsumer = makeConsumer
        self.ended = ended
    }

    /// Whether the datagram belongs to a QUIC connection (then it was counted there).
    public func process(_ datagram: UDPDatagram, time: CaptureTime, packetIndex: Int) -> Bool {
        // Idle connections are looked for once per second of capture time, not per datagram.
        if time.nanoseconds >= nextExpiry {
            nextExpiry = time.nanoseconds &+ 1_000_000_000
            expire(before: time)
        }
        let bytes = datagram.payload
        guard datagram.payloadLength > 0, !bytes.isEmpty else { return false }
        let key = PathKey(datagram.source, datagram.destination)
        if let entry = paths[key] {
            let direction: Direction = datagram.source == entry.client ? .clientToServer : .serverToClient
            // A client may reuse its socket for the next connection (a resumption with 0-RTT): a client Initial
            // to an ID the server never chose, outside a Retry or Version Negotiation, that authenticates on its
            // own, starts a new connection on the path.
            if direction == .clientToServer, isNewInitial(bytes, end: datagram.payloadLength, on: entry.connection),
                let connection = start(datagram, time: time, packetIndex: packetIndex)
            {
                end(entry.connection)
                paths[key] = PathEntry(connection: connection, client: datagram.source)
                pathsOf[ObjectIdentifier(connection)] = [key]
                return take(datagram, connection: connection, direction: .clientToServer, time: time)
            }
            return take(datagram, connection: entry.connection, direction: direction, time: time)
        }
        // A new path of a known connection: its DCID is one of the connection's IDs.
        if let (connection, byServer) = lookUp(bytes, end: datagram.payloadLength) {
            let client = byServer ? datagram.source : datagram.destination
            paths[key] = PathEntry(connection: connection, client: client)
            pathsOf[ObjectIdentifier(connection), default: []].append(key)
            connection.paths += 1
            return take(datagram, connection: connection, direction: byServer ? .clientToServer : .serverToClient, time: time)
        }
        guard let connection = start(datagram, time: time, packetIndex: packetIndex) else { return false }
        paths[key] = PathEntry(connection: connection, client: datagram.source)
        pathsOf[ObjectIdentifier(connection)] = [key]
        return take(datagram, connection: connection, direction: .clientToServer, time: time)
    }

    private func take(_ datagram: UDPDatagram, connection: QUICConnection, direction: Direction, time: CaptureTime) -> Bool {
        let wasClosed = connection.closedAt != nil
        defer {
            if !wasClosed, connection.closedAt != nil { closing.append(connection) }
            endClosed(before: time)
        }
        connection.process(datagram, direction: direction, time: time, table: self)
        return true
    }

    /// A long-header client Initial whose DCID is none of the connection's server-chosen IDs, once the connection
    /// read its ClientHello and is not starting over after a Retry or Version Negotiation.
    private func isNewInitial(_ bytes: UnsafeRawBufferPointer, end: Int, on connection: QUICConnection) -> Bool {
        guard end >= 1200, bytes.count >= 6, bytes[0] & 0xc0 == 0xc0, connection.sawClientHello,
            !connection.restartInitials
        else { return false }
        let version = QUICVersion(rawValue: UInt32(bytes[1]) << 24 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 8 | UInt32(bytes[4]))
        guard version.isKnown, version.longPacketType(bytes[0] >> 4) == .initial else { return false }
        let length = Int(bytes[5])
        guard length >= 8, length <= QUICConnectionID.maxLength, bytes.count >= 6 + length,
            let dcid = QUICConnectionID(UnsafeRawBufferPointer(rebasing: bytes[6..<(6 + length)]))
        else { return false }
        return !connection.serverCIDs.contains(dcid)
    }

    private func lookUp(_ bytes: UnsafeRawBufferPointer, end: Int) -> (QUICConnection, Bool)? {
        guard let first = bytes.first else { return nil }
        if first & 0x80 != 0 {
            guard bytes.count >= 6 else { return nil }
            let length = Int(bytes[5])
            guard length > 0, length <= QUICConnectionID.maxLength, bytes.count >= 6 + length,
                let id = QUICConnectionID(UnsafeRawBufferPointer(rebasing: bytes[6..<(6 + length)])),
                let found = ids[id]
            else { return nil }
            return (found.connection, found.byServer)
        }
        for length in idLengths where bytes.count >= 1 + length {
            if let id = QUICConnectionID(UnsafeRawBufferPointer(rebasing: bytes[1..<(1 + length)])), let found = ids[id] {
                return (found.connection, found.byServer)
            }
        }
        return nil
    }

    /// A client's first Initial (RFC 9000 §14.1: in a datagram of at least 1200 bytes, §7.2: a DCID of at least
    /// 8 bytes) that authenticates with the keys derived from that DCID; or, for a version we cannot read, a
    /// provisional connection that a Version Negotiation must confirm.
    private func start(_ datagram: UDPDatagram, time: CaptureTime, packetIndex: Int) -> QUICConnection? {
        let bytes = datagram.payload
        guard datagram.payloadLength >= 1200,
            let header = QUICPacketHeader.read(
                bytes, at: 0, end: datagram.payloadLength, version: .v1, shortDCIDLength: nil),
            header.isLong, header.dcid.count >= 8
        else { return nil }
        let confirmed: Bool
        var clientKeys: QUICPacketKeys?
        var plaintext: (payload: [UInt8], packetNumber: UInt64)?
        if header.version.isKnown {
            guard header.type == .initial, !header.truncated,
                let keys = QUICPacketKeys.clientInitial(
                    dcid: UnsafeRawBufferPointer(rebasing: bytes[header.dcid]), version: header.version),
                let opened = Self.opens(header, bytes: bytes, keys: keys)
            else { return nil }
            confirmed = true
            clientKeys = keys
            plaintext = opened
        } else {
            guard header.type == .initial, header.version != .negotiation,
                // RFC 9000 §15: versions 0x?a?a?a?a are reserved to exercise negotiation.
                header.version.rawValue & 0x0f0f_0f0f == 0x0a0a_0a0a || bytes.count >= 1200
            else { return nil }
            confirmed = false
        }
        if open.count >= limits.maxConnections, let oldest = open.values.min(by: { $0.lastTime < $1.lastTime }) {
            end(oldest)
        }
        let connection = QUICConnection(
            id: nextID, client: datagram.source, server: datagram.destination, time: time, packetIndex: packetIndex,
            version: header.version, confirmed: confirmed, keyLog: keyLog, limits: limits, makeConsumer: makeConsumer)
        nextID += 1
        open[ObjectIdentifier(connection)] = connection
        connection.firstDCIDLength = header.dcid.count
        if let clientKeys {
            let raw = UnsafeRawBufferPointer(rebasing: bytes[header.dcid])
            connection.startInitialEpoch(dcid: QUICConnectionID(raw), version: header.version, client: clientKeys, raw: raw)
            // The first packet was opened to find the connection: it is not opened twice.
            connection.openedFirstPacket = plaintext
        }
        if let dcid = QUICConnectionID(UnsafeRawBufferPointer(rebasing: bytes[header.dcid])) {
            register(dcid, for: connection, chosenByServer: true)
        }
        return connection
    }

    /// The client Initial's payload when its protection verifies with `keys`.
    private static func opens(_ header: QUICPacketHeader, bytes: UnsafeRawBufferPointer, keys: QUICPacketKeys)
        -> (payload: [UInt8], packetNumber: UInt64)?
    {
        guard let (headerBytes, _, pn, pnLength) = keys.unprotect(header, bytes: bytes) else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[(header.pnOffset + pnLength)..<header.end])
        return headerBytes.withUnsafeBytes { keys.open(packetNumber: pn, header: $0, payload: payload) }.map {
            (Array($0), pn)
        }
    }

    func register(_ id: QUICConnectionID, for connection: QUICConnection, chosenByServer: Bool) {
        guard id.count > 0 else { return }
        if chosenByServer { connection.serverCIDs.insert(id) } else { connection.clientCIDs.insert(id) }
        ids[id] = (connection, chosenByServer)
        idLengths.insert(id.count)
    }

    /// Ends connections whose CONNECTION_CLOSE is older than the draining period (RFC 9000 §10.2: three probe
    /// timeouts; `limits.drainNanoseconds`).
    private func endClosed(before time: CaptureTime) {
        while closingStart < closing.count, let closedAt = closing[closingStart].closedAt,
            closedAt.duration(to: time).nanoseconds > limits.drainNanoseconds
        {
            let connection = closing[closingStart]
            closingStart += 1
            if open[ObjectIdentifier(connection)] != nil { end(connection) }
        }
        if closingStart > 1024, closingStart * 2 > closing.count {
            closing.removeFirst(closingStart)
            closingStart = 0
        }
    }

    private func expire(before time: CaptureTime) {
        let limit = limits.idleTimeoutNanoseconds
        let idle = open.values.filter { $0.lastTime.duration(to: time).nanoseconds > limit }
        for connection in idle.sorted(by: { $0.id < $1.id }) { end(connection) }
    }

    private func end(_ connection: QUICConnection) {
        open[ObjectIdentifier(connection)] = nil
        for key in pathsOf.removeValue(forKey: ObjectIdentifier(connection)) ?? [] { paths[key] = nil }
        for id in connection.clientCIDs.union(connection.serverCIDs) where ids[id]?.connection === connection { ids[id] = nil }
        connection.finish()
        if connection.confirmed {
            connectionCount += 1
            ended(connection)
        } else {
            unconfirmedDatagrams += connection.stats[0].datagrams + connection.stats[1].datagrams
            unconfirmedFrameBytes += connection.stats[0].frameBytes + connection.stats[1].frameBytes
        }
    }

    /// The capture ended: every open connection ends, in the order they began.
    public func finish() {
        for connection in open.values.sorted(by: { $0.id < $1.id }) { end(connection) }
    }
}
