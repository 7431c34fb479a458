import Testing
import TrafficCodecs
import TrafficHTTP2
import TrafficSessions

/// The decoded size of gRPC Length-Prefixed-Messages, fed in arbitrary pieces (issue 22).
@Suite struct GRPCMessageCounterTests {
    struct Outcome: Equatable, CustomStringConvertible {
        var decodedBytes: Int?
        var anomaly: RecordAnomaly?
        var messages: Int
        var description: String {
            "(\(decodedBytes.map(String.init) ?? "nil"), \(anomaly?.name ?? "nil"), \(messages) messages)"
        }
    }

    /// One Length-Prefixed-Message: flag, big-endian length, payload.
    static func message(_ flag: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let n = UInt32(payload.count)
        return [flag, UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + payload
    }

    /// Feeds `stream` in pieces ending at each of `cuts` (ascending), then finishes.
    static func count(
        _ stream: [UInt8], encoding: String?, cuts: [Int] = [], scratch: DecodingScratch = DecodingScratch(),
        limits: ContentDecodingLimits = .init(), lose: Int? = nil
    ) -> Outcome {
        var counter = GRPCMessageCounter(encoding: encoding, scratch: scratch, limits: limits)
        var start = 0
        stream.withUnsafeBytes { bytes in
            for end in cuts + [stream.count] {
                if start == lose { counter.lose() }
                counter.consume(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
        }
        if lose == stream.count { counter.lose() }
        let result = counter.finish()
        return Outcome(decodedBytes: result.decodedBytes, anomaly: result.anomaly, messages: counter.messageCount)
    }

    static let protobuf: [UInt8] = [0x08, 0x96, 0x01, 0x12, 0x04, 0x74, 0x65, 0x73, 0x74, 0x18]  // 10 bytes
    /// gzip-compressed hello (960), a plain 10-byte message, gzip-compressed reply (204).
    static let mixed = message(1, GRPCFixtures.gzipHello) + message(0, protobuf) + message(1, GRPCFixtures.gzipReply)
    static let mixedDecoded = (5 + 960) + (5 + 10) + (5 + 204)

    @Test func emptyStreamIsZero() {
        #expect(Self.count([], encoding: "gzip") == Outcome(decodedBytes: 0, messages: 0))
    }

    @Test func uncompressedMessagesCountPrefixAndLength() {
        let stream =
            Self.message(0, []) + Self.message(0, Self.protobuf) + Self.message(0, Array(repeating: 7, count: 300))
        let expected = Outcome(decodedBytes: 5 + 15 + 305, messages: 3)
        #expect(expected.decodedBytes == stream.count)  // equals the encoded size when nothing is compressed
        #expect(Self.count(stream, encoding: nil) == expected)
        #expect(Self.count(stream, encoding: "identity") == expected)
        // A flag-0 message counts as sent whatever grpc-encoding says, even an encoding we cannot decode.
        #expect(Self.count(stream, encoding: "gzip") == expected)
        #expect(Self.count(stream, encoding: "snappy") == expected)
    }

    @Test(arguments: [true, false])
    func gzipMessagesCountTheirDecompressedSize(useGzipTrailer: Bool) {
        let limits = ContentDecodingLimits(useGzipTrailer: useGzipTrailer)
        #expect(
            Self.count(Self.mixed, encoding: "gzip", limits: limits)
                == Outcome(decodedBytes: Self.mixedDecoded, messages: 3))
        #expect(
            Self.count(Self.mixed, encoding: "GZIP", limits: limits)
                == Outcome(decodedBytes: Self.mixedDecoded, messages: 3))
    }

    @Test func deflateMessage() {
        let stream = Self.message(1, GRPCFixtures.deflateHello) + Self.message(0, Self.protobuf)
        #expect(Self.count(stream, encoding: "deflate") == Outcome(decodedBytes: 965 + 15, messages: 2))
    }

    @Test func compressedMessageOfLengthZeroCountsItsPrefix() {
        let stream = Self.message(1, []) + Self.message(1, GRPCFixtures.gzipReply)
        #expect(Self.count(stream, encoding: "gzip") == Outcome(decodedBytes: 5 + 209, messages: 2))
    }

    /// Prefixes and messages spanning pieces: every split into two and three pieces, and byte by byte.
    @Test(arguments: [true, false])
    func everySplitGivesTheSameCount(useGzipTrailer: Bool) {
        let limits = ContentDecodingLimits(useGzipTrailer: useGzipTrailer)
        let scratch = DecodingScratch(capacity: 0)  // small output regions: the decoders' output loop runs too
        let stream = Self.mixed + Self.message(0, [])
        let expected = Outcome(decodedBytes: Self.mixedDecoded + 5, messages: 4)
        var failures = 0
        for first in 0...stream.count {
            for second in first...stream.count {
                let result = Self.count(
                    stream, encoding: "gzip", cuts: [first, second], scratch: scratch, limits: limits)
                if result != expected {
                    failures += 1
                    if failures <= 3 { Issue.record("cuts at \(first), \(second): \(result)") }
                }
            }
        }
        #expect(failures == 0)
        let bytewise = Self.count(
            stream, encoding: "gzip", cuts: Array(0...stream.count), scratch: scratch, limits: limits)
        #expect(bytewise == expected)
    }

    @Test func aMessageCutByTheEndIsADecodeError() {
        let whole = Self.message(0, Self.protobuf)
        // Cut inside the prefix, at the prefix's end, inside the payload; plain and compressed.
        for cut in [1, 3, 5, 9] {
            #expect(
                Self.count(whole + whole.prefix(cut), encoding: nil)
                    == Outcome(decodedBytes: nil, anomaly: .decodeError, messages: 1), "plain, cut after \(cut)")
        }
        let compressed = Self.message(1, GRPCFixtures.gzipHello)
        for cut in [2, 5, 20, compressed.count - 1] {
            #expect(
                Self.count(whole + compressed.prefix(cut), encoding: "gzip")
                    == Outcome(decodedBytes: nil, anomaly: .decodeError, messages: 1), "gzip, cut after \(cut)")
        }
    }

    @Test func compressedMessageWithoutAKnownEncodingIsADecodeError() {
        let stream =
            Self.message(0, Self.protobuf) + Self.message(1, GRPCFixtures.gzipHello) + Self.message(0, Self.protobuf)
        for encoding in [nil, "identity", "snappy", "x-custom"] as [String?] {
            // Framing goes on: all three messages are counted, the size is unknown.
            #expect(
                Self.count(stream, encoding: encoding)
                    == Outcome(decodedBytes: nil, anomaly: .decodeError, messages: 3), "\(encoding ?? "nil")")
        }
    }

    @Test func corruptCompressedMessageIsADecodeError() {
        // A bad gzip header fails either way; damaged deflate data fails when inflated (the trailer shortcut,
        // as for HTTP/1 bodies, trusts a plausible ISIZE: --verify-decoding turns it off).
        var badHeader = GRPCFixtures.gzipHello
        badHeader[0] = 0x1e
        var badData = GRPCFixtures.gzipHello
        badData[12] ^= 0xff
        for (bad, useGzipTrailer) in [(badHeader, true), (badHeader, false), (badData, false)] {
            let stream = Self.message(1, bad) + Self.message(1, GRPCFixtures.gzipReply)
            #expect(
                Self.count(stream, encoding: "gzip", limits: .init(useGzipTrailer: useGzipTrailer))
                    == Outcome(decodedBytes: nil, anomaly: .decodeError, messages: 2))
        }
        // Deflate data under grpc-encoding gzip.
        #expect(
            Self.count(Self.message(1, GRPCFixtures.deflateHello), encoding: "gzip")
                == Outcome(decodedBytes: nil, anomaly: .decodeError, messages: 1))
    }

    @Test func aFlagOtherThanZeroOrOneIsNotGRPCFraming() {
        let stream = Self.message(0, Self.protobuf) + Self.message(2, Self.protobuf) + Self.message(0, Self.protobuf)
        #expect(Self.count(stream, encoding: nil) == Outcome(decodedBytes: nil, anomaly: .decodeError, messages: 1))
    }

    /// The limit bounds the direction's decompressed bytes, not each message's.
    @Test(arguments: [true, false])
    func decompressedBytesAreCappedPerDirection(useGzipTrailer: Bool) {
        let stream = Self.message(1, GRPCFixtures.gzipHello) + Self.message(1, GRPCFixtures.gzipHello)
        #expect(
            Self.count(stream, encoding: "gzip", limits: .init(maxDecodedBytes: 1920, useGzipTrailer: useGzipTrailer))
                == Outcome(decodedBytes: 2 * 965, messages: 2))
        #expect(
            Self.count(stream, encoding: "gzip", limits: .init(maxDecodedBytes: 1919, useGzipTrailer: useGzipTrailer))
                == Outcome(decodedBytes: nil, anomaly: .decodeCapped, messages: 2))
        #expect(
            Self.count(stream, encoding: "gzip", limits: .init(maxDecodedBytes: 100, useGzipTrailer: useGzipTrailer))
                == Outcome(decodedBytes: nil, anomaly: .decodeCapped, messages: 2))
    }

    @Test func lostBytesMakeTheSizeUnknown() {
        let stream = Self.mixed
        let gap = Outcome(decodedBytes: nil, anomaly: .gap, messages: 0)
        // At the start, between messages, inside a compressed message (its decoder is released), at the end.
        #expect(Self.count(stream, encoding: "gzip", cuts: [0], lose: 0) == gap)
        let firstEnd = 5 + GRPCFixtures.gzipHello.count
        #expect(
            Self.count(stream, encoding: "gzip", cuts: [firstEnd], lose: firstEnd)
                == Outcome(decodedBytes: nil, anomaly: .gap, messages: 1))
        #expect(Self.count(stream, encoding: "gzip", cuts: [20], lose: 20) == gap)
        #expect(
            Self.count(stream, encoding: "gzip", lose: stream.count)
                == Outcome(decodedBytes: nil, anomaly: .gap, messages: 3))
        // The first anomaly is the one reported.
        let cut = Self.message(1, GRPCFixtures.gzipHello)
        var counter = GRPCMessageCounter(encoding: "snappy", scratch: DecodingScratch(), limits: .init())
        cut.withUnsafeBytes { counter.consume($0) }
        counter.lose()
        #expect(counter.finish().anomaly == .decodeError)
    }

    @Test func finishIsFinal() {
        var counter = GRPCMessageCounter(encoding: "gzip", scratch: DecodingScratch(), limits: .init())
        Self.mixed.withUnsafeBytes { counter.consume($0) }
        #expect(counter.finish().decodedBytes == Self.mixedDecoded)
        Self.mixed.withUnsafeBytes { counter.consume($0) }
        counter.lose()
        let again = counter.finish()
        #expect(again.decodedBytes == Self.mixedDecoded && again.anomaly == nil)
        #expect(counter.messageCount == 3)
    }

    @Test func grpcContentTypes() {
        for type in [
            "application/grpc", "application/grpc+proto", "application/GRPC+json", "application/grpc; charset=utf-8",
        ] {
            #expect(GRPCMessageCounter.isGRPC(contentType: type), "\(type)")
        }
        for type in [
            "application/grpc-web", "application/grpc-web-text+proto", "application/grpcx", "application/json",
            "application/grp", "",
        ] {
            #expect(!GRPCMessageCounter.isGRPC(contentType: type), "\(type)")
        }
    }
}

