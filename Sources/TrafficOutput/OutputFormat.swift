/// How a report is rendered.
public enum OutputFormat: String, CaseIterable, Sendable {
    case table, csv, json
}
