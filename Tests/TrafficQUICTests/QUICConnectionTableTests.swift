import PropertyBased
import Testing
import TrafficCapture
import TrafficTLS
import TrafficTestSupport
import TrafficWire

@testable import TrafficQUIC

/// The connection table fed datagrams: client Initials built with `protect` from a hand-written ClientHello,
/// the RFC 9001 A.2 Initial, and hostile input.
@Suite struct QUICConnectionTableTests {
    static let client = Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 50000)
    static let server = Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 443)
    static let dcid: [UInt8] = [0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8]

    /// A minimal TLS 1.3 ClientHello handshake message (RFC 8446 §4.1.2) offering SNI "example.test" and
    /// ALPN "h3". 84 bytes.
    static let clientHello: [UInt8] = {
        let name = Array("example.test".utf8)  // 12 bytes
        // server_name (RFC 6066 §3): type 0x0000, ext length 17 = 2 (list length) + 15;
        // list length 15 = 1 (name type host_name 0) + 2 (name length) + 12.
        let sni: [UInt8] = [0x00, 0x00, 0x00, 0x11, 0x00, 0x0f, 0x00, 0x00, 0x0c] + name  // 4 + 17 = 21
        // ALPN (RFC 7301 §3.1): type 0x0010, ext length 5 = 2 (list length 3) + 1 (length 2) + "h3".
        let alpn: [UInt8] = [0x00, 0x10, 0x00, 0x05, 0x00, 0x03, 0x02, 0x68, 0x33]  // 9
        // supported_versions: type 0x002b, ext length 3 = 1 (list length 2) + TLS 1.3 (0x0304).
        let versions: [UInt8] = [0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04]  // 7
        let extensions = sni + alpn + versions  // 21 + 9 + 7 = 37 = 0x25
        var body: [UInt8] = [0x03, 0x03]  // legacy_version
        body += (0..<32).map { UInt8($0) }  // random 00 01 … 1f
        body += [0x00]  // legacy_session_id: empty
        body += [0x00, 0x02, 0x13, 0x01]  // cipher_suites: TLS_AES_128_GCM_SHA256
        body += [0x01, 0x00]  // legacy_compression_methods: null
        body += [0x00, 0x25] + extensions
        // body: 2 + 32 + 1 + 4 + 2 + 2 + 37 = 80 = 0x50; message: type 1 (client_hello), uint24 length.
        precondition(body.count == 0x50)
        return [0x01, 0x00, 0x00, 0x50] + body
    }()

    /// A CRYPTO frame (RFC 9000 §19.6): type 0x06, offset and length as 2-byte varints (0x40 | high byte).
    static func cryptoFrame(offset: Int, _ data: [UInt8]) -> [UInt8] {
        [0x06, 0x40 | UInt8(offset >> 8), UInt8(offset & 0xff), 0x40 | UInt8(data.count >> 8), UInt8(data.count & 0xff)] + data
    }

    /// A protected v1 client Initial of exactly `size` bytes: header c3 00000001 <DCID length> <dcid> 00 (no
    /// SCID) 00 (no token) Length (2-byte varint) pn (4 bytes) = 14 + DCID length bytes (22 with 8), then the
    /// frames padded with PADDING, then the 16-byte tag. Length = size − (header − 4): the pn, payload and tag.
    static func initial(_ frames: [UInt8], packetNumber: UInt32, size: Int = 1200, dcid: [UInt8] = dcid) -> [UInt8] {
        let headerLength = 14 + dcid.count
        let length = size - (headerLength - 4)
        let header: [UInt8] =
            [0xc3, 0, 0, 0, 1, UInt8(dcid.count)] + dcid + [0x00, 0x00, 0x40 | UInt8(length >> 8), UInt8(length & 0xff)]
            + [UInt8(packetNumber >> 24), UInt8((packetNumber >> 16) & 0xff), UInt8((packetNumber >> 8) & 0xff),
               UInt8(packetNumber & 0xff)]
        precondition(header.count == headerLength)
        let payload = frames + [UInt8](repeating: 0, count: size - headerLength - 16 - frames.count)
        let keys = dcid.withUnsafeBytes { QUICPacketKeys.initial(dcid: $0, version: .v1) }!
        let packet = keys.client.protect(header: header, pnLength: 4, packetNumber: UInt64(packetNumber), payload: payload)!
        precondition(packet.count == size)
        return packet
    }

    final class Ended {
        var connections: [QUICConnection] = []
    }

    static func table(keyLog: TLSKeyLog? = nil) -> (QUICConnectionTable, Ended) {
        let ended = Ended()
        return (QUICConnectionTable(keyLog: keyLog, ended: { ended.connections.append($0) }), ended)
    }

    /// Feeds `bytes` as one UDP datagram (Ethernet 14 + IPv4 20 + UDP 8 = 42 bytes of frame around it).
    @discardableResult
    static func send(
        _ table: QUICConnectionTable, _ bytes: [UInt8], payloadLength: Int? = nil, fromClient: Bool = true,
        time: Int64 = 0
    ) -> Bool {
        bytes.withUnsafeBytes { raw in
            let length = payloadLength ?? bytes.count
            let datagram = UDPDatagram(
                source: fromClient ? client : server, destination: fromClient ? server : client,
                payloadLength: length, payload: raw, frameBytes: length + 42)
            return table.process(datagram, time: CaptureTime(nanoseconds: time), packetIndex: 0)
        }
    }

    @Test func theClientHelloIsWhatTheTLSParserReads() throws {
        #expect(Self.clientHello.count == 84)
        #expect(Self.cryptoFrame(offset: 0, Self.clientHello).count == 89)
    }

    @Test func aClientInitialNamesTheConnection() throws {
        let (table, ended) = Self.table()
        let datagram = Self.initial(Self.cryptoFrame(offset: 0, Self.clientHello), packetNumber: 0)
        #expect(Self.send(table, datagram, time: 1_000))
        #expect(ended.connections.isEmpty)
        table.finish()
        #expect(table.connectionCount == 1)
        #expect(ended.connections.count == 1)
        let c = try #require(ended.connections.first)
        #expect(c.serverName == "example.test")
        #expect(c.offeredALPN == ["h3"])
        #expect(c.version == .v1)
        #expect(c.confirmed)
        #expect(c.client == Self.client)
        #expect(c.server == Self.server)
        var expected = QUICDirectionStats()
        expected.datagrams = 1
        expected.udpPayloadBytes = 1200
        expected.frameBytes = 1242
        expected.packets = 1
        expected.decryptedPackets = 1
        // Without request streams, the whole packet is the connection's.
        expected.connectionBytes = 1200
        #expect(c.stats[0] == expected)
        #expect(c.stats[1] == QUICDirectionStats())
        let summary = c.summary
        #expect(summary.serverName == "example.test")
        #expect(summary.offeredALPN == ["h3"])
        #expect(summary.decryption == nil)
        #expect(summary.start == CaptureTime(nanoseconds: 1_000))
        #expect(table.unconfirmedDatagrams == 0)
    }

    @Test func aSmallInitialPaddedByTheDatagram() throws {
        // A 300-byte Initial and 900 zero bytes of datagram padding: 1200 bytes.
        let (table, ended) = Self.table()
        let datagram = Self.initial(Self.cryptoFrame(offset: 0, Self.clientHello), packetNumber: 0, size: 300)
            + [UInt8](repeating: 0, count: 900)
        #expect(Self.send(table, datagram))
        table.finish()
        let c = try #require(ended.connections.first)
        #expect(c.serverName == "example.test")
        #expect(c.stats[0].packets == 1)
        #expect(c.stats[0].paddingBytes == 900)
        #expect(c.stats[0].udpPayloadBytes == 1200)
    }

    @Test func aClientHelloSplitOverTwoInitialsInReverseOrder() throws {
        // 84 bytes: 0..<40 in packet 0, 40..<84 in packet 1; packet 1's datagram comes first.
        let first = Self.initial(Self.cryptoFrame(offset: 0, Array(Self.clientHello[0..<40])), packetNumber: 0)
        let second = Self.initial(Self.cryptoFrame(offset: 40, Array(Self.clientHello[40...])), packetNumber: 1)
        let (table, ended) = Self.table()
        #expect(Self.send(table, second, time: 1))
        #expect(Self.send(table, first, time: 2))
        table.finish()
        #expect(table.connectionCount == 1)
        let c = try #require(ended.connections.first)
        #expect(c.serverName == "example.test")
        #expect(c.offeredALPN == ["h3"])
        #expect(c.stats[0].datagrams == 2)
        #expect(c.stats[0].packets == 2)
        #expect(c.stats[0].udpPayloadBytes == 2400)
        #expect(c.stats[0].decryptedPackets == 2)
    }

    @Test func underTwelveHundredBytesMakesNoConnection() {
        // Same Initial in 1199 bytes (RFC 9000 §14.1: a client's first datagram has at least 1200).
        let (table, ended) = Self.table()
        #expect(!Self.send(table, Self.initial(Self.cryptoFrame(offset: 0, Self.clientHello), packetNumber: 0, size: 1199)))
        table.finish()
        #expect(table.connectionCount == 0)
        #expect(ended.connections.isEmpty)
    }

    @Test func aWrongTagMakesNoConnection() {
        var datagram = Self.initial(Self.cryptoFrame(offset: 0, Self.clientHello), packetNumber: 0)
        datagram[1199] ^= 0x01
        let (table, ended) = Self.table()
        #expect(!Self.send(table, datagram))
        // A byte of ciphertext changed: same.
        var other = Self.initial(Self.cryptoFrame(offset: 0, Self.clientHello), packetNumber: 0)
        other[600] ^= 0x80
        #expect(!Self.send(table, other))
        table.finish()
        #expect(table.connectionCount == 0)
        #expect(ended.connections.isEmpty)
    }

    @Test func aShortDCIDMakesNoConnection() {
        // RFC 9000 §7.2: the client's first DCID has at least 8 bytes; this one has 7 (a 1200-byte Initial
        // that authenticates with the keys of its 7-byte DCID).
        let short = Self.initial(Self.cryptoFrame(offset: 0, Self.clientHello), packetNumber: 0, dcid: Array(Self.dcid.prefix(7)))
        let (table, _) = Self.table()
        #expect(!Self.send(table, short))
        table.finish()
        #expect(table.connectionCount == 0)
    }

    @Test func theRFC9001ClientInitialMakesAConnection() throws {
        // RFC 9001 A.2's ClientHello offers SNI "example.com" and ALPN "alpn" (extension 0010 0007 0005 04 "alpn").
        let (table, ended) = Self.table()
        #expect(Self.send(table, RFCVectors.clientProtected))
        table.finish()
        let c = try #require(ended.connections.first)
        #expect(c.serverName == "example.com")
        #expect(c.offeredALPN == ["alpn"])
        #expect(c.stats[0].packets == 1)
        #expect(c.stats[0].udpPayloadBytes == 1200)
    }

    /// Without a key log the server's Initial is counted but not opened (only the ClientHello is read); with one
    /// (even empty) it is opened for its ServerHello.
    @Test(arguments: [false, true])
    func theServersInitialIsCountedOnTheConnection(withKeyLog: Bool) throws {
        // RFC 9001 A.2 then A.3 (the server's Initial, 135 bytes, back on the same path).
        let (table, ended) = Self.table(keyLog: withKeyLog ? TLSKeyLog() : nil)
        #expect(Self.send(table, RFCVectors.clientProtected))
        #expect(Self.send(table, RFCVectors.serverProtected, fromClient: false))
        table.finish()
        let c = try #require(ended.connections.first)
        #expect(RFCVectors.serverProtected.count == 135)
        #expect(c.stats[1].datagrams == 1)
        #expect(c.stats[1].packets == 1)
        #expect(c.stats[1].udpPayloadBytes == 135)
        #expect(c.stats[1].decryptedPackets == (withKeyLog ? 1 : 0))
        #expect(c.stats[1].undecryptedPackets == (withKeyLog ? 0 : 1))
        #expect(c.serverVersion == .v1)
    }

    @Test func truncatedCopiesOfARealInitialNeverTrapNorConnect() {
        let full = RFCVectors.clientProtected
        for k in stride(from: 0, to: full.count, by: 7) + [full.count - 1] {
            let prefix = Array(full.prefix(k))
            // The UDP length says k bytes (a short datagram) …
            let (short, _) = Self.table()
            #expect(!Self.send(short, prefix), "k = \(k)")
            short.finish()
            #expect(short.connectionCount == 0, "k = \(k)")
            // … or 1200 bytes of which the capture kept k.
            let (cut, _) = Self.table()
            #expect(!Self.send(cut, prefix, payloadLength: 1200), "k = \(k)")
            cut.finish()
            #expect(cut.connectionCount == 0, "k = \(k)")
        }
    }

    @Test func datagramsAfterAConnectionStartsAreCountedEvenIfDamaged() throws {
        let (table, ended) = Self.table()
        #expect(Self.send(table, RFCVectors.clientProtected))
        // A truncated copy on the same path, then random bytes back from the server.
        #expect(Self.send(table, Array(RFCVectors.clientProtected.prefix(100)), payloadLength: 1200))
        #expect(Self.send(table, [0x17, 0x03, 0x03, 0x00], fromClient: false))
        table.finish()
        let c = try #require(ended.connections.first)
        #expect(c.stats[0].datagrams == 2)
        #expect(c.stats[0].udpPayloadBytes == 2400)
        #expect(c.stats[1].datagrams == 1)
        #expect(c.stats[1].udpPayloadBytes == 4)
        // Still the first ClientHello's name.
        #expect(c.serverName == "example.com")
    }

    /// Random UDP payloads, some shaped like long headers of v1, v2 or an unknown version, from random
    /// endpoints: never a trap, and no connection ends confirmed.
    @Test func randomPayloadsMakeNoConnection() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let (table, ended) = Self.table()
            for step in 0..<20 {
                let length = Bool.random(using: &rng) ? Int.random(in: 1...80, using: &rng) : Int.random(in: 1150...1400, using: &rng)
                var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where length >= 6:
                    // A v1 long header with an 8-byte DCID.
                    bytes.replaceSubrange(0..<6, with: [0xc0 | (bytes[0] & 0x3f), 0, 0, 0, 1, 8])
                case 1 where length >= 6:
                    bytes.replaceSubrange(0..<6, with: [0xd0 | (bytes[0] & 0x0f), 0x6b, 0x33, 0x43, 0xcf, 8])
                case 2 where length >= 1:
                    bytes[0] |= 0xc0  // a long header of a random version
                default:
                    break
                }
                let payloadLength = Bool.random(using: &rng) ? length : length + Int.random(in: 0...200, using: &rng)
                let port = UInt16.random(in: 1...4, using: &rng)
                bytes.withUnsafeBytes { raw in
                    let a = Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: port)
                    let b = Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 443)
                    let fromA = Bool.random(using: &rng)
                    let datagram = UDPDatagram(
                        source: fromA ? a : b, destination: fromA ? b : a, payloadLength: payloadLength, payload: raw,
                        frameBytes: payloadLength + 42)
                    _ = table.process(datagram, time: CaptureTime(nanoseconds: Int64(step) * 1_000_000), packetIndex: step)
                }
            }
            table.finish()
            #expect(table.connectionCount == 0, "seed \(seed)")
            #expect(ended.connections.isEmpty, "seed \(seed)")
        }
    }
}
