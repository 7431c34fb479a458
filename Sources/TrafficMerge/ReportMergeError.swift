/// Why `traffic merge` could not merge its reports; each names the file and reads as one line.
public enum ReportMergeError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    /// Not a JSON report of `traffic analyze`, or one missing a field the merge needs.
    case notAReport(path: String, reason: String)
    /// A report grouped or counted differently from the first one.
    case incompatible(path: String, first: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadable(path, reason): return "\(path): cannot read: \(reason)"
        case let .notAReport(path, reason): return "\(path): not a report of `traffic analyze --format json`: \(reason)"
        case let .incompatible(path, first, reason):
            return "\(path): grouped or counted differently from \(first) (\(reason)); reports merge only when made "
                + "with the same settings"
        }
    }
}
