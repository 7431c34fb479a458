import TrafficTLS

/// The TLS layer of one simulated HTTPS connection (`traffic-bench-gen --tls`): its handshake flights, its
/// application-data record protection and its key log lines.
///
/// Handshakes are real in structure (RFC 8446 §4, RFC 5246 §7.4): the ClientHello offers TLS 1.3 and 1.2 with
/// SNI, ALPN `http/1.1`, key_share and supported_versions; the ServerHello answers with a random, the echoed or
/// a new session id, the suite and (TLS 1.3) supported_versions and key_share. Certificates, signatures and
/// Finished contents are random bytes of realistic sizes: nobody verifies them, only their framing matters.
/// Every protected record is sealed with `TLSRecordDecryptor.seal` from the logged secrets; no cipher is
/// written here.
///
/// Flights (each a wire message one side sends while the other waits):
/// - TLS 1.3: C: ClientHello. S: ServerHello, change_cipher_spec, {EncryptedExtensions, Certificate},
///   {CertificateVerify, Finished} (server handshake keys). C: change_cipher_spec, {Finished} (client
///   handshake keys) + the first request (`requestPrefix`). S: {NewSessionTicket} (server application keys) +
///   the first response (`responsePrefix`).
/// - TLS 1.2: C: ClientHello. S: ServerHello, Certificate, ServerKeyExchange, ServerHelloDone. C:
///   ClientKeyExchange, change_cipher_spec, {Finished}. S: NewSessionTicket, change_cipher_spec, {Finished}.
///   Then the requests and responses.
/// Application data goes in records of at most 2^14 plaintext bytes; a message never shares a record with
/// another, so each message's TLS overhead is `protectedLength(n) - n`.
final class SimulatedTLS {
    enum Flavor: CaseIterable {
        case tls13AES128GCM, tls13ChaCha20, tls12AES128GCM, tls12ChaCha20

        var version: TLSVersion { self == .tls13AES128GCM || self == .tls13ChaCha20 ? .tls13 : .tls12 }
        /// TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256 (RFC 8446 §B.4);
        /// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (RFC 5289), TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 (RFC 7905).
        var suite: UInt16 { [0x1301, 0x1303, 0xc02f, 0xcca8][Flavor.allCases.firstIndex(of: self)!] }
        var name: String { ["tls13_aes128gcm", "tls13_chacha20", "tls12_aes128gcm", "tls12_chacha20"][Flavor.allCases.firstIndex(of: self)!] }
    }

    static let maximumPlaintext = 16384

    let flavor: Flavor
    /// The handshake flights before the first request, client first, then alternating.
    let handshakeFlights: [[UInt8]]
    /// Sent right before the first request's records, in the same flight (TLS 1.3: CCS and client Finished).
    let requestPrefix: [UInt8]
    /// Sent right before the first response's records (TLS 1.3: NewSessionTicket).
    let responsePrefix: [UInt8]
    /// NSS key log lines (RFC 9850), each ending in LF.
    let keyLogLines: String
    /// Bytes every application_data record adds to its plaintext: header, explicit nonce, tag, inner type.
    let recordOverhead: Int
    private var clientWriter: TLSRecordDecryptor
    private var serverWriter: TLSRecordDecryptor

