/// Limits that bound the work of decoding one body.
public struct ContentDecodingLimits: Sendable {
    /// Stop decoding after this many decoded bytes (gzip-bomb protection); the result is then `.capped`.
    ///
    /// It bounds the final decoded size and, separately, the total output of the intermediate
    /// stages of stacked codings (a tiny final output can hide a huge intermediate one).
    public var maxDecodedBytes: Int

    public init(maxDecodedBytes: Int = 1 << 30) {
        self.maxDecodedBytes = max(0, maxDecodedBytes)
    }
}
