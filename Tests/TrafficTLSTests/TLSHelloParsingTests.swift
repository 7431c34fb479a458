import Testing
import TrafficTLS

@Suite struct TLSHelloParsingTests {
    typealias B = TLSBytes

    /// Every prefix of a hello body either parses or gives nil; none traps.
    @Test func truncatedHellosNeverTrap() {
        let client = Array(
            B.clientHello(extensions: [
                B.serverName("x.example"), B.alpn(["h2"]), B.clientSupportedVersions([0x0304]), B.ext(0xfe0d, [1, 2]),
            ]).dropFirst(4))
        let server = Array(
            B.serverHello(suite: 0x1301, extensions: [B.serverSupportedVersion(0x0304), B.alpn(["h2"])]).dropFirst(4))
        for length in 0...client.count {
            let hello = client[..<length].withUnsafeBytes { TLSClientHello.parse($0) }
            // A body that ends right after the compression methods is a valid extension-less hello.
            if length == client.count {
                #expect(hello?.serverName == "x.example" && hello?.hasEncryptedClientHello == true)
            }
        }
        for length in 0...server.count {
            _ = server[..<length].withUnsafeBytes { TLSServerHello.parse($0) }
        }
        #expect(server.withUnsafeBytes { TLSServerHello.parse($0) }?.alpnProtocol == "h2")
    }

    /// A length field that claims more than the body holds makes the hello malformed.
    @Test func overlongVectorIsMalformed() {
        var body = Array(B.clientHello(extensions: [B.serverName("x.example")]).dropFirst(4))
        // The body ends with the host name's 2-byte length and its 9 bytes: claim 0xff09 bytes instead.
        body[body.count - 11] = 0xff
        #expect(body.withUnsafeBytes { TLSClientHello.parse($0) } == nil)
    }

    @Test func extensionlessClientHello() {
        // RFC 5246 §7.4.1.2: SSL 3.0 / early TLS clients may send no extensions block at all.
        let body = B.u16(0x0301) + B.opaque(32) + B.vector8([]) + B.vector16(B.u16(0x002f)) + B.vector8([0])
        let hello = body.withUnsafeBytes { TLSClientHello.parse($0) }
        #expect(hello?.legacyVersion == .tls10)
        #expect(hello?.cipherSuites == [TLSCipherSuite(rawValue: 0x002f)])
        #expect(hello?.serverName == nil)
    }

    @Test(arguments: [
        (0x1301, "TLS_AES_128_GCM_SHA256"), (0xc030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
        (0xcca9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"), (0x0a0a, "0x0a0a"), (0xabcd, "0xabcd"),
    ])
    func cipherSuiteNames(_ value: Int, _ name: String) {
        #expect(TLSCipherSuite(rawValue: UInt16(value)).name == name)
    }

    @Test(arguments: [
        (0x0300, "SSL 3.0"), (0x0301, "TLS 1.0"), (0x0303, "TLS 1.2"), (0x0304, "TLS 1.3"), (0x7f1c, "0x7f1c"),
    ])
    func versionNames(_ value: Int, _ name: String) {
        #expect(TLSVersion(rawValue: UInt16(value)).name == name)
    }

    @Test(
        arguments: [
            // 16 03 01 00 f8 01: handshake record, TLS 1.0 record version, ClientHello.
            ([0x16, 0x03, 0x01, 0x00, 0xf8, 0x01], true),
            ([0x16, 0x03, 0x03, 0x02, 0x00, 0x01], true),
            ([0x16, 0x03, 0x01, 0x00, 0xf8, 0x02], false),  // a ServerHello
            ([0x17, 0x03, 0x03, 0x00, 0x20, 0x01], false),  // application data
            ([0x16, 0x03, 0x05, 0x00, 0x20, 0x01], false),  // version 0x0305
            ([0x16, 0x03, 0x01, 0x48, 0x01, 0x01], false),  // length 18433 > 2^14 + 2048
            ([0x16, 0x03, 0x01, 0x00, 0x00, 0x01], false),  // empty record
            ([0x16, 0x03, 0x01, 0x00, 0xf8], false),  // too short to see the handshake type
            (Array("GET / HTTP/1.1\r\n".utf8), false),
        ] as [([UInt8], Bool)])
    func looksLikeTLS(_ bytes: [UInt8], _ expected: Bool) {
        #expect(bytes.withUnsafeBytes { TLSConnectionParser.looksLikeTLS($0) } == expected)
    }
}
