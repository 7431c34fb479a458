import Testing
import TrafficCapture
import TrafficTLS
import TrafficWire

@testable import TrafficQUIC

/// With a key log: the server's Initial carries a ServerHello (cipher suite), and the client's 1-RTT packets,
/// protected with keys from the logged CLIENT_TRAFFIC_SECRET_0, are opened.
@Suite struct QUICDecryptionTests {
    typealias T = QUICConnectionTableTests

    static let clientSecret = [UInt8](repeating: 0x5c, count: 32)
    static let serverSecret = [UInt8](repeating: 0x5d, count: 32)

    /// NSS key log lines under the ClientHello's random (00 01 … 1f).
    static var keyLog: TLSKeyLog {
        let random = (0..<32).map { String(format2($0)) }.joined()
        let text = "CLIENT_TRAFFIC_SECRET_0 \(random) \(String(repeating: "5c", count: 32))\n"
            + "SERVER_TRAFFIC_SECRET_0 \(random) \(String(repeating: "5d", count: 32))\n"
        return TLSKeyLog(text: Array(text.utf8))
    }

    static func format2(_ v: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[v >> 4], digits[v & 15]])
    }

    /// A TLS 1.3 ServerHello (RFC 8446 §4.1.3): legacy_version 0303, random 40…5f, empty session id echo,
    /// TLS_AES_128_GCM_SHA256, null compression, supported_versions = 0304.
    /// Body 2 + 32 + 1 + 2 + 1 + 2 (extensions length 6) + 6 = 46 = 0x2e; message 50 bytes.
    static let serverHello: [UInt8] =
        [0x02, 0x00, 0x00, 0x2e, 0x03, 0x03] + (0x40..<0x60).map { UInt8($0) } + [0x00, 0x13, 0x01, 0x00]
        + [0x00, 0x06, 0x00, 0x2b, 0x00, 0x02, 0x03, 0x04]

    /// The server's Initial: c1 (2-byte pn) 00000001, DCID length 0, SCID `scid`, token length 0, Length 2-byte
    /// varint, pn 0000; payload: CRYPTO(0, ServerHello) padded to 100 bytes. Header 1+4+1+1+n+1+2+2 = 12 + n.
    static func serverInitial(scid: [UInt8], clientDCID: [UInt8]) -> [UInt8] {
        let length = 2 + 100 + 16
        let header: [UInt8] = [0xc1, 0, 0, 0, 1, 0, UInt8(scid.count)] + scid + [0x00, 0x40, UInt8(length), 0, 0]
        let frames = T.cryptoFrame(offset: 0, serverHello)
        let payload = frames + [UInt8](repeating: 0, count: 100 - frames.count)
        let keys = clientDCID.withUnsafeBytes { QUICPacketKeys.initial(dcid: $0, version: .v1) }!
        return keys.server.protect(header: header, pnLength: 2, packetNumber: 0, payload: payload)!
    }

    /// A client 1-RTT packet to `dcid`: 40 (1-byte pn, key phase 0), DCID, pn 00; a STREAM frame 0x0a (LEN)
    /// on stream 0 with "hello", padded to 20 bytes.
    static func oneRTT(dcid: [UInt8]) -> [UInt8] {
        let header: [UInt8] = [0x40] + dcid + [0x00]
        let frames: [UInt8] = [0x0a, 0x00, 0x05] + Array("hello".utf8)
        let payload = frames + [UInt8](repeating: 0, count: 20 - frames.count)
        let keys = QUICPacketKeys(secret: clientSecret, suite: TLSCipherSuite(rawValue: 0x1301), version: .v1)!
        return keys.protect(header: header, pnLength: 1, packetNumber: 0, payload: payload)!
    }

    static func run(serverCIDLength: Int, variant: UInt8) -> QUICConnection? {
        var connections: [QUICConnection] = []
        let table = QUICConnectionTable(keyLog: keyLog, ended: { connections.append($0) })
        let dcid: [UInt8] = [0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, variant]
        let scid = (0..<serverCIDLength).map { UInt8(0xe0 + $0) ^ variant }
        T.send(table, T.initial(T.cryptoFrame(offset: 0, T.clientHello), packetNumber: 0, dcid: dcid))
        T.send(table, serverInitial(scid: scid, clientDCID: dcid), fromClient: false)
        T.send(table, oneRTT(dcid: scid))
        table.finish()
        return connections.first
    }

    @Test func aOneRTTPacketOpensWhenTheServerCIDHasTheClientsDCIDLength() throws {
        for variant in UInt8(0)..<16 {
            let c = try #require(Self.run(serverCIDLength: 8, variant: variant))
            #expect(c.cipherSuite == TLSCipherSuite(rawValue: 0x1301))
            #expect(c.hasSecrets)
            #expect(c.stats[1].decryptedPackets == 1, "variant \(variant)")
            // The Initial and the 1-RTT packet.
            #expect(c.stats[0].decryptedPackets == 2, "variant \(variant)")
            #expect(c.decrypted, "variant \(variant)")
            #expect(c.stats[0].requestStreamBytes == 5, "variant \(variant)")
            #expect(c.summary.decryption == "decrypted")
        }
    }

    /// The server chose a 4-byte connection ID while the client's first DCID had 8 bytes: short headers toward
    /// the server carry 4 bytes of DCID (RFC 9000 §17.3.1).
    ///
    /// Once a bug: client-to-server short headers were read with the length of any of the server's IDs, and the
    /// client's first DCID (8 bytes) is one of them, so about half of these connections took the packet number
    /// from the wrong offset. The length now comes from the server's long-header SCID.
    @Test func aOneRTTPacketOpensWhenTheServerCIDIsShorterThanTheClientsFirstDCID() throws {
        var failures: [UInt8] = []
        for variant in UInt8(0)..<16 {
            let c = try #require(Self.run(serverCIDLength: 4, variant: variant))
            if c.stats[0].decryptedPackets != 2 || !c.decrypted { failures.append(variant) }
        }
        #expect(failures.isEmpty, "1-RTT not opened for variants \(failures)")
    }
}
