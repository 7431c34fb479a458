import TrafficCodecs
import TrafficHTTP
import TrafficReassembly

/// Finished HTTP/1 connection parsers of one shard, kept for the shard's next connections.
///
/// On a capture of many short keep-alive connections a connection's parser (two message parsers of ~1.3 KB,
/// above glibc's thread cache, each with a record and buffers) cost more to make and to free than many of its
/// messages: `reuse` sets a finished one back instead. The pool belongs to one shard's handler factory, so it is
/// used by one thread only (no locking, and it never crosses threads: a shard's reassembler calls every stage
/// of its connections on its own thread).
///
/// Memory stays bounded by the open connections: at most `capacity` idle parsers are kept (a parser returned to
/// a full pool is freed as before), and `retire` empties a parser as it comes back, dropping buffers that grew
/// past small bounds.
final class HTTPParserPool {
    /// Whom a pooled parser's records and upgrade requests go to: the tap of its current connection. The
    /// parser's closures are made once, around this, and live as long as the parser.
    final class Owner {
        /// Unretained: the tap owns the parser (and so this), and points it elsewhere or at nothing before it
        /// lets go of the parser.
        fileprivate(set) var tap: Unmanaged<HTTPConnectionTap>?
    }

    /// Idle parsers kept. The number of open connections rises and falls: with 4, one connection in six of the
    /// API bench capture still made a parser; 16 keep at most ~16 × 15 KB a shard (see `reuse`'s bounds).
    static let capacity = 16

    private let scratch: DecodingScratch
    private let limits: HTTPLimits
    private var idle: [(parser: HTTPConnectionParser, owner: Owner)] = []

    init(scratch: DecodingScratch, limits: HTTPLimits) {
        self.scratch = scratch
        self.limits = limits
        idle.reserveCapacity(Self.capacity)
    }

    /// A parser for `tap`'s connection, as new: an idle one reused, else one made.
    func parser(for tap: HTTPConnectionTap, info: TCPConnectionInfo, decrypted: Bool)
        -> (parser: HTTPConnectionParser, owner: Owner)
    {
        if !idle.isEmpty {
            // The last parser of the same server, if any, keeps its texts of the server (`reuse`); else the
            // most recently returned one.
            let index = idle.lastIndex { $0.parser.info.server == info.server } ?? idle.count - 1
            let entry = idle.remove(at: index)
            entry.parser.reuse(info: info, decrypted: decrypted)
            entry.owner.tap = Unmanaged.passUnretained(tap)
            return entry
        }
        let owner = Owner()
        owner.tap = Unmanaged.passUnretained(tap)
        // The owner is retained by the closures: no cycle, as it holds its tap unretained.
        let parser = HTTPConnectionParser(info: info, scratch: scratch, limits: limits, decrypted: decrypted) {
            [owner] record in owner.tap!._withUnsafeGuaranteedRef { $0.arrived(&record) }
        }
        parser.upgradeToHTTP2 = { [owner] exchange in owner.tap!._withUnsafeGuaranteedRef { $0.upgrade(exchange) } }
        return (parser, owner)
    }

    /// `parser` finished and its tap read what it needs: kept for a later connection if there is room.
    func recycle(_ parser: HTTPConnectionParser, owner: Owner) {
        owner.tap = nil
        guard idle.count < Self.capacity, parser.isReusable else { return }
        // Emptied now, not when taken: an idle parser holds nothing of its last connection.
        parser.retire()
        idle.append((parser, owner))
    }
}