/// Compressed messages made with Python's gzip and zlib by the script at the end of this file (decompressed
/// sizes are Python's).
enum GRPCFixtures {
    /// gzip.compress(b'greeting: hello, world! ' * 40, mtime=0): 960 bytes decompressed (53 bytes).
    static let gzipHello: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0x2f, 0x4a, 0x4d, 0x2d, 0xc9,
        0xcc, 0x4b, 0xb7, 0x52, 0xc8, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x28, 0xcf, 0x2f, 0xca, 0x49,
        0x51, 0x54, 0x48, 0x1f, 0x15, 0x1f, 0x15, 0x1f, 0x15, 0x1f, 0xf4, 0xe2, 0x00, 0xc3, 0xb9, 0x37,
        0x6c, 0xc0, 0x03, 0x00, 0x00,
    ]
    /// gzip.compress(b'\x08\x96\x01\x12\x07testing\x1a\x03abc' * 12, mtime=0): 204 bytes decompressed (40 bytes).
    static let gzipReply: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xe3, 0x98, 0xc6, 0x28, 0xc4, 0x5e,
        0x92, 0x5a, 0x5c, 0x92, 0x99, 0x97, 0x2e, 0xc5, 0x9c, 0x98, 0x94, 0xcc, 0x31, 0x74, 0x05, 0x00,
        0xd4, 0x08, 0x24, 0xb1, 0xcc, 0x00, 0x00, 0x00,
    ]
    /// zlib.compress(b'greeting: hello, world! ' * 40): 960 bytes decompressed (41 bytes).
    static let deflateHello: [UInt8] = [
        0x78, 0x9c, 0x4b, 0x2f, 0x4a, 0x4d, 0x2d, 0xc9, 0xcc, 0x4b, 0xb7, 0x52, 0xc8, 0x48, 0xcd, 0xc9,
        0xc9, 0xd7, 0x51, 0x28, 0xcf, 0x2f, 0xca, 0x49, 0x51, 0x54, 0x48, 0x1f, 0x15, 0x1f, 0x15, 0x1f,
        0x15, 0x1f, 0xf4, 0xe2, 0x00, 0x04, 0xdb, 0x52, 0xd0,
    ]
}

