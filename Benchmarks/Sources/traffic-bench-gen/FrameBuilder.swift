/// One side of a simulated TCP connection: its addresses and its half of the connection state.
struct TCPPeer {
    var address: UInt32
    var port: UInt16
    /// The low 32 bits of a locally administered MAC address (02:00 prefix).
    var mac: UInt32
    /// The next sequence number this side sends.
    var sequence: UInt32
    /// Added to the millisecond clock to give this side's TCP timestamp (RFC 7323 §3).
    var timestampBase: UInt32
    /// The last TSval this side sent, echoed by the peer as TSecr.
    var lastTimestamp: UInt32 = 0
    var ipIdentification: UInt16
    /// The advertised window field; scaled by 2^7 after the handshake.
    var window: UInt16
    /// Data segments received since this side last sent anything (which acknowledges them).
    var unacknowledged = 0
}

/// The bytes of one message on the wire: a head built per message, a body shared from the store; or, for
/// `--h2`, one side's flight of frames, assembled from pieces.
struct MessageBytes {
    var head: [UInt8]
    var body: UnsafeRawBufferPointer
    var assembled: AssembledBytes?

    init(head: [UInt8], body: UnsafeRawBufferPointer) {
        self.head = head
        self.body = body
    }

    init(assembled: AssembledBytes) {
        head = []
        body = UnsafeRawBufferPointer(start: nil, count: 0)
        self.assembled = assembled
    }

    var count: Int { assembled?.count ?? head.count + body.count }

    /// Copies `count` bytes starting at `offset` to `destination`.
    func copy(from offset: Int, count: Int, to destination: UnsafeMutableRawPointer) {
        if let assembled {
            assembled.copy(from: offset, count: count, to: destination)
            return
        }
        var offset = offset
        var written = 0
        if offset < head.count {
            let n = min(count, head.count - offset)
            head.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            written = n
            offset += n
        }
        if written < count {
            destination.advanced(by: written).copyMemory(
                from: body.baseAddress! + (offset - head.count), byteCount: count - written)
        }
    }
}

/// Builds Ethernet/IPv4/TCP frames as pcap records, with correct IPv4 and TCP checksums.
///
/// Every frame is a full MTU-1500 Ethernet frame at most: 14 (Ethernet) + 20 (IPv4) + 32 (TCP with
/// NOP, NOP, Timestamps) + 1448 payload = 1514 bytes. SYNs carry Linux's option list
/// (MSS 1460, SACK permitted, Timestamps, NOP, window scale 7) in a 40-byte TCP header.
enum FrameBuilder {
    static let mss = 1448
    static let gatewayMAC: UInt32 = 0x0000_0001

    struct Flags {
        static let fin: UInt8 = 0x01
        static let syn: UInt8 = 0x02
        static let psh: UInt8 = 0x08
        static let ack: UInt8 = 0x10
    }

