/// An IPv4 or IPv6 address, stored inline (no allocation): IPv4 in the low 32 bits of `low`.
public struct IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64
    public var isIPv6: Bool

    public init(ipv4 value: UInt32) {
        high = 0
        low = UInt64(value)
        isIPv6 = false
    }

    public init(ipv6High high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
        isIPv6 = true
    }

    /// Reads 4 or 16 bytes in network order at `offset`; the caller has checked the length.
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int, ipv6: Bool) -> IPAddress {
        if ipv6 {
            return IPAddress(ipv6High: bytes.loadBigEndianUInt64(at: offset), low: bytes.loadBigEndianUInt64(at: offset + 8))
        }
        return IPAddress(ipv4: bytes.loadBigEndianUInt32(at: offset))
    }

    public static func < (a: IPAddress, b: IPAddress) -> Bool {
        (a.isIPv6 ? 1 : 0, a.high, a.low) < (b.isIPv6 ? 1 : 0, b.high, b.low)
    }

    /// Dotted quad, or RFC 5952 text for IPv6 (lower case, longest zero run compressed).
    public var description: String {
        if !isIPv6 { return Self.ipv4Text(self, port: nil) }
        var groups = [UInt16](repeating: 0, count: 8)
        for i in 0..<4 {
            groups[i] = UInt16(truncatingIfNeeded: high >> UInt64(48 - 16 * i))
            groups[4 + i] = UInt16(truncatingIfNeeded: low >> UInt64(48 - 16 * i))
        }
        // RFC 5952 §4.2: compress the longest run of two or more zero groups, the first on a tie.
        var bestStart = -1, bestLength = 0, runStart = -1
        for i in 0...8 {
            if i < 8, groups[i] == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength, i - runStart >= 2 { bestStart = runStart; bestLength = i - runStart }
                runStart = -1
            }
        }
        func hex(_ range: Range<Int>) -> String {
            range.map { String(groups[$0], radix: 16) }.joined(separator: ":")
        }
        if bestStart < 0 { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }
}

/// An address and a TCP port; written `ip:port`, IPv6 in brackets (`[::1]:443`).
public struct Endpoint: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public static func < (a: Endpoint, b: Endpoint) -> Bool { (a.address, a.port) < (b.address, b.port) }

    public var description: String {
        address.isIPv6 ? "[\(address)]:\(port)" : IPAddress.ipv4Text(address, port: port)
    }
}

extension IPAddress {
    /// `a.b.c.d`, or `a.b.c.d:port`, written as bytes: every connection names both of its ends, and string
    /// interpolation cost some 2 700 instructions per endpoint. Written on the stack first: a `String` made with
    /// room for the longest text stays on the heap even when the text would fit inline (15 bytes), and then
    /// every record that carries it retains and releases it.
    static func ipv4Text(_ address: IPAddress, port: UInt16?) -> String {
        let v = UInt32(truncatingIfNeeded: address.low)
        // "255.255.255.255:65535" is the longest.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { out in
            var n = 0
            func decimal(_ value: UInt32) {
                if value >= 10_000 { out[n] = 0x30 + UInt8(value / 10_000); n += 1 }
                if value >= 1_000 { out[n] = 0x30 + UInt8(value / 1_000 % 10); n += 1 }
                if value >= 100 { out[n] = 0x30 + UInt8(value / 100 % 10); n += 1 }
                if value >= 10 { out[n] = 0x30 + UInt8(value / 10 % 10); n += 1 }
                out[n] = 0x30 + UInt8(value % 10)
                n += 1
            }
            for shift in stride(from: UInt32(24), through: 0, by: -8) {
                decimal((v >> shift) & 0xFF)
                out[n] = shift == 0 ? UInt8(ascii: ":") : UInt8(ascii: ".")
                n += 1
            }
            if let port {
                decimal(UInt32(port))
            } else {
                n -= 1
            }
            return String(decoding: UnsafeBufferPointer(rebasing: out[..<n]), as: UTF8.self)
        }
    }
}
