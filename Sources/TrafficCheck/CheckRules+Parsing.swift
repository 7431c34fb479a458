extension CheckRules {
    /// A command-line value that is not a tolerance; `message` says what was expected.
    public struct ParseError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses `--field-tolerance FIELD=LIMIT[,LIMIT]`, a LIMIT being `N%`, a size (`2KiB`, for byte
    /// fields), a plain count (for `requests`), or `off`. Returns the field and its tolerance (nil: off).
    public static func parseFieldTolerance(_ text: String) throws(ParseError) -> (CheckField, Tolerance?) {
        let fieldNames = CheckField.allCases.map(\.rawValue).joined(separator: ", ")
        guard let equals = text.firstIndex(of: "=") else {
            throw ParseError(message: "--field-tolerance '\(text)': expected FIELD=LIMIT, e.g. response_bytes=5%")
        }
        let name = String(text[..<equals])
        guard let field = CheckField(rawValue: name) else {
            throw ParseError(message: "--field-tolerance: unknown field '\(name)'; use one of \(fieldNames)")
        }
        let value = text[text.index(after: equals)...]
        if value == "off" { return (field, nil) }
        var tolerance = Tolerance()
        for part in value.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            if let ppm = Tolerance.parsePercent(part) {
                guard tolerance.partsPerMillion == nil else {
                    throw ParseError(message: "--field-tolerance '\(text)': two percentages")
                }
                tolerance.partsPerMillion = ppm
            } else if let amount = field.isCount ? Int(part).flatMap({ $0 >= 0 ? $0 : nil }) : ByteSize.parse(part) {
                guard tolerance.absolute == nil else {
                    throw ParseError(message: "--field-tolerance '\(text)': two absolute limits")
                }
                tolerance.absolute = amount
            } else {
                let expected = field.isCount ? "a percentage (10%) or a number of requests" : "a percentage (10%) or a size (2KiB)"
                throw ParseError(message: "--field-tolerance '\(text)': '\(part)' is not \(expected), nor 'off'")
            }
        }
        return (field, tolerance)
    }
}
