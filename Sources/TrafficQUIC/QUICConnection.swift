#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import TrafficCapture
import TrafficReassembly
import TrafficTLS
import TrafficWire

/// One QUIC connection from the client's first Initial on, through Version Negotiation, Retry and new paths
/// (RFC 9000 §9): what each direction carried, the server name and offered protocols from the Initials (readable
/// without keys, RFC 9001 §5.2), and with the TLS secrets of its handshake the decrypted streams.
public final class QUICConnection {
    /// Connections numbered 0, 1, 2, … in the order of their first packet (tshark's `quic.connection.number`).
    public let id: Int
    /// The first path's endpoints: records keep them when the connection moves.
    public let client: Endpoint
    public let server: Endpoint
    public let start: CaptureTime
    public let firstPacket: Int
    public internal(set) var lastTime: CaptureTime
    public internal(set) var stats = [QUICDirectionStats(), QUICDirectionStats()]
    /// The client's first version, and the server's (its first Initial, Handshake or 0-RTT packet's).
    public internal(set) var clientVersion: QUICVersion
    public internal(set) var serverVersion: QUICVersion?
    public var version: QUICVersion { serverVersion ?? clientVersion }
    /// From the first complete ClientHello.
    public internal(set) var serverName: String?
    public internal(set) var offeredALPN: [String] = []
    public internal(set) var sawClientHello = false
    public internal(set) var sawRetry = false
    public internal(set) var sawVersionNegotiation = false
    /// Datagrams came on more than one path (NAT rebinding, migration).
    public internal(set) var paths = 1
    /// A decrypted packet of 0-RTT or 1-RTT: the streams were read.
    public internal(set) var decrypted = false
    /// A TLS secret for this handshake was found.
    public internal(set) var hasSecrets = false
    /// The cipher suite the server chose (from its ServerHello, read from the Initials).
    public internal(set) var cipherSuite: TLSCipherSuite?
    /// When a decrypted CONNECTION_CLOSE was first seen (RFC 9000 §10.2): the connection ends after its draining
    /// period instead of lingering for the idle timeout.
    public internal(set) var closedAt: CaptureTime?
    /// Frames that did not parse in decrypted packets (the rest of such a packet is overhead).
    public internal(set) var malformedPackets = 0
    /// Provisional until a packet proves it QUIC (an Initial that authenticates, a Version Negotiation that
    /// echoes it): a long header of an unknown version alone does not.
    public internal(set) var confirmed: Bool

    /// Connection IDs each side chose: the client's are the server's destinations, and back.
    var clientCIDs: Set<QUICConnectionID> = []
    var serverCIDs: Set<QUICConnectionID> = []
    /// The length of each side's chosen IDs, from its long headers' SCID (zero-length IDs included): a short
    /// header's DCID has the length of the receiver's (RFC 9000 §17.3.1). Before the server's first long header,
    /// the client addresses it with its first DCID.
    var clientIDLength: Int?
    var serverIDLength: Int?
    var firstDCIDLength = 0

    let keyLog: TLSKeyLog?
    let limits: QUICLimits
    var consumer: QUICStreamConsumer?
    /// The application stage made for the decrypted streams, if any.
    public var streamConsumer: QUICStreamConsumer? { consumer }
    let makeConsumer: (QUICConnection) -> QUICStreamConsumer?

    // Packet protection.
    private var initialDCID: QUICConnectionID?
    private var initialVersion: QUICVersion?
    /// The payload of the datagram's first packet, opened when the table verified it as a client's first Initial.
    var openedFirstPacket: (payload: [UInt8], packetNumber: UInt64)?
    /// A Retry or Version Negotiation came: the client's next Initial starts a new Initial key epoch.
    private(set) var restartInitials = false
    private var initialKeys: [QUICPacketKeys?] = [nil, nil]
    private var handshakeKeys: [QUICPacketKeys?] = [nil, nil]
    private var oneRTTKeys: [QUICPacketKeys?] = [nil, nil]
    private var oneRTTPrevious: [QUICPacketKeys?] = [nil, nil]
    private var keyPhase = [false, false]
    private var zeroRTTKeys: QUICPacketKeys?
    private var zeroRTTTried = false
    /// Largest packet number per direction and space (RFC 9000 §17.1), -1 before the first.
    private var largestPN: [[Int64]] = [[-1, -1, -1], [-1, -1, -1]]
    // The Initials' CRYPTO streams: client (ClientHello) and server (ServerHello).
    private var crypto = [QUICOffsetBuffer(), QUICOffsetBuffer()]
    private var handshakeBytes: [[UInt8]] = [[], []]
    private var answeredRandom: [UInt8]?
    private var serverHelloSeen = false

