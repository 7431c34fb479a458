import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Traffic: ParsableCommand {
    /// Usage errors exit with 2, like getopt tools and tshark; ArgumentParser's own default is 64 (EX_USAGE).
    static func main() {
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
        version: "0.1.0",
        subcommands: [Analyze.self, Connections.self, BaselineCommand.self, CheckCommand.self, DiffCommand.self])
}
