/// The outcome of counting a body's decoded size.
public enum ContentDecodingResult: Equatable, Sendable {
    /// The exact decoded size.
    case decoded(Int)
    /// Decoding stopped at `ContentDecodingLimits.maxDecodedBytes`: the body decodes to more than
    /// allowed. The value is the final decoded bytes counted before stopping (never above the limit;
    /// equal to it when the final output itself went over).
    case capped(Int)
    /// Corrupt, truncated or unsupported data; a short reason such as "gzip: invalid block type".
    case failed(String)
}
