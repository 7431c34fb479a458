/// How a report is rendered.
public enum OutputFormat: String, CaseIterable, Sendable {
    case table, csv, json
    /// One self-contained page (`HTMLReport`); `analyze` only.
    case html
}
