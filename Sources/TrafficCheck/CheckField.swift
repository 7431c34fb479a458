/// A number measured per group that baselines record, `check` compares and budgets limit.
public enum CheckField: String, CaseIterable, Sendable, Comparable {
    case requests
    case requestBytes = "request_bytes"
    case responseBytes = "response_bytes"
    case requestDecodedBodyBytes = "request_decoded_body_bytes"
    case responseDecodedBodyBytes = "response_decoded_body_bytes"
    case requestCookieBytes = "request_cookie_bytes"
    case responseCookieBytes = "response_cookie_bytes"
    /// HTTP/2 header blocks after HPACK decoding (the bytes as sent are inside request/response bytes).
    case requestHeaderDecodedBytes = "request_header_decoded_bytes"
    case responseHeaderDecodedBytes = "response_header_decoded_bytes"

    /// The fields `check` compares unless told otherwise (cookie bytes are already inside request/response bytes).
    public static let compared: [CheckField] = [
        .requests, .requestBytes, .responseBytes, .requestDecodedBodyBytes, .responseDecodedBodyBytes,
    ]

    /// The byte fields, in file order; `requests` is a count.
    public static let byteFields: [CheckField] = allCases.filter { $0 != .requests }

    /// A field that a group may not have: decoded header sizes exist only for HTTP/2 messages. An HTTP/1
    /// group (or a baseline written before the field) has none, which is not 0 bytes: such a field is compared
    /// only where both runs have it, budgets skip the groups without it, and baselines write it only when known.
    public var isOptional: Bool { self == .requestHeaderDecodedBytes || self == .responseHeaderDecodedBytes }

    /// True for the one field that counts requests rather than bytes.
    public var isCount: Bool { self == .requests }

    /// The side whose message count divides this field for a per-request value: response fields are
    /// averaged over responses, so an unanswered request does not make responses look smaller.
    public var isResponseSide: Bool {
        self == .responseBytes || self == .responseDecodedBodyBytes || self == .responseCookieBytes
            || self == .responseHeaderDecodedBytes
    }

    /// `B` for bytes, `requests` for the count; used in messages.
    public var unit: String { isCount ? "requests" : "B" }

    /// ` B` after a byte value, nothing after a count: `2048 B`, `5`.
    var valueSuffix: String { isCount ? "" : " B" }

    public static func < (lhs: CheckField, rhs: CheckField) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
