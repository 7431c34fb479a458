import Testing
import TrafficTLS

@testable import TrafficQUIC

/// RFC 9001 Appendix A (QUIC v1) and RFC 9369 Appendix A (QUIC v2): every expected value is the RFC's.
@Suite struct QUICPacketKeysTests {
    static func initialKeys(_ version: QUICVersion) -> (client: QUICPacketKeys, server: QUICPacketKeys)? {
        RFCVectors.dcid.withUnsafeBytes { QUICPacketKeys.initial(dcid: $0, version: version) }
    }

    static func mask(_ keys: QUICPacketKeys, sample: [UInt8]) -> [UInt8]? {
        guard let m = sample.withUnsafeBytes({ keys.mask(sample: $0) }) else { return nil }
        return [m.0, m.1, m.2, m.3, m.4]
    }

    /// Removes header protection and opens the payload, the receiver's steps (RFC 9001 §5.4.2, §5.3), with
    /// the packet number length known from the RFC's unprotected header.
    static func open(_ packet: [UInt8], keys: QUICPacketKeys, pnOffset: Int, packetNumber: UInt64) -> (header: [UInt8], payload: [UInt8])? {
        guard let m = mask(keys, sample: Array(packet[(pnOffset + 4)..<(pnOffset + 20)])) else { return nil }
        var header = Array(packet[0..<pnOffset])
        header[0] ^= m[0] & (header[0] & 0x80 != 0 ? 0x0f : 0x1f)
        let pnLength = Int(header[0] & 0x03) + 1
        for i in 0..<pnLength { header.append(packet[pnOffset + i] ^ m[1 + i]) }
        let payload = packet[(pnOffset + pnLength)...]
        let opened = header.withUnsafeBytes { h in
            Array(payload).withUnsafeBytes { p in keys.open(packetNumber: packetNumber, header: h, payload: p) }
        }
        return opened.map { (header, Array($0)) }
    }

    // MARK: RFC 9001 A.1

    @Test func v1InitialKeysMatchRFC9001A1() throws {
        let keys = try #require(Self.initialKeys(.v1))
        #expect(keys.client.secret == hex("c00cf151ca5be075ed0ebfb5c80323c4 2d6b7db67881289af4008f1f6c357aea"))
        #expect(keys.client.keyBytes == hex("1f369613dd76d5467730efcbe3b1a22d"))
        #expect(keys.client.iv == hex("fa044b2f42a3fd3b46fb255c"))
        #expect(keys.client.headerKeyBytes == hex("9f50449e04a0e810283a1e9933adedd2"))
        #expect(keys.server.secret == hex("3c199828fd139efd216c155ad844cc81 fb82fa8d7446fa7d78be803acdda951b"))
        #expect(keys.server.keyBytes == hex("cf3a5331653c364c88f0f379b6067e37"))
        #expect(keys.server.iv == hex("0ac1493ca1905853b0bba03e"))
        #expect(keys.server.headerKeyBytes == hex("c206b8d9b9f0f37644430b490eeaa314"))
        #expect(keys.client.cipher == .aes128GCM)
    }

    @Test func headerProtectionMasksMatchRFC9001() throws {
        let keys = try #require(Self.initialKeys(.v1))
        // §A.2: sample = d1b1c98dd7689fb8ec11d242b123dc9b, mask = 437b9aec36.
        #expect(Self.mask(keys.client, sample: hex("d1b1c98dd7689fb8ec11d242b123dc9b")) == hex("437b9aec36"))
        // §A.3: sample = 2cd0991cd25b0aac406a5816b6394100, mask = 2ec0d8356a.
        #expect(Self.mask(keys.server, sample: hex("2cd0991cd25b0aac406a5816b6394100")) == hex("2ec0d8356a"))
        // A sample shorter than 16 bytes has no mask.
        #expect(Self.mask(keys.client, sample: hex("d1b1c98dd7689fb8ec11d242b123dc")) == nil)
    }

    // MARK: RFC 9001 A.2

    static var clientPayload: [UInt8] {
        RFCVectors.clientCryptoFrame + [UInt8](repeating: 0, count: 1162 - RFCVectors.clientCryptoFrame.count)
    }

