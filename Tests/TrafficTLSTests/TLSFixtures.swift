import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficTLS
import TrafficWire

/// Builders for TLS wire bytes, named after the RFC 8446 presentation-language structures they encode.
enum TLSBytes {
    static func u8(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v)] }
    static func u16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    static func u24(_ v: Int) -> [UInt8] { u8(v >> 16) + u16(v) }
    /// `opaque x<0..2^8-1>`.
    static func vector8(_ b: [UInt8]) -> [UInt8] { u8(b.count) + b }
    /// `opaque x<0..2^16-1>`.
    static func vector16(_ b: [UInt8]) -> [UInt8] { u16(b.count) + b }
    /// `struct { ExtensionType extension_type; opaque extension_data<0..2^16-1>; }`.
    static func ext(_ type: Int, _ data: [UInt8]) -> [UInt8] { u16(type) + vector16(data) }

    /// RFC 6066 §3: a server_name list with one host_name.
    static func serverName(_ name: String) -> [UInt8] { ext(0, vector16([0] + vector16(Array(name.utf8)))) }
    /// RFC 7301 §3.1.
    static func alpn(_ protocols: [[UInt8]]) -> [UInt8] { ext(16, vector16(protocols.flatMap { vector8($0) })) }
    static func alpn(_ protocols: [String]) -> [UInt8] { alpn(protocols.map { Array($0.utf8) }) }
    /// RFC 8446 §4.2.1, ClientHello form: a list.
    static func clientSupportedVersions(_ versions: [Int]) -> [UInt8] { ext(43, vector8(versions.flatMap(u16))) }
    /// RFC 8446 §4.2.1, ServerHello form: one version.
    static func serverSupportedVersion(_ version: Int) -> [UInt8] { ext(43, u16(version)) }

    /// `Handshake`: msg_type, uint24 length, body.
    static func handshake(_ type: Int, _ body: [UInt8]) -> [UInt8] { u8(type) + u24(body.count) + body }

    /// A ClientHello handshake message (header included).
    static func clientHello(
        version: Int = 0x0303, sessionID: [UInt8] = Array(repeating: 0x55, count: 32), suites: [Int] = [0x1301],
        extensions: [[UInt8]]
    ) -> [UInt8] {
        let body =
            u16(version) + Array(repeating: 0x11, count: 32) + vector8(sessionID)
            + vector16(suites.flatMap(u16)) + vector8([0]) + vector16(extensions.flatMap { $0 })
        return handshake(1, body)
    }

    /// RFC 8446 §4.1.3: SHA-256("HelloRetryRequest").
    static let helloRetryRequestRandom: [UInt8] = [
        0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
        0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
    ]

    /// A ServerHello handshake message (header included).
    static func serverHello(
        version: Int = 0x0303, random: [UInt8] = Array(repeating: 0x22, count: 32),
        sessionID: [UInt8] = Array(repeating: 0x55, count: 32), suite: Int, extensions: [[UInt8]]
    ) -> [UInt8] {
        let body = u16(version) + random + vector8(sessionID) + u16(suite) + [0] + vector16(extensions.flatMap { $0 })
        return handshake(2, body)
    }

    /// `TLSPlaintext`: type, legacy_record_version, length, fragment.
    static func record(_ type: Int, _ fragment: [UInt8], version: Int = 0x0303) -> [UInt8] {
        u8(type) + u16(version) + u16(fragment.count) + fragment
    }

    /// `count` bytes standing in for ciphertext.
    static func opaque(_ count: Int, seed: UInt8 = 0x5a) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
    }
}

/// One step of a conversation replayed into a parser.
enum TLSStep: Sendable {
    case client([UInt8])
    case server([UInt8])
    case gap(Direction, Int)
}

/// Replays conversations into a `TLSConnectionParser`.
enum TLSReplay {
    static let info = TCPConnectionInfo(
        id: 7, client: Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 40000),
        server: Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 443), start: .zero)
    static let segment = WireSpan(time: .zero)

    /// Feeds `steps` in order, each data step split into pieces of at most `chunk` bytes (nil: whole),
    /// and returns the final summary, taken from the `onFinish` callback.
    static func run(_ steps: [TLSStep], chunk: Int? = nil, limits: TLSParserLimits = TLSParserLimits())
        -> TLSConnectionSummary
    {
        let box = SummaryBox()
        let parser = TLSConnectionParser(info: info, limits: limits) { box.summary = $0 }
        for step in steps { feed(step, into: parser, chunk: chunk) }
        parser.finish(time: .zero)
        precondition(parser.isFinished)
        return box.summary!
    }

    /// Like `run`, but splits the data step at index `stepIndex` into two pieces at `offset`.
    static func run(_ steps: [TLSStep], splittingStep stepIndex: Int, at offset: Int) -> TLSConnectionSummary {
        let parser = TLSConnectionParser(info: info)
        for (index, step) in steps.enumerated() {
            switch step {
            case .client(let bytes) where index == stepIndex:
                send(Array(bytes[..<offset]), .clientToServer, parser)
                send(Array(bytes[offset...]), .clientToServer, parser)
            case .server(let bytes) where index == stepIndex:
                send(Array(bytes[..<offset]), .serverToClient, parser)
                send(Array(bytes[offset...]), .serverToClient, parser)
            default:
                feed(step, into: parser, chunk: nil)
            }
        }
        parser.finish(time: .zero)
        return parser.summary
    }

    static func feed(_ step: TLSStep, into parser: TLSConnectionParser, chunk: Int?) {
        switch step {
        case .client(let bytes): send(bytes, .clientToServer, parser, chunk: chunk)
        case .server(let bytes): send(bytes, .serverToClient, parser, chunk: chunk)
        case .gap(let direction, let count): parser.skip(count, direction: direction, time: .zero)
        }
    }

    static func send(_ bytes: [UInt8], _ direction: Direction, _ parser: TLSConnectionParser, chunk: Int? = nil) {
        let size = max(1, chunk ?? bytes.count)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size)
            Array(bytes[start..<end]).withUnsafeBytes { parser.receive($0, direction: direction, span: segment) }
            start = end
        }
    }

    final class SummaryBox: @unchecked Sendable { var summary: TLSConnectionSummary? }
}

/// The comparable content of a summary (its `info` is not `Equatable`).
struct TLSDigest: Equatable, CustomStringConvertible {
    var sni: String?
    var ech: Bool
    var offeredALPN: [String]
    var selectedALPN: String?
    var clientLegacyVersion: TLSVersion?
    var offeredVersions: [TLSVersion]
    var negotiatedVersion: TLSVersion?
    var cipherSuite: TLSCipherSuite?
    var resumed: Bool
    var helloRetryRequest: Bool
    var flags: [String]
    var clientToServer: TLSDirectionStats
    var serverToClient: TLSDirectionStats

    init(_ s: TLSConnectionSummary) {
        sni = s.sni
        ech = s.ech
        offeredALPN = s.offeredALPN
        selectedALPN = s.selectedALPN
        clientLegacyVersion = s.clientLegacyVersion
        offeredVersions = s.offeredVersions
        negotiatedVersion = s.negotiatedVersion
        cipherSuite = s.cipherSuite
        resumed = s.resumed
        helloRetryRequest = s.helloRetryRequest
        flags = s.flags.map(\.name)
        clientToServer = s.clientToServer
        serverToClient = s.serverToClient
    }

    var description: String {
        "sni=\(sni ?? "-") flags=\(flags) c2s=\(clientToServer) s2c=\(serverToClient)"
    }
}
