import TrafficMerge
import TrafficAggregation
import Foundation
import TrafficAnalysis
import TrafficOutput

/// Reads the JSON files `check` and `diff` compare with: baselines and `analyze --format json` reports.
public enum SnapshotFile {
    /// What a JSON file held.
    public enum Contents: Sendable {
        case baseline(Baseline)
        case report(Snapshot)

        public var snapshot: Snapshot {
            switch self {
            case let .baseline(baseline): return baseline.snapshot
            case let .report(snapshot): return snapshot
            }
        }
    }

    /// The schemas `diff` reads.
    public static let readable = [Baseline.schema, AnalyzeReport.schema]

    /// Reads and validates `path`; `what` names the file's role in messages ("baseline"), and
    /// `schemas` the schemas accepted (an unknown one is an error listing them).
    public static func load(path: String, what: String, schemas: [String] = readable) throws(CheckInputError) -> Contents {
        let bytes: [UInt8]
        switch InputFile.read(path) {
        case let .success(read): bytes = read
        case let .failure(failure): throw .unreadable(path: path, what: what, reason: failure.reason)
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }) {
            throw .corrupt(path: path, what: what, reason: "the file is empty")
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(bytes)) else {
            throw .corrupt(path: path, what: what, reason: "not valid JSON (cut short or edited by hand?)")
        }
        guard let object = parsed as? [String: Any] else {
            throw .corrupt(path: path, what: what, reason: "not a JSON object")
        }
        guard let schema = object["schema"] as? String else {
            throw .corrupt(path: path, what: what, reason: "no \"schema\" string; was it written by traffic baseline?")
        }
        if schema == AnalyzeReport.schema && !schemas.contains(schema) { throw .reportNotBaseline(path: path) }
        guard schemas.contains(schema) else { throw .unknownSchema(path: path, found: schema, expected: schemas) }
        do {
            return schema == Baseline.schema ? .baseline(try parseBaseline(object)) : .report(try parseReport(object))
        } catch {
            throw .corrupt(path: path, what: what, reason: error.reason)
        }
    }

    /// A field of the wrong type or missing.
    struct ShapeError: Error {
        var reason: String
    }

    static func parseBaseline(_ object: [String: Any]) throws(ShapeError) -> Baseline {
        guard let names = object["group_by"] as? [String], !names.isEmpty else {
            throw ShapeError(reason: "\"group_by\" must be a list of field names")
        }
        var settings = GroupingSettings()
        settings.groupBy = try names.map { (name: String) throws(ShapeError) -> GroupField in
            guard let field = GroupField.allCases.first(where: { $0.columnName == name }) else {
                throw ShapeError(reason: "\"group_by\" has the unknown field '\(name)'")
            }
            return field
        }
        settings.normalizePaths = object["normalize_paths"] as? Bool ?? true
        settings.pathTemplates = object["path_templates"] as? [String] ?? []
        settings.filter = object["filter"] as? String
        let groups = try parseGroups(object, groupBy: settings.groupBy)
        return Baseline(settings: settings, snapshot: Snapshot(groupBy: settings.groupBy, groups: groups))
    }

    /// A report names no grouping; it is the group-by columns present, in `analyze`'s order.
    static func parseReport(_ object: [String: Any]) throws(ShapeError) -> Snapshot {
        let first = (object["groups"] as? [[String: Any]])?.first ?? [:]
        var groupBy = GroupField.allCases.filter { first[$0.columnName] is String }
        if groupBy.isEmpty { groupBy = [.host, .path] }
        return Snapshot(groupBy: groupBy, groups: try parseGroups(object, groupBy: groupBy))
    }

    static func parseGroups(_ object: [String: Any], groupBy: [GroupField]) throws(ShapeError) -> [Snapshot.Group] {
        guard let list = object["groups"] as? [Any] else { throw ShapeError(reason: "\"groups\" must be a list") }
        var groups: [Snapshot.Group] = []
        for (index, item) in list.enumerated() {
            guard let group = item as? [String: Any] else { throw ShapeError(reason: "groups[\(index)] is not an object") }
            func integer(_ key: String) throws(ShapeError) -> Int {
                guard let number = group[key] as? Int, number >= 0 else {
                    throw ShapeError(reason: "groups[\(index)].\(key) must be a whole number of at least 0")
                }
                return number
            }
            var keys: [String] = []
            for field in groupBy {
                guard let key = group[field.columnName] as? String else {
                    throw ShapeError(reason: "groups[\(index)].\(field.columnName) must be a string")
                }
                keys.append(key)
            }
            var counts = EndpointCounts()
            counts.requests = try integer("requests")
            counts.responses = try integer("responses")
            // Written since baselines record damage; older files have none.
            if group["incomplete_messages"] != nil { counts.incomplete = try integer("incomplete_messages") }
            for field in CheckField.byteFields {
                // Optional fields (decoded header sizes, HTTP/2): absent or null in HTTP/1 groups, in reports'
                // groups, and in every file written before they existed.
                if field.isOptional, group[field.rawValue] == nil || group[field.rawValue] is NSNull { continue }
                counts.bytes[field] = try integer(field.rawValue)
            }
            groups.append(Snapshot.Group(keys: keys, counts: counts))
        }
        return groups
    }
}

extension Baseline {
    /// Reads a baseline file; a report or any other schema is an error naming the file.
    public static func load(path: String) throws(CheckInputError) -> Baseline {
        switch try SnapshotFile.load(path: path, what: "baseline", schemas: [Baseline.schema]) {
        case let .baseline(baseline): return baseline
        case .report: throw .reportNotBaseline(path: path)
        }
    }
}
