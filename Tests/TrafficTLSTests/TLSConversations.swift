import TrafficReassembly
import TrafficTLS

/// Hand-built TLS conversations: segments of whole records, with the per-direction byte counts they must produce.
struct TLSConversation: Sendable, CustomStringConvertible {
    var name: String
    var steps: [TLSStep]

    var description: String { name }

    /// Byte counts by content type of every record in `segments`, computed from the records alone.
    var expectedStats: [TLSDirectionStats]

    /// `segments`: per step, its direction and the records it carries (content type, whole record bytes).
    init(_ name: String, _ segments: [(Direction, [(Int, [UInt8])])]) {
        self.name = name
        steps = segments.map { direction, records in
            let bytes = records.flatMap { $0.1 }
            return direction == .clientToServer ? .client(bytes) : .server(bytes)
        }
        var stats = [TLSDirectionStats(), TLSDirectionStats()]
        for (direction, records) in segments {
            for (type, bytes) in records {
                var s = stats[direction.rawValue]
                s.records += 1
                s.recordHeaderBytes += 5
                s.streamBytes += bytes.count
                switch type {
                case 20, 22: s.handshakeBytes += bytes.count
                case 23: s.applicationBytes += bytes.count
                case 21: s.alertBytes += bytes.count
                default: s.otherRecordBytes += bytes.count
                }
                stats[direction.rawValue] = s
            }
        }
        expectedStats = stats
    }
}

extension TLSConversation {
    typealias B = TLSBytes
    static let ccs = (20, B.record(20, [1]))

    /// TLS 1.3, Chrome-like ClientHello: GREASE cipher, extensions, ALPN id and version; ECH with the
    /// public name as SNI; middlebox-compatibility change_cipher_spec; encrypted handshake as application_data.
    static let tls13GreaseECH: TLSConversation = {
        let clientHello = B.clientHello(
            suites: [0x0a0a, 0x1301, 0x1302, 0xc02f],
            extensions: [
                B.ext(0x1a1a, []), B.serverName("public.example.com"),
                B.alpn([[0x3a, 0x3a], Array("h2".utf8), Array("http/1.1".utf8)]),
                B.clientSupportedVersions([0x7a7a, 0x0304, 0x0303]), B.ext(0xfe0d, B.opaque(40)), B.ext(0xfafa, [0]),
            ])
        let serverHello = B.serverHello(
            suite: 0x1301, extensions: [B.serverSupportedVersion(0x0304), B.ext(51, B.opaque(36))])
        return TLSConversation(
            "tls13GreaseECH",
            [
                (.clientToServer, [(22, B.record(22, clientHello, version: 0x0301))]),
                (
                    .serverToClient,
                    [
                        (22, B.record(22, serverHello)), ccs, (23, B.record(23, B.opaque(800))),
                        (23, B.record(23, B.opaque(60))),
                    ]
                ),
                (.clientToServer, [ccs, (23, B.record(23, B.opaque(53)))]),
                (.clientToServer, [(23, B.record(23, B.opaque(100)))]),
                (.serverToClient, [(23, B.record(23, B.opaque(300))), (23, B.record(23, B.opaque(19)))]),
            ])
    }()