    // Streams, once decrypted.
    private struct StreamKey: Hashable {
        let id: UInt64
        let direction: Int
    }
    /// Reused by `payloadDecrypted` for every packet.
    private var frameBuffer: [(QUICFrame, Range<Int>)] = []
    private var weightBuffer: [(id: UInt64, new: Int, resent: Int)] = []
    private struct StreamState {
        var buffer = QUICOffsetBuffer()
        var finalSize: UInt64?
        var ended = false
    }
    private var streams: [StreamKey: StreamState] = [:]
    private var closedStreams: Set<StreamKey> = []

    init(
        id: Int, client: Endpoint, server: Endpoint, time: CaptureTime, packetIndex: Int, version: QUICVersion,
        confirmed: Bool, keyLog: TLSKeyLog?, limits: QUICLimits, makeConsumer: @escaping (QUICConnection) -> QUICStreamConsumer?
    ) {
        self.id = id
        self.client = client
        self.server = server
        self.start = time
        self.lastTime = time
        self.firstPacket = packetIndex
        self.clientVersion = version
        self.confirmed = confirmed
        self.keyLog = keyLog
        self.limits = limits
        self.makeConsumer = makeConsumer
    }

    /// The DCID length of short headers sent in `direction`.
    func shortHeaderDCIDLength(_ direction: Direction) -> Int {
        direction == .clientToServer ? serverIDLength ?? firstDCIDLength : clientIDLength ?? 0
    }

    /// A datagram of this connection in `direction`.
    func process(_ datagram: UDPDatagram, direction: Direction, time: CaptureTime, table: QUICConnectionTable) {
        lastTime = time
        let d = direction.rawValue
        stats[d].datagrams += 1
        stats[d].udpPayloadBytes += datagram.payloadLength
        stats[d].frameBytes += datagram.frameBytes
        let bytes = datagram.payload
        var packets = 0
        let padding = QUICDatagramPackets.forEach(
            bytes, end: datagram.payloadLength, version: version, shortDCIDLength: shortHeaderDCIDLength(direction)
        ) { header, size in
            packets += 1
            process(header, bytes: bytes, size: size, direction: direction, time: time, table: table)
        }
        stats[d].packets += packets
        stats[d].paddingBytes += padding ?? 0
        // A datagram on a known path that holds no QUIC packet (damaged, or another protocol): the connection's.
        if packets == 0 { stats[d].connectionBytes += datagram.payloadLength }
    }

