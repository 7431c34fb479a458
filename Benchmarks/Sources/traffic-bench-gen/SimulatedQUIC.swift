import TrafficQUIC
import TrafficTLS

/// `--quic`: the exchanges of one planned connection as HTTP/3 (RFC 9114) over QUIC version 1 (RFC 9000) on UDP port
/// 443, played out a few datagrams at a time like `SimulatedConnection`.
///
/// - Handshake (RFC 9001): the client's Initial (CRYPTO with a TLS 1.3 ClientHello: SNI, ALPN `h3`,
///   supported_versions 1.3, x25519 key_share, quic_transport_parameters) padded to a 1250-byte datagram; the
///   server's Initial (ACK, CRYPTO ServerHello choosing TLS_AES_128_GCM_SHA256) coalesced with Handshake packets
///   (EncryptedExtensions, Certificate, CertificateVerify, Finished: random bytes of the right framing) over 1252-byte
///   datagrams; the client's Handshake packet (ACK, Finished) coalesced with its first 1-RTT packet.
/// - Keys: Initial keys from the client's Destination Connection ID; handshake and 1-RTT keys from four random
///   secrets, written to the NSS key log under the ClientHello's random. Every packet is sealed and header-protected
///   with `QUICPacketKeys.protect`, as the analyzer opens it.
/// - HTTP/3: each side's control stream (client 2, server 3: type 0x00 and SETTINGS), QPACK encoder and decoder
///   streams (6/10, 7/11: just their type bytes); requests on client bidirectional streams 0, 4, 8, … in waves of
///   1–4 (the next wave when every response of the last has ended), each a HEADERS frame (QPACK, static table
///   only) and DATA frames; responses on the same streams, those of a wave interleaved packet by packet. The server's
///   first 1-RTT packet carries HANDSHAKE_DONE.
/// - 1-RTT packets: short header (DCID = the peer's connection ID, 2-byte packet numbers), an ACK frame when the
///   sender owes one, STREAM frames with offset and length (FIN on the last), up to 1252 bytes per datagram; the
///   receiver sends an ACK-only packet after every second ack-eliciting one. The closing side ends with
///   CONNECTION_CLOSE (application, H3_NO_ERROR).
final class SimulatedQUIC {
    static let maxDatagram = 1252
    static let clientInitialDatagram = 1250
    static let pnLength = 2
    static let tagLength = 16

    /// One direction of a stream: its bytes, read in order.
    final class SendStream {
        let id: Int
        let data: AssembledBytes
        var offset = 0
        let fin: Bool
        var remaining: Int { data.count - offset }

        init(id: Int, data: AssembledBytes, fin: Bool) {
            self.id = id
            self.data = data
            self.fin = fin
        }
    }

    private struct Endpoint {
        var address: UInt32
        var port: UInt16
        var mac: UInt32
        var ipIdentification: UInt16
        var cid: [UInt8]
        /// Next packet number per space: Initial, Handshake, application.
        var nextPacketNumber: [UInt64] = [0, 0, 0]
        /// The largest 1-RTT packet number received, and ack-eliciting packets received since this side's last ACK.
        var largestReceived: UInt64 = 0
        var ackPending = 0
        var queue: [SendStream] = []
        var next = 0
        /// Frames for this side's next 1-RTT packet (HANDSHAKE_DONE, CONNECTION_CLOSE).
        var extra: [UInt8] = []
    }

    private enum Phase { case clientInitial, serverHandshake, clientFinished, data, close, done }

    let host: String
    let keyLogLines: String
    /// Per exchange, the HTTP/3 record sizes (header_bytes: the HEADERS frame; body_bytes: the DATA frames).
    let requestSizes: [HTTP2MessageSizes]
    let responseSizes: [HTTP2MessageSizes]
    private let requests: [AssembledBytes]
    private let responses: [AssembledBytes]
    private var client: Endpoint
    private var server: Endpoint
    private let originalDCID: [UInt8]
    private let initialKeys: (client: QUICPacketKeys, server: QUICPacketKeys)
    private let handshakeKeys: (client: QUICPacketKeys, server: QUICPacketKeys)
    private let applicationKeys: (client: QUICPacketKeys, server: QUICPacketKeys)
    private let clientHello: [UInt8]
    private let serverHello: [UInt8]
    private let serverHandshake: [UInt8]
    private let clientFinished: [UInt8]
    private let serverCloses: Bool
    private let waveSizes: ClosedRange<Int>
    private var generator: SeededGenerator
    private let stats: QUICStats
    private var phase = Phase.clientInitial
    private var senderIsClient = true
    private var opened = 0
    private var answered = 0
    private var serverStarted = false

