/// Reads fuzzer-chosen values from the front of an input, so one byte string drives both the data and
/// the decisions (split points, directions, link type). Running out of input yields zeros, never a trap.
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    public private(set) var offset = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Builds the input view libFuzzer hands to `LLVMFuzzerTestOneInput`.
    public init(start: UnsafePointer<UInt8>?, count: Int) {
        self.bytes = UnsafeRawBufferPointer(start: start.map(UnsafeRawPointer.init), count: start == nil ? 0 : count)
    }

    public var isAtEnd: Bool { offset >= bytes.count }
    public var remaining: Int { max(0, bytes.count - offset) }

    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Up to `count` bytes (fewer at the end of the input); valid as long as the input is.
    public mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let n = min(max(0, count), remaining)
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }

    /// Everything not read yet.
    public mutating func rest() -> UnsafeRawBufferPointer { take(remaining) }
}

/// Stops the fuzzer with a message when an engine invariant breaks: libFuzzer records the input as a crash.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant broken: \(message())") }
}
