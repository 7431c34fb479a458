/// Bounds on what an HPACK decoder stores, so a peer's table settings cost bounded memory.
public struct HPACKLimits: Sendable {
    /// Bytes of dynamic-table entries actually stored (name + value octets, decoded). A peer may advertise
    /// SETTINGS_HEADER_TABLE_SIZE up to 2^32-1; we store at most this much and, beyond it, go blind (see
    /// `HPACKDecoder.isBlind`) rather than grow. Default 1 MiB.
    ///
    /// Entries count as RFC 7541 §4.1 sizes them (name + value + 32), so that a flood of empty entries is bounded
    /// as well. The table's memory stays within about 3 times this: the entries, as much again of room to append
    /// without moving them on every insert, and 16 bytes of index per 32 counted (rounded up to a power of two).
    public var maxStoredTableBytes: Int

    public init(maxStoredTableBytes: Int = 1 << 20) {
        self.maxStoredTableBytes = maxStoredTableBytes
    }
}
