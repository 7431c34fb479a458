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

extension GroupField {
    /// Parses `host,path,status`; nil when a name is unknown.
    public static func parseList(_ list: String) -> [GroupField]? {
        var fields: [GroupField] = []
        for name in list.split(separator: ",") {
            guard let field = GroupField(rawValue: name.trimmingCharacters()) else { return nil }
            fields.append(field)
        }
        return fields
    }
}
