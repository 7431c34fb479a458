#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// traffic-bench-gen: writes a deterministic benchmark capture of HTTP/1.1 traffic and its manifest.
//
// Usage: traffic-bench-gen [--size 1GiB] [--seed 1] [--concurrency 64] [--manifest PATH]
//                          [--tls [--keylog PATH] | --h2 | --quic [--keylog PATH] | --api] OUTPUT.pcap
//
// Connections are planned until their bytes reach --size; every planned connection is played to
// its end, so the file is larger than asked by less than one connection.
//
// --tls writes the same HTTP exchanges as the cleartext capture of the same seed and size (the same
// connections are planned, by their cleartext bytes), each connection in TLS 1.2 or 1.3 to port 443,
// and the NSS key log that decrypts them (default: next to the capture, `.pcap` → `.keylog`). The file is
// then larger than --size by the TLS handshakes and record overhead (about 1 %).
//
// --h2 writes the same HTTP exchanges (the same connections, planned by their cleartext HTTP/1.1 bytes) as
// HTTP/2 with prior knowledge (h2c) on port 80: HPACK-encoded header blocks, several streams multiplexed per
// connection, flow control, PING and GOAWAY (see HTTP2Connection). The manifest then has the HTTP/2 record
// sizes and an "http2" object of expected totals, also printed as one line. The file is smaller than --size
// (HPACK, no chunk framing).
//
// --quic writes the same HTTP exchanges as HTTP/3 over QUIC version 1 on UDP port 443, one QUIC connection per
// planned connection (see SimulatedQUIC), and the NSS key log of their handshake and 1-RTT secrets (default: next to
// the capture, `.pcap` → `.keylog`). The manifest has the HTTP/3 record sizes and a "quic" object of expected totals
// (UDP payload per direction and host, connections, streams), also printed as one line.
//
// --api writes an API-dense cleartext HTTP/1.1 capture instead: mostly short keep-alive connections (1–15
// exchanges) of small JSON calls, tokens, event batches and a few uploads, with no downloads, so that there are
// several times more messages per byte than in the default mix. Its manifest is the cleartext one.

struct Arguments {
    var size = 1 << 30
    var seed: UInt64 = 1
    var concurrency = 64
    var output = ""
    var manifest: String?
    var tls = false
    var keyLog: String?
    var http2 = false
    var quic = false
    var api = false

    init(_ arguments: [String]) throws(GeneratorError) {
        var index = 0
        func value() throws(GeneratorError) -> String {
            index += 1
            guard index < arguments.count else { throw .badArgument("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--size": size = try Self.parseSize(try value())
            case "--seed":
                guard let seed = UInt64(try value()) else { throw .badArgument("--seed takes an integer") }
                self.seed = seed
            case "--concurrency":
                guard let n = Int(try value()), n > 0 else {
                    throw .badArgument("--concurrency takes a positive integer")
                }
                concurrency = n
            case "--manifest": manifest = try value()
            case "--tls": tls = true
            case "--keylog": keyLog = try value()
            case "--h2": http2 = true
            case "--quic": quic = true
            case "--api": api = true
            case "-h", "--help":
                print(
                    "usage: traffic-bench-gen [--size 1GiB] [--seed N] [--concurrency N] [--manifest PATH] [--tls [--keylog PATH] | --h2 | --quic [--keylog PATH] | --api] OUTPUT.pcap"
                )
                exit(0)
            default:
                guard !argument.hasPrefix("-"), output.isEmpty else {
                    throw .badArgument("unexpected argument \(argument)")
                }
                output = argument
            }
            index += 1
        }
        guard !output.isEmpty else { throw .badArgument("give the output file") }
        guard keyLog == nil || tls || quic else { throw .badArgument("--keylog goes with --tls or --quic") }
        guard [tls, http2, quic, api].filter({ $0 }).count <= 1 else {
            throw .badArgument("--tls, --h2, --quic and --api are variants of their own: give one")
        }
        guard !(tls && http2) else { throw .badArgument("--h2 writes cleartext HTTP/2 (h2c): not with --tls") }
    }

    /// `1GiB`, `100MiB`, `512KiB`, `2GB`, `100MB` or a plain byte count.
    static func parseSize(_ text: String) throws(GeneratorError) -> Int {
        let units: [(String, Int)] = [
            ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 1_000_000_000), ("MB", 1_000_000),
            ("KB", 1000), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1),
        ]
        for (suffix, multiplier) in units where text.hasSuffix(suffix) {
            if let number = Int(text.dropLast(suffix.count)), number > 0 { return number * multiplier }
        }
        if let number = Int(text), number > 0 { return number }
        throw .badArgument("cannot read size \(text): use e.g. 1GiB or 100MiB")
    }
}

