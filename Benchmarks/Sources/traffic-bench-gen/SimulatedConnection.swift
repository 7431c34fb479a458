/// One HTTP/1.1 keep-alive connection, played out a few packets at a time.
///
/// The life of a connection: three-way handshake; for each exchange the request from the client,
/// then the response from the server; then a FIN from each side and a last ACK. Data segments carry
/// at most `FrameBuilder.mss` bytes; a receiver sends a pure ACK after every second data segment
/// (RFC 9293 §3.8.6.3, as Linux does) and otherwise acknowledges with its next segment. The scheduler
/// interleaves many connections, so `step` emits a small flight (at most two data segments and
/// their ACK) and returns.
final class SimulatedConnection {
    struct Exchange {
        var request: MessageBytes
        var response: MessageBytes
        /// The manifest group both messages count in.
        var key: Manifest.Key
        /// `--h2`: the same messages as HTTP/2 header lists and DATA payloads.
        var http2: HTTP2Exchange?
    }

    private enum Phase { case handshake, tlsHandshake, request, response, closeNotify, http2, close, done }

    private var client: TCPPeer
    private var server: TCPPeer
    let exchanges: [Exchange]
    /// The server closes first (it answered `Connection: close`); otherwise the client does.
    private let serverCloses: Bool
    private var phase = Phase.handshake
    private var exchangeIndex = 0
    private var offset = 0
    /// HTTPS (`--tls`): the TLS layer, and the wire bytes of the message being sent.
    private var tls: SimulatedTLS?
    private var tlsFlight = 0
    private var wire = TLSWireMessage()
    /// HTTP/2 (`--h2`): the wire flights, alternating, the client's first; they replace the exchanges' bytes.
    private var http2Flights: [MessageBytes] = []
    private var http2Flight = 0
    /// HTTP/3 over QUIC (`--quic`): plays the connection instead of TCP.
    private(set) var quic: SimulatedQUIC?

    init(client: TCPPeer, server: TCPPeer, exchanges: [Exchange], serverCloses: Bool) {
        self.client = client
        self.server = server
        self.exchanges = exchanges
        self.serverCloses = serverCloses
    }

    /// Makes this an HTTPS connection (server port 443): the same exchanges inside `tls`.
    func useTLS(_ tls: SimulatedTLS) {
        self.tls = tls
        server.port = 443
    }

    /// Makes this an HTTP/2 connection with prior knowledge: the flights of `HTTP2Connection` are sent instead of
    /// the HTTP/1.1 messages (still port 80).
    func useHTTP2(_ flights: [MessageBytes]) {
        precondition(tls == nil, "--h2 is cleartext only")
        http2Flights = flights
    }

    /// Makes this an HTTP/3 connection over QUIC: `quic` sends the datagrams instead of TCP segments.
    func useQUIC(_ quic: SimulatedQUIC) {
        self.quic = quic
    }

    /// The file bytes this connection adds as cleartext HTTP (`--tls` plans by these too, so that it picks
    /// the same connections as the cleartext capture of the same seed and size).
    var plannedFileBytes: Int {
        Self.fileBytes(wireMessages: exchanges.flatMap { [$0.request.count, $0.response.count] })
    }

    /// The file bytes this connection will add: exact for handshake, data and teardown, and for
    /// the pure ACKs, which follow every second data segment of a message.
    var plannedWireFileBytes: Int {
        if !http2Flights.isEmpty { return Self.fileBytes(wireMessages: http2Flights.map(\.count)) }
        guard let tls else { return plannedFileBytes }
        var messages = tls.handshakeFlights.map(\.count)
        for (index, exchange) in exchanges.enumerated() {
            let first = index == 0
            let last = index == exchanges.count - 1
            messages.append((first ? tls.requestPrefix.count : 0) + tls.protectedLength(exchange.request.count))
            messages.append(
                (first ? tls.responsePrefix.count : 0) + tls.protectedLength(exchange.response.count)
                    + (last && serverCloses ? tls.alertLength : 0))
        }
        if !serverCloses, !exchanges.isEmpty { messages.append(tls.alertLength) }
        return Self.fileBytes(wireMessages: messages)
    }