    init(
        _ exchanges: [HTTP2Exchange], host: String, client: TCPPeer, server: TCPPeer, serverCloses: Bool,
        generator g: inout SeededGenerator, stats: QUICStats
    ) {
        self.host = host
        self.serverCloses = serverCloses
        self.stats = stats
        generator = SeededGenerator(seed: g.next())
        originalDCID = g.bytes(8)
        self.client = Endpoint(
            address: client.address, port: client.port, mac: client.mac, ipIdentification: client.ipIdentification,
            cid: g.bytes(8))
        self.server = Endpoint(
            address: server.address, port: 443, mac: server.mac, ipIdentification: server.ipIdentification,
            cid: g.bytes(8))
        waveSizes = 1...(exchanges.count > 4 ? 4 : max(1, exchanges.count))

        // HTTP/3 messages: one DATA frame per body, or frames of 16 KiB (per connection).
        let frameSize = g.chance(0.5) ? 16384 : Int.max
        var requests: [AssembledBytes] = []
        var responses: [AssembledBytes] = []
        var requestSizes: [HTTP2MessageSizes] = []
        var responseSizes: [HTTP2MessageSizes] = []
        for exchange in exchanges {
            let request = Self.message(exchange.request, frameSize: frameSize)
            let response = Self.message(exchange.response, frameSize: frameSize)
            requests.append(request.bytes)
            requestSizes.append(request.sizes)
            responses.append(response.bytes)
            responseSizes.append(response.sizes)
        }
        self.requests = requests
        self.responses = responses
        self.requestSizes = requestSizes
        self.responseSizes = responseSizes

        // TLS 1.3 inside QUIC (RFC 9001 §4): the handshake messages, no records.
        let clientRandom = g.bytes(32)
        let secrets = (0..<4).map { _ in g.bytes(32) }
        let suite = TLSCipherSuite(rawValue: 0x1301)
        initialKeys = originalDCID.withUnsafeBytes { QUICPacketKeys.initial(dcid: $0, version: .v1)! }
        handshakeKeys = (
            QUICPacketKeys(secret: secrets[0], suite: suite, version: .v1)!,
            QUICPacketKeys(secret: secrets[1], suite: suite, version: .v1)!
        )
        applicationKeys = (
            QUICPacketKeys(secret: secrets[2], suite: suite, version: .v1)!,
            QUICPacketKeys(secret: secrets[3], suite: suite, version: .v1)!
        )
        let labels = [
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0",
            "SERVER_TRAFFIC_SECRET_0",
        ]
        keyLogLines = zip(labels, secrets).map { "\($0) \(hex(clientRandom)) \(hex($1))\n" }.joined()

        let clientCID = self.client.cid
        let serverCID = self.server.cid
        let dcid = originalDCID
        var hello = ByteWriter()
        hello.message(1) { m in
            m.u16(0x0303)
            m.append(clientRandom)
            m.vector8 { _ in }  // QUIC: no legacy session id (RFC 9001 §8.4)
            m.vector16 { for s: UInt16 in [0x1301, 0x1302, 0x1303] { $0.u16(s) } }
            m.vector8 { $0.u8(0) }
            m.vector16 { e in
                e.u16(0); e.vector16 { $0.vector16 { $0.u8(0); $0.vector16 { $0.append(Array(host.utf8)) } } }
                e.u16(10); e.vector16 { $0.vector16 { for x: UInt16 in [0x001d, 0x0017, 0x0018] { $0.u16(x) } } }
                e.u16(13); e.vector16 { $0.vector16 { for s: UInt16 in [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601] { $0.u16(s) } } }
                e.u16(16); e.vector16 { $0.vector16 { $0.vector8 { $0.append(Array("h3".utf8)) } } }  // ALPN
                e.u16(51); e.vector16 { $0.vector16 { $0.u16(0x001d); $0.vector16 { $0.append(g.bytes(32)) } } }
                e.u16(45); e.vector16 { $0.vector8 { $0.u8(1) } }  // psk_key_exchange_modes: psk_dhe_ke
                e.u16(43); e.vector16 { $0.vector8 { $0.u16(0x0304) } }  // supported_versions: TLS 1.3
                e.u16(0x39); e.vector16 { Self.transportParameters(sourceCID: clientCID, original: nil, into: &$0) }
            }
        }
        clientHello = hello.bytes
        var sh = ByteWriter()
        sh.message(2) { m in
            m.u16(0x0303)
            m.append(g.bytes(32))
            m.vector8 { _ in }
            m.u16(0x1301)
            m.u8(0)
            m.vector16 { e in
                e.u16(43); e.vector16 { $0.u16(0x0304) }
                e.u16(51); e.vector16 { $0.u16(0x001d); $0.vector16 { $0.append(g.bytes(32)) } }
            }
        }
        serverHello = sh.bytes
        var flight = ByteWriter()
        flight.message(8) { m in  // EncryptedExtensions: ALPN h3, the server's transport parameters
            m.vector16 { e in
                e.u16(16); e.vector16 { $0.vector16 { $0.vector8 { $0.append(Array("h3".utf8)) } } }
                e.u16(0x39); e.vector16 { Self.transportParameters(sourceCID: serverCID, original: dcid, into: &$0) }
            }
        }
        flight.message(11) { m in
            m.vector8 { _ in }
            m.vector24 { list in
                for certificate in SimulatedTLS.certificateChain(host: host) {
                    list.vector24 { $0.append(certificate) }
                    list.vector16 { _ in }
                }
            }
        }
        flight.message(15) { m in m.u16(0x0804); m.vector16 { $0.append(g.bytes(256)) } }
        flight.message(20) { m in m.append(g.bytes(32)) }
        serverHandshake = flight.bytes
        var finished = ByteWriter()
        finished.message(20) { m in m.append(g.bytes(32)) }
        clientFinished = finished.bytes

        stats.add(self)
    }

