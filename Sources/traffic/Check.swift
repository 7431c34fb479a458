import ArgumentParser
import TrafficCheck

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Metric: ExpressibleByArgument {}
extension CheckFormat: ExpressibleByArgument {}

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Fail when endpoints cost more than in a baseline, or more than a budget allows.",
        discussion: """
            Compares each group's request bytes, response bytes, decoded body bytes and (with --metric total) \
            request count with the baseline, and checks the budget file's absolute limits. Decreases never \
            fail. With --max-increase and --max-increase-bytes both given, the larger allowance applies: \
            a change fails only when it exceeds both. --field-tolerance FIELD=LIMIT[,LIMIT] replaces them \
            for one field (LIMIT: 5%, 2KiB, a request count for `requests`, or off); fields: requests, \
            request_bytes, response_bytes, request_decoded_body_bytes, response_decoded_body_bytes, \
            request_cookie_bytes, response_cookie_bytes, request_header_decoded_bytes, \
            response_header_decoded_bytes (HTTP/2 header blocks after HPACK decoding; compared where both runs \
            have them). Grouping comes from the baseline. \
            A check that compared nothing fails (exit 1): captures without HTTP, or none of the baseline's \
            endpoints found (a wrong capture or --filter); --allow-empty lets it pass. Capture damage and \
            messages cut short fail the check unless --allow-damaged; an endpoint with a message cut short is \
            never compared as if whole. A budget rule that matches no endpoint is reported, and fails under \
            --strict-budget. Several formats can be written in one run: --format and -o for one, --junit, \
            --markdown, --json and --html FILE for more. \
            Exit codes: 0 within budget, 1 a rule failed or nothing was compared, 2 usage error, \
            3 unreadable or invalid input.

            Examples:
              traffic check session.pcap --baseline traffic-baseline.json
              traffic check session.pcap --baseline traffic-baseline.json --max-increase 10% --max-increase-bytes 2KiB
              traffic check session.pcap --baseline traffic-baseline.json --field-tolerance response_bytes=5% --fail-on-new
              traffic check session.pcap --budget traffic-budget.yml --strict-budget --format junit -o traffic-junit.xml
              traffic check session.pcap --baseline traffic-baseline.json --fail-on-missing \\
                --format markdown -o summary.md --junit traffic-junit.xml
            """)

    @OptionGroup var input: InputOptions

    @Option(help: "Baseline file written by `traffic baseline`.")
    var baseline: String?

    @Option(help: "Budget file (YAML) with absolute limits per host/path glob; see the README's CI section.")
    var budget: String?

    @Option(help: "Compare per-request averages or totals.")
    var metric: Metric = .perRequest

    @Option(help: "Allowed increase as a percentage of the baseline, e.g. 10%.")
    var maxIncrease: String?

    @Option(help: "Allowed increase in bytes, e.g. 2KiB, 500B, 1.5MB.")
    var maxIncreaseBytes: String?

    @Option(help: "Per-field tolerance FIELD=LIMIT[,LIMIT], e.g. response_bytes=5%,1KiB or requests=off. Repeatable.")
    var fieldTolerance: [String] = []

    @Flag(help: "Fail on endpoints that are not in the baseline.")
    var failOnNew = false

    @Flag(help: "Fail on baseline endpoints that are absent from the captures.")
    var failOnMissing = false

    @Flag(help: "Pass when nothing was compared (captures without HTTP, no baseline endpoint found).")
    var allowEmpty = false

    @Flag(help: "Pass despite capture damage or messages cut short (their endpoints are still not compared).")
    var allowDamaged = false

    @Flag(help: "Fail when a budget rule matches no endpoint.")
    var strictBudget = false

    @OptionGroup var grouping: GroupingOptions

    @Option(name: .shortAndLong, help: "Output format: table, markdown, json, junit or html.")
    var format: CheckFormat = .table

    @Option(name: .shortAndLong, help: "Write to this file instead of stdout (the verdict still goes to stderr).")
    var output: String?

    @Option(help: ArgumentHelp("Also write JUnit XML to this file.", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Also write markdown to this file.", valueName: "file"))
    var markdown: String?

    @Option(help: ArgumentHelp("Also write JSON to this file.", valueName: "file"))
    var json: String?

    @Option(help: ArgumentHelp("Also write a self-contained HTML page to this file (a CI artifact).", valueName: "file"))
    var html: String?

    @OptionGroup var width: WidthOptions

    func validate() throws {
        if baseline == nil && budget == nil { throw ValidationError("give --baseline FILE, --budget FILE, or both") }
        if baseline != nil && grouping.isGiven {
            throw ValidationError("the grouping comes from the baseline; drop --group-by, --no-normalize-paths and --path-template")
        }
        _ = try rules()
    }

    /// The rules from the tolerance options; a `ValidationError` (exit 2) for a malformed value.
    func rules() throws -> CheckRules {
        var rules = CheckRules()
        rules.metric = metric
        rules.failOnNew = failOnNew
        rules.failOnMissing = failOnMissing
        rules.allowEmpty = allowEmpty
        rules.allowDamaged = allowDamaged
        rules.strictBudget = strictBudget
        if let maxIncrease {
            guard let ppm = Tolerance.parsePercent(maxIncrease) else {
                throw ValidationError("--max-increase '\(maxIncrease)': expected a percentage such as 10% or 2.5%")
            }
            rules.tolerance.partsPerMillion = ppm
        }
        if let maxIncreaseBytes {
            guard let bytes = ByteSize.parse(maxIncreaseBytes) else {
                throw ValidationError("--max-increase-bytes '\(maxIncreaseBytes)': expected a size such as 2048, 2KiB or 1.5MB")
            }
            rules.tolerance.absolute = bytes
        }
        for text in fieldTolerance {
            do {
                let (field, tolerance) = try CheckRules.parseFieldTolerance(text)
                if let tolerance { rules.fieldTolerances[field] = tolerance } else { rules.ignoredFields.insert(field) }
            } catch {
                throw ValidationError(error.message)
            }
        }
        return rules
    }

    func run() throws {
        let outcome: CheckOutcome
        do {
            outcome = try RegressionCheck.run(
                captures: input.captures, baseline: baseline, budget: budget,
                grouping: grouping.settings(filter: input.filter, keyLogs: input.keyLogs), rules: try rules())
        } catch let error as CheckInputError {
            printError("traffic: \(error)")
            throw ExitCode(inputErrorCode)
        }
        for warning in outcome.integrity.warnings { printError(warning.description) }
        for note in outcome.integrity.notAnalysed { printError("note: \(note)") }
        let report = CheckReport(outcome: outcome, verdict: true)
        try writeText(report.render(format, width: width.tableWidth), to: output)
        for (file, extra) in [(junit, CheckFormat.junit), (markdown, .markdown), (json, .json), (html, .html)] {
            if let file { try writeText(report.render(extra, width: width.tableWidth), to: file) }
        }
        if output != nil { printError("traffic check: \(outcome.verdict)") }
        if !outcome.passed { throw ExitCode.failure }
    }
}

