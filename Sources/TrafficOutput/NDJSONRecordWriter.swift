import Synchronization
import TrafficAggregation
import TrafficSessions

/// `--format ndjson`: every record as one line of JSON (the `--messages` JSON fields, with `capture` first),
/// written as records complete, from whichever thread completes them. Nothing is kept or sorted, so memory
/// stays flat however large the capture; the order of lines may differ between runs with several jobs.
/// DuckDB (`read_json_auto`), ClickHouse (`JSONEachRow`), BigQuery and Spark load the lines as they are.
public final class NDJSONRecordWriter: RecordStream {
    private let capturePaths: [String]
    private let sink: Mutex<ByteSinkBox>

    /// A `ByteSink` used only under the lock.
    private struct ByteSinkBox: @unchecked Sendable {
        var write: ByteSink
    }

    /// `write` receives whole lines, one call at a time.
    public init(capturePaths: [String], write: @escaping ByteSink) {
        self.capturePaths = capturePaths
        sink = Mutex(ByteSinkBox(write: write))
    }

    public func write(_ records: [(capture: Int, record: MessageRecord)]) {
        // Rendered before the lock: threads wait only for each other's output call.
        var w = JSONWriter(pretty: false)
        for (capture, record) in records {
            Self.write(record, capture: capturePaths[capture], to: &w)
        }
        sink.withLock { box in w.flush(over: 0, to: box.write) }
    }

    /// One record's line.
    static func write(_ record: MessageRecord, capture: String, to w: inout JSONWriter) {
        w.beginObject()
        w.field("capture", capture)
        MessageFields.writeJSON(record, to: &w)
        w.endObject()
        w.endLine()
    }
}
