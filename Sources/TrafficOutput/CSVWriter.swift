/// Writes RFC 4180 CSV: CRLF line ends, fields quoted when they hold a comma, quote or line break.
public struct CSVWriter {
    public private(set) var output = ""

    public init() {}

    public mutating func row(_ fields: [String]) {
        for (i, field) in fields.enumerated() {
            if i > 0 { output += "," }
            if field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                output += "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            } else {
                output += field
            }
        }
        output += "\r\n"
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