/*
# Makes the gRPC counter's compressed messages with Python's own gzip and zlib; the decompressed sizes are
# Python's. Output: Swift array literals, pasted into GRPCMessageCounterTests.swift.
import gzip, zlib

def swift(name, data, note):
    rows = [", ".join(f"0x{b:02x}" for b in data[i:i + 16]) for i in range(0, len(data), 16)]
    print(f"    /// {note} ({len(data)} bytes).")
    print(f"    static let {name}: [UInt8] = [")
    for row in rows:
        print(f"        {row},")
    print("    ]")

hello = b"greeting: hello, world! " * 40                      # 960 bytes
reply = b"\x08\x96\x01\x12\x07testing\x1a\x03abc" * 12        # 204 bytes, protobuf-ish
swift("gzipHello", gzip.compress(hello, mtime=0), f"gzip.compress(b'greeting: hello, world! ' * 40, mtime=0): {len(hello)} bytes decompressed")
swift("gzipReply", gzip.compress(reply, mtime=0), f"gzip.compress(b'\\x08\\x96\\x01\\x12\\x07testing\\x1a\\x03abc' * 12, mtime=0): {len(reply)} bytes decompressed")
swift("deflateHello", zlib.compress(hello), f"zlib.compress(b'greeting: hello, world! ' * 40): {len(hello)} bytes decompressed")
assert gzip.decompress(gzip.compress(hello, mtime=0)) == hello
*/
