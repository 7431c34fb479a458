/// Limits that bound the work of decoding one body.
public struct ContentDecodingLimits: Sendable {
    /// Stop decoding after this many decoded bytes (gzip-bomb protection); the result is then `.capped`.
    ///
    /// It bounds the final decoded size and, separately, the total output of the intermediate
    /// stages of stacked codings (a tiny final output can hide a huge intermediate one).
    public var maxDecodedBytes: Int

    /// Read a lone gzip coding's decoded size from its trailer instead of inflating, where that is exact
    /// (see `ContentDecoder`). `--verify-decoding` turns it off.
    public var useGzipTrailer: Bool

    public init(maxDecodedBytes: Int = 1 << 30, useGzipTrailer: Bool = true) {
        self.maxDecodedBytes = max(0, maxDecodedBytes)
        self.useGzipTrailer = useGzipTrailer
    }
}
