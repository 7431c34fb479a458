/// A dimension that `--group-by` can group records by.
public enum GroupField: String, CaseIterable, Sendable {
    case host, path, method, status
    case contentType = "content-type"
    case connection
    /// Added by `--per-capture`.
    case capture

    /// The CSV column and JSON key for this dimension.
    public var columnName: String { self == .contentType ? "content_type" : rawValue }
}