    @Test func clientInitialProtectsToRFC9001A2() throws {
        let keys = try #require(Self.initialKeys(.v1))
        #expect(RFCVectors.clientCryptoFrame.count == 245)
        let packet = try #require(
            keys.client.protect(header: RFCVectors.clientHeader, pnLength: 4, packetNumber: 2, payload: Self.clientPayload))
        // 22-byte header + 1162-byte payload + 16-byte tag = 1200.
        #expect(packet.count == 1200)
        // The RFC's protected header: c000000001088394c8f03e5157080000449e7b9aec34.
        #expect(Array(packet.prefix(22)) == hex("c000000001088394c8f03e5157080000449e7b9aec34"))
        // Its last bytes (the tag's end).
        #expect(Array(packet.suffix(16)) == hex("e221af44860018ab0856972e194cd934"))
        #expect(packet == RFCVectors.clientProtected)
    }

    @Test func clientInitialOpensFromRFC9001A2() throws {
        let keys = try #require(Self.initialKeys(.v1))
        // pnOffset 18 = 1 + 4 (version) + 1 + 8 (DCID) + 1 (SCID length 0) + 1 (token length 0) + 2 (Length).
        let opened = try #require(Self.open(RFCVectors.clientProtected, keys: keys.client, pnOffset: 18, packetNumber: 2))
        #expect(opened.header == RFCVectors.clientHeader)
        #expect(opened.payload == Self.clientPayload)
        // The server's keys do not open the client's packet.
        #expect(Self.open(RFCVectors.clientProtected, keys: keys.server, pnOffset: 18, packetNumber: 2) == nil)
        // Nor does the right key with another packet number (the nonce differs).
        #expect(Self.open(RFCVectors.clientProtected, keys: keys.client, pnOffset: 18, packetNumber: 3) == nil)
    }

    // MARK: RFC 9001 A.3

    @Test func serverInitialMatchesRFC9001A3() throws {
        let keys = try #require(Self.initialKeys(.v1))
        // Length 0x75 = 117 = 2 (packet number) + 99 (payload) + 16 (tag).
        #expect(RFCVectors.serverPayload.count == 99)
        let packet = try #require(
            keys.server.protect(header: RFCVectors.serverHeader, pnLength: 2, packetNumber: 1, payload: RFCVectors.serverPayload))
        #expect(Array(packet.prefix(20)) == hex("cf000000010008f067a5502a4262b5004075c0d9"))
        #expect(packet == RFCVectors.serverProtected)
        // pnOffset 18 = 1 + 4 + 1 (DCID length 0) + 1 + 8 (SCID) + 1 (token length) + 2 (Length).
        let opened = try #require(Self.open(RFCVectors.serverProtected, keys: keys.server, pnOffset: 18, packetNumber: 1))
        #expect(opened.header == RFCVectors.serverHeader)
        #expect(opened.payload == RFCVectors.serverPayload)
    }

    // MARK: RFC 9001 A.5

    static let chachaSecret = hex("9ac312a7f877468ebe69422748ad00a1 5443f18203a07d6060f688f30f21632b")

    @Test func chaChaShortHeaderMatchesRFC9001A5() throws {
        let keys = try #require(
            QUICPacketKeys(secret: Self.chachaSecret, suite: TLSCipherSuite(rawValue: 0x1303), version: .v1))
        #expect(keys.cipher == .chacha20)
        #expect(keys.keyBytes == hex("c6d98ff3441c3fe1b2182094f69caa2e d4b716b65488960a7a984979fb23e1c8"))
        #expect(keys.iv == hex("e0459b3474bdd0e44a41c144"))
        #expect(keys.headerKeyBytes == hex("25a282b9e82f06f21f488917a4fc8f1b 73573685608597d0efcb076b0ab7a7a4"))
        // pn 654360564 = 0x2700bff4, sent as 3 bytes 00bff4 after the first byte 0x42 (pn length 3 → bits 10).
        let packet = try #require(keys.protect(header: hex("4200bff4"), pnLength: 3, packetNumber: 654_360_564, payload: [0x01]))
        #expect(packet == hex("4cfe4189655e5cd55c41f69080575d7999c25a5bfb"))
        #expect(Self.mask(keys, sample: hex("5e5cd55c41f69080575d7999c25a5bfb")) == hex("aefefe7d03"))
        // pnOffset 1: empty DCID.
        let opened = try #require(Self.open(packet, keys: keys, pnOffset: 1, packetNumber: 654_360_564))
        #expect(opened.header == hex("4200bff4"))
        #expect(opened.payload == [0x01])
    }

    @Test func keyUpdateUsesTheRFC9001A5KUSecretAndKeepsTheHeaderKey() throws {
        let keys = try #require(
            QUICPacketKeys(secret: Self.chachaSecret, suite: TLSCipherSuite(rawValue: 0x1303), version: .v1))
        let next = try #require(keys.updated())
        #expect(next.secret == hex("1223504755036d556342ee9361d25342 1a826c9ecdf3c7148684b36b714881f9"))
        #expect(next.headerKeyBytes == keys.headerKeyBytes)
        #expect(next.keyBytes != keys.keyBytes)
        #expect(next.cipher == .chacha20)
    }

    @Test func suitesQUICDoesNotUseHaveNoKeys() {
        // TLS_AES_128_CCM_SHA256 (0x1304) and a TLS 1.2 suite.
        #expect(QUICPacketKeys(secret: Self.chachaSecret, suite: TLSCipherSuite(rawValue: 0x1304), version: .v1) == nil)
        #expect(QUICPacketKeys(secret: Self.chachaSecret, suite: TLSCipherSuite(rawValue: 0xc02f), version: .v1) == nil)
    }

    // MARK: RFC 9369 A.1 (QUIC v2)

    @Test func v2InitialKeysMatchRFC9369A1() throws {
        #expect(QUICVersion.v2.initialSalt == hex("0dede3def700a6db819381be6e269dcbf9bd2ed9"))
        let keys = try #require(Self.initialKeys(.v2))
        #expect(keys.client.secret == hex("14ec9d6eb9fd7af83bf5a668bc17a7e283766aade7ecd0891f70f9ff7f4bf47b"))
        #expect(keys.client.keyBytes == hex("8b1a0bc121284290a29e0971b5cd045d"))
        #expect(keys.client.iv == hex("91f73e2351d8fa91660e909f"))
        #expect(keys.client.headerKeyBytes == hex("45b95e15235d6f45a6b19cbcb0294ba9"))
        #expect(keys.server.secret == hex("0263db1782731bf4588e7e4d93b7463907cb8cd8200b5da55a8bd488eafc37c1"))
        #expect(keys.server.keyBytes == hex("82db637861d55e1d011f19ea71d5d2a7"))
        #expect(keys.server.iv == hex("dd13c276499c0249d3310652"))
        #expect(keys.server.headerKeyBytes == hex("edf6d05c83121201b436e16877593c3a"))
    }

    /// RFC 9369 A.2: the same ClientHello as RFC 9001 A.2 in a v2 Initial (type bits 01: first byte 0xd3).
    @Test func v2ClientInitialHeaderMatchesRFC9369A2() throws {
        let keys = try #require(Self.initialKeys(.v2))
        let header = hex("d36b3343cf088394c8f03e5157080000449e00000002")
        let packet = try #require(keys.client.protect(header: header, pnLength: 4, packetNumber: 2, payload: Self.clientPayload))
        #expect(packet.count == 1200)
        #expect(Array(packet.prefix(32)) == hex("d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb4298b485"))
    }

    @Test func unknownVersionsHaveNoInitialKeys() {
        #expect(Self.initialKeys(QUICVersion(rawValue: 0x1a2a_3a4a)) == nil)
        #expect(Self.initialKeys(.negotiation) == nil)
        // Draft 29 (0xff00001d) shares draft 29's salt: keys exist.
        #expect(Self.initialKeys(QUICVersion(rawValue: 0xff00_001d)) != nil)
    }
}
