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
    }

    private enum Phase { case handshake, request, response, close, done }

    private var client: TCPPeer
    private var server: TCPPeer
    private let exchanges: [Exchange]
    /// The server closes first (it answered `Connection: close`); otherwise the client does.
    private let serverCloses: Bool
    private var phase = Phase.handshake
    private var exchangeIndex = 0
    private var offset = 0

    init(client: TCPPeer, server: TCPPeer, exchanges: [Exchange], serverCloses: Bool) {
        self.client = client
        self.server = server
        self.exchanges = exchanges
        self.serverCloses = serverCloses
    }

    /// The file bytes this connection will add: exact for handshake, data and teardown, and for
    /// the pure ACKs, which follow every second data segment of a message.
    var plannedFileBytes: Int {
        let record = 16 + 14 + 20 + 32  // pcap record header + Ethernet + IPv4 + TCP with timestamps
        var total = 2 * (record + 8) + record  // SYN and SYN-ACK carry 8 more option bytes
        for exchange in exchanges {
            for message in [exchange.request, exchange.response] {
                let segments = (message.count + FrameBuilder.mss - 1) / FrameBuilder.mss
                total += message.count + segments * record + (segments / 2) * record
            }
        }
        return total + 3 * record
    }

    /// Emits the next flight of packets; returns true once the connection is closed.
    func step(_ writer: PcapWriter, clock: inout PacketClock) -> Bool {
        switch phase {
        case .handshake:
            FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: FrameBuilder.Flags.syn)
            FrameBuilder.emit(
                writer, time: clock.tick(), from: &server, to: &client,
                flags: FrameBuilder.Flags.syn | FrameBuilder.Flags.ack)
            FrameBuilder.emit(writer, time: clock.tick(), from: &client, to: &server, flags: FrameBuilder.Flags.ack)
            phase = exchanges.isEmpty ? .close : .request
        case .request:
            if send(exchanges[exchangeIndex].request, from: &client, to: &server, writer, &clock) {
                phase = .response
            }
        case .response:
            if send(exchanges[exchangeIndex].response, from: &server, to: &client, writer, &clock) {
                exchangeIndex += 1
                phase = exchangeIndex < exchanges.count ? .request : .close
            }
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
