#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// traffic-bench-gen: writes a deterministic benchmark capture of HTTP/1.1 traffic and its manifest.
//
// Usage: traffic-bench-gen [--size 1GiB] [--seed 1] [--concurrency 64] [--manifest PATH] OUTPUT.pcap
//
// Connections are planned until their bytes reach --size; every planned connection is played to
// its end, so the file is larger than asked by less than one connection.

struct Arguments {
    var size = 1 << 30
    var seed: UInt64 = 1
    var concurrency = 64
    var output = ""
    var manifest: String?

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
            case "-h", "--help":
                print(
                    "usage: traffic-bench-gen [--size 1GiB] [--seed N] [--concurrency N] [--manifest PATH] OUTPUT.pcap")
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

    var model = TrafficModel(seed: arguments.seed)
    let writer = try PcapWriter(path: arguments.output)
    // 2024-03-01T12:00:00Z.
    let firstTime: UInt64 = 1_709_294_400_000_000
    var clock = PacketClock(microseconds: firstTime, generator: SeededGenerator(seed: arguments.seed &+ 0x5eed))
    var scheduler = SeededGenerator(seed: arguments.seed &* 31 &+ 7)
    var active: [SimulatedConnection] = []
    active.reserveCapacity(arguments.concurrency)
    // Connections are added while the bytes they will write still fit the target size.
    var plannedBytes = writer.fileBytes
    while true {
        while active.count < arguments.concurrency, plannedBytes < arguments.size {
            let connection = model.makeConnection(time: clock.microseconds)
            plannedBytes += connection.plannedFileBytes
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
    precondition(plannedBytes == writer.fileBytes, "planned \(plannedBytes) bytes but wrote \(writer.fileBytes)")

    let manifestPath = arguments.manifest ?? Arguments.defaultManifestPath(for: arguments.output)
    let json = model.manifest.json(
        capture: String(arguments.output.split(separator: "/").last ?? ""), seed: arguments.seed,
        targetBytes: arguments.size, fileBytes: writer.fileBytes,
        packets: writer.packets, firstTime: firstTime, lastTime: clock.microseconds)
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
            + "(\(formatted(megabytes / seconds)) MiB/s); manifest \(manifestPath)")
}

extension Arguments {
    /// `bench-1GiB.pcap` → `bench-1GiB.MANIFEST.json`, next to the capture.
    static func defaultManifestPath(for output: String) -> String {
        let stem = output.hasSuffix(".pcap") ? String(output.dropLast(5)) : output
        return stem + ".MANIFEST.json"
    }
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