    /// Chooses the flavor and all randomness from `generator` (not the traffic model's, so that the HTTP
    /// exchanges stay those of the cleartext capture of the same seed).
    init(host: String, generator g: inout SeededGenerator) {
        // Most connections TLS 1.3, most AES-128-GCM; a fifth ChaCha20-Poly1305.
        let tls13 = g.chance(0.6)
        let chacha = g.chance(0.2)
        let flavor: Flavor = tls13 ? (chacha ? .tls13ChaCha20 : .tls13AES128GCM) : (chacha ? .tls12ChaCha20 : .tls12AES128GCM)
        self.flavor = flavor
        let suite = flavor.suite
        let parameters = TLSCipherParameters(suite: TLSCipherSuite(rawValue: suite), version: flavor.version)!
        recordOverhead = 5 + parameters.recordIVLength + parameters.tagOrMACLength + (tls13 ? 1 : 0)

        let clientRandom = g.bytes(32)
        let serverRandom = g.bytes(32)
        let sessionID = g.bytes(32)
        let certificates = Self.certificateChain(host: host)
        let clientHello = Self.record(22, version: 0x0301, Self.clientHello(host: host, random: clientRandom, sessionID: sessionID, keyShare: g.bytes(32)))

        if tls13 {
            let secrets = (0..<4).map { _ in g.bytes(32) }
            var serverHandshake = TLS13KeySchedule.decryptor(parameters: parameters, trafficSecret: secrets[1])
            var clientHandshake = TLS13KeySchedule.decryptor(parameters: parameters, trafficSecret: secrets[0])
            clientWriter = TLS13KeySchedule.decryptor(parameters: parameters, trafficSecret: secrets[2])
            serverWriter = TLS13KeySchedule.decryptor(parameters: parameters, trafficSecret: secrets[3])
            var serverHello = ByteWriter()
            serverHello.u16(0x0303)
            serverHello.append(serverRandom)
            serverHello.vector8 { $0.append(sessionID) }  // legacy_session_id_echo
            serverHello.u16(suite)
            serverHello.u8(0)
            serverHello.vector16 { e in
                e.u16(43); e.vector16 { $0.u16(0x0304) }  // supported_versions: selected_version
                e.u16(51); e.vector16 { $0.u16(0x001d); $0.vector16 { $0.append(g.bytes(32)) } }  // key_share x25519
            }
            var encrypted = ByteWriter()
            encrypted.message(8) { m in  // EncryptedExtensions: ALPN
                m.vector16 { e in e.u16(16); e.vector16 { $0.vector16 { $0.vector8 { $0.append(Array("http/1.1".utf8)) } } } }
            }
            encrypted.message(11) { m in  // Certificate (RFC 8446 §4.4.2)
                m.vector8 { _ in }
                m.vector24 { list in
                    for certificate in certificates {
                        list.vector24 { $0.append(certificate) }
                        list.vector16 { _ in }
                    }
                }
            }
            var verify = ByteWriter()
            verify.message(15) { m in m.u16(0x0804); m.vector16 { $0.append(g.bytes(256)) } }  // rsa_pss_rsae_sha256
            verify.message(20) { m in m.append(g.bytes(32)) }  // Finished
            var serverFlight = Self.record(22, version: 0x0303, serverHello.message(2))
            serverFlight += Self.changeCipherSpec
            serverFlight += serverHandshake.seal(contentType: 22, plaintext: encrypted.bytes)
            serverFlight += serverHandshake.seal(contentType: 22, plaintext: verify.bytes)
            handshakeFlights = [clientHello, serverFlight]

            var finished = ByteWriter()
            finished.message(20) { m in m.append(g.bytes(32)) }
            requestPrefix = Self.changeCipherSpec + clientHandshake.seal(contentType: 22, plaintext: finished.bytes)
            var ticket = ByteWriter()
            ticket.message(4) { m in  // NewSessionTicket (RFC 8446 §4.6.1)
                m.u32(7200)
                m.u32(UInt32(truncatingIfNeeded: g.next()))
                m.vector8 { $0.append(g.bytes(8)) }
                m.vector16 { $0.append(g.bytes(192)) }
                m.vector16 { _ in }
            }
            responsePrefix = serverWriter.seal(contentType: 22, plaintext: ticket.bytes)
            let labels = [
                "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0",
                "SERVER_TRAFFIC_SECRET_0",
            ]
            keyLogLines = zip(labels, secrets).map { "\($0) \(hex(clientRandom)) \(hex($1))\n" }.joined()
        } else {
            let master = g.bytes(48)
            let keys = TLS12KeySchedule.decryptors(
                parameters: parameters, version: .tls12, masterSecret: master, clientRandom: clientRandom,
                serverRandom: serverRandom, encryptThenMAC: false)
            clientWriter = keys.client
            serverWriter = keys.server
            var server = ByteWriter()
            server.message(2) { m in
                m.u16(0x0303)
                m.append(serverRandom)
                m.vector8 { $0.append(g.bytes(32)) }  // a new session
                m.u16(suite)
                m.u8(0)
                m.vector16 { e in
                    e.u16(0xff01); e.vector16 { $0.u8(0) }  // renegotiation_info
                    e.u16(11); e.vector16 { $0.vector8 { $0.u8(0) } }  // ec_point_formats: uncompressed
                    e.u16(35); e.vector16 { _ in }  // session_ticket
                    e.u16(23); e.vector16 { _ in }  // extended_master_secret
                    e.u16(16); e.vector16 { $0.vector16 { $0.vector8 { $0.append(Array("http/1.1".utf8)) } } }
                }
            }
            server.message(11) { m in m.vector24 { list in for c in certificates { list.vector24 { $0.append(c) } } } }
            server.message(12) { m in  // ServerKeyExchange: ECDHE x25519, rsa_pss_rsae_sha256 signature
                m.u8(3); m.u16(0x001d); m.vector8 { $0.append(g.bytes(32)) }
                m.u16(0x0804); m.vector16 { $0.append(g.bytes(256)) }
            }
            server.message(14) { _ in }  // ServerHelloDone
            var keyExchange = ByteWriter()
            keyExchange.message(16) { m in m.vector8 { $0.append(g.bytes(32)) } }
            var clientFinished = ByteWriter()
            clientFinished.message(20) { m in m.append(g.bytes(12)) }
            var ticket = ByteWriter()
            ticket.message(4) { m in m.u32(7200); m.vector16 { $0.append(g.bytes(192)) } }  // RFC 5077 §3.3
            var serverFinished = ByteWriter()
            serverFinished.message(20) { m in m.append(g.bytes(12)) }
            handshakeFlights = [
                clientHello,
                Self.record(22, version: 0x0303, server.bytes),
                Self.record(22, version: 0x0303, keyExchange.bytes) + Self.changeCipherSpec
                    + clientWriter.seal(contentType: 22, plaintext: clientFinished.bytes),
                Self.record(22, version: 0x0303, ticket.bytes) + Self.changeCipherSpec
                    + serverWriter.seal(contentType: 22, plaintext: serverFinished.bytes),
            ]
            requestPrefix = []
            responsePrefix = []
            keyLogLines = "CLIENT_RANDOM \(hex(clientRandom)) \(hex(master))\n"
        }
    }