    /// RFC 9000 §18.2: flow control limits as browsers send them, and the connection IDs.
    private static func transportParameters(sourceCID: [UInt8], original: [UInt8]?, into w: inout ByteWriter) {
        var bytes: [UInt8] = []
        func parameter(_ id: Int, _ value: Int) {
            QUICVarint.append(id, into: &bytes)
            QUICVarint.append(QUICVarint.length(value), into: &bytes)
            QUICVarint.append(value, into: &bytes)
        }
        func parameter(_ id: Int, _ value: [UInt8]) {
            QUICVarint.append(id, into: &bytes)
            QUICVarint.append(value.count, into: &bytes)
            bytes += value
        }
        if let original { parameter(0x00, original) }
        parameter(0x01, 30000)  // max_idle_timeout
        parameter(0x04, 15_728_640)  // initial_max_data
        parameter(0x05, 6_291_456)  // initial_max_stream_data_bidi_local
        parameter(0x06, 6_291_456)  // initial_max_stream_data_bidi_remote
        parameter(0x07, 6_291_456)  // initial_max_stream_data_uni
        parameter(0x08, 100)  // initial_max_streams_bidi
        parameter(0x09, 103)  // initial_max_streams_uni
        parameter(0x0f, sourceCID)  // initial_source_connection_id
        w.append(bytes)
    }

    /// A message as HTTP/3 frames: HEADERS (QPACK field section), then DATA frames.
    private static func message(_ m: HTTP2Message, frameSize: Int) -> (bytes: AssembledBytes, sizes: HTTP2MessageSizes) {
        var sizes = HTTP2MessageSizes()
        var section: [UInt8] = []
        section.reserveCapacity(512)
        QPACKFieldEncoder.prefix(into: &section)
        for field in m.fields {
            let value = field.name == ":scheme" ? "https" : field.value
            let size = QPACKFieldEncoder.encode(
                field.name, value, neverIndexed: field.policy == .neverIndexed, into: &section)
            let decoded = field.name.utf8.count + value.utf8.count
            sizes.headerDecodedBytes += decoded
            if field.name == m.cookieName {
                sizes.cookieBytes += size
                sizes.cookieDecodedBytes += decoded
            }
        }
        let bytes = AssembledBytes()
        bytes.appendOwn { b in
            b.append(0x01)
            QUICVarint.append(section.count, into: &b)
            b += section
        }
        sizes.headerBytes = 1 + QUICVarint.length(section.count) + section.count
        var offset = 0
        while offset < m.body.count {
            let n = min(frameSize, m.body.count - offset)
            bytes.appendOwn { b in
                b.append(0x00)
                QUICVarint.append(n, into: &b)
            }
            bytes.appendShared(UnsafeRawBufferPointer(rebasing: m.body[offset..<(offset + n)]))
            sizes.bodyBytes += 1 + QUICVarint.length(n) + n
            sizes.dataFrames += 1
            offset += n
        }
        return (bytes, sizes)
    }

