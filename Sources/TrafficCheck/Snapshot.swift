import TrafficAggregation
import TrafficAnalysis

/// The groups of one run, from a capture, a report or a baseline: what `check` and `diff` compare.
public struct Snapshot: Sendable, Equatable {
    /// One group: the values of the group-by fields and its counts.
    public struct Group: Sendable, Equatable {
        public var keys: [String]
        public var counts: EndpointCounts

        public init(keys: [String], counts: EndpointCounts) {
            self.keys = keys
            self.counts = counts
        }
    }

    public var groupBy: [GroupField]
    /// Sorted by keys, so files written from a snapshot are stable under changes in size.
    public private(set) var groups: [Group]
    /// Whether the run holds HTTP and what damage it had; for a file, what its groups tell.
    public var integrity: SnapshotIntegrity

    public init(groupBy: [GroupField], groups: [Group], integrity: SnapshotIntegrity? = nil) {
        self.groupBy = groupBy
        self.groups = groups.sorted { $0.keys.lexicographicallyPrecedes($1.keys) }
        self.integrity = integrity ?? {
            var fromGroups = SnapshotIntegrity()
            fromGroups.messages = groups.reduce(0) { $0 + $1.counts.requests + $1.counts.responses }
            fromGroups.incompleteMessages = groups.reduce(0) { $0 + $1.counts.incomplete }
            return fromGroups
        }()
    }

    /// The groups of a report.
    public init(report: TrafficReport) {
        self.init(
            groupBy: report.groupBy,
            groups: report.groups.map { Group(keys: $0.keys, counts: EndpointCounts($0.totals)) },
            integrity: SnapshotIntegrity(report: report))
    }

    /// The value of `field` in a group's keys, or nil when the snapshot does not group by it.
    public func key(_ field: GroupField, of group: Group) -> String? {
        groupBy.firstIndex(of: field).map { group.keys[$0] }
    }

    /// The same groups with their keys in `order`, which must hold the same fields; nil otherwise.
    public func reordered(as order: [GroupField]) -> Snapshot? {
        guard order != groupBy else { return self }
        guard Set(order) == Set(groupBy), order.count == groupBy.count else { return nil }
        let positions = order.map { groupBy.firstIndex(of: $0)! }
        return Snapshot(
            groupBy: order, groups: groups.map { group in Group(keys: positions.map { group.keys[$0] }, counts: group.counts) },
            integrity: integrity)
    }
}