    private func process(
        _ header: QUICPacketHeader, bytes: UnsafeRawBufferPointer, size: Int, direction: Direction, time: CaptureTime,
        table: QUICConnectionTable
    ) {
        let d = direction.rawValue
        if header.isLong {
            let scid = QUICConnectionID(UnsafeRawBufferPointer(rebasing: bytes[header.scid]))
            switch header.type {
            case .versionNegotiation:
                if direction == .serverToClient {
                    sawVersionNegotiation = true
                    restartInitials = true
                    confirmed = true
                }
                stats[d].connectionBytes += size
                return
            case .retry:
                if direction == .serverToClient {
                    sawRetry = true
                    restartInitials = true
                    // RFC 9000 §17.2.5.2: the client's next Initials go to the Retry's SCID.
                    if let scid, scid.count > 0 { table.register(scid, for: self, chosenByServer: true) }
                }
                stats[d].connectionBytes += size
                return
            default:
                if direction == .serverToClient, serverVersion == nil, header.version.isKnown { serverVersion = header.version }
                if direction == .serverToClient { serverIDLength = header.scid.count } else { clientIDLength = header.scid.count }
                if let scid, scid.count > 0 {
                    table.register(scid, for: self, chosenByServer: direction == .serverToClient)
                }
            }
        }
        // A short header names no version: it is the one the long headers agreed on by now (the datagram was read
        // before its coalesced Initial told the server's version, e.g. after Version Negotiation).
        var header = header
        if !header.isLong { header.version = serverVersion ?? initialVersion ?? header.version }
        guard header.version.isKnown, !header.truncated, header.end <= bytes.count else {
            unreadable(size: size, direction: d)
            return
        }
        let keys: QUICPacketKeys?
        switch header.type {
        case .initial:
            // Without a key log only the ClientHello is read: later Initials, and the server's, stay sealed.
            if keyLog == nil, direction == .serverToClient || (sawClientHello && !restartInitials) {
                return unreadable(size: size, direction: d)
            }
            if direction == .clientToServer {
                let dcid = QUICConnectionID(UnsafeRawBufferPointer(rebasing: bytes[header.dcid]))
                // RFC 9001 §5.2: Initial keys come from the DCID of the client's first Initial, and again after a
                // Retry (its SCID) or Version Negotiation (a new version); the client's later Initials carry the
                // server's chosen ID and keep the keys. A new epoch's ClientHello starts again at offset 0.
                if initialDCID == nil || (restartInitials && dcid != initialDCID) || header.version != initialVersion {
                    restartInitials = false
                    let raw = UnsafeRawBufferPointer(rebasing: bytes[header.dcid])
                    guard let client = QUICPacketKeys.clientInitial(dcid: raw, version: header.version)
                    else { return unreadable(size: size, direction: d) }
                    startInitialEpoch(dcid: dcid, version: header.version, client: client, raw: raw)
                }
            }
            keys = initialKeys[d]
        case .handshake:
            keys = handshakeKeys[d]
        case .zeroRTT:
            keys = direction == .clientToServer ? zeroRTTKeys : nil
        default:
            keys = oneRTTKeys[d]
        }
        guard let keys else {
            // 0-RTT before the ServerHello: early keys come from the key log alone.
            if header.type == .zeroRTT, direction == .clientToServer {
                for early in earlyKeyCandidates(header.version) {
                    guard let payload = open(header, bytes: bytes, keys: early, direction: d) else { continue }
                    zeroRTTKeys = early
                    return payload.withUnsafeBytes {
                        payloadDecrypted($0, header: header, size: size, direction: direction, time: time, table: table)
                    }
                }
                zeroRTTTried = answeredRandom != nil
            }
            return unreadable(size: size, direction: d)
        }
        if header.start == 0, let opened = openedFirstPacket {
            openedFirstPacket = nil
            largestPN[d][0] = Int64(opened.packetNumber)
            return opened.payload.withUnsafeBytes {
                payloadDecrypted($0, header: header, size: size, direction: direction, time: time, table: table)
            }
        }
        if let payload = open(header, bytes: bytes, keys: keys, direction: d) {
            return payload.withUnsafeBytes {
                payloadDecrypted($0, header: header, size: size, direction: direction, time: time, table: table)
            }
        }
        unreadable(size: size, direction: d)
    }

    /// A new Initial key epoch (the first Initial, or after Retry or Version Negotiation): its keys, and CRYPTO
    /// data from offset 0.
    func startInitialEpoch(dcid: QUICConnectionID?, version: QUICVersion, client: QUICPacketKeys, raw: UnsafeRawBufferPointer) {
        initialDCID = dcid
        initialVersion = version
        // The server's Initial keys only serve to read its ServerHello, which only decryption needs.
        initialKeys = [client, keyLog == nil ? nil : QUICPacketKeys.serverInitial(dcid: raw, version: version)]
        crypto = [QUICOffsetBuffer(), QUICOffsetBuffer()]
        handshakeBytes = [[], []]
        serverHelloSeen = false
    }

    private func unreadable(size: Int, direction d: Int) {
        stats[d].undecryptedPackets += 1
        stats[d].connectionBytes += size
    }

    /// The 0-RTT keys to try (RFC 9001 §5.6: the client's early traffic secret under the resumed session's suite,
    /// which no packet of this connection names: a 48-byte secret is SHA-384's AES-256-GCM, a 32-byte one
    /// AES-128-GCM or ChaCha20-Poly1305). The one that opens a packet is kept.
    private func earlyKeyCandidates(_ version: QUICVersion) -> [QUICPacketKeys] {
        guard !zeroRTTTried, let keyLog, let random = answeredRandom,
            let secret = keyLog.secrets(clientRandom: random)?.clientEarlyTrafficSecret
        else { return [] }
        let suites: [UInt16] = secret.count == 48 ? [0x1302] : [0x1301, 0x1303]
        return suites.compactMap { QUICPacketKeys(secret: secret, suite: TLSCipherSuite(rawValue: $0), version: version) }
    }

