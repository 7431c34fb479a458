import Testing
import TrafficTestSupport
@testable import TrafficTLS

/// The key log's compact store (client randoms as words, secrets in one arena) against a dictionary of the
/// same lines' secrets built here: every label, 32- and 48-byte secrets, later lines replacing earlier ones,
/// randoms that differ in one word only.
@Suite struct TLSKeyLogTests {
    static let labels = [
        "CLIENT_RANDOM", "CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0", "CLIENT_EARLY_TRAFFIC_SECRET",
    ]

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format2: $0) }.joined() }

    @Test func agreesWithADictionaryOfTheLines() {
        var random = SplitMix(state: 25)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        // 300 handshakes; half share all but one 8-byte word of their random with another.
        var randoms: [[UInt8]] = []
        for i in 0..<300 {
            if i % 2 == 1 {
                var near = randoms[i - 1]
                near[8 * Int(random.next() % 4)] ^= 1
                randoms.append(near)
            } else {
                randoms.append(bytes(32))
            }
        }
        var expected: [[UInt8]: [String: [UInt8]]] = [:]
        var text = ""
        for _ in 0..<1_500 {
            let r = randoms[Int(random.next() % UInt64(randoms.count))]
            let label = Self.labels[Int(random.next() % UInt64(Self.labels.count))]
            let secret = bytes(label == "CLIENT_RANDOM" || random.next() % 2 == 0 ? 48 : 32)
            text += "\(label) \(Self.hex(r)) \(Self.hex(secret))\n"
            expected[r, default: [:]][label] = secret
        }
        let log = TLSKeyLog(text: Array(text.utf8))
        #expect(log.skippedLines == 0)
        #expect(log.count == expected.count)
        for r in randoms {
            let found = log.secrets(clientRandom: r)
            guard let lines = expected[r] else {
                #expect(found == nil)
                continue
            }
            #expect(found?.masterSecret == lines["CLIENT_RANDOM"])
            #expect(found?.clientHandshakeTrafficSecret == lines["CLIENT_HANDSHAKE_TRAFFIC_SECRET"])
            #expect(found?.serverHandshakeTrafficSecret == lines["SERVER_HANDSHAKE_TRAFFIC_SECRET"])
            #expect(found?.clientTrafficSecret0 == lines["CLIENT_TRAFFIC_SECRET_0"])
            #expect(found?.serverTrafficSecret0 == lines["SERVER_TRAFFIC_SECRET_0"])
            #expect(found?.clientEarlyTrafficSecret == lines["CLIENT_EARLY_TRAFFIC_SECRET"])
        }
        // A random of another length is no key; one not logged finds nothing.
        #expect(log.secrets(clientRandom: Array(randoms[0].prefix(31))) == nil)
        #expect(log.secrets(clientRandom: bytes(32)) == nil)
        // Several texts (files, pcapng blocks) add up; a later one replaces a secret.
        let replaced = bytes(32)
        log.add(Array("CLIENT_TRAFFIC_SECRET_0 \(Self.hex(randoms[0])) \(Self.hex(replaced))\n".utf8))
        #expect(log.secrets(clientRandom: randoms[0])?.clientTrafficSecret0 == replaced)
    }
}