    /// A control stream (type 0x00) with SETTINGS, and the QPACK encoder (0x02) and decoder (0x03) streams.
    private static func controlStreams(client: Bool) -> [SendStream] {
        let control = AssembledBytes()
        control.appendOwn { b in
            b.append(0x00)
            var settings: [UInt8] = []
            // QPACK_MAX_TABLE_CAPACITY, MAX_FIELD_SECTION_SIZE, QPACK_BLOCKED_STREAMS.
            let values = client ? [(0x01, 65536), (0x06, 262_144), (0x07, 100)] : [(0x01, 0), (0x07, 0)]
            for (id, value) in values {
                QUICVarint.append(id, into: &settings)
                QUICVarint.append(value, into: &settings)
            }
            b.append(0x04)
            QUICVarint.append(settings.count, into: &b)
            b += settings
        }
        let encoder = AssembledBytes()
        encoder.appendOwn { $0.append(0x02) }
        let decoder = AssembledBytes()
        decoder.appendOwn { $0.append(0x03) }
        let base = client ? 2 : 3
        return [
            SendStream(id: base, data: control, fin: false), SendStream(id: base + 4, data: encoder, fin: false),
            SendStream(id: base + 8, data: decoder, fin: false),
        ]
    }

    // MARK: Playing

    /// Emits the next few datagrams; returns true once the connection is over.
    func step(_ writer: PcapWriter, clock: inout PacketClock) -> Bool {
        switch phase {
        case .clientInitial:
            var frames: [UInt8] = []
            Self.crypto(offset: 0, clientHello[...], into: &frames)
            let header = longHeader(type: 0, from: client, to: server, payloadLength: 0)
            let room = Self.clientInitialDatagram - header.count - Self.tagLength
            frames += repeatElement(0, count: room - frames.count)  // PADDING
            let packet = protect(type: 0, fromClient: true, frames: frames)
            emit(packet, fromClient: true, writer, &clock)
            phase = .serverHandshake
        case .serverHandshake:
            var frames: [UInt8] = []
            ackFrame(largest: 0, into: &frames)
            Self.crypto(offset: 0, serverHello[...], into: &frames)
            var datagram = protect(type: 0, fromClient: false, frames: frames)
            var sent = 0
            while sent < serverHandshake.count {
                let overhead = 27 + Self.tagLength + 1 + QUICVarint.length(sent) + 2
                let room = Self.maxDatagram - datagram.count - overhead
                if room < 64 {
                    emit(datagram, fromClient: false, writer, &clock)
                    datagram = []
                    continue
                }
                let n = min(room, serverHandshake.count - sent)
                var frames: [UInt8] = []
                Self.crypto(offset: sent, serverHandshake[sent..<(sent + n)], into: &frames)
                datagram += protect(type: 2, fromClient: false, frames: frames)
                sent += n
            }
            emit(datagram, fromClient: false, writer, &clock)
            phase = .clientFinished
        case .clientFinished:
            var frames: [UInt8] = []
            ackFrame(largest: server.nextPacketNumber[1] - 1, into: &frames)
            Self.crypto(offset: 0, clientFinished[...], into: &frames)
            var datagram = protect(type: 2, fromClient: true, frames: frames)
            client.queue = Self.controlStreams(client: true)
            openWave()
            if let packet = oneRTT(fromClient: true, room: Self.maxDatagram - datagram.count) {
                datagram += packet
            }
            emit(datagram, fromClient: true, writer, &clock)
            phase = .data
        case .data:
            if (senderIsClient ? client.queue : server.queue).isEmpty { switchFlight() }
            if phase == .data { sendFlight(writer, &clock) }
        case .close:
            let closing = serverCloses
            var frame: [UInt8] = [0x1d]
            QUICVarint.append(0x100, into: &frame)  // H3_NO_ERROR
            frame.append(0)  // no reason phrase
            if closing { server.extra += frame } else { client.extra += frame }
            let packet = oneRTT(fromClient: !closing, room: Self.maxDatagram)!
            emit(packet, fromClient: !closing, writer, &clock)
            phase = .done
        case .done:
            break
        }
        return phase == .done
    }