    /// Removes header protection and opens the payload; the 1-RTT key phase is followed (RFC 9001 §6).
    private func open(_ header: QUICPacketHeader, bytes: UnsafeRawBufferPointer, keys: QUICPacketKeys, direction d: Int)
        -> Data?
    {
        guard let (headerBytes, first, truncated, pnLength) = keys.unprotect(header, bytes: bytes) else { return nil }
        let space = header.type.space
        let pn = Self.decodePacketNumber(largest: largestPN[d][space], truncated: truncated, bits: pnLength * 8)
        let payload = UnsafeRawBufferPointer(rebasing: bytes[(header.pnOffset + pnLength)..<header.end])
        var plaintext: Data?
        if header.type == .oneRTT {
            let phase = first & 0x04 != 0
            if phase == keyPhase[d] {
                plaintext = headerBytes.withUnsafeBytes { keys.open(packetNumber: pn, header: $0, payload: payload) }
                if plaintext == nil, let previous = oneRTTPrevious[d] {
                    plaintext = headerBytes.withUnsafeBytes { previous.open(packetNumber: pn, header: $0, payload: payload) }
                }
            } else if let next = keys.updated(),
                let opened = headerBytes.withUnsafeBytes({ next.open(packetNumber: pn, header: $0, payload: payload) })
            {
                // A key update (RFC 9001 §6.2): the new phase holds from here on.
                oneRTTPrevious[d] = keys
                oneRTTKeys[d] = next
                keyPhase[d] = phase
                plaintext = opened
            } else if let previous = oneRTTPrevious[d] {
                plaintext = headerBytes.withUnsafeBytes { previous.open(packetNumber: pn, header: $0, payload: payload) }
            }
        } else {
            plaintext = headerBytes.withUnsafeBytes { keys.open(packetNumber: pn, header: $0, payload: payload) }
        }
        guard let plaintext else { return nil }
        if Int64(pn) > largestPN[d][space] { largestPN[d][space] = Int64(pn) }
        return plaintext
    }

    /// RFC 9000 Appendix A.3.
    static func decodePacketNumber(largest: Int64, truncated: UInt64, bits: Int) -> UInt64 {
        let expected = UInt64(largest + 1)
        let window: UInt64 = 1 << UInt64(bits)
        let half = window / 2
        let mask = window - 1
        let candidate = (expected & ~mask) | truncated
        if candidate + half <= expected, candidate < (1 << 62) - window { return candidate + window }
        if candidate > expected + half, candidate >= window { return candidate - window }
        return candidate
    }

