/// TLS secrets from NSS key log files (RFC 9850) and pcapng Decryption Secrets Blocks, by client random.
///
/// A line is `LABEL <client_random hex> <secret hex>`; `#` starts a comment line. Lines may come in any
/// order, end in LF or CRLF, and use upper- or lower-case hex. Labels that decryption does not need
/// (`EXPORTER_SECRET`, `EARLY_EXPORTER_SECRET`, and OpenSSL's non-standard `CLIENT_TRAFFIC_SECRET_N` for
/// N > 0, which is derived from secret 0 by following KeyUpdates) are recognised and not used; any other
/// line is counted in `skippedLines` and reported in one warning.
public final class TLSKeyLog: @unchecked Sendable {
    /// The secrets of one handshake: the master secret (TLS ≤ 1.2) or the traffic secrets (TLS 1.3).
    public struct Secrets: Sendable, Equatable {
        /// `CLIENT_RANDOM`: the 48-byte master secret.
        public var masterSecret: [UInt8]?
        public var clientHandshakeTrafficSecret: [UInt8]?
        public var serverHandshakeTrafficSecret: [UInt8]?
        public var clientTrafficSecret0: [UInt8]?
        public var serverTrafficSecret0: [UInt8]?
        public var clientEarlyTrafficSecret: [UInt8]?

        public init() {}
    }

    /// A client random as four words: a key without an array of its own.
    private struct Random: Hashable {
        var a, b, c, d: UInt64

        /// nil unless `bytes` are 32.
        init?(_ bytes: [UInt8]) {
            guard bytes.count == 32 else { return nil }
            (a, b, c, d) = bytes.withUnsafeBytes {
                ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                 $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            }
        }
    }

    /// Where a handshake's secrets are in `arena`, by `Secrets`' field order: offset and length (0: not logged).
    private struct Entry {
        var offsets = SIMD8<Int32>()
        var lengths = SIMD8<UInt16>()
    }

    /// The secrets' bytes, back to back. A dictionary of `Secrets` kept two to six arrays a handshake (32 to 48
    /// bytes each, each with its heap header and the allocator's rounding) besides the client random's array and a
    /// 56-byte bucket: massif on the 3.3 MB key log of the 256 MiB HTTPS bench (7 316 handshakes), ~3.4 MB. Now a
    /// handshake costs its secrets' bytes, a 48-byte entry and a 36-byte bucket (four words of key, an index).
    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    // Immutable once built (`@unchecked Sendable`): every shard of a run reads the same log.
    private var byClientRandom: [Random: Int32] = [:]
    /// Lines that did not parse (a bad label, odd or non-hex digits, a client random that is not 32 bytes).
    public private(set) var skippedLines = 0

    public init() {}

    /// Parses `text`, which may hold several files' lines; later lines for the same secret win.
    public convenience init(text: [UInt8]) {
        self.init()
        add(text)
    }

    /// Handshakes with at least one secret.
    public var count: Int { byClientRandom.count }
    public var isEmpty: Bool { byClientRandom.isEmpty }

    public func secrets(clientRandom: [UInt8]) -> Secrets? {
        guard let random = Random(clientRandom), let index = byClientRandom[random] else { return nil }
        let entry = entries[Int(index)]
        func secret(_ field: Int) -> [UInt8]? {
            let length = Int(entry.lengths[field])
            guard length > 0 else { return nil }
            let offset = Int(entry.offsets[field])
            return Array(arena[offset..<(offset + length)])
        }
        var secrets = Secrets()
        secrets.masterSecret = secret(Field.master)
        secrets.clientHandshakeTrafficSecret = secret(Field.clientHandshake)
        secrets.serverHandshakeTrafficSecret = secret(Field.serverHandshake)
        secrets.clientTrafficSecret0 = secret(Field.clientTraffic0)
        secrets.serverTrafficSecret0 = secret(Field.serverTraffic0)
        secrets.clientEarlyTrafficSecret = secret(Field.clientEarly)
        return secrets
    }

    /// `Entry`'s slots.
    private enum Field {
        static let master = 0, clientHandshake = 1, serverHandshake = 2, clientTraffic0 = 3, serverTraffic0 = 4
        static let clientEarly = 5
    }