    /// The wire length of `count` plaintext bytes in application_data records of at most 2^14 bytes.
    func protectedLength(_ count: Int) -> Int {
        count + (count + Self.maximumPlaintext - 1) / Self.maximumPlaintext * recordOverhead
    }

    /// The wire length of a close_notify alert.
    var alertLength: Int { 2 + recordOverhead }

    /// One protected record of `contentType` from the client's (or the server's) application keys.
    func seal(_ contentType: UInt8, _ plaintext: [UInt8], fromClient: Bool) -> [UInt8] {
        fromClient
            ? clientWriter.seal(contentType: contentType, plaintext: plaintext)
            : serverWriter.seal(contentType: contentType, plaintext: plaintext)
    }

    static let changeCipherSpec: [UInt8] = [20, 3, 3, 0, 1, 1]

    static func record(_ type: UInt8, version: UInt16, _ body: [UInt8]) -> [UInt8] {
        precondition(body.count <= maximumPlaintext)
        return [type, UInt8(version >> 8), UInt8(version & 0xff), UInt8(body.count >> 8), UInt8(body.count & 0xff)]
            + body
    }

    /// A ClientHello as curl --http1.1 sends it (less GREASE): TLS 1.3 and 1.2 suites, SNI, ALPN http/1.1, x25519.
    static func clientHello(host: String, random: [UInt8], sessionID: [UInt8], keyShare: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.message(1) { m in
            m.u16(0x0303)
            m.append(random)
            m.vector8 { $0.append(sessionID) }  // RFC 8446 §D.4 middlebox compatibility
            m.vector16 { s in
                for suite: UInt16 in [0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035] {
                    s.u16(suite)
                }
            }
            m.vector8 { $0.u8(0) }
            m.vector16 { e in
                e.u16(0); e.vector16 { $0.vector16 { $0.u8(0); $0.vector16 { $0.append(Array(host.utf8)) } } }
                e.u16(23); e.vector16 { _ in }  // extended_master_secret
                e.u16(0xff01); e.vector16 { $0.u8(0) }  // renegotiation_info
                e.u16(10); e.vector16 { $0.vector16 { for g: UInt16 in [0x001d, 0x0017, 0x0018] { $0.u16(g) } } }
                e.u16(11); e.vector16 { $0.vector8 { $0.u8(0) } }
                e.u16(35); e.vector16 { _ in }  // session_ticket, none to offer
                e.u16(16); e.vector16 { $0.vector16 { $0.vector8 { $0.append(Array("http/1.1".utf8)) } } }  // ALPN
                e.u16(5); e.vector16 { $0.append([1, 0, 0, 0, 0]) }  // status_request
                e.u16(13); e.vector16 { $0.vector16 { for s: UInt16 in [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601] { $0.u16(s) } } }
                e.u16(51); e.vector16 { $0.vector16 { $0.u16(0x001d); $0.vector16 { $0.append(keyShare) } } }
                e.u16(45); e.vector16 { $0.vector8 { $0.u8(1) } }  // psk_key_exchange_modes: psk_dhe_ke
                e.u16(43); e.vector16 { $0.vector8 { $0.u16(0x0304); $0.u16(0x0303) } }  // supported_versions
            }
        }
        return w.bytes
    }

