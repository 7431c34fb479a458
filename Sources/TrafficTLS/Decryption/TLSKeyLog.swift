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

    // Immutable once built (`@unchecked Sendable`): every shard of a run reads the same log.
    private var byClientRandom: [[UInt8]: Secrets] = [:]
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

    public func secrets(clientRandom: [UInt8]) -> Secrets? { byClientRandom[clientRandom] }

    /// Adds the lines of `text` (a key log file, or a Decryption Secrets Block's secrets).
    public func add(_ text: [UInt8]) {
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
        guard fields.count == 3, let random = Self.hex(fields[1]), random.count == 32, let secret = Self.hex(fields[2]),
            !secret.isEmpty
        else {
            skippedLines += 1
            return
        }
        var entry = byClientRandom[random] ?? Secrets()
        switch label {
        case "CLIENT_RANDOM":
            guard secret.count == 48 else {
                skippedLines += 1
                return
            }
            entry.masterSecret = secret
        case "CLIENT_HANDSHAKE_TRAFFIC_SECRET": entry.clientHandshakeTrafficSecret = secret
        case "SERVER_HANDSHAKE_TRAFFIC_SECRET": entry.serverHandshakeTrafficSecret = secret
        case "CLIENT_TRAFFIC_SECRET_0": entry.clientTrafficSecret0 = secret
        case "SERVER_TRAFFIC_SECRET_0": entry.serverTrafficSecret0 = secret
        case "CLIENT_EARLY_TRAFFIC_SECRET": entry.clientEarlyTrafficSecret = secret
        case "EXPORTER_SECRET", "EARLY_EXPORTER_SECRET":
            return
        default:
            // OpenSSL 3.0 logs CLIENT_TRAFFIC_SECRET_1 … after KeyUpdates: derived from _0, so not needed.
            if label.hasPrefix("CLIENT_TRAFFIC_SECRET_") || label.hasPrefix("SERVER_TRAFFIC_SECRET_") { return }
            skippedLines += 1
            return
        }
        byClientRandom[random] = entry
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
