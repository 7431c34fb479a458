#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Absolute limits per host/path glob from a budget file (`check --budget`), independent of any baseline.
public struct Budget: Sendable, Equatable {
    /// One limit of a rule: `max_response_bytes: 4KiB` and the like.
    public struct Limit: Sendable, Equatable {
        public var field: CheckField
        /// Bytes, or requests for the request count.
        public var maximum: Int
        /// Per-request average (byte fields, the default) or the group's total (`max_total_…`, `max_requests`).
        public var metric: Metric

        public init(field: CheckField, maximum: Int, metric: Metric) {
            self.field = field
            self.maximum = maximum
            self.metric = metric
        }

        /// The key as written in the budget file.
        public var key: String {
            field.isCount ? "max_requests" : metric == .total ? "max_total_\(field.rawValue)" : "max_\(field.rawValue)"
        }
    }

    /// Limits for the groups whose host and path match the globs.
    public struct Rule: Sendable, Equatable {
        /// fnmatch(3) globs; `*` matches everything, including `/` and the empty string.
        public var host = "*"
        public var path = "*"
        public var limits: [Limit] = []

        public init(host: String = "*", path: String = "*", limits: [Limit] = []) {
            self.host = host
            self.path = path
            self.limits = limits
        }

        /// True when the group's host and path match; a snapshot without a host or path key
        /// matches only the glob `*` there.
        func matches(host groupHost: String?, path groupPath: String?) -> Bool {
            Self.glob(host, groupHost) && Self.glob(path, groupPath)
        }

        /// `host "api.*", path "/v1/*"`: the globs as a person wrote them.
        public var globs: String { "host \"\(host)\", path \"\(path)\"" }

        static func glob(_ pattern: String, _ value: String?) -> Bool {
            guard let value else { return pattern == "*" }
            return fnmatch(pattern, value, 0) == 0
        }
    }

    public var rules: [Rule]

    public init(rules: [Rule]) { self.rules = rules }

    /// The positions of the rules that match no group of `snapshot`: a glob with a typo, or an endpoint
    /// renamed, would otherwise pass silently.
    public func unmatchedRules(_ snapshot: Snapshot) -> [Int] {
        rules.indices.filter { index in
            !snapshot.groups.contains { group in
                rules[index].matches(host: snapshot.key(.host, of: group), path: snapshot.key(.path, of: group))
            }
        }
    }

    /// Every limit of every rule that matches a group, in group then rule order, passed or not.
    public func evaluate(_ snapshot: Snapshot) -> [BudgetResult] {
        var results: [BudgetResult] = []
        for group in snapshot.groups {
            let host = snapshot.key(.host, of: group), path = snapshot.key(.path, of: group)
            for (index, rule) in rules.enumerated() where rule.matches(host: host, path: path) {
                // A limit on a field the group does not have (a decoded header size of an HTTP/1 group) does
                // not apply to it.
                for limit in rule.limits where group.counts.has(limit.field) {
                    results.append(BudgetResult(
                        keys: group.keys, rule: index, limit: limit,
                        actual: group.counts.value(limit.field, limit.metric)))
                }
            }
        }
        return results
    }
}
