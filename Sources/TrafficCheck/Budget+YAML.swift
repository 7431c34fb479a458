import TrafficMerge
import Yams

extension Budget {
    /// Reads a budget file; every mistake is an error naming the file, the rule and the key.
    public static func load(path: String) throws(CheckInputError) -> Budget {
        let bytes: [UInt8]
        switch InputFile.read(path) {
        case let .success(read): bytes = read
        case let .failure(failure): throw .unreadable(path: path, what: "budget", reason: failure.reason)
        }
        do {
            return try parse(yaml: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .invalidBudget(path: path, reason: error.message)
        }
    }

    /// A budget file's mistake, without the file name.
    public struct ParseError: Error, Equatable {
        public var message: String
    }

    /// Parses the YAML format documented in the README (Budgets):
    ///
    ///     budgets:
    ///       - path: "/api/*"
    ///         max_response_bytes: 4KiB
    ///         max_requests: 50
    public static func parse(yaml: String) throws(ParseError) -> Budget {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw ParseError(message: "not YAML: \(oneLine(error))")
        } catch {
            throw ParseError(message: "not YAML: \(error)")
        }
        guard let mapping = root?.mapping else { throw ParseError(message: "expected a mapping with a 'budgets' list") }
        var rulesNode: Node.Sequence?
        for (key, value) in mapping {
            switch key.string ?? "" {
            case "version":
                guard value.int == 1 else { throw ParseError(message: "version must be 1") }
            case "budgets":
                guard let sequence = value.sequence else { throw ParseError(message: "'budgets' must be a list of rules") }
                rulesNode = sequence
            case let other:
                throw ParseError(message: "unknown key '\(other)'; expected 'budgets' (and optionally 'version')")
            }
        }
        guard let rulesNode else { throw ParseError(message: "no 'budgets' list") }
        var rules: [Rule] = []
        for (index, node) in rulesNode.enumerated() {
            rules.append(try parseRule(node, name: "budgets[\(index)]"))
        }
        return Budget(rules: rules)
    }

    static func parseRule(_ node: Node, name: String) throws(ParseError) -> Rule {
        guard let mapping = node.mapping else { throw ParseError(message: "\(name): expected a mapping of globs and limits") }
        var rule = Rule()
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            switch key {
            case "host", "path":
                guard let glob = value.scalar?.string, !glob.isEmpty else {
                    throw ParseError(message: "\(name).\(key): expected a glob such as '/api/*'")
                }
                if key == "host" { rule.host = glob } else { rule.path = glob }
            case "name":
                break  // a label for people reading the file
            default:
                guard let (field, metric) = limitKey(key) else {
                    let keys = ["max_requests", "max_cookie_bytes"] + CheckField.byteFields.flatMap {
                        ["max_\($0.rawValue)", "max_total_\($0.rawValue)"]
                    }
                    throw ParseError(message: "\(name): unknown key '\(key)'; use host, path, name, \(keys.joined(separator: ", "))")
                }
                guard let text = value.scalar?.string,
                      let maximum = field.isCount ? Int(text).flatMap({ $0 >= 0 ? $0 : nil }) : ByteSize.parse(text)
                else {
                    let expected = field.isCount ? "a number of requests" : "a size such as 4096, 4KiB or 1.5MB"
                    throw ParseError(message: "\(name).\(key): '\(value.scalar?.string ?? "")' is not \(expected)")
                }
                rule.limits.append(Limit(field: field, maximum: maximum, metric: metric))
            }
        }
        if rule.limits.isEmpty { throw ParseError(message: "\(name): no limits (max_… keys)") }
        return rule
    }

    /// `max_response_bytes` → per request, `max_total_response_bytes` → total, `max_requests` → total count;
    /// `max_cookie_bytes` is short for `max_request_cookie_bytes` (the Cookie header every request carries).
    static func limitKey(_ key: String) -> (CheckField, Metric)? {
        if key == "max_requests" { return (.requests, .total) }
        if key == "max_cookie_bytes" { return (.requestCookieBytes, .perRequest) }
        guard key.hasPrefix("max_") else { return nil }
        var rest = key.dropFirst(4)
        var metric = Metric.perRequest
        if rest.hasPrefix("total_") {
            rest = rest.dropFirst(6)
            metric = .total
        }
        guard let field = CheckField(rawValue: String(rest)), !field.isCount else { return nil }
        return (field, metric)
    }

    /// `line 3 column 5: mapping values are not allowed in this context`.
    static func oneLine(_ error: YamlError) -> String {
        switch error {
        case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
            return "line \(mark.line) column \(mark.column): \(problem)"
        default:
            return String(describing: error).split(separator: "\n").first.map(String.init) ?? "unreadable"
        }
    }
}
