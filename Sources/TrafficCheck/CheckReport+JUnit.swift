extension CheckReport {
    /// JUnit XML: one `testcase` per endpoint, with one `failure` holding all of its failure sentences
    /// (JUnit allows one per test case), and its changes in `system-out`.
    func junit() -> String {
        // The run as a whole is a test case of its own: compared something, captures undamaged, every
        // budget rule matched. Damage is an error (the input was bad), the others failures.
        let runFailures = outcome.runFailureMessages
        let damage = outcome.damageFailureCount > 0
        let failing = outcome.endpoints.filter { !outcome.failureMessages(for: $0).isEmpty }.count
            + (runFailures.isEmpty || damage ? 0 : 1)
        let errors = damage ? 1 : 0
        let counts = "tests=\"\(outcome.endpoints.count + 1)\" failures=\"\(failing)\" errors=\"\(errors)\""
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"traffic check\" \(counts)>\n"
        xml += "  <testsuite name=\"\(Self.xmlEscape(heading))\" \(counts) skipped=\"0\">\n"
        xml += "    <testcase classname=\"traffic.run\" name=\"captures\">\n"
        if let first = runFailures.first {
            let element = damage ? "error" : "failure"
            let summary = runFailures.count == 1 ? first : "\(first) (and \(runFailures.count - 1) more)"
            xml += "      <\(element) type=\"traffic.check\" message=\"\(Self.xmlEscape(summary))\">"
            xml += Self.xmlEscape(runFailures.joined(separator: "\n")) + "</\(element)>\n"
        }
        xml += "      <system-out>" + Self.xmlEscape(runNotes.joined(separator: "\n")) + "</system-out>\n"
        xml += "    </testcase>\n"
        for keys in outcome.endpoints {
            let name = keys.joined(separator: " ")
            let classname = "traffic." + (keys.first ?? "endpoint")
            xml += "    <testcase classname=\"\(Self.xmlEscape(classname))\" name=\"\(Self.xmlEscape(name))\""
            let messages = outcome.failureMessages(for: keys)
            let changes = outcome.groups.first { $0.keys == keys }?.changes.map { $0.message(metric: outcome.rules.metric) } ?? []
            if messages.isEmpty && changes.isEmpty {
                xml += "/>\n"
                continue
            }
            xml += ">\n"
            if let first = messages.first {
                let summary = messages.count == 1 ? first : "\(first) (and \(messages.count - 1) more)"
                xml += "      <failure type=\"traffic.check\" message=\"\(Self.xmlEscape(summary))\">"
                xml += Self.xmlEscape(messages.joined(separator: "\n")) + "</failure>\n"
            }
            if !changes.isEmpty {
                xml += "      <system-out>" + Self.xmlEscape(changes.joined(separator: "\n")) + "</system-out>\n"
            }
            xml += "    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// Escapes markup characters and drops the control characters XML 1.0 cannot hold at all.
    static func xmlEscape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
