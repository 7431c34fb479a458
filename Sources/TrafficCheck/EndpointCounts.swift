import TrafficAggregation
import TrafficAnalysis

/// The totals of one group that checks work on: message counts and the byte sums of `CheckField`.
public struct EndpointCounts: Sendable, Equatable {
    public var requests = 0
    public var responses = 0
    /// Messages of the group cut by a gap or the capture's edge: its sums are not whole.
    public var incomplete = 0
    /// Totals by byte field; a field not present counts as zero, except an optional field (`CheckField.isOptional`),
    /// which is then unknown (`has`).
    public var bytes: [CheckField: Int] = [:]

    public init() {}

    /// The checked subset of a report group's totals.
    public init(_ totals: GroupTotals) {
        requests = totals.requests
        responses = totals.responses
        incomplete = totals.incomplete
        bytes = [
            .requestBytes: totals.request.bytes, .responseBytes: totals.response.bytes,
            .requestDecodedBodyBytes: totals.request.decodedBodyBytes,
            .responseDecodedBodyBytes: totals.response.decodedBodyBytes,
            .requestCookieBytes: totals.request.cookieBytes, .responseCookieBytes: totals.response.cookieBytes,
        ]
        // HTTP/2 groups only: null (absent) for a side without a decoded header size.
        bytes[.requestHeaderDecodedBytes] = totals.request.headerDecodedBytes
        bytes[.responseHeaderDecodedBytes] = totals.response.headerDecodedBytes
    }

    /// Whether the group has a value for `field`: always, but for an optional field that is absent.
    public func has(_ field: CheckField) -> Bool { !field.isOptional || bytes[field] != nil }

    /// Equal when every field is: a field absent and a field at zero are the same, except for optional fields.
    public static func == (lhs: EndpointCounts, rhs: EndpointCounts) -> Bool {
        CheckField.allCases.allSatisfy { lhs.total($0) == rhs.total($0) && lhs.has($0) == rhs.has($0) }
            && lhs.responses == rhs.responses
    }

    /// The total of `field` over the whole capture.
    public func total(_ field: CheckField) -> Int {
        field.isCount ? requests : bytes[field, default: 0]
    }

    /// The value compared under `metric`; the request count is a total under either metric.
    public func value(_ field: CheckField, _ metric: Metric) -> Amount {
        guard metric == .perRequest, !field.isCount else { return Amount(total(field)) }
        return Amount(total: total(field), count: field.isResponseSide ? responses : requests)
    }
}