    private func payloadDecrypted(
        _ p: UnsafeRawBufferPointer, header: QUICPacketHeader, size: Int, direction: Direction, time: CaptureTime,
        table: QUICConnectionTable
    ) {
        let d = direction.rawValue
        stats[d].decryptedPackets += 1
        if header.type == .initial, direction == .clientToServer { confirmed = true }
        if header.type == .zeroRTT || header.type == .oneRTT { decrypted = true }
        // Per request stream in this packet: new bytes, retransmitted frames' whole sizes.
        // The frames are read once into buffers kept by the connection: no array is made per packet.
        // (Moved out, not copied: a second reference would make the first append copy the buffer.)
        var weights: [(id: UInt64, new: Int, resent: Int)] = []
        var events: [(QUICFrame, Range<Int>)] = []
        swap(&weights, &weightBuffer)
        swap(&events, &frameBuffer)
        weights.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
        defer {
            // Without a key log only a few Initials are opened: their buffers are not kept for the connection's life.
            if keyLog != nil {
                swap(&weights, &weightBuffer)
                swap(&events, &frameBuffer)
            }
        }
        var uniBytes = 0
        var requestBytes = 0
        var resentBytes = 0
        if !QUICFrame.forEach(p, { frame, range in events.append((frame, range)) }) { malformedPackets += 1 }
        do {
            for (frame, range) in events {
                switch frame {
                case .crypto(let offset, let data):
                    guard header.type == .initial else { continue }
                    handshakeData(offset: offset, UnsafeRawBufferPointer(rebasing: p[data]), direction: d)
                case .connectionClose:
                    if closedAt == nil { closedAt = time }
                case .newConnectionID(let cid):
                    // The sender's new IDs are the peer's destinations (RFC 9000 §19.15): the table follows them.
                    if let id = QUICConnectionID(UnsafeRawBufferPointer(rebasing: p[cid])) {
                        table.register(id, for: self, chosenByServer: direction == .serverToClient)
                    }
                case .stream(let id, let offset, let data, _):
                    let key = StreamKey(id: id, direction: d)
                    let new = newBytes(key, offset: offset, count: data.count)
                    if id & 0x02 != 0 {
                        uniBytes += new
                    } else {
                        requestBytes += new
                        let resent = new < data.count ? range.count - new : 0
                        resentBytes += resent
                        if let i = weights.firstIndex(where: { $0.id == id }) {
                            weights[i].new += new
                            weights[i].resent += resent
                        } else {
                            weights.append((id, new, resent))
                        }
                    }
                default:
                    continue
                }
            }
        }
        stats[d].unidirectionalStreamBytes += uniBytes
        stats[d].requestStreamBytes += requestBytes
        let consumer = (header.type == .zeroRTT || header.type == .oneRTT) ? makeStreamConsumer() : nil
        // A packet's bytes other than stream payload, split over the request streams it carried in proportion
        // to their new bytes, the remainder to the stream with the most (issue 23); a retransmitted frame whole
        // to its stream. Without request-stream bytes, the packet is the connection's.
        let totalWeight = weights.reduce(0) { $0 + $1.new }
        if let consumer, !weights.isEmpty {
            let pool = max(0, size - requestBytes - uniBytes - resentBytes)
            var given = 0
            for w in weights { given += totalWeight > 0 ? pool * w.new / totalWeight : 0 }
            let largest = weights.indices.max { weights[$0].new < weights[$1].new } ?? 0
            for (i, w) in weights.enumerated() {
                let share = (totalWeight > 0 ? pool * w.new / totalWeight : 0) + (i == largest ? pool - given : 0)
                guard share + w.resent > 0 else { continue }
                consumer.addOverhead(stream: w.id, direction: direction, bytes: share + w.resent)
                stats[d].streamOverheadBytes += share + w.resent
            }
        } else {
            stats[d].connectionBytes += max(0, size - uniBytes - requestBytes)
        }
        guard let consumer else { return }
        do {
            for (frame, _) in events {
                switch frame {
                case .stream(let id, let offset, let data, let fin):
                    deliver(
                        StreamKey(id: id, direction: d), offset: offset, UnsafeRawBufferPointer(rebasing: p[data]),
                        fin: fin, consumer: consumer, time: time)
                case .resetStream(let id, let finalSize):
                    let key = StreamKey(id: id, direction: d)
                    guard !closedStreams.contains(key) else { continue }
                    if var state = streams[key] {
                        let lost = Int(clamping: finalSize > state.buffer.delivered ? finalSize - state.buffer.delivered : 0)
                        if lost > 0 { consumer.skip(stream: id, direction: direction, byteCount: lost, time: time) }
                        state.buffer.skip(to: finalSize)
                        streams[key] = nil
                    }
                    consumer.reset(stream: id, direction: direction, time: time)
                    close(key)
                default:
                    continue
                }
            }
        }
    }

    private func makeStreamConsumer() -> QUICStreamConsumer? {
        if consumer == nil { consumer = makeConsumer(self) }
        return consumer
    }

    /// The bytes of a STREAM frame that no earlier frame carried.
    private func newBytes(_ key: StreamKey, offset: UInt64, count: Int) -> Int {
        if closedStreams.contains(key) { return 0 }
        guard let state = streams[key] else { return count }
        return state.buffer.newByteCount(offset: offset, count: count)
    }

