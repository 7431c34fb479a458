import TrafficAggregation
import ArgumentParser
import TrafficAnalysis
import TrafficCheck

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct BaselineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "baseline",
        abstract: "Record a baseline of per-endpoint byte costs to commit and check later runs against.",
        discussion: """
            Writes the report's groups with their totals and per-request averages as pretty JSON \
            (schema traffic.baseline/1): sorted, no timestamps, so the same capture always gives the same \
            file. Paths are normalized (/users/42 → /users/{id}) unless --no-normalize-paths. The grouping \
            is stored in the file; `traffic check` groups the same way. A baseline of captures without HTTP \
            is refused (it would let every later check pass vacuously) unless --allow-empty. Endpoints with a \
            message cut short are marked in the file and not compared by `check`. Exit codes: 0 success, \
            2 usage error, 3 unreadable input or an empty baseline.

            Examples:
              traffic baseline session.pcap -o traffic-baseline.json
              traffic baseline --path-template '/orders/{order}/items' run1.pcap run2.pcap -o traffic-baseline.json
              traffic baseline week.json -o traffic-baseline.json   (a report of traffic analyze or merge)
            """)

    @OptionGroup var input: InputOptions
    @OptionGroup var grouping: GroupingOptions

    @Option(name: .shortAndLong, help: "Write the baseline to this file instead of stdout.")
    var output: String?

    @Flag(help: "Write the baseline even when the captures hold no HTTP.")
    var allowEmpty = false

    func run() throws {
        let baseline: Baseline
        do {
            var settings = grouping.settings(filter: input.filter, keyLogs: input.keyLogs)
            // JSON reports (merged ones too) in place of captures: without grouping options the baseline takes the
            // reports' grouping, which they record.
            if !grouping.isGiven, input.filter == nil, let merged = try GroupingSettings.mergedReports(input.captures) {
                settings = GroupingSettings(report: merged.settings)
            }
            baseline = try Baseline.record(captures: input.captures, settings: settings)
        } catch {
            printError("traffic: \(error)")
            throw ExitCode(inputErrorCode)
        }
        let integrity = baseline.snapshot.integrity
        for warning in integrity.warnings { printError(warning.description) }
        for note in integrity.notAnalysed { printError("note: \(note)") }
        if integrity.messages == 0 && !allowEmpty {
            printError("traffic: the captures hold no HTTP: refusing to write an empty baseline, which every "
                + "later check would pass (--allow-empty to write it anyway)")
            throw ExitCode(inputErrorCode)
        }
        if integrity.incompleteMessages > 0 {
            printError("warning: \(integrity.damageMessages.joined(separator: "; ")); `traffic check` will not "
                + "compare those endpoints")
        }
        try writeText(baseline.json(), to: output)
    }
}

/// `--group-by`, `--no-normalize-paths` and `--path-template`, shared by baseline, check and diff.
struct GroupingOptions: ParsableArguments {
    @Option(help: "Group by these fields, in order: host, path, method, status, content-type, connection (default host,path).")
    var groupBy: String?

    @Flag(help: "Keep paths as sent instead of collapsing identifier segments to {id}.")
    var noNormalizePaths = false

    @Option(help: "Group paths matching this template, e.g. '/users/{id}/orders/{order}'. Repeatable.")
    var pathTemplate: [String] = []

    /// True when any grouping option was given.
    var isGiven: Bool { groupBy != nil || noNormalizePaths || !pathTemplate.isEmpty }

    func validate() throws {
        if let groupBy, GroupField.parseList(groupBy) == nil {
            throw ValidationError("unknown --group-by field in '\(groupBy)'; use host, path, method, status, content-type, connection")
        }
    }

    func settings(filter: String?, keyLogs: [String] = []) -> GroupingSettings {
        var settings = GroupingSettings()
        if let groupBy {
            settings.groupBy = GroupField.parseList(groupBy) ?? [.host, .path]
        }
        settings.normalizePaths = !noNormalizePaths
        settings.pathTemplates = pathTemplate
        settings.filter = filter
        settings.keyLogPaths = keyLogs
        return settings
    }
}