    /// Sides alternate: each wire message is answered before the next, so the receiver ACKs every
    /// second segment of it and its own next segment acknowledges the rest.
    private static func fileBytes(wireMessages: [Int]) -> Int {
        let record = 16 + 14 + 20 + 32  // pcap record header + Ethernet + IPv4 + TCP with timestamps
        var total = 2 * (record + 8) + record  // SYN and SYN-ACK carry 8 more option bytes
        for count in wireMessages {
            let segments = (count + FrameBuilder.mss - 1) / FrameBuilder.mss
            total += count + segments * record + (segments / 2) * record
        }
        return total + 3 * record
    }

    /// Emits the next flight of packets; returns true once the connection is closed.
    func step(_ writer: PcapWriter, clock: inout PacketClock) -> Bool {
        if let quic { return quic.step(writer, clock: &clock) }
        switch phase {
        case .handshake:
            FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: FrameBuilder.Flags.syn)
            FrameBuilder.emit(
                writer, time: clock.tick(), from: &server, to: &client,
                flags: FrameBuilder.Flags.syn | FrameBuilder.Flags.ack)
            FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: FrameBuilder.Flags.ack)
            phase = tls != nil ? .tlsHandshake : !http2Flights.isEmpty ? .http2 : exchanges.isEmpty ? .close : .request
        case .tlsHandshake:
            let tls = tls!
            let fromClient = tlsFlight % 2 == 0
            if offset == 0 { wire.begin(prefix: tls.handshakeFlights[tlsFlight], tls: tls, fromClient: fromClient) }
            if fromClient ? sendWire(from: &client, to: &server, writer, &clock) : sendWire(from: &server, to: &client, writer, &clock) {
                tlsFlight += 1
                if tlsFlight == tls.handshakeFlights.count { phase = exchanges.isEmpty ? .close : .request }
            }
        case .request:
            let exchange = exchanges[exchangeIndex]
            if let tls {
                if offset == 0 {
                    wire.begin(
                        prefix: exchangeIndex == 0 ? tls.requestPrefix : [], message: exchange.request, tls: tls,
                        fromClient: true)
                }
                if sendWire(from: &client, to: &server, writer, &clock) { phase = .response }
            } else if send(exchange.request, from: &client, to: &server, writer, &clock) {
                phase = .response
            }
        case .response:
            let exchange = exchanges[exchangeIndex]
            let done: Bool
            if let tls {
                if offset == 0 {
                    wire.begin(
                        prefix: exchangeIndex == 0 ? tls.responsePrefix : [], message: exchange.response, tls: tls,
                        fromClient: false, closeNotify: serverCloses && exchangeIndex == exchanges.count - 1)
                }
                done = sendWire(from: &server, to: &client, writer, &clock)
            } else {
                done = send(exchange.response, from: &server, to: &client, writer, &clock)
            }
            if done {
                exchangeIndex += 1
                phase = exchangeIndex < exchanges.count ? .request : tls != nil && !serverCloses ? .closeNotify : .close
            }
        case .http2:
            let flight = http2Flights[http2Flight]
            let done =
                http2Flight % 2 == 0
                ? send(flight, from: &client, to: &server, writer, &clock)
                : send(flight, from: &server, to: &client, writer, &clock)
            if done {
                http2Flights[http2Flight] = MessageBytes(head: [], body: UnsafeRawBufferPointer(start: nil, count: 0))
                http2Flight += 1
                if http2Flight == http2Flights.count { phase = .close }
            }
        case .closeNotify:
            if offset == 0 { wire.begin(prefix: [], tls: tls!, fromClient: true, closeNotify: true) }
            if sendWire(from: &client, to: &server, writer, &clock) { phase = .close }
        case .close:
            let finACK = FrameBuilder.Flags.fin | FrameBuilder.Flags.ack
            if serverCloses {
                FrameBuilder.emit(writer, time: clock.tick(), from: &server, to: &client, flags: finACK)
                FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: finACK)
                FrameBuilder.emit(writer, time: clock.tick(), from: &server, to: &client, flags: FrameBuilder.Flags.ack)
            } else {
                FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: finACK)
                FrameBuilder.emit(writer, time: clock.tick(), from: &server, to: &client, flags: finACK)
                FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: FrameBuilder.Flags.ack)
            }
            phase = .done
        case .done:
            break
        }
        return phase == .done
    }

    /// Sends up to two segments of `message`; returns true when its last byte has been sent.
    private func send(
        _ message: MessageBytes, from sender: inout TCPPeer, to receiver: inout TCPPeer, _ writer: PcapWriter,
        _ clock: inout PacketClock
    ) -> Bool {
        for _ in 0..<2 where offset < message.count {
            let count = min(FrameBuilder.mss, message.count - offset)
            let last = offset + count == message.count
            let flags = FrameBuilder.Flags.ack | (last ? FrameBuilder.Flags.psh : 0)
            FrameBuilder.emit(
                writer, time: clock.tick(), from: &sender, to: &receiver, flags: flags,
                message: message, offset: offset, count: count)
            offset += count
            if receiver.unacknowledged >= 2 {
                FrameBuilder.emit(
                    writer, time: clock.tick(), from: &receiver, to: &sender,
                    flags: FrameBuilder.Flags.ack)
            }
        }
        guard offset == message.count else { return false }
        offset = 0
        return true
    }

    /// Sends up to two segments of the TLS wire message in `wire`; returns true when its last byte has been sent.
    private func sendWire(
        from sender: inout TCPPeer, to receiver: inout TCPPeer, _ writer: PcapWriter, _ clock: inout PacketClock
    ) -> Bool {
        for _ in 0..<2 where offset < wire.total {
            let count = min(FrameBuilder.mss, wire.total - offset)
            let last = offset + count == wire.total
            let flags = FrameBuilder.Flags.ack | (last ? FrameBuilder.Flags.psh : 0)
            wire.withNext(count) { payload in
                FrameBuilder.emit(
                    writer, time: clock.tick(), from: &sender, to: &receiver, flags: flags, payload: payload,
                    count: count)
            }
            offset += count
            if receiver.unacknowledged >= 2 {
                FrameBuilder.emit(
                    writer, time: clock.tick(), from: &receiver, to: &sender,
                    flags: FrameBuilder.Flags.ack)
            }
        }
        guard offset == wire.total else { return false }
        wire.end()
        offset = 0
        return true
    }
}

