import ArgumentParser
import TrafficOutput

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
/// glibc's `mallopt` (malloc.h, which the Glibc module does not import) and its `M_MMAP_THRESHOLD` (-3).
@_silgen_name("mallopt") private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let glibcMmapThreshold: Int32 = -3
#endif

@main
struct Traffic: ParsableCommand {
    /// Usage errors exit with 2, like getopt tools and tshark; ArgumentParser's own default is 64 (EX_USAGE).
    static func main() {
        #if canImport(Glibc)
        // glibc raises its mmap threshold each time a large block is freed, after which blocks of that size
        // come from the heap and stay resident once freed: a run that moves records or groups from chunks
        // into a final array would hold both. A fixed threshold returns large blocks to the system
        // (`--messages` on 1 GiB: 347 -> 239 MiB peak, and faster).
        _ = glibcMallopt(glibcMmapThreshold, 512 << 10)
        #endif
        if let message = unknownSubcommandMessage(Array(CommandLine.arguments.dropFirst())) {
            printError("Error: \(message)\nUsage: traffic <subcommand>\n  See 'traffic --help' for more information.")
            #if canImport(Glibc)
            Glibc.exit(2)
            #else
            Darwin.exit(2)
            #endif
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            let message = fullMessage(for: error)
            if !message.isEmpty { printError(message) }
            #if canImport(Glibc)
            Glibc.exit(2)
            #else
            Darwin.exit(2)
            #endif
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "traffic",
        abstract: "Exact per-endpoint HTTP byte costs from packet captures.",
        discussion: """
            Examples:
              traffic analyze capture.pcap
              traffic analyze --normalize-paths --format csv -o costs.csv session.pcapng.gz
              traffic connections capture.pcap
              traffic connections --format json capture.pcapng.gz
              tcpdump -w - -i any port 80 | traffic connections -
            """,
        version: TrafficVersion.current,
        subcommands: [Analyze.self, Connections.self, BaselineCommand.self, CheckCommand.self, DiffCommand.self, MergeCommand.self])
}

extension Traffic {
    /// A first argument that is no subcommand and no option: the closest subcommand by edit distance
    /// (`chek` → check), or `analyze` for what looks like a capture file. ArgumentParser alone says
    /// "unexpected arguments", which names no way out.
    static func unknownSubcommandMessage(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let lowered = first.lowercased()
        if lowered.hasSuffix(".pcap") || lowered.hasSuffix(".pcapng") || lowered.hasSuffix(".gz") || lowered.hasSuffix(".cap") {
            return "unknown subcommand '\(first)'; to analyse a capture: traffic analyze \(first)"
        }
        let (best, distance) = names.map { ($0, editDistance(lowered, $0)) }.min { $0.1 < $1.1 }!
        if distance <= max(2, best.count / 3) { return "unknown subcommand '\(first)'; did you mean '\(best)'?" }
        return "unknown subcommand '\(first)'; the subcommands are \(names.dropLast().joined(separator: ", "))"
    }

    /// Levenshtein distance over characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Results the process holds until it exits: freeing tens of thousands of groups (or every record) one
/// object at a time only to exit right after took 2 % of a run, and the kernel frees the pages at once.
nonisolated(unsafe) private var keptUntilExit: [Any] = []

func keepUntilExit(_ value: Any) { keptUntilExit.append(value) }
