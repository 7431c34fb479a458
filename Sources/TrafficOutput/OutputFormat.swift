/// How a report is rendered.
public enum OutputFormat: String, CaseIterable, Sendable {
    case table, csv, json
    /// One self-contained page (`HTMLReport`); `analyze` only.
    case html
    /// One HAR 1.2 document, an entry per exchange (`HARDocument`); `analyze` only.
    case har
    /// One JSON record per line, written as records complete (`NDJSONRecordWriter`); `analyze` only.
    case ndjson
}

/// The version `traffic --version` prints and HAR's `creator` names.
public enum TrafficVersion {
    public static let current = "0.1.0"
}
