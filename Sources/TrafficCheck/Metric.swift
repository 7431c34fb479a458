/// Whether groups are compared by their per-request averages or by their totals (`--metric`).
public enum Metric: String, CaseIterable, Sendable {
    /// Bytes divided by the group's requests (request fields) or responses (response fields); the
    /// default, because how often a client polls varies from run to run.
    case perRequest = "per-request"
    /// Sums over the whole capture.
    case total

    /// "per request" or "total", for sentences.
    public var phrase: String { self == .perRequest ? "per request" : "total" }
}
