import TrafficSessions

/// Takes every counted record as soon as it is final (`--format ndjson`), with its connection number as the
/// report lists it; called from several threads at once, and in an order that may vary between runs.
public protocol RecordStream: AnyObject, Sendable {
    /// Records of `capture` (an index into the run's capture paths), in the order given.
    func write(_ records: [(capture: Int, record: MessageRecord)])
}