    /// Adds the lines of `text` (a key log file, or a Decryption Secrets Block's secrets).
    public func add(_ text: [UInt8]) {
        // A line's secret is at most 0.28 of its bytes once decoded (`CLIENT_RANDOM`: 48 of 176): room for them
        // at once, not by doubling (which held the old bytes and the new ones together).
        arena.reserveCapacity(arena.count + text.count * 3 / 10)
        var start = 0
        while start < text.count {
            var end = start
            while end < text.count, text[end] != 0x0a { end += 1 }
            var lineEnd = end
            while lineEnd > start, text[lineEnd - 1] == 0x0d || text[lineEnd - 1] == 0x20 || text[lineEnd - 1] == 0x09 {
                lineEnd -= 1
            }
            addLine(text[start..<lineEnd])
            start = end + 1
        }
    }

    private func addLine(_ line: ArraySlice<UInt8>) {
        var fields: [ArraySlice<UInt8>] = []
        var i = line.startIndex
        while i < line.endIndex {
            while i < line.endIndex, line[i] == 0x20 || line[i] == 0x09 { i += 1 }
            let fieldStart = i
            while i < line.endIndex, line[i] != 0x20, line[i] != 0x09 { i += 1 }
            if fieldStart < i { fields.append(line[fieldStart..<i]) }
        }
        guard let first = fields.first else { return }  // blank line
        if first.first == 0x23 { return }  // `#` comment
        let label = String(decoding: first, as: UTF8.self)
        // A secret is a hash's length (32 or 48 bytes); one longer than 65 535 bytes is no TLS secret.
        guard fields.count == 3, let bytes = Self.hex(fields[1]), let random = Random(bytes),
            let secret = Self.hex(fields[2]), !secret.isEmpty, secret.count <= Int(UInt16.max)
        else {
            skippedLines += 1
            return
        }
        let field: Int
        switch label {
        case "CLIENT_RANDOM":
            guard secret.count == 48 else {
                skippedLines += 1
                return
            }
            field = Field.master
        case "CLIENT_HANDSHAKE_TRAFFIC_SECRET": field = Field.clientHandshake
        case "SERVER_HANDSHAKE_TRAFFIC_SECRET": field = Field.serverHandshake
        case "CLIENT_TRAFFIC_SECRET_0": field = Field.clientTraffic0
        case "SERVER_TRAFFIC_SECRET_0": field = Field.serverTraffic0
        case "CLIENT_EARLY_TRAFFIC_SECRET": field = Field.clientEarly
        case "EXPORTER_SECRET", "EARLY_EXPORTER_SECRET":
            return
        default:
            // OpenSSL 3.0 logs CLIENT_TRAFFIC_SECRET_1 … after KeyUpdates: derived from _0, so not needed.
            if label.hasPrefix("CLIENT_TRAFFIC_SECRET_") || label.hasPrefix("SERVER_TRAFFIC_SECRET_") { return }
            skippedLines += 1
            return
        }
        // Offsets and indexes are 32-bit: a log of more than 2 GiB of secrets (some 40 million handshakes) stops there.
        guard arena.count <= Int(Int32.max) - secret.count else {
            skippedLines += 1
            return
        }
        let index: Int
        if let known = byClientRandom[random] {
            index = Int(known)
        } else {
            index = entries.count
            entries.append(Entry())
            byClientRandom[random] = Int32(truncatingIfNeeded: index)
        }
        // A later line for the same secret wins; the earlier bytes stay unused in the arena.
        entries[index].offsets[field] = Int32(arena.count)
        entries[index].lengths[field] = UInt16(secret.count)
        arena.append(contentsOf: secret)
    }

    /// Hex digits (either case) to bytes; nil for an odd count or a non-hex digit.
    static func hex(_ digits: ArraySlice<UInt8>) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var high: UInt8?
        for c in digits {
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x41...0x46: v = c - 0x41 + 10
            case 0x61...0x66: v = c - 0x61 + 10
            default: return nil
            }
            if let h = high {
                bytes.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return bytes
    }
}
