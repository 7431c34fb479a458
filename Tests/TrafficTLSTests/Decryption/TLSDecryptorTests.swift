import Testing
import TrafficCapture
import TrafficReassembly
import TrafficSessions
@testable import TrafficTLS

/// The decrypting stage on connections built here: hellos from `TLSFixtures`, records protected with
/// `TLSRecordDecryptor.seal` (whose output is checked against RFC 8448 and Python's `cryptography` in the
/// Protection tests), secrets made up and given as a key log. Expected plaintexts and byte counts are the
/// ones put in, and record overheads are counted by hand from RFC 8446 §5.2 / RFC 5288 §3.
@Suite struct TLSDecryptorTests {
    typealias F = TLSBytes

    static let clientRandom = [UInt8](repeating: 0x11, count: 32)
    static let serverRandom = [UInt8](repeating: 0x22, count: 32)
    static let secrets13: [String: [UInt8]] = [
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET": .init(repeating: 0xa1, count: 32),
        "SERVER_HANDSHAKE_TRAFFIC_SECRET": .init(repeating: 0xa2, count: 32),
        "CLIENT_TRAFFIC_SECRET_0": .init(repeating: 0xa3, count: 32),
        "SERVER_TRAFFIC_SECRET_0": .init(repeating: 0xa4, count: 32),
    ]
    static let master12 = [UInt8](repeating: 0x5c, count: 48)

    static func hexText(_ bytes: [UInt8]) -> String { bytes.map { String(format2: $0) }.joined() }

    static func keyLog(_ lines: [(String, [UInt8])]) -> TLSKeyLog {
        TLSKeyLog(text: Array(lines.map { "\($0.0) \(hexText(clientRandom)) \(hexText($0.1))\n" }.joined().utf8))
    }

    static let suite13 = TLSCipherParameters(suite: TLSCipherSuite(rawValue: 0x1301), version: .tls13)!

    static func sealer13(_ label: String, _ secrets: [String: [UInt8]] = secrets13) -> TLSRecordDecryptor {
        TLS13KeySchedule.decryptor(parameters: suite13, trafficSecret: secrets[label]!)
    }

    /// A TLS 1.3 connection: hellos, the encrypted flights, then `requests`/`responses` as application data,
    /// one record each; `extraServer` records after the first response (e.g. a KeyUpdate).
    static func conversation13(requests: [[UInt8]], responses: [[UInt8]]) -> [TLSStep] {
        let hello = F.record(22, F.clientHello(suites: [0x1301], extensions: [F.clientSupportedVersions([0x0304])]))
        let serverHello = F.record(
            22, F.serverHello(random: serverRandom, suite: 0x1301, extensions: [F.serverSupportedVersion(0x0304)]))
        var serverHandshake = sealer13("SERVER_HANDSHAKE_TRAFFIC_SECRET")
        let encryptedExtensions = F.handshake(8, F.vector16([]))
        let serverFlight = serverHandshake.seal(
            contentType: 22, plaintext: encryptedExtensions + F.handshake(20, .init(repeating: 0xf1, count: 32)))
        var clientHandshake = sealer13("CLIENT_HANDSHAKE_TRAFFIC_SECRET")
        let clientFinished = clientHandshake.seal(contentType: 22, plaintext: F.handshake(20, .init(repeating: 0xf2, count: 32)))
        var client = sealer13("CLIENT_TRAFFIC_SECRET_0"), server = sealer13("SERVER_TRAFFIC_SECRET_0")
        var steps: [TLSStep] = [.client(hello), .server(serverHello + F.record(20, [1]) + serverFlight),
                                .client(F.record(20, [1]) + clientFinished)]
        for (request, response) in zip(requests, responses) {
            steps.append(.client(client.seal(contentType: 23, plaintext: request)))
            steps.append(.server(server.seal(contentType: 23, plaintext: response)))
        }
        return steps
    }

    /// Records what the decryptor hands its child.
    final class Child: SessionStage {
        var received: [[UInt8]] = [[], []]
        var framing = [0, 0]
        var overhead = [0, 0]
        var skipped = [0, 0]
        var events: [TCPPacketEvent] = []
        var finished = false

