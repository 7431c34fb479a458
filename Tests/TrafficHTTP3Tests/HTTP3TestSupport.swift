import TrafficCapture
import TrafficReassembly
import TrafficSessions
import TrafficWire

@testable import TrafficHTTP3

/// HTTP/3 frames and QPACK sections written by hand, so that every expected size is counted from the bytes.
enum H3 {
    /// RFC 9000 §16: 1 octet below 64, 2 below 16384, 4 below 2^30, else 8.
    static func varint(_ v: UInt64) -> [UInt8] {
        switch v {
        case ..<64: [UInt8(v)]
        case ..<16384: [UInt8(0x40 | v >> 8), UInt8(v & 0xff)]
        case ..<(1 << 30): [UInt8(0x80 | v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]
        default: (0..<8).map { i in UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64(i))) | (i == 0 ? 0xc0 : 0) }
        }
    }

    /// type varint + length varint + payload.
    static func frame(_ type: UInt64, _ payload: [UInt8]) -> [UInt8] {
        varint(type) + varint(UInt64(payload.count)) + payload
    }
    static func headers(_ section: [UInt8]) -> [UInt8] { frame(1, section) }
    static func data(_ payload: [UInt8]) -> [UInt8] { frame(0, payload) }
    static func data(_ text: String) -> [UInt8] { frame(0, Array(text.utf8)) }

    /// Indexed field line, static (RFC 9204 §4.5.2): 0b11 + 6-bit index, one octet below 63.
    static func indexed(_ index: UInt8) -> [UInt8] { [0xc0 | index] }
    /// Literal with static name reference (§4.5.4), index below 15, value below 128 octets, no Huffman:
    /// 0x50 | index, length, value = 2 + value octets.
    static func literal(_ index: UInt8, _ value: String) -> [UInt8] {
        [0x50 | index, UInt8(value.utf8.count)] + Array(value.utf8)
    }
    /// Literal with literal name (§4.5.6), name below 8 octets: 0x20 | length, name, length, value = 2 + both.
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x20 | UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }
    /// RIC 0, Base 0: every section without dynamic references starts so.
    static let noDynamic: [UInt8] = [0x00, 0x00]
}

/// One call of the transport.
enum H3Call {
    case bytes(UInt64, Direction, [UInt8])
    case end(UInt64, Direction)
    case skip(UInt64, Direction, Int)
    case reset(UInt64, Direction)
    case overhead(UInt64, Direction, Int)
}

/// Runs calls through a parser, every delivery cut in pieces of `chunk` octets (nil: whole), and collects its
/// records and byte counts.
final class H3Run {
    var records: [MessageRecord] { box.records }
    let parser: HTTP3ConnectionParser
    var received = [0, 0]

    init(limits: HTTP3Limits = HTTP3Limits()) {
        let info = TCPConnectionInfo(
            id: 3, client: Endpoint(address: IPAddress(ipv4: 0x0a00_0001), port: 50000),
            server: Endpoint(address: IPAddress(ipv4: 0x0a00_0002), port: 443), start: .zero)
        let box = Box()
        parser = HTTP3ConnectionParser(info: info, host: "h3.test", limits: limits) { box.records.append($0) }
        self.box = box
    }

    private final class Box { var records: [MessageRecord] = [] }
    private let box: Box

    @discardableResult
    func run(_ calls: [H3Call], chunk: Int? = nil, finish: Bool = true) -> [MessageRecord] {
        var t: Int64 = 1
        for call in calls {
            t += 1
            let time = CaptureTime(nanoseconds: t * 1000)
            switch call {
            case .bytes(let id, let d, let bytes):
                received[d.rawValue] += bytes.count
                let step = max(1, chunk ?? bytes.count)
                var i = 0
                while i < bytes.count {
                    let piece = Array(bytes[i..<min(bytes.count, i + step)])
                    piece.withUnsafeBytes { parser.receive(stream: id, direction: d, bytes: $0, time: time) }
                    i += step
                }
            case .end(let id, let d): parser.end(stream: id, direction: d, time: time)
            case .skip(let id, let d, let n): parser.skip(stream: id, direction: d, byteCount: n, time: time)
            case .reset(let id, let d): parser.reset(stream: id, direction: d, time: time)
            case .overhead(let id, let d, let n): parser.addOverhead(stream: id, direction: d, bytes: n)
            }
        }
        if finish { parser.finish(time: CaptureTime(nanoseconds: (t + 1) * 1000)) }
        return records
    }

    /// Σ(header + body) over records + control + unparsed = received, per direction.
    func checkAccounting(sourceLocation: SourceLocation = #_sourceLocation) {
        for d in Direction.allCases {
            let kind: MessageRecord.Kind = d == .clientToServer ? .request : .response
            let inRecords = records.filter { $0.kind == kind }.reduce(0) { $0 + $1.headerBytes + $1.bodyBytes }
            #expect(
                inRecords + parser.controlBytes[d.rawValue] + parser.unparsedBytes[d.rawValue] == received[d.rawValue],
                "direction \(d.name)", sourceLocation: sourceLocation)
        }
    }
}

import Testing