    /// Appends one segment from `sender` to `receiver` and updates both sides' state.
    ///
    /// The payload is `count` bytes of `message` starting at `offset`, or `count` bytes at `payload`.
    static func emit(
        _ writer: PcapWriter, time microseconds: UInt64, from sender: inout TCPPeer, to receiver: inout TCPPeer,
        flags: UInt8, message: MessageBytes? = nil, offset: Int = 0, payload: UnsafeRawPointer? = nil, count: Int = 0
    ) {
        let isSYN = flags & Flags.syn != 0
        let tcpHeaderLength = isSYN ? 40 : 32
        let ipLength = 20 + tcpHeaderLength + count
        let frameLength = 14 + ipLength
        let record = writer.packet(capacity: 16 + frameLength)

        // pcap record header, host order.
        record.storeBytes(of: UInt32(truncatingIfNeeded: microseconds / 1_000_000), toByteOffset: 0, as: UInt32.self)
        record.storeBytes(of: UInt32(truncatingIfNeeded: microseconds % 1_000_000), toByteOffset: 4, as: UInt32.self)
        record.storeBytes(of: UInt32(frameLength), toByteOffset: 8, as: UInt32.self)
        record.storeBytes(of: UInt32(frameLength), toByteOffset: 12, as: UInt32.self)

        // Ethernet II: client frames go to the gateway, server frames come from it.
        let frame = record + 16
        let sourceMAC = sender.mac
        let destinationMAC = receiver.mac
        frame.storeBytes(of: UInt16(0x0200).bigEndian, toByteOffset: 0, as: UInt16.self)
        frame.storeBytes(of: destinationMAC.bigEndian, toByteOffset: 2, as: UInt32.self)
        frame.storeBytes(of: UInt16(0x0200).bigEndian, toByteOffset: 6, as: UInt16.self)
        frame.storeBytes(of: sourceMAC.bigEndian, toByteOffset: 8, as: UInt32.self)
        frame.storeBytes(of: UInt16(0x0800).bigEndian, toByteOffset: 12, as: UInt16.self)

        // IPv4 (RFC 791): no options, DF set, TTL 64.
        let ip = frame + 14
        ip.storeBytes(of: UInt16(0x4500).bigEndian, toByteOffset: 0, as: UInt16.self)
        ip.storeBytes(of: UInt16(ipLength).bigEndian, toByteOffset: 2, as: UInt16.self)
        ip.storeBytes(of: sender.ipIdentification.bigEndian, toByteOffset: 4, as: UInt16.self)
        sender.ipIdentification &+= 1
        ip.storeBytes(of: UInt16(0x4000).bigEndian, toByteOffset: 6, as: UInt16.self)
        ip.storeBytes(of: UInt16(0x4006).bigEndian, toByteOffset: 8, as: UInt16.self)  // TTL 64, TCP
        ip.storeBytes(of: UInt16(0), toByteOffset: 10, as: UInt16.self)
        ip.storeBytes(of: sender.address.bigEndian, toByteOffset: 12, as: UInt32.self)
        ip.storeBytes(of: receiver.address.bigEndian, toByteOffset: 16, as: UInt32.self)
        ip.storeBytes(of: Checksum.finish(Checksum.sum(UnsafeRawPointer(ip), 20)), toByteOffset: 10, as: UInt16.self)

        // TCP (RFC 9293) with timestamps (RFC 7323).
        let tcp = ip + 20
        let timestamp = sender.timestampBase &+ UInt32(truncatingIfNeeded: microseconds / 1000)
        sender.lastTimestamp = timestamp
        let acknowledges = flags & Flags.ack != 0
        tcp.storeBytes(of: sender.port.bigEndian, toByteOffset: 0, as: UInt16.self)
        tcp.storeBytes(of: receiver.port.bigEndian, toByteOffset: 2, as: UInt16.self)
        tcp.storeBytes(of: sender.sequence.bigEndian, toByteOffset: 4, as: UInt32.self)
        tcp.storeBytes(of: (acknowledges ? receiver.sequence : 0).bigEndian, toByteOffset: 8, as: UInt32.self)
        tcp.storeBytes(of: UInt8(tcpHeaderLength / 4) << 4, toByteOffset: 12, as: UInt8.self)
        tcp.storeBytes(of: flags, toByteOffset: 13, as: UInt8.self)
        // Windows in SYNs are never scaled (RFC 7323 §2.2): advertise 64240 there.
        tcp.storeBytes(of: (isSYN ? UInt16(64240) : sender.window).bigEndian, toByteOffset: 14, as: UInt16.self)
        tcp.storeBytes(of: UInt32(0), toByteOffset: 16, as: UInt32.self)  // checksum, urgent pointer
        let echoed = acknowledges ? receiver.lastTimestamp : 0
        if isSYN {
            // mss 1460, sackOK, TS val ecr, nop, wscale 7: Linux's SYN option order.
            tcp.storeBytes(of: UInt32(0x0204_05b4).bigEndian, toByteOffset: 20, as: UInt32.self)
            tcp.storeBytes(of: UInt16(0x0402).bigEndian, toByteOffset: 24, as: UInt16.self)
            tcp.storeBytes(of: UInt16(0x080a).bigEndian, toByteOffset: 26, as: UInt16.self)
            tcp.storeBytes(of: timestamp.bigEndian, toByteOffset: 28, as: UInt32.self)
            tcp.storeBytes(of: echoed.bigEndian, toByteOffset: 32, as: UInt32.self)
            tcp.storeBytes(of: UInt32(0x0103_0307).bigEndian, toByteOffset: 36, as: UInt32.self)
        } else {
            tcp.storeBytes(of: UInt32(0x0101_080a).bigEndian, toByteOffset: 20, as: UInt32.self)
            tcp.storeBytes(of: timestamp.bigEndian, toByteOffset: 24, as: UInt32.self)
            tcp.storeBytes(of: echoed.bigEndian, toByteOffset: 28, as: UInt32.self)
        }
        if let message, count > 0 {
            message.copy(from: offset, count: count, to: tcp + tcpHeaderLength)
        } else if let payload, count > 0 {
            (tcp + tcpHeaderLength).copyMemory(from: payload, byteCount: count)
        }
        // Pseudo-header (RFC 9293 §3.1): addresses from the IP header, then zero, protocol, TCP length.
        var sum = Checksum.sum(UnsafeRawPointer(ip + 12), 8)
        sum &+= UInt64((UInt32(6) << 16 | UInt32(tcpHeaderLength + count)).bigEndian)
        sum &+= Checksum.sum(UnsafeRawPointer(tcp), tcpHeaderLength + count)
        tcp.storeBytes(of: Checksum.finish(sum), toByteOffset: 16, as: UInt16.self)

        writer.commit(16 + frameLength)

        // Sequence space: SYN and FIN take one number each (RFC 9293 §3.4).
        sender.sequence &+= UInt32(count) &+ (isSYN ? 1 : 0) &+ (flags & Flags.fin != 0 ? 1 : 0)
        sender.unacknowledged = 0
        if count > 0 { receiver.unacknowledged += 1 }
    }
}

/// The Internet checksum (RFC 1071), summed in host order.
///
/// RFC 1071 §2(B): the one's complement sum is byte-order independent, so words are loaded in host
/// order and the folded result is stored in host order, which puts the right bytes in the packet.
enum Checksum {
    @inline(__always)
    static func sum(_ bytes: UnsafeRawPointer, _ count: Int) -> UInt64 {
        var total: UInt64 = 0
        var index = 0
        while index + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            total &+= (word & 0xffff_ffff) &+ (word >> 32)
            index += 8
        }
        if index + 4 <= count {
            total &+= UInt64(bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self))
            index += 4
        }
        if index + 2 <= count {
            total &+= UInt64(bytes.loadUnaligned(fromByteOffset: index, as: UInt16.self))
            index += 2
        }
        if index < count {
            // An odd last byte is padded with a zero byte after it, in memory order.
            var last: UInt16 = 0
            withUnsafeMutableBytes(of: &last) { $0[0] = bytes.load(fromByteOffset: index, as: UInt8.self) }
            total &+= UInt64(last)
        }
        return total
    }

    @inline(__always)
    static func finish(_ sum: UInt64) -> UInt16 {
        var folded = sum
        while folded >> 16 != 0 { folded = (folded & 0xffff) &+ (folded >> 16) }
        return ~UInt16(folded)
    }
}
