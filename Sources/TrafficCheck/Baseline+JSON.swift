import TrafficAnalysis
import TrafficOutput

extension Baseline {
    /// The baseline file: pretty JSON, keys in a fixed order, groups sorted by keys, no run times or
    /// paths, so the same traffic always gives the same bytes and a review diff shows only real change.
    /// Totals are exact integers; `per_request` averages have one decimal (rounded half up) and are
    /// for readers only — `check` recomputes them from the totals.
    public func json() -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("schema", Self.schema)
        w.field("group_by", snapshot.groupBy.map(\.columnName))
        w.field("normalize_paths", settings.normalizePaths)
        w.field("path_templates", settings.pathTemplates)
        w.field("filter", settings.filter)
        w.beginArray("groups")
        for group in snapshot.groups {
            w.beginObject()
            for (field, key) in zip(snapshot.groupBy, group.keys) { w.field(field.columnName, key) }
            w.field("requests", group.counts.requests)
            w.field("responses", group.counts.responses)
            if group.counts.incomplete > 0 { w.field("incomplete_messages", group.counts.incomplete) }
            // Optional fields (HTTP/2's decoded header sizes) only where the group has them: a baseline of
            // HTTP/1 traffic is the same file it always was.
            let fields = CheckField.byteFields.filter { group.counts.has($0) }
            for field in fields { w.field(field.rawValue, group.counts.total(field)) }
            w.beginObject("per_request")
            for field in fields {
                w.field(field.rawValue, raw: group.counts.value(field, .perRequest).fixed(1))
            }
            w.endObject()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.output + "\n"
    }
}
