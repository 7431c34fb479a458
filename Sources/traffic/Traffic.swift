import ArgumentParser

@main
struct Traffic: ParsableCommand {
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