        func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
            received[direction.rawValue] += bytes
            framing[direction.rawValue] += span.framingBytes
            overhead[direction.rawValue] += span.overheadBytes
        }
        func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) { skipped[direction.rawValue] += byteCount }
        func finish(time: CaptureTime) { finished = true }
        func packet(_ event: TCPPacketEvent) { events.append(event) }
    }

    struct Run {
        let decryptor: TLSDecryptor
        let child: Child?
        /// Bytes fed per direction.
        let sent: [Int]
    }

    /// Feeds `steps` in pieces of `chunk` bytes (nil: whole), each delivery carrying 40 overhead bytes.
    static func run(_ steps: [TLSStep], keyLog: TLSKeyLog, chunk: Int? = nil) -> Run {
        var made: Child?
        let decryptor = TLSDecryptor(context: TLSDecryptionContext(keyLog: keyLog)) {
            let child = Child()
            made = child
            return child
        }
        var sent = [0, 0]
        for step in steps {
            switch step {
            case .client(let bytes), .server(let bytes):
                let direction: Direction = if case .client = step { .clientToServer } else { .serverToClient }
                sent[direction.rawValue] += bytes.count
                let size = chunk ?? bytes.count
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + size)
                    bytes[start..<end].withUnsafeBytes {
                        decryptor.receive($0, direction: direction, span: WireSpan(time: .zero, overheadBytes: 40))
                    }
                    start = end
                }
            case .gap(let direction, let count):
                sent[direction.rawValue] += count
                decryptor.skip(count, direction: direction, time: .zero)
            }
        }
        decryptor.finish(time: .zero)
        return Run(decryptor: decryptor, child: made, sent: sent)
    }

    static let requests = [Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8), Array("GET /2 HTTP/1.1\r\nHost: a\r\n\r\n".utf8)]
    static let responses = [Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".utf8),
                            Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)]

    /// Every byte of a direction lands in exactly one bucket.
    static func expectConserved(_ run: Run, _ label: String = "") {
        for direction in Direction.allCases {
            let a = run.decryptor.accounting(direction)
            #expect(a.plaintextBytes + a.framingBytes + a.controlBytes + a.undecryptedBytes + a.missingBytes
                == run.sent[direction.rawValue], "\(label) \(direction)")
        }
    }

    @Test(arguments: [nil, 1, 3, 7, 100] as [Int?])
    func tls13PlaintextReachesTheChild(chunk: Int?) throws {
        let run = Self.run(Self.conversation13(requests: Self.requests, responses: Self.responses),
                           keyLog: Self.keyLog(Self.secrets13.map { ($0.key, $0.value) }), chunk: chunk)
        #expect(run.decryptor.outcome == .decrypted)
        let child = try #require(run.child)
        #expect(child.received[0] == Self.requests.flatMap { $0 })
        #expect(child.received[1] == Self.responses.flatMap { $0 })
        // RFC 8446 §5.2: 5-byte header, the inner content type byte, a 16-byte AES-GCM tag: 22 per record.
        #expect(child.framing == [44, 44])
        let server = run.decryptor.accounting(.serverToClient)
        #expect(server.plaintextBytes == Self.responses.reduce(0) { $0 + $1.count })
        // The ServerHello record: header 5 + message header 4 + version 2 + random 32 + session id 1+32 + suite 2
        // + compression 1 + extensions 2+6 = 87; change_cipher_spec 6; the encrypted flight: EncryptedExtensions 6
        // + Finished 36 + header 5 + inner type 1 + tag 16 = 64.
        #expect(server.controlBytes == 87 + 6 + 64)
        #expect(run.decryptor.failedRecordCount == 0)
        Self.expectConserved(run)
        // All TCP overhead of the direction reaches the child, the handshake's with the first application data.
        let deliveries = [0, 0].indices.map { d in chunk.map { size in
            Self.conversation13(requests: Self.requests, responses: Self.responses).reduce(0) { total, step in
                switch (step, d) {
                case (.client(let b), 0), (.server(let b), 1): total + (b.count + size - 1) / size
                default: total
                }
            }
        } ?? (d == 0 ? 4 : 3) }
        #expect(child.overhead == deliveries.map { $0 * 40 })
    }

    @Test func keyUpdateMovesTheSenderToItsNextSecret() throws {
        var steps = Self.conversation13(requests: [Self.requests[0]], responses: [Self.responses[0]])
        // The server's next records use the secret after "traffic upd" (RFC 8446 §7.2).
        var server = Self.sealer13("SERVER_TRAFFIC_SECRET_0")
        server.sequenceNumber = 1
        let keyUpdate = server.seal(contentType: 22, plaintext: F.handshake(24, [0]))
        let next = TLS13KeySchedule.nextTrafficSecret(.sha256, Self.secrets13["SERVER_TRAFFIC_SECRET_0"]!)
        var updated = TLS13KeySchedule.decryptor(parameters: Self.suite13, trafficSecret: next)
        steps.append(.server(keyUpdate + updated.seal(contentType: 23, plaintext: Self.responses[1])))
        let run = Self.run(steps, keyLog: Self.keyLog(Self.secrets13.map { ($0.key, $0.value) }))
        let child = try #require(run.child)
        #expect(child.received[1] == Self.responses.flatMap { $0 })
        #expect(run.decryptor.failedRecordCount == 0)
        Self.expectConserved(run)
    }

    @Test func wrongSecretsFailEveryRecordAndGiveTheChildNothing() {
        var wrong = Self.secrets13
        wrong["SERVER_HANDSHAKE_TRAFFIC_SECRET"]![0] ^= 1
        wrong["CLIENT_HANDSHAKE_TRAFFIC_SECRET"]![0] ^= 1
        wrong["SERVER_TRAFFIC_SECRET_0"]![0] ^= 1
        wrong["CLIENT_TRAFFIC_SECRET_0"]![0] ^= 1
        let run = Self.run(Self.conversation13(requests: Self.requests, responses: Self.responses),
                           keyLog: Self.keyLog(wrong.map { ($0.key, $0.value) }))
        #expect(run.decryptor.outcome == .decryptFailed)
        #expect(run.child?.received == [[], []])
        Self.expectConserved(run)
    }

    @Test func noSecretsForTheClientRandom() {
        let other = TLSKeyLog(text: Array(("CLIENT_RANDOM " + String(repeating: "ab", count: 32) + " "
            + String(repeating: "cd", count: 48) + "\n").utf8))
        let run = Self.run(Self.conversation13(requests: Self.requests, responses: Self.responses), keyLog: other)
        #expect(run.decryptor.outcome == .noKey)
        #expect(run.child == nil)
        Self.expectConserved(run)
    }

    @Test func aGapInsideARecordLosesOnlyThatRecord() throws {
        var steps = Self.conversation13(requests: Self.requests, responses: Self.responses)
        // Cut 10 bytes out of the middle of the first response's record: the record is lost, the next one
        // (sequence number 1) still opens.
        guard case .server(let first) = steps[4] else { Issue.record("layout"); return }
        steps[4] = .server(Array(first[0..<20]))
        steps.insert(.gap(.serverToClient, 10), at: 5)
        steps.insert(.server(Array(first[30...])), at: 6)
        let run = Self.run(steps, keyLog: Self.keyLog(Self.secrets13.map { ($0.key, $0.value) }))
        let child = try #require(run.child)
        #expect(child.received[1] == Self.responses[1])
        // The lost record's plaintext is known but for its padding: fragment length less type byte and tag.
        #expect(child.skipped[1] == Self.responses[0].count)
        let server = run.decryptor.accounting(.serverToClient)
        #expect(server.missingBytes == 10)
        #expect(server.undecryptedBytes == first.count - 10)
        Self.expectConserved(run)
    }

    @Test func acknowledgementsMoveToPlaintextPositions() throws {
        let steps = Self.conversation13(requests: Self.requests, responses: Self.responses)
        var made: Child?
        let decryptor = TLSDecryptor(context: TLSDecryptionContext(keyLog: Self.keyLog(Self.secrets13.map { ($0.key, $0.value) }))) {
            let child = Child()
            made = child
            return child
        }
        var wire = [0, 0]
        var acks: [(Int64, Int)] = []  // (TCP position acknowledged in the server stream, expected plaintext position)
        for step in steps {
            switch step {
            case .client(let b):
                b.withUnsafeBytes { decryptor.receive($0, direction: .clientToServer, span: WireSpan(time: .zero)) }
                wire[0] += b.count
            case .server(let b):
                b.withUnsafeBytes { decryptor.receive($0, direction: .serverToClient, span: WireSpan(time: .zero)) }
                wire[1] += b.count
                acks.append((Int64(wire[1]), made == nil ? 0 : -1))
            case .gap: break
            }
        }
        // The client acknowledges the whole server stream: the plaintext end.
        decryptor.packet(TCPPacketEvent(kind: .ack, direction: .clientToServer, frameBytes: 66,
                                        streamOffset: Int64(wire[1]), time: .zero))
        // And a position inside the last response record: one past that record's plaintext start.
        decryptor.packet(TCPPacketEvent(kind: .ack, direction: .clientToServer, frameBytes: 66,
                                        streamOffset: Int64(wire[1] - 10), time: .zero))
        let child = try #require(made)
        #expect(child.events.map(\.streamOffset) == [
            Int64(Self.responses[0].count + Self.responses[1].count), Int64(Self.responses[0].count + 1),
        ])
    }

    static func conversation12(suite: Int, encryptThenMAC: Bool = false) -> (steps: [TLSStep], sealers: (TLSRecordDecryptor, TLSRecordDecryptor)) {
        let parameters = TLSCipherParameters(suite: TLSCipherSuite(rawValue: UInt16(suite)), version: .tls12)!
        var (client, server) = TLS12KeySchedule.decryptors(
            parameters: parameters, version: .tls12, masterSecret: master12, clientRandom: clientRandom,
            serverRandom: serverRandom, encryptThenMAC: encryptThenMAC)
        let hello = F.record(22, F.clientHello(suites: [suite], extensions: encryptThenMAC ? [F.ext(22, [])] : []))
        let serverHello = F.record(22, F.serverHello(
            random: serverRandom, suite: suite, extensions: encryptThenMAC ? [F.ext(22, [])] : []) + F.handshake(14, []))
        var steps: [TLSStep] = [.client(hello), .server(serverHello)]
        steps.append(.client(F.record(22, F.handshake(16, F.vector8(.init(repeating: 4, count: 65)))) + F.record(20, [1])
            + client.seal(contentType: 22, plaintext: F.handshake(20, .init(repeating: 0xf2, count: 12)))))
        steps.append(.server(F.record(20, [1]) + server.seal(contentType: 22, plaintext: F.handshake(20, .init(repeating: 0xf1, count: 12)))))
        for (request, response) in zip(requests, responses) {
            steps.append(.client(client.seal(contentType: 23, plaintext: request)))
            steps.append(.server(server.seal(contentType: 23, plaintext: response)))
        }
        return (steps, (client, server))
    }

    /// (suite, encrypt_then_mac, record overhead beyond the plaintext for the fixtures' plaintext lengths).
    @Test(arguments: [
        // RFC 5288 §3: header 5 + explicit nonce 8 + tag 16.
        (0xC02F, false, [29, 29], [29, 29]),
        // RFC 7905: header 5 + tag 16, no explicit nonce.
        (0xCCA8, false, [21, 21], [21, 21]),
    ])
    func tls12AEADSuites(suite: Int, encryptThenMAC: Bool, requestOverhead: [Int], responseOverhead: [Int]) throws {
        let (steps, _) = Self.conversation12(suite: suite, encryptThenMAC: encryptThenMAC)
        let run = Self.run(steps, keyLog: Self.keyLog([("CLIENT_RANDOM", Self.master12)]), chunk: 5)
        #expect(run.decryptor.outcome == .decrypted)
        let child = try #require(run.child)
        #expect(child.received[0] == Self.requests.flatMap { $0 })
        #expect(child.received[1] == Self.responses.flatMap { $0 })
        #expect(child.framing == [requestOverhead.reduce(0, +), responseOverhead.reduce(0, +)])
        Self.expectConserved(run)
    }

    @Test(arguments: [false, true])
    func tls12CBCWithAndWithoutEncryptThenMAC(encryptThenMAC: Bool) throws {
        // TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: explicit IV 16, HMAC-SHA1 20, padding to a 16-byte block.
        let (steps, _) = Self.conversation12(suite: 0xC013, encryptThenMAC: encryptThenMAC)
        let run = Self.run(steps, keyLog: Self.keyLog([("CLIENT_RANDOM", Self.master12)]))
        let child = try #require(run.child)
        #expect(child.received[0] == Self.requests.flatMap { $0 })
        #expect(child.received[1] == Self.responses.flatMap { $0 })
        func overhead(_ n: Int) -> Int {
            // MAC-then-encrypt pads plaintext + MAC + 1; encrypt-then-MAC pads plaintext + 1 and appends the MAC.
            let padded = encryptThenMAC ? (n + 1 + 15) / 16 * 16 + 20 : (n + 20 + 1 + 15) / 16 * 16
            return 5 + 16 + padded - n
        }
        #expect(child.framing == [Self.requests.map(\.count).map(overhead).reduce(0, +),
                                  Self.responses.map(\.count).map(overhead).reduce(0, +)])
        Self.expectConserved(run)
    }

    /// TLS 1.2 renegotiation (RFC 5246 §7.4.1.2): a second handshake inside the protected stream, its own client
    /// random and master secret in the key log; each side's change_cipher_spec, protected under the old keys, hands
    /// over to the new ones. The application data after it decrypts.
    @Test func renegotiationMovesToTheNewKeys() throws {
        var (steps, sealers) = Self.conversation12(suite: 0xC02F)
        var (client, server) = sealers
        let random2 = [UInt8](repeating: 0x33, count: 32), server2 = [UInt8](repeating: 0x44, count: 32)
        let master2 = [UInt8](repeating: 0x6d, count: 48)
        var hello2 = F.clientHello(suites: [0xC02F], extensions: [])
        hello2.replaceSubrange(6..<38, with: random2)  // type 1, length 3, version 2, then the random
        steps.append(.client(client.seal(contentType: 22, plaintext: hello2)))
        steps.append(.server(server.seal(contentType: 22, plaintext: F.serverHello(random: server2, suite: 0xC02F, extensions: [])
            + F.handshake(14, []))))
        let parameters = TLSCipherParameters(suite: TLSCipherSuite(rawValue: 0xC02F), version: .tls12)!
        var (newClient, newServer) = TLS12KeySchedule.decryptors(
            parameters: parameters, version: .tls12, masterSecret: master2, clientRandom: random2, serverRandom: server2,
            encryptThenMAC: false)
        steps.append(.client(client.seal(contentType: 20, plaintext: [1])
            + newClient.seal(contentType: 22, plaintext: F.handshake(20, .init(repeating: 0xf3, count: 12)))
            + newClient.seal(contentType: 23, plaintext: Self.requests[0])))
        steps.append(.server(server.seal(contentType: 20, plaintext: [1])
            + newServer.seal(contentType: 22, plaintext: F.handshake(20, .init(repeating: 0xf4, count: 12)))
            + newServer.seal(contentType: 23, plaintext: Self.responses[0])))
        let log = TLSKeyLog(text: Array(("CLIENT_RANDOM \(Self.hexText(Self.clientRandom)) \(Self.hexText(Self.master12))\n"
            + "CLIENT_RANDOM \(Self.hexText(random2)) \(Self.hexText(master2))\n").utf8))
        let run = Self.run(steps, keyLog: log)
        let child = try #require(run.child)
        #expect(run.decryptor.failedRecordCount == 0)
        #expect(child.received[0] == Self.requests.flatMap { $0 } + Self.requests[0])
        #expect(child.received[1] == Self.responses.flatMap { $0 } + Self.responses[0])
        Self.expectConserved(run)
    }

    @Test func resumedSessionFindsTheMasterSecretOfItsSessionID() throws {
        let context = TLSDecryptionContext(keyLog: Self.keyLog([("CLIENT_RANDOM", Self.master12)]))
        // The first connection establishes session 0x55…; its key log line is for client random 0x11….
        let (first, _) = Self.conversation12(suite: 0xC02F)
        let decryptor = TLSDecryptor(context: context) { Child() }
        for step in first {
            switch step {
            case .client(let b): b.withUnsafeBytes { decryptor.receive($0, direction: .clientToServer, span: WireSpan(time: .zero)) }
            case .server(let b): b.withUnsafeBytes { decryptor.receive($0, direction: .serverToClient, span: WireSpan(time: .zero)) }
            case .gap: break
            }
        }
        #expect(decryptor.outcome == .decrypted)
        #expect(context.sessions.masterSecret(TLSSessionCache.sessionIDKey(.init(repeating: 0x55, count: 32))) == Self.master12)
    }

    /// A record header announcing more than 2^14 + 2048 bytes (RFC 5246 §6.2.3) ends decryption of that
    /// direction: its bytes are undecrypted, nothing traps, and the other direction goes on.
    @Test func anOversizedRecordEndsTheDirection() throws {
        var steps = Self.conversation13(requests: Self.requests, responses: Self.responses)
        steps.insert(.server([23, 3, 3, 0x48, 0x01] + .init(repeating: 0, count: 100)), at: 4)
        let run = Self.run(steps, keyLog: Self.keyLog(Self.secrets13.map { ($0.key, $0.value) }))
        let child = try #require(run.child)
        #expect(child.received[0] == Self.requests.flatMap { $0 })
        #expect(child.received[1].isEmpty)
        Self.expectConserved(run)
    }

    /// Damage anywhere: bytes flipped, cut into pieces of any size, gaps. The decryptor never traps, every byte of
    /// a direction is in exactly one bucket, and what reaches the child is a prefix-closed part of the plaintext
    /// (never bytes that were not sent).
    @Test func damageNeverTrapsAndConserves() {
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        func next(_ bound: Int) -> Int {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
        let clean = Self.conversation13(requests: Self.requests, responses: Self.responses)
        let log = Self.keyLog(Self.secrets13.map { ($0.key, $0.value) })
        for round in 0..<300 {
            var steps: [TLSStep] = []
            for step in clean {
                switch step {
                case .client(var bytes), .server(var bytes):
                    if next(3) == 0, !bytes.isEmpty { bytes[next(bytes.count)] ^= UInt8(1 + next(255)) }
                    let direction: Direction = if case .client = step { .clientToServer } else { .serverToClient }
                    if next(5) == 0, bytes.count > 2 {
                        let cut = 1 + next(bytes.count - 1)
                        let hole = min(bytes.count - cut, 1 + next(40))
                        let head = Array(bytes[..<cut]), tail = Array(bytes[(cut + hole)...])
                        steps.append(direction == .clientToServer ? .client(head) : .server(head))
                        steps.append(.gap(direction, hole))
                        if !tail.isEmpty { steps.append(direction == .clientToServer ? .client(tail) : .server(tail)) }
                    } else {
                        steps.append(direction == .clientToServer ? .client(bytes) : .server(bytes))
                    }
                case .gap: steps.append(step)
                }
            }
            let run = Self.run(steps, keyLog: log, chunk: 1 + next(60))
            Self.expectConserved(run, "round \(round)")
            if let child = run.child {
                for (d, sent) in [Self.requests.flatMap { $0 }, Self.responses.flatMap { $0 }].enumerated() {
                    #expect(child.received[d].count + child.skipped[d] <= sent.count + 64, "round \(round)")
                }
            }
        }
    }

    @Test func keyLogLinesInAnyFormParse() {
        let text = """
            # a comment
            CLIENT_RANDOM \(Self.hexText(Self.clientRandom).uppercased()) \(Self.hexText(Self.master12))\r
            SERVER_HANDSHAKE_TRAFFIC_SECRET \(Self.hexText(Self.clientRandom)) \(String(repeating: "Ab", count: 32))
            CLIENT_TRAFFIC_SECRET_1 \(Self.hexText(Self.clientRandom)) \(String(repeating: "00", count: 32))
            EXPORTER_SECRET \(Self.hexText(Self.clientRandom)) \(String(repeating: "00", count: 32))

            CLIENT_RANDOM 1234 5678
            BOGUS_LABEL \(Self.hexText(Self.clientRandom)) 00
            CLIENT_RANDOM \(Self.hexText(Self.clientRandom)) 0g
            CLIENT_RANDOM \(Self.hexText(Self.clientRandom)) \(String(repeating: "00", count: 47))
            """
        let log = TLSKeyLog(text: Array(text.utf8))
        #expect(log.skippedLines == 4)
        #expect(log.count == 1)
        let secrets = log.secrets(clientRandom: Self.clientRandom)
        #expect(secrets?.masterSecret == Self.master12)
        #expect(secrets?.serverHandshakeTrafficSecret == [UInt8](repeating: 0xab, count: 32))
        #expect(secrets?.clientTrafficSecret0 == nil)
    }
}

extension String {
    init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