    /// A leaf and an intermediate certificate per host: DER-sized random bytes, the same for every connection.
    nonisolated(unsafe) private static var chains: [String: [[UInt8]]] = [:]

    static func certificateChain(host: String) -> [[UInt8]] {
        if let chain = chains[host] { return chain }
        var g = SeededGenerator(seed: UInt64(truncatingIfNeeded: host.utf8.reduce(5381) { $0 &* 33 &+ Int($1) }))
        let chain = [1300 + g.int(0...400), 1100].map { size in [0x30, 0x82, UInt8(size >> 8), UInt8(size & 0xff)] + g.bytes(size) }
        chains[host] = chain
        return chain
    }
}

/// Big-endian TLS encoding: integers, length-prefixed vectors (RFC 8446 §3.4), handshake messages.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xff)] }
    mutating func u24(_ v: Int) { bytes += [UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    mutating func u32(_ v: UInt32) { bytes += [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    mutating func append(_ b: [UInt8]) { bytes += b }

    mutating func vector8(_ body: (inout ByteWriter) -> Void) { vector(1, body) }
    mutating func vector16(_ body: (inout ByteWriter) -> Void) { vector(2, body) }
    mutating func vector24(_ body: (inout ByteWriter) -> Void) { vector(3, body) }

    /// A handshake message: type(1) length(3) body (RFC 8446 §4).
    mutating func message(_ type: UInt8, _ body: (inout ByteWriter) -> Void) {
        u8(type)
        vector(3, body)
    }

    /// One handshake message of `type` around the bytes written so far.
    func message(_ type: UInt8) -> [UInt8] {
        var w = ByteWriter()
        w.message(type) { $0.append(bytes) }
        return w.bytes
    }

    private mutating func vector(_ lengthBytes: Int, _ body: (inout ByteWriter) -> Void) {
        var inner = ByteWriter()
        body(&inner)
        let n = inner.bytes.count
        precondition(n < 1 << (8 * lengthBytes))
        for shift in stride(from: 8 * (lengthBytes - 1), through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: n >> shift)) }
        bytes += inner.bytes
    }
}

extension SeededGenerator {
    mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            withUnsafeBytes(of: next()) { out.append(contentsOf: $0.prefix(count - out.count)) }
        }
        return out
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
