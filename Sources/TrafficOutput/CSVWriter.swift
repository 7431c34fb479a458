/// Writes RFC 4180 CSV: CRLF line ends, fields quoted when they hold a comma, quote or line break.
public struct CSVWriter {
    public private(set) var output = ""

    public init() {}

    public mutating func row(_ fields: [String]) {
        for (i, field) in fields.enumerated() {
            if i > 0 { output += "," }
            // Bytes, not Characters: the check runs for every cell of every row.
            if field.utf8.contains(where: { $0 == 0x2c || $0 == 0x22 || $0 == 0x0a || $0 == 0x0d }) {
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
