/// What decides a report's groups and what its numbers count. Reports of disjoint captures merge into the
/// report of one run over all of them only when these are equal (`traffic merge` refuses otherwise).
public struct ReportSettings: Sendable, Equatable {
    public var groupBy: [GroupField]
    public var normalizePaths: Bool
    public var pathTemplates: [String]
    public var hostGlob: String?
    public var pathGlob: String?
    /// The BPF filter the captures were read with.
    public var filter: String?
    /// `--overhead`, as names in a fixed order (handshake, teardown, packets).
    public var overhead: [String]

    public init(
        groupBy: [GroupField], normalizePaths: Bool = false, pathTemplates: [String] = [], hostGlob: String? = nil,
        pathGlob: String? = nil, filter: String? = nil, overhead: [String] = []
    ) {
        self.groupBy = groupBy
        self.normalizePaths = normalizePaths
        self.pathTemplates = pathTemplates
        self.hostGlob = hostGlob
        self.pathGlob = pathGlob
        self.filter = filter
        self.overhead = overhead
    }

    /// The first setting in which `self` and `other` differ, for a one-line reason; nil when equal.
    public func difference(from other: ReportSettings) -> String? {
        func show(_ value: String?) -> String { value.map { "'\($0)'" } ?? "none" }
        if groupBy != other.groupBy {
            return "--group-by \(groupBy.map(\.rawValue).joined(separator: ",")) vs \(other.groupBy.map(\.rawValue).joined(separator: ","))"
        }
        if normalizePaths != other.normalizePaths {
            return "--normalize-paths \(normalizePaths ? "on" : "off") vs \(other.normalizePaths ? "on" : "off")"
        }
        if pathTemplates != other.pathTemplates {
            return "--path-template \(pathTemplates) vs \(other.pathTemplates)"
        }
        if hostGlob != other.hostGlob { return "--host \(show(hostGlob)) vs \(show(other.hostGlob))" }
        if pathGlob != other.pathGlob { return "--path \(show(pathGlob)) vs \(show(other.pathGlob))" }
        if filter != other.filter { return "--filter \(show(filter)) vs \(show(other.filter))" }
        if overhead != other.overhead {
            return "--overhead \(overhead.isEmpty ? "none" : overhead.joined(separator: ",")) vs "
                + (other.overhead.isEmpty ? "none" : other.overhead.joined(separator: ","))
        }
        return nil
    }
}

extension ReportOptions {
    /// The settings a report of these options was made with.
    public var settings: ReportSettings {
        var names: [String] = []
        if overhead.contains(.handshake) { names.append("handshake") }
        if overhead.contains(.teardown) { names.append("teardown") }
        if overhead.contains(.packets) { names.append("packets") }
        return ReportSettings(
            groupBy: groupBy, normalizePaths: paths.collapseIdentifiers,
            pathTemplates: paths.templates.map { $0.joined(separator: "/") }, hostGlob: hostGlob, pathGlob: pathGlob,
            filter: analysis.filter, overhead: names)
    }
}
