/// Where a session's records go: the aggregation implements it (`ReportBuilder`).
///
/// A record is counted once. A record whose connection overhead is attributed later (`--overhead`, or the
/// bytes after a protocol switch) is counted at once with `addPinned`, which holds its group, and its overhead
/// follows with `addOverhead` when the connection ends, unless records are listed (`keepsRecords`): those
/// must be final when counted, so they wait whole.
package protocol RecordSink: AnyObject {
    /// Records are listed (`--messages`): each must be final when it is added.
    var keepsRecords: Bool { get }
    /// Counts a final record.
    func add(_ record: MessageRecord, capture: Int)
    /// Counts a record whose overhead follows; returns a pin of its group, or nil when a filter left it out.
    func addPinned(_ record: MessageRecord, capture: Int) -> Int?
    /// The overhead of a record counted with `addPinned`; releases the pin.
    func addOverhead(_ overhead: RecordOverhead, pin: Int, kind: MessageRecord.Kind)
}
