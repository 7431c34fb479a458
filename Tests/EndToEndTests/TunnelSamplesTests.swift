import Foundation
import Testing

/// Issue 28's proof: every capture under samples/tunnels/ is a real sample wrapped in tunnels or another link
/// type (samples/make-tunnel-samples.py, checked with tshark by samples/check-tunnel-samples.sh), and must give
/// the unwrapped capture's records byte for byte.
@Suite struct TunnelSamplesTests {
    static let folder = Harness.samples.appendingPathComponent("tunnels")

    static let captures: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasSuffix(".pcap") }.sorted()

    /// The `encapsulation` list each wrapping gives (make-tunnel-samples.py's table); `ip` is the IP-in-IP name
    /// for the capture's inner version.
    static func expectedStack(kind: String, ip: String) -> [String]? {
        switch kind {
        case "vxlan": ["vxlan", "vlan"]
        case "geneve", "geneve-ip": ["geneve"]
        case "gtpu": ["gtpu"]
        case "teredo": ["teredo"]
        case "gre", "gre-teb": ["gre"]
        case "erspan2", "erspan3": ["gre", "erspan"]
        case "ipip", "in-ipv6": [ip]
        case "mpls", "mpls-pw": ["mpls"]
        case "pppoe": ["pppoe"]
        case "qinq-vxlan-gre": ["vlan", "vlan", "gre", "vxlan"]
        case "nested": ["mpls", "gre", "geneve", "gtpu"]
        case "nflog", "ppp", "ppp-hdlc": []
        default: nil
        }
    }

    /// The unwrapped captures' outputs, each run once instead of once per wrapping (CI time).
    final class PlainOutputs: @unchecked Sendable {
        private let lock = NSLock()
        private var outputs: [[String]: String] = [:]

        func stdout(_ arguments: [String]) throws -> String {
            lock.lock()
            defer { lock.unlock() }
            if let known = outputs[arguments] { return known }
            let output = try Harness.run(arguments).stdout
            outputs[arguments] = output
            return output
        }
    }

    static let plainOutputs = PlainOutputs()

    static func split(_ file: String) -> (base: String, kind: String) {
        let parts = file.dropLast(".pcap".count).components(separatedBy: "--")
        return ("samples/\(parts[0]).pcap", parts[1])
    }

    /// The text from the `messages` key to the end: every record as rendered.
    static func messagesText(_ output: String) throws -> Substring {
        let start = try #require(output.range(of: "\"messages\": ["))
        return output[start.lowerBound...]
    }

    @Test func everyKindIsWrapped() {
        // A new wrapping without an expectation, or a lost sample, fails here rather than silently.
        #expect(Self.captures.count == 37)
        for file in Self.captures { #expect(Self.expectedStack(kind: Self.split(file).kind, ip: "") != nil, "\(file)") }
    }

    /// Default options: the records do not see the tunnel at all, so the whole `messages` text is identical.
    @Test(arguments: captures)
    func recordsAreByteIdentical(file: String) throws {
        let (base, _) = Self.split(file)
        let plain = try Self.plainOutputs.stdout(["analyze", "--format", "json", "--messages", base])
        let wrapped = try Harness.run(["analyze", "--format", "json", "--messages", "samples/tunnels/\(file)"])
        #expect(wrapped.status == 0, "\(wrapped.stderr)")
        #expect(wrapped.stderr.isEmpty, "\(file): \(wrapped.stderr)")
        #expect(try Self.messagesText(wrapped.stdout) == Self.messagesText(plain), "\(file)")
        let summary = try #require(try Harness.json(wrapped.stdout)["summary"] as? [String: Any])
        let plainSummary = try #require(try Harness.json(plain)["summary"] as? [String: Any])
        // The same requests and responses, all of them decoded, and no anomaly.
        for key in ["requests", "responses", "connections", "http_connections", "non_tcp_packets", "packets"] {
            #expect(summary[key] as? Int == plainSummary[key] as? Int, "\(file) \(key)")
        }
        #expect((summary["anomalies"] as? [String: Any])?.isEmpty == true, "\(file)")
    }

    /// Fields that legitimately differ: with `--overhead`, the outer headers are packet overhead, so
    /// `handshake_bytes`, `teardown_bytes`, `packet_overhead_bytes` and `wire_bytes` grow by the outer bytes of
    /// the frames attributed to each record; every other field is unchanged, and frame bytes are conserved.
    @Test(arguments: captures)
    func outerHeadersAreOverhead(file: String) throws {
        let (base, _) = Self.split(file)
        let arguments = ["analyze", "--format", "json", "--messages", "--overhead", "all"]
        let plain = try Harness.json(try Self.plainOutputs.stdout(arguments + [base]))
        let wrapped = try Harness.json(try Harness.run(arguments + ["samples/tunnels/\(file)"]).stdout)
        let plainRecords = try #require(plain["messages"] as? [[String: Any]])
        let wrappedRecords = try #require(wrapped["messages"] as? [[String: Any]])
        try #require(plainRecords.count == wrappedRecords.count)
        let overheadFields: Set = ["handshake_bytes", "teardown_bytes", "packet_overhead_bytes", "wire_bytes"]
        // Each frame grows (a tunnel) or shrinks (PPP and NFLOG replace a 14-byte Ethernet header by 4 bytes) by
        // the same `delta` bytes, except Teredo's first frame, so each overhead field moves by a multiple of it.
        let plainBytes = try #require((plain["summary"] as? [String: Any])?["bytes"] as? Int)
        let wrappedBytes = try #require((wrapped["summary"] as? [String: Any])?["bytes"] as? Int)
        let packets = try #require((plain["summary"] as? [String: Any])?["packets"] as? Int)
        let delta = (wrappedBytes - plainBytes) / packets
        let uniform = (wrappedBytes - plainBytes) % packets == 0
        #expect(delta != 0)
        for (a, b) in zip(plainRecords, wrappedRecords) {
            #expect(Set(a.keys) == Set(b.keys))
            for (key, value) in a where !overheadFields.contains(key) {
                #expect((b[key] as? NSObject) == (value as? NSObject) || (b[key] is NSNull && value is NSNull),
                        "\(file) \(key)")
            }
            for key in overheadFields {
                let change = (b[key] as? Int ?? 0) - (a[key] as? Int ?? 0)
                #expect(change == 0 || (change > 0) == (delta > 0), "\(file) \(key)")
                if uniform { #expect(change % delta == 0, "\(file) \(key): \(change) is not a multiple of \(delta)") }
                // Every frame that carries a record's data has outer bytes.
                if key == "packet_overhead_bytes", a[key] as? Int ?? 0 > 0 { #expect(change != 0, "\(file) \(key)") }
            }
        }
        let summary = try #require(wrapped["summary"] as? [String: Any])
        let groups = try #require(wrapped["groups"] as? [[String: Any]])
        let parts = groups.reduce(0) { $0 + ($1["wire_bytes"] as! Int) } + (summary["non_http_frame_bytes"] as! Int)
            + (summary["non_tcp_frame_bytes"] as! Int) + (summary["unattributed_frame_bytes"] as! Int)
        #expect(parts == summary["capture_frame_bytes"] as? Int, "\(file): frame bytes are conserved")
        let size = try FileManager.default.attributesOfItem(atPath: Self.folder.appendingPathComponent(file).path)[.size] as! Int
        // Whole frames: the file is its 24-byte header, 16 bytes a record, and the frames.
        #expect(summary["capture_frame_bytes"] as? Int == size - 24 - 16 * packets, "\(file): frame bytes are whole frames")
    }

    /// `traffic connections` names the layers; the summary counts every frame once per kind.
    @Test(arguments: captures)
    func encapsulationIsReported(file: String) throws {
        let (base, kind) = Self.split(file)
        let stack = try #require(Self.expectedStack(kind: kind, ip: base.contains("ipv6") ? "ipv6_in_ip" : "ipv4_in_ip"))
        let connections = try Harness.json(try Harness.run(["connections", "--format", "json", "samples/tunnels/\(file)"]).stdout)
        let plainConnections = try Harness.json(try Self.plainOutputs.stdout(["connections", "--format", "json", base]))
        let rows = try #require(connections["connections"] as? [[String: Any]])
        let plainRows = try #require(plainConnections["connections"] as? [[String: Any]])
        #expect(rows.count == plainRows.count)
        for (row, plainRow) in zip(rows, plainRows) {
            #expect(row["encapsulation"] as? [String] == stack, "\(file)")
            #expect(plainRow["encapsulation"] as? [String] == [])
            // Client and server are the inner addresses.
            #expect(row["client"] as? String == plainRow["client"] as? String)
            #expect(row["server"] as? String == plainRow["server"] as? String)
        }
        let csv = Harness.csv(try Harness.run(["connections", "--format", "csv", "samples/tunnels/\(file)"]).stdout)
        #expect(csv.first?["encapsulation"] == stack.joined(separator: ":"))
        let summary = try #require(try Harness.json(
            try Harness.run(["analyze", "--format", "json", "samples/tunnels/\(file)"]).stdout)["summary"] as? [String: Any])
        let counts = try #require(summary["encapsulated_packets"] as? [String: Int])
        #expect(Set(counts.keys) == Set(stack), "\(file)")
        for name in stack { #expect(counts[name] == summary["packets"] as? Int, "\(file) \(name)") }
        let table = try Harness.run(["analyze", "samples/tunnels/\(file)"]).stdout
        let packets = try #require(summary["packets"] as? Int)
        let line = Set(stack).sorted().map { "\(packets) \($0)" }.joined(separator: ", ")
        #expect(table.contains("packets inside tunnels or tags: \(line)\n") == !stack.isEmpty, "\(file)")
    }
}
