import TrafficTestSupport
import Testing
import TrafficReassembly
import TrafficTLS

@Suite struct TLSGapAndGarbageTests {
    typealias B = TLSBytes

    /// A gap inside an application_data record keeps the framing: the next record is read normally.
    @Test func gapInsideRecordKeepsSync() {
        let record1 = B.record(23, B.opaque(1000))
        let record2 = B.record(23, B.opaque(50))
        let s = TLSReplay.run([
            .client(Array(record1[..<300])), .gap(.clientToServer, 400), .client(Array(record1[700...]) + record2),
        ])
        let c = s.clientToServer
        #expect(c.records == 2)
        #expect(c.missingBytes == 400)
        #expect(c.applicationBytes == record1.count + record2.count - 400)
        #expect(c.nonTLSBytes == 0)
        #expect(c.isConserved && c.streamBytes == record1.count + record2.count)
        #expect(s.flags.map(\.name) == ["gap"])
    }

    /// A gap past a record's end loses the framing; the parser finds the next plausible header
    /// (same record version as before) and counts the bytes in between as non-TLS.
    @Test func gapThenResynchronise() {
        let record1 = B.record(23, B.opaque(100))
        let record2 = B.record(23, B.opaque(200))
        let record3 = B.record(23, B.opaque(30))
        // Lost: the end of record1 and the start of record2; received: the rest of record2, then record3.
        let tail = Array(record2[50...])
        let s = TLSReplay.run([
            .client(Array(record1[..<60])), .gap(.clientToServer, record1.count - 60 + 50), .client(tail + record3),
        ])
        let c = s.clientToServer
        #expect(c.records == 2)
        #expect(c.applicationBytes == 60 + record3.count)
        #expect(c.nonTLSBytes == tail.count)
        #expect(c.missingBytes == record1.count - 60 + 50)
        #expect(c.isConserved)
        #expect(s.flags.map(\.name) == ["gap", "resynchronized"])
    }

    /// A gap in the ClientHello loses it (no SNI) but the records after it are still counted.
    @Test func gapInClientHello() {
        let hello = B.record(22, B.clientHello(extensions: [B.serverName("lost.example")]))
        let s = TLSReplay.run([
            .client(Array(hello[..<20])), .gap(.clientToServer, 30), .client(Array(hello[50...])),
            .client(B.record(23, B.opaque(10))),
        ])
        #expect(s.sni == nil)
        #expect(s.flags.map(\.name) == ["gap", "handshake_lost"])
        #expect(s.clientToServer.records == 2 && s.clientToServer.isConserved)
    }

    /// Plain-text bytes before TLS: counted as non-TLS, then the ClientHello is found and parsed.
    @Test func garbageThenTLS() {
        let hello = B.record(22, B.clientHello(extensions: [B.serverName("after.example")]), version: 0x0301)
        // A proxy preamble, then near-misses: a header with the wrong version and one with length 0.
        let junk =
            Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n".utf8) + [
                0x16, 0x03, 0x07, 0x00, 0x10, 0x17, 0x03, 0x01, 0x00, 0x00,
            ]
        for chunk in [nil, 1, 2, 3, 4, 5, 6, 7, 11] as [Int?] {
            let s = TLSReplay.run([.client(junk + hello)], chunk: chunk)
            #expect(s.sni == "after.example")
            #expect(s.clientToServer.nonTLSBytes == junk.count)
            #expect(s.clientToServer.handshakeBytes == hello.count)
            #expect(s.flags.map(\.name) == ["record_desync", "resynchronized"])
        }
    }

    /// Not TLS at all (an HTTP request): all bytes non-TLS, no record.
    @Test func plainHTTPIsNotTLS() {
        let request = Array("GET / HTTP/1.1\r\nHost: example\r\n\r\n".utf8)
        let s = TLSReplay.run([.client(request)])
        #expect(!s.isTLS)
        #expect(s.clientToServer.nonTLSBytes == request.count && s.clientToServer.isConserved)
    }

    /// A stream that ends inside a record or inside a header.
    @Test func truncatedRecord() {
        let record = B.record(23, B.opaque(100))
        let s = TLSReplay.run([.client(Array(record[..<40])), .server(Array(record[..<3]))])
        #expect(s.clientToServer.applicationBytes == 40)
        #expect(s.serverToClient.nonTLSBytes == 3)
        #expect(s.clientToServer.isConserved && s.serverToClient.isConserved)
        #expect(s.flags.map(\.name) == ["truncated_record"])
    }

    /// Random bytes, random chunking and random gaps: never traps, the accounting always adds up, and
    /// the result does not depend on how the bytes were cut.
    @Test func randomInputNeverTrapsAndConserves() {
        var rng = SplitMix(state: 0x7153)
        for round in 0..<400 {
            var steps: [TLSStep] = []
            var total = [0, 0]
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let direction: Direction = Bool.random(using: &rng) ? .clientToServer : .serverToClient
                if Int.random(in: 0..<6, using: &rng) == 0 {
                    let n = Int.random(in: 1...5000, using: &rng)
                    steps.append(.gap(direction, n))
                    total[direction.rawValue] += n
                    continue
                }
                // Mostly plausible records (so that parsing goes deep), some corrupted or random bytes.
                var bytes: [UInt8]
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    bytes = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng)
                    }
                case 1: bytes = B.record(22, B.clientHello(extensions: [B.serverName("r.example")]))
                case 2:
                    bytes = B.record(
                        Int.random(in: 20...24, using: &rng), B.opaque(Int.random(in: 0...400, using: &rng)))
                default:
                    bytes = B.record(22, B.serverHello(suite: 0x1301, extensions: [B.serverSupportedVersion(0x0304)]))
                }
                if !bytes.isEmpty, Bool.random(using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                steps.append(direction == .clientToServer ? .client(bytes) : .server(bytes))
                total[direction.rawValue] += bytes.count
            }
            let s = TLSReplay.run(steps, chunk: Int.random(in: 1...64, using: &rng))
            #expect(s.clientToServer.isConserved && s.serverToClient.isConserved, "round \(round)")
            // Chunking never changes the result, also on the search path.
            #expect(TLSDigest(s) == TLSDigest(TLSReplay.run(steps)), "round \(round)")
            #expect(
                s.clientToServer.streamBytes == total[0] && s.serverToClient.streamBytes == total[1], "round \(round)")
        }
    }
}

