import TrafficSessions

/// The aggregation is where every session's records go.
extension ReportBuilder: RecordSink {}