    /// Up to two datagrams of the current sender; the receiver acknowledges every second one.
    private func sendFlight(_ writer: PcapWriter, _ clock: inout PacketClock) {
        let fromClient = senderIsClient
        for _ in 0..<2 {
            guard let packet = oneRTT(fromClient: fromClient, room: Self.maxDatagram) else { break }
            emit(packet, fromClient: fromClient, writer, &clock)
            let pending = fromClient ? server.ackPending : client.ackPending
            if pending >= 2, let ack = oneRTT(fromClient: !fromClient, room: Self.maxDatagram, streams: false) {
                emit(ack, fromClient: !fromClient, writer, &clock)
            }
        }
    }

    /// The current sender has sent everything: the other side's flight begins.
    private func switchFlight() {
        if senderIsClient {
            if !serverStarted {
                serverStarted = true
                server.extra.append(0x1e)  // HANDSHAKE_DONE
                server.queue = Self.controlStreams(client: false)
            }
            for index in answered..<opened {
                server.queue.append(SendStream(id: 4 * index, data: responses[index], fin: true))
            }
            answered = opened
            senderIsClient = false
        } else if opened == requests.count {
            phase = .close
        } else {
            openWave()
            senderIsClient = true
        }
    }

    private func openWave() {
        let count = min(requests.count - opened, generator.int(waveSizes))
        for index in opened..<(opened + count) {
            client.queue.append(SendStream(id: 4 * index, data: requests[index], fin: true))
        }
        opened += count
    }

    // MARK: Packets

    /// A 1-RTT packet from one side of at most `room` bytes: an ACK when owed, its pending frames, then STREAM
    /// frames from its streams in turn (a stream that does not fill the packet leaves room for the next). Nil when
    /// there is nothing to send.
    private func oneRTT(fromClient: Bool, room: Int, streams: Bool = true) -> [UInt8]? {
        var me = fromClient ? client : server
        defer { if fromClient { client = me } else { server = me } }
        var frames: [UInt8] = []
        frames.reserveCapacity(room)
        if me.ackPending > 0 {
            ackFrame(largest: me.largestReceived, into: &frames)
            me.ackPending = 0
        }
        frames += me.extra
        var ackEliciting = !me.extra.isEmpty
        me.extra.removeAll()
        var available = room - (1 + 8 + Self.pnLength) - Self.tagLength - frames.count
        while streams, !me.queue.isEmpty {
            if me.next >= me.queue.count { me.next = 0 }
            let stream = me.queue[me.next]
            let header = 1 + QUICVarint.length(stream.id) + (stream.offset > 0 ? QUICVarint.length(stream.offset) : 0) + 2
            guard available > header + 16 else { break }
            let n = min(stream.remaining, available - header)
            var type: UInt8 = 0x0a  // STREAM with LEN
            if stream.offset > 0 { type |= 0x04 }
            let last = n == stream.remaining
            if last, stream.fin { type |= 0x01 }
            frames.append(type)
            QUICVarint.append(stream.id, into: &frames)
            if stream.offset > 0 { QUICVarint.append(stream.offset, into: &frames) }
            QUICVarint.append2(n, into: &frames)
            let start = frames.count
            frames += repeatElement(0, count: n)
            frames.withUnsafeMutableBytes { stream.data.copy(from: stream.offset, count: n, to: $0.baseAddress! + start) }
            stream.offset += n
            available -= header + n
            ackEliciting = true
            if last {
                me.queue.remove(at: me.next)
            } else {
                me.next += 1
            }
        }
        guard !frames.isEmpty else { return nil }
        while frames.count < 4 { frames.append(0) }  // room for the header protection sample
        let peer = fromClient ? server : client
        let packetNumber = me.nextPacketNumber[2]
        me.nextPacketNumber[2] += 1
        var header: [UInt8] = [0x40 | UInt8(Self.pnLength - 1)]
        header += peer.cid
        header += [UInt8(truncatingIfNeeded: packetNumber >> 8), UInt8(truncatingIfNeeded: packetNumber)]
        let keys = fromClient ? applicationKeys.client : applicationKeys.server
        let packet = keys.protect(header: header, pnLength: Self.pnLength, packetNumber: packetNumber, payload: frames)!
        if ackEliciting {
            if fromClient {
                server.largestReceived = packetNumber
                server.ackPending += 1
            } else {
                client.largestReceived = packetNumber
                client.ackPending += 1
            }
        } else if fromClient {
            server.largestReceived = packetNumber
        } else {
            client.largestReceived = packetNumber
        }
        // `me` is written back by the defer; the peer's counters were set directly.
        stats.packets[2] += 1
        return packet
    }