func run() throws(GeneratorError) {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)

    var model = TrafficModel(seed: arguments.seed, http2: arguments.http2, quic: arguments.quic, api: arguments.api)
    let writer = try PcapWriter(path: arguments.output)
    // 2024-03-01T12:00:00Z.
    let firstTime: UInt64 = 1_709_294_400_000_000
    var clock = PacketClock(microseconds: firstTime, generator: SeededGenerator(seed: arguments.seed &+ 0x5eed))
    var scheduler = SeededGenerator(seed: arguments.seed &* 31 &+ 7)
    var active: [SimulatedConnection] = []
    active.reserveCapacity(arguments.concurrency)
    // --tls: its own randomness, so that the model draws exactly what it draws for the cleartext capture.
    var tlsGenerator = SeededGenerator(seed: arguments.seed ^ 0x7415_7415_7415_7415)
    var tlsStats = TLSStats()
    let keyLogPath = arguments.keyLog ?? Arguments.defaultKeyLogPath(for: arguments.output)
    var keyLog: UnsafeMutablePointer<FILE>?
    if arguments.tls || arguments.quic {
        guard let file = fopen(keyLogPath, "w") else {
            throw .cannotWrite(keyLogPath, String(cString: strerror(errno)))
        }
        keyLog = file
    }
    // Connections are added while the bytes they will write (as cleartext) still fit the target size.
    var plannedBytes = writer.fileBytes
    var plannedWireBytes = writer.fileBytes
    while true {
        while active.count < arguments.concurrency, plannedBytes < arguments.size {
            let connection = model.makeConnection(time: clock.microseconds)
            plannedBytes += connection.plannedFileBytes
            if arguments.tls, let keyLog, let host = connection.exchanges.first?.key.host {
                let tls = SimulatedTLS(host: host, generator: &tlsGenerator)
                connection.useTLS(tls)
                fputs(tls.keyLogLines, keyLog)
                tlsStats.add(tls, connection.exchanges, &model)
            }
            if let keyLog, let quic = connection.quic { fputs(quic.keyLogLines, keyLog) }
            plannedWireBytes += connection.plannedWireFileBytes
            active.append(connection)
        }
        if active.isEmpty { break }
        let index = Int(scheduler.next() % UInt64(active.count))
        if active[index].step(writer, clock: &clock) {
            active.swapAt(index, active.count - 1)
            active.removeLast()
        }
    }
    writer.finish()
    if let keyLog { fclose(keyLog) }
    precondition(
        arguments.quic || plannedWireBytes == writer.fileBytes, "planned \(plannedWireBytes) bytes but wrote \(writer.fileBytes)")

    let manifestPath = arguments.manifest ?? Arguments.defaultManifestPath(for: arguments.output)
    let json = model.manifest.json(
        capture: String(arguments.output.split(separator: "/").last ?? ""), seed: arguments.seed,
        targetBytes: arguments.size, fileBytes: writer.fileBytes,
        packets: writer.packets, firstTime: firstTime, lastTime: clock.microseconds,
        tls: arguments.tls ? tlsStats.fields(keyLog: String(keyLogPath.split(separator: "/").last ?? "")) : nil,
        http2: arguments.http2 || arguments.quic,
        quic: arguments.quic ? quicFields(model, keyLog: String(keyLogPath.split(separator: "/").last ?? "")) : nil)
    guard let file = fopen(manifestPath, "w") else {
        throw .cannotWrite(manifestPath, String(cString: strerror(errno)))
    }
    fputs(json, file)
    fclose(file)

    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &end)
    let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    let megabytes = Double(writer.fileBytes) / 1_048_576
    var requests = 0
    for totals in model.manifest.endpoints.values { requests += totals.requests }
    print(
        "wrote \(arguments.output): \(writer.fileBytes) bytes, \(writer.packets) packets, "
            + "\(model.manifest.connections) connections, \(requests) requests in \(formatted(seconds)) s "
            + "(\(formatted(megabytes / seconds)) MiB/s); manifest \(manifestPath)"
            + (arguments.tls || arguments.quic ? "; key log \(keyLogPath)" : ""))
    if arguments.http2 { print(http2Summary(model.manifest)) }
    if arguments.quic { print(quicSummary(model)) }
}

extension Arguments {
    /// `bench-1GiB.pcap` → `bench-1GiB.MANIFEST.json`, next to the capture.
    static func defaultManifestPath(for output: String) -> String {
        let stem = output.hasSuffix(".pcap") ? String(output.dropLast(5)) : output
        return stem + ".MANIFEST.json"
    }
}

extension Arguments {
    /// `bench-1GiB-tls.pcap` → `bench-1GiB-tls.keylog`, next to the capture.
    static func defaultKeyLogPath(for output: String) -> String {
        (output.hasSuffix(".pcap") ? String(output.dropLast(5)) : output) + ".keylog"
    }
}