    /// TLS 1.2, full handshake: the ClientHello split over two records and over two segments; the
    /// server's first flight in one record; an encrypted Finished that starts like a ClientHello
    /// header (must not be parsed); several records of different types in one segment.
    static let tls12Split: TLSConversation = {
        let clientHello = B.clientHello(
            sessionID: [], suites: [0xc02f, 0xc030],
            extensions: [B.serverName("shop.example"), B.alpn(["h2", "http/1.1"]), B.ext(0xff01, [0])])
        let first = B.record(22, Array(clientHello[..<40]), version: 0x0301)
        let second = B.record(22, Array(clientHello[40...]), version: 0x0301)
        let serverFlight =
            B.serverHello(suite: 0xc02f, extensions: [B.alpn(["h2"]), B.ext(0xff01, [0])])
            + B.handshake(11, B.opaque(300)) + B.handshake(12, B.opaque(100)) + B.handshake(14, [])
        let fakeFinished = [0x01, 0x00, 0x00, 0x05] + B.opaque(36)
        var conversation = TLSConversation(
            "tls12Split",
            [
                (.clientToServer, [(22, first), (22, second)]),
                (.serverToClient, [(22, B.record(22, serverFlight))]),
                (
                    .clientToServer,
                    [(22, B.record(22, B.handshake(16, B.opaque(33)))), ccs, (22, B.record(22, fakeFinished))]
                ),
                (
                    .serverToClient,
                    [(22, B.record(22, B.handshake(4, B.opaque(150)))), ccs, (22, B.record(22, B.opaque(40)))]
                ),
                (.clientToServer, [(23, B.record(23, B.opaque(80)))]),
                (.serverToClient, [(23, B.record(23, B.opaque(500))), (21, B.record(21, B.opaque(26)))]),
                (.clientToServer, [(21, B.record(21, B.opaque(26)))]),
            ])
        // Split the first client segment inside the second record: records across segments.
        let firstSegment = first + second
        conversation.steps[0] = .client(Array(firstSegment[..<(first.count + 10)]))
        conversation.steps.insert(.client(Array(firstSegment[(first.count + 10)...])), at: 1)
        return conversation
    }()

    /// TLS 1.3 with a HelloRetryRequest, the client's CCS before its second ClientHello
    /// (RFC 8446 §D.4), and a PSK accepted by the final ServerHello (resumption).
    static let tls13HRR: TLSConversation = {
        let hello1 = B.clientHello(extensions: [
            B.serverName("hrr.example"), B.clientSupportedVersions([0x0304]), B.ext(51, B.opaque(10)),
        ])
        let hello2 = B.clientHello(extensions: [
            B.serverName("hrr.example"), B.clientSupportedVersions([0x0304]), B.ext(51, B.opaque(36)),
            B.ext(41, B.opaque(20)),
        ])
        let retry = B.serverHello(
            random: B.helloRetryRequestRandom, suite: 0x1302,
            extensions: [B.serverSupportedVersion(0x0304), B.ext(51, B.u16(0x1d))])
        let serverHello = B.serverHello(
            suite: 0x1302, extensions: [B.serverSupportedVersion(0x0304), B.ext(41, B.u16(0))])
        return TLSConversation(
            "tls13HRR",
            [
                (.clientToServer, [(22, B.record(22, hello1, version: 0x0301))]),
                (.serverToClient, [(22, B.record(22, retry)), ccs]),
                (.clientToServer, [ccs, (22, B.record(22, hello2))]),
                (.serverToClient, [(22, B.record(22, serverHello)), (23, B.record(23, B.opaque(90)))]),
                (.clientToServer, [(23, B.record(23, B.opaque(40)))]),
            ])
    }()

    /// TLS 1.2 abbreviated handshake (RFC 5246 §7.3): ServerHello echoes the session ID, then CCS at once.
    static let tls12Resumed: TLSConversation = {
        let session = Array(repeating: UInt8(0x42), count: 32)
        let clientHello = B.clientHello(
            sessionID: session, suites: [0xc02b], extensions: [B.serverName("again.example")])
        let serverHello = B.serverHello(sessionID: session, suite: 0xc02b, extensions: [])
        return TLSConversation(
            "tls12Resumed",
            [
                (.clientToServer, [(22, B.record(22, clientHello))]),
                (.serverToClient, [(22, B.record(22, serverHello)), ccs, (22, B.record(22, B.opaque(40)))]),
                (.clientToServer, [ccs, (22, B.record(22, B.opaque(40))), (23, B.record(23, B.opaque(70)))]),
                (.serverToClient, [(23, B.record(23, B.opaque(200))), (24, B.record(24, B.opaque(19)))]),
            ])
    }()

    static let all = [tls13GreaseECH, tls12Split, tls13HRR, tls12Resumed]
}