/// One wire message of an HTTPS connection: a prefix of ready records (handshake flights), then a message's
/// plaintext sealed into application_data records as the segments need them, then maybe a close_notify.
/// At most one record (about 16 KiB) is buffered at a time, whatever the message's size.
struct TLSWireMessage {
    private var buffer: [UInt8] = []
    private var read = 0
    private var message: MessageBytes?
    private var sealed = 0
    private var closeNotify = false
    private var fromClient = true
    private var tls: SimulatedTLS?
    private var chunk: [UInt8] = []
    /// The message's bytes on the wire.
    private(set) var total = 0

    mutating func begin(
        prefix: [UInt8], message: MessageBytes? = nil, tls: SimulatedTLS, fromClient: Bool, closeNotify: Bool = false
    ) {
        buffer.removeAll(keepingCapacity: true)
        buffer += prefix
        read = 0
        self.message = message
        sealed = 0
        self.closeNotify = closeNotify
        self.fromClient = fromClient
        self.tls = tls
        total = prefix.count + (message.map { tls.protectedLength($0.count) } ?? 0) + (closeNotify ? tls.alertLength : 0)
    }

    /// Calls `body` with the next `count` bytes, sealing records until they are buffered.
    mutating func withNext(_ count: Int, _ body: (UnsafeRawPointer) -> Void) {
        while buffer.count - read < count {
            if read > 0 {
                buffer.removeSubrange(0..<read)
                read = 0
            }
            if let message, sealed < message.count {
                let n = min(SimulatedTLS.maximumPlaintext, message.count - sealed)
                chunk.removeAll(keepingCapacity: true)
                chunk.append(contentsOf: repeatElement(0, count: n))
                chunk.withUnsafeMutableBytes { message.copy(from: sealed, count: n, to: $0.baseAddress!) }
                buffer += tls!.seal(23, chunk, fromClient: fromClient)
                sealed += n
            } else if closeNotify {
                buffer += tls!.seal(21, [1, 0], fromClient: fromClient)  // close_notify (RFC 8446 §6.1)
                closeNotify = false
            } else {
                preconditionFailure("TLS wire message shorter than planned")
            }
        }
        buffer.withUnsafeBytes { body($0.baseAddress! + read) }
        read += count
    }

    mutating func end() {
        precondition(read == buffer.count && !closeNotify && sealed == (message?.count ?? 0), "TLS wire message longer than planned")
        message = nil
        tls = nil
    }
}

/// The capture's clock: strictly increasing microseconds since the Unix epoch.
struct PacketClock {
    var microseconds: UInt64
    var generator: SeededGenerator

    /// Advances by a few to a few hundred microseconds and returns the new time.
    mutating func tick() -> UInt64 {
        microseconds += UInt64(generator.next() % 120) + 3
        return microseconds
    }
}