/// What `--tls` put in the capture, for the manifest's `tls` object.
struct TLSStats {
    var connections = 0
    var flavors: [SimulatedTLS.Flavor: Int] = [:]
    var applicationRecords = 0
    var requestOverheadBytes = 0
    var responseOverheadBytes = 0

    mutating func add(_ tls: SimulatedTLS, _ exchanges: [SimulatedConnection.Exchange], _ model: inout TrafficModel) {
        connections += 1
        flavors[tls.flavor, default: 0] += 1
        for exchange in exchanges {
            let request = tls.protectedLength(exchange.request.count) - exchange.request.count
            let response = tls.protectedLength(exchange.response.count) - exchange.response.count
            applicationRecords += (request + response) / tls.recordOverhead
            requestOverheadBytes += request
            responseOverheadBytes += response
            model.addTLSOverhead(request + response, to: exchange.key)
        }
    }

    func fields(keyLog: String) -> [(String, String)] {
        [("connections", "\(connections)")]
            + SimulatedTLS.Flavor.allCases.map { ($0.name, "\(flavors[$0, default: 0])") }
            + [
                ("application_records", "\(applicationRecords)"),
                ("request_tls_overhead_bytes", "\(requestOverheadBytes)"),
                ("response_tls_overhead_bytes", "\(responseOverheadBytes)"),
                ("keylog", "\"\(keyLog)\""),
            ]
    }
}

/// The expected HTTP/2 totals as one line (the manifest's "http2" object has them all).
func http2Summary(_ manifest: Manifest) -> String {
    var all = Manifest.Totals()
    for totals in manifest.endpoints.values { all.add(totals) }
    let h = manifest.http2
    let frames = zip(Manifest.HTTP2Totals.frameNames, h.frames).filter { $0.1 > 0 }.map { "\($0) \($1)" }
    return "h2: \(h.connections) connections, \(h.streams) streams: \(all.requests) request and \(all.responses) "
        + "response records; header bytes as sent \(all.requestHeadBytes + all.responseHeadBytes) "
        + "(request \(all.requestHeadBytes), response \(all.responseHeadBytes); decoded "
        + "\(all.requestHeaderDecodedBytes + all.responseHeaderDecodedBytes)); DATA frame bytes "
        + "\(all.requestBodyBytes + all.responseBodyBytes) (payload \(all.requestEncodedBodyBytes + all.responseEncodedBodyBytes)); "
        + "h2_control_bytes \(h.clientControlBytes + h.serverControlBytes) (client \(h.clientControlBytes), "
        + "server \(h.serverControlBytes)); frames: \(frames.joined(separator: ", "))"
}

/// The manifest's "quic" object: what the keyless run's `quic` records and the keyed run's HTTP/3 records must add
/// up to.
func quicFields(_ model: TrafficModel, keyLog: String) -> [(String, String)] {
    var all = Manifest.Totals()
    for totals in model.manifest.endpoints.values { all.add(totals) }
    let q = model.quicStats
    let hosts = q.hosts.keys.sorted().map { host in
        let h = q.hosts[host]!
        return "\"\(host)\": {\"connections\": \(h.connections), \"client_to_server_bytes\": \(h.client), \"server_to_client_bytes\": \(h.server)}"
    }
    return [
        ("connections", "\(q.connections)"), ("request_streams", "\(q.requestStreams)"),
        ("request_records", "\(all.requests)"), ("response_records", "\(all.responses)"),
        ("header_bytes", "\(all.requestHeadBytes + all.responseHeadBytes)"),
        ("header_decoded_bytes", "\(all.requestHeaderDecodedBytes + all.responseHeaderDecodedBytes)"),
        ("data_frame_bytes", "\(all.requestBodyBytes + all.responseBodyBytes)"),
        ("data_payload_bytes", "\(all.requestEncodedBodyBytes + all.responseEncodedBodyBytes)"),
        ("client_to_server_bytes", "\(q.clientUDPBytes)"), ("server_to_client_bytes", "\(q.serverUDPBytes)"),
        ("client_datagrams", "\(q.clientDatagrams)"), ("server_datagrams", "\(q.serverDatagrams)"),
        ("initial_packets", "\(q.packets[0])"), ("handshake_packets", "\(q.packets[1])"),
        ("short_header_packets", "\(q.packets[2])"),
        ("hosts", "{" + hosts.joined(separator: ", ") + "}"),
        ("keylog", "\"\(keyLog)\""),
    ]
}

/// The expected QUIC/HTTP/3 totals as one line.
func quicSummary(_ model: TrafficModel) -> String {
    "quic: " + quicFields(model, keyLog: "").filter { $0.0 != "hosts" && $0.0 != "keylog" }.map { "\($0.0) \($0.1)" }
        .joined(separator: ", ")
}

func formatted(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

do {
    try run()
} catch {
    printError("traffic-bench-gen: \(error)")
    exit(2)
}

/// Writes one line to stderr.
func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
