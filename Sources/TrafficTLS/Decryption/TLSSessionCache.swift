import TrafficConcurrency

/// TLS ≤ 1.2 sessions of a run by session ID and by ticket, so that a resumed connection whose own client
/// random is not in the key log still decrypts with the master secret of the session it resumes (RFC 5246
/// §7.3, RFC 5077 §3.1). Shared by every connection of a run; most key log writers also log the resumed
/// connection's client random, which is tried first.
///
/// A connection can only resume a session that an earlier connection established, and captures are read in
/// order; with several jobs the two connections may be on different threads, so a resumption that follows
/// its session by less than a shard's queue may not find it (it is then reported `no_key`).
public final class TLSSessionCache: Sendable {
    private let sessions = LockedValue<[[UInt8]: [UInt8]]>([:])
    /// Entries kept at most (a long capture of many sessions must not grow without bound).
    static let capacity = 65_536

    public init() {}

    /// Remembers the master secret of a session known by `key` (a session ID or a ticket, tagged).
    func store(_ key: [UInt8], masterSecret: [UInt8]) {
        guard !key.isEmpty else { return }
        sessions.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[key] = masterSecret
        }
    }

    func masterSecret(_ key: [UInt8]) -> [UInt8]? {
        guard !key.isEmpty else { return nil }
        return sessions.withLock { $0[key] }
    }

    static func sessionIDKey(_ id: [UInt8]) -> [UInt8] { id.isEmpty ? [] : [0] + id }
    static func ticketKey(_ ticket: [UInt8]) -> [UInt8] { ticket.isEmpty ? [] : [1] + ticket }
}
