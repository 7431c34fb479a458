import Foundation
import Testing
import TrafficReassembly
import TrafficTLS

/// Replays the TCP payloads of samples/tls-*.pcap (tshark's `follow,tcp,raw` dumps in
/// samples/expected/tls-*/follow-N.txt) and compares with tshark's record sums in tls.tshark.csv.
@Suite struct TLSSampleStreamTests {
    static let expectedRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples/expected")

    static var sampleNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: expectedRoot.path)) ?? []
        return names.filter { $0.hasPrefix("tls-") }.sorted()
    }

    @Test func samplesArePresent() {
        #expect(Self.sampleNames.count >= 7)
    }

    @Test(arguments: sampleNames)
    func sampleMatchesTshark(_ name: String) throws {
        let directory = Self.expectedRoot.appendingPathComponent(name)
        let csv = try String(contentsOf: directory.appendingPathComponent("tls.tshark.csv"), encoding: .utf8)
        var rows = csv.split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let header = rows.removeFirst()
        var summaries: [Int: TLSConnectionSummary] = [:]
        for row in rows {
            let field = { (column: String) -> String in row[header.firstIndex(of: column)!] }
            let connection = Int(field("connection"))!
            if summaries[connection] == nil {
                summaries[connection] = try Self.replay(directory.appendingPathComponent("follow-\(connection).txt"))
            }
            let s = summaries[connection]!
            let stats = field("direction") == "client_to_server" ? s.clientToServer : s.serverToClient
            let context = "\(name) connection \(connection) \(field("direction"))"
            #expect(s.sni ?? "" == field("sni"), "\(context)")
            #expect(s.negotiatedVersion?.name ?? "" == field("tls_version"), "\(context)")
            #expect(s.cipherSuite?.name ?? "" == field("cipher_suite"), "\(context)")
            #expect(s.selectedALPN ?? "" == field("alpn"), "\(context)")
            #expect(stats.handshakeBytes == Int(field("tls_handshake_bytes")), "\(context)")
            #expect(stats.applicationBytes == Int(field("tls_application_bytes")), "\(context)")
            #expect(stats.alertBytes == Int(field("tls_alert_bytes")), "\(context)")
            #expect(stats.recordHeaderBytes == Int(field("tls_record_header_bytes")), "\(context)")
            #expect(stats.transferBytes == Int(field("transfer_bytes")), "\(context)")
            #expect(stats.nonTLSBytes == 0 && stats.missingBytes == 0 && stats.isConserved, "\(context)")
        }
        // What the capture was made to show (samples/make-tls-samples.sh).
        let flags = summaries.keys.sorted().map { summaries[$0]!.flags.map(\.name) }
        if name.hasSuffix("-resumed") {
            #expect(flags == [[], ["resumed"]], "\(name)")
        } else if name.hasSuffix("-hrr") {
            #expect(flags == [["hello_retry_request"]], "\(name)")
        } else {
            #expect(flags.allSatisfy { $0.isEmpty }, "\(name)")
        }
        let offered = summaries.values.map(\.offeredALPN)
        if name.contains("-h2") { #expect(offered.allSatisfy { $0 == ["h2", "http/1.1"] }, "\(name)") }
        if name.contains("-http1") { #expect(offered.allSatisfy { $0 == ["http/1.1"] }, "\(name)") }
    }

    /// Feeds each line of a `follow,tcp,raw` dump as one segment: unindented lines come from node 0
    /// (the client, which sent the first packet), tab-indented ones from node 1.
    static func replay(_ file: URL) throws -> TLSConnectionSummary {
        let text = try String(contentsOf: file, encoding: .utf8)
        let parser = TLSConnectionParser(info: TLSReplay.info)
        for line in text.split(separator: "\n") {
            if line.hasPrefix("=") || line.contains(":") { continue }
            let direction: Direction = line.hasPrefix("\t") ? .serverToClient : .clientToServer
            let bytes = hexBytes(line.trimmingCharacters(in: .whitespaces))
            TLSReplay.send(bytes, direction, parser)
        }
        parser.finish(time: .zero)
        return parser.summary
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let nibble: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
            default: continue
            }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}