    /// A long-header packet (Initial: type 0, Handshake: type 2) sealed with that space's keys.
    private func protect(type: UInt8, fromClient: Bool, frames: [UInt8]) -> [UInt8] {
        let space = type == 0 ? 0 : 1
        let packetNumber = fromClient ? client.nextPacketNumber[space] : server.nextPacketNumber[space]
        if fromClient { client.nextPacketNumber[space] += 1 } else { server.nextPacketNumber[space] += 1 }
        var frames = frames
        while frames.count < 4 { frames.append(0) }
        var header = fromClient
            ? longHeader(type: type, from: client, to: server, payloadLength: frames.count)
            : longHeader(type: type, from: server, to: client, payloadLength: frames.count)
        header[header.count - 2] = UInt8(truncatingIfNeeded: packetNumber >> 8)
        header[header.count - 1] = UInt8(truncatingIfNeeded: packetNumber)
        let keys =
            type == 0
            ? (fromClient ? initialKeys.client : initialKeys.server)
            : (fromClient ? handshakeKeys.client : handshakeKeys.server)
        stats.packets[space] += 1
        return keys.protect(header: header, pnLength: Self.pnLength, packetNumber: packetNumber, payload: frames)!
    }

    /// The long header up to and including a zero packet number; the Length field covers `payloadLength` + the
    /// packet number + the tag. The client's first Destination Connection ID is the random one the Initial keys come
    /// from; afterwards each side addresses the other's chosen ID.
    private func longHeader(type: UInt8, from sender: Endpoint, to receiver: Endpoint, payloadLength: Int) -> [UInt8] {
        var header: [UInt8] = [0xc0 | type << 4 | UInt8(Self.pnLength - 1), 0, 0, 0, 1]
        let dcid = sender.port != 443 && receiver.nextPacketNumber == [0, 0, 0] ? originalDCID : receiver.cid
        header.append(UInt8(dcid.count))
        header += dcid
        header.append(UInt8(sender.cid.count))
        header += sender.cid
        if type == 0 { header.append(0) }  // no token
        QUICVarint.append2(payloadLength + Self.pnLength + Self.tagLength, into: &header)
        header += [0, 0]
        return header
    }

    private func ackFrame(largest: UInt64, into frames: inout [UInt8]) {
        frames.append(0x02)
        QUICVarint.append(Int(largest), into: &frames)
        QUICVarint.append(generator.int(0...400), into: &frames)  // ack delay, 8 µs units
        frames.append(0)  // no further ranges
        QUICVarint.append(Int(largest), into: &frames)  // everything from packet 0
    }

    private static func crypto(offset: Int, _ data: ArraySlice<UInt8>, into frames: inout [UInt8]) {
        frames.append(0x06)
        QUICVarint.append(offset, into: &frames)
        QUICVarint.append2(data.count, into: &frames)
        frames += data
    }

    // MARK: Datagrams

