import TrafficAggregation
import TrafficAnalysis
import TrafficCapture

/// Why `baseline`, `check` or `diff` cannot work with their input; one sentence naming the file.
public enum CheckInputError: Error, Equatable, CustomStringConvertible {
    case capture(CaptureError)
    case unreadable(path: String, what: String, reason: String)
    /// Not JSON at all, or JSON of the wrong shape.
    case corrupt(path: String, what: String, reason: String)
    case unknownSchema(path: String, found: String, expected: [String])
    /// An `analyze` report where a baseline is needed: it lacks the grouping settings.
    case reportNotBaseline(path: String)
    case invalidBudget(path: String, reason: String)
    case groupingMismatch(left: String, leftGroupBy: [GroupField], right: String, rightGroupBy: [GroupField])
    /// The groups of a large report could not be read back from their temporary file (an I/O error).
    case temporaryFile(reason: String)
    /// JSON reports given in place of captures (`traffic merge` reads them) could not be merged.
    case reports(String)
    /// A report grouped or counted differently from what the check or baseline needs.
    case reportGrouping(path: String, reason: String)
    /// Captures and JSON reports given together.
    case mixedInputs

    public var description: String {
        switch self {
        case let .capture(error): return error.description
        case let .unreadable(path, what, reason): return "\(path): cannot read \(what): \(reason)"
        case let .corrupt(path, what, reason): return "\(path): corrupt \(what): \(reason)"
        case let .unknownSchema(path, found, expected):
            return "\(path): unknown schema '\(found)'; this traffic reads \(expected.joined(separator: " and "))"
        case let .reportNotBaseline(path):
            return "\(path): a traffic analyze report, not a baseline; record one with `traffic baseline CAPTURE -o FILE`"
        case let .invalidBudget(path, reason): return "\(path): invalid budget: \(reason)"
        case let .groupingMismatch(left, leftGroupBy, right, rightGroupBy):
            func names(_ fields: [GroupField]) -> String { fields.map(\.rawValue).joined(separator: ",") }
            return "\(left) groups by \(names(leftGroupBy)) but \(right) by \(names(rightGroupBy)); they cannot be compared"
        case let .temporaryFile(reason): return "groups: \(reason)"
        case let .reports(reason): return reason
        case let .reportGrouping(path, reason):
            return "\(path): grouped differently from the baseline (\(reason)); analyze the captures with the baseline's "
                + "grouping (baselines normalize paths unless recorded with --no-normalize-paths)"
        case .mixedInputs: return "give either captures or JSON reports of `traffic analyze`, not both"
        }
    }
}