    private func deliver(
        _ key: StreamKey, offset: UInt64, _ data: UnsafeRawBufferPointer, fin: Bool, consumer: QUICStreamConsumer,
        time: CaptureTime
    ) {
        guard !closedStreams.contains(key) else { return }
        if streams[key] == nil {
            guard streams.count < limits.maxOpenStreams else { return }
            streams[key] = StreamState()
        }
        let direction = Direction(rawValue: key.direction)!
        var state = streams[key]!
        streams[key] = nil  // uniquely referenced while it changes
        if fin { state.finalSize = offset &+ UInt64(data.count) }
        _ = state.buffer.add(
            offset: offset, data, limit: limits.maxHeldStreamBytes,
            deliver: { consumer.receive(stream: key.id, direction: direction, bytes: $0, time: time) },
            lose: { consumer.skip(stream: key.id, direction: direction, byteCount: $0, time: time) })
        if let final = state.finalSize, state.buffer.delivered >= final {
            consumer.end(stream: key.id, direction: direction, time: time)
            close(key)
            return
        }
        streams[key] = state
    }

    private func close(_ key: StreamKey) {
        streams[key] = nil
        if closedStreams.count < limits.maxClosedStreams { closedStreams.insert(key) }
    }

    /// CRYPTO data of the Initials: the ClientHello (client) and ServerHello (server), RFC 9001 §4.1.3.
    private func handshakeData(offset: UInt64, _ data: UnsafeRawBufferPointer, direction d: Int) {
        var buffer = crypto[d]
        _ = buffer.add(
            offset: offset, data, limit: limits.maxCryptoBytes,
            deliver: { piece in
                if handshakeBytes[d].count + piece.count <= limits.maxCryptoBytes {
                    handshakeBytes[d].append(contentsOf: piece)
                }
            }, lose: { _ in })
        crypto[d] = buffer
        parseHandshake(direction: d)
    }

    private func parseHandshake(direction d: Int) {
        let bytes = handshakeBytes[d]
        guard bytes.count >= 4 else { return }
        let length = Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard bytes.count >= 4 + length else { return }
        let body = Array(bytes[4..<(4 + length)])
        if d == 0, bytes[0] == 1 {
            handshakeBytes[0] = [0xff]  // done with this epoch's ClientHello
            guard let hello = body.withUnsafeBytes({ TLSClientHello.parse($0) }) else { return }
            if !sawClientHello {
                sawClientHello = true
                serverName = hello.serverName
                offeredALPN = hello.alpnProtocols
            }
            answeredRandom = hello.random
            if keyLog == nil {
                // Nothing more to read without secrets: the Initials' state goes (memory per open connection).
                initialKeys = [nil, nil]
                crypto = [QUICOffsetBuffer(), QUICOffsetBuffer()]
                handshakeBytes = [[], []]
            }
        } else if d == 1, bytes[0] == 2, !serverHelloSeen {
            serverHelloSeen = true
            handshakeBytes[1] = [0xff]
            guard let hello = body.withUnsafeBytes({ TLSServerHello.parse($0) }) else { return }
            cipherSuite = hello.cipherSuite
            deriveKeys()
        }
    }

    /// Handshake and 1-RTT keys from the key log, under the answered ClientHello's random.
    private func deriveKeys() {
        guard let keyLog, let random = answeredRandom, let suite = cipherSuite,
            let secrets = keyLog.secrets(clientRandom: random)
        else { return }
        hasSecrets = true
        let version = serverVersion ?? clientVersion
        if let c = secrets.clientHandshakeTrafficSecret, let s = secrets.serverHandshakeTrafficSecret {
            handshakeKeys = [QUICPacketKeys(secret: c, suite: suite, version: version),
                             QUICPacketKeys(secret: s, suite: suite, version: version)]
        }
        if let c = secrets.clientTrafficSecret0, let s = secrets.serverTrafficSecret0 {
            oneRTTKeys = [QUICPacketKeys(secret: c, suite: suite, version: version),
                          QUICPacketKeys(secret: s, suite: suite, version: version)]
        }
    }

    /// The connection ended (idle, or the capture's end): held stream bytes are handed on, the consumer finishes.
    func finish() {
        guard let consumer else { return }
        // In stream order, so that what the held bytes complete is emitted the same way every run.
        for (key, var state) in streams.sorted(by: { ($0.key.id, $0.key.direction) < ($1.key.id, $1.key.direction) }) {
            let direction = Direction(rawValue: key.direction)!
            state.buffer.flush(
                deliver: { consumer.receive(stream: key.id, direction: direction, bytes: $0, time: lastTime) },
                lose: { consumer.skip(stream: key.id, direction: direction, byteCount: $0, time: lastTime) })
        }
        streams = [:]
        consumer.finish(time: lastTime)
    }
}