    /// One Ethernet/IPv4/UDP frame carrying `payload`, UDP checksum included.
    private func emit(_ payload: [UInt8], fromClient: Bool, _ writer: PcapWriter, _ clock: inout PacketClock) {
        let microseconds = clock.tick()
        let udpLength = 8 + payload.count
        let ipLength = 20 + udpLength
        let frameLength = 14 + ipLength
        let record = writer.packet(capacity: 16 + frameLength)
        record.storeBytes(of: UInt32(truncatingIfNeeded: microseconds / 1_000_000), toByteOffset: 0, as: UInt32.self)
        record.storeBytes(of: UInt32(truncatingIfNeeded: microseconds % 1_000_000), toByteOffset: 4, as: UInt32.self)
        record.storeBytes(of: UInt32(frameLength), toByteOffset: 8, as: UInt32.self)
        record.storeBytes(of: UInt32(frameLength), toByteOffset: 12, as: UInt32.self)
        let (sender, receiver) = fromClient ? (client, server) : (server, client)
        let frame = record + 16
        frame.storeBytes(of: UInt16(0x0200).bigEndian, toByteOffset: 0, as: UInt16.self)
        frame.storeBytes(of: receiver.mac.bigEndian, toByteOffset: 2, as: UInt32.self)
        frame.storeBytes(of: UInt16(0x0200).bigEndian, toByteOffset: 6, as: UInt16.self)
        frame.storeBytes(of: sender.mac.bigEndian, toByteOffset: 8, as: UInt32.self)
        frame.storeBytes(of: UInt16(0x0800).bigEndian, toByteOffset: 12, as: UInt16.self)
        let ip = frame + 14
        ip.storeBytes(of: UInt16(0x4500).bigEndian, toByteOffset: 0, as: UInt16.self)
        ip.storeBytes(of: UInt16(ipLength).bigEndian, toByteOffset: 2, as: UInt16.self)
        ip.storeBytes(of: sender.ipIdentification.bigEndian, toByteOffset: 4, as: UInt16.self)
        if fromClient { client.ipIdentification &+= 1 } else { server.ipIdentification &+= 1 }
        ip.storeBytes(of: UInt16(0x4000).bigEndian, toByteOffset: 6, as: UInt16.self)
        ip.storeBytes(of: UInt16(0x4011).bigEndian, toByteOffset: 8, as: UInt16.self)  // TTL 64, UDP
        ip.storeBytes(of: UInt16(0), toByteOffset: 10, as: UInt16.self)
        ip.storeBytes(of: sender.address.bigEndian, toByteOffset: 12, as: UInt32.self)
        ip.storeBytes(of: receiver.address.bigEndian, toByteOffset: 16, as: UInt32.self)
        ip.storeBytes(of: Checksum.finish(Checksum.sum(UnsafeRawPointer(ip), 20)), toByteOffset: 10, as: UInt16.self)
        let udp = ip + 20
        udp.storeBytes(of: sender.port.bigEndian, toByteOffset: 0, as: UInt16.self)
        udp.storeBytes(of: receiver.port.bigEndian, toByteOffset: 2, as: UInt16.self)
        udp.storeBytes(of: UInt16(udpLength).bigEndian, toByteOffset: 4, as: UInt16.self)
        udp.storeBytes(of: UInt16(0), toByteOffset: 6, as: UInt16.self)
        payload.withUnsafeBytes { (udp + 8).copyMemory(from: $0.baseAddress!, byteCount: payload.count) }
        var sum = Checksum.sum(UnsafeRawPointer(ip + 12), 8)
        sum &+= UInt64((UInt32(17) << 16 | UInt32(udpLength)).bigEndian)
        sum &+= Checksum.sum(UnsafeRawPointer(udp), udpLength)
        let checksum = Checksum.finish(sum)
        udp.storeBytes(of: checksum == 0 ? 0xffff : checksum, toByteOffset: 6, as: UInt16.self)
        writer.commit(16 + frameLength)
        stats.addDatagram(host: host, fromClient: fromClient, udpPayload: payload.count)
    }
}

/// What `--quic` put in the capture, for the manifest's "quic" object: counted when connections are planned
/// (streams, records) and as their datagrams are written (UDP payload per direction and host).
final class QUICStats {
    var connections = 0
    var requestStreams = 0
    var clientDatagrams = 0
    var serverDatagrams = 0
    var clientUDPBytes = 0
    var serverUDPBytes = 0
    /// Initial, Handshake and 1-RTT packets.
    var packets = [0, 0, 0]
    var hosts: [String: (connections: Int, client: Int, server: Int)] = [:]

    func add(_ connection: SimulatedQUIC) {
        connections += 1
        requestStreams += connection.requestSizes.count
        hosts[connection.host, default: (0, 0, 0)].connections += 1
    }

    func addDatagram(host: String, fromClient: Bool, udpPayload: Int) {
        if fromClient {
            clientDatagrams += 1
            clientUDPBytes += udpPayload
            hosts[host]!.client += udpPayload
        } else {
            serverDatagrams += 1
            serverUDPBytes += udpPayload
            hosts[host]!.server += udpPayload
        }
    }
}
