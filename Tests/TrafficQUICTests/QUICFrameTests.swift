import PropertyBased
import Testing
import TrafficTestSupport

@testable import TrafficQUIC

/// RFC 9000 §19 frames from decrypted payloads: well-formed frames, and hostile ones that must be refused
/// without trapping.
@Suite struct QUICFrameTests {
    /// The frames of `payload` with their ranges, and whether the whole payload parsed.
    static func frames(_ payload: [UInt8]) -> (ok: Bool, frames: [(QUICFrame, Range<Int>)]) {
        var frames: [(QUICFrame, Range<Int>)] = []
        let ok = payload.withUnsafeBytes { QUICFrame.forEach($0) { frames.append(($0, $1)) } }
        return (ok, frames)
    }

    static let maxVarint: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]  // 2^62 − 1

    @Test func wellFormedFramesAndTheirRanges() throws {
        // PADDING ×3, PING, CRYPTO(offset 5, "abc"), STREAM 0x0f (OFF, LEN, FIN) id 4 offset 2 "xy",
        // MAX_DATA 0x10 with an 8-byte varint, NEW_CONNECTION_ID with a 4-byte ID.
        let payload: [UInt8] =
            [0, 0, 0]  // 0..<3
            + [0x01]  // 3..<4
            + [0x06, 0x05, 0x03, 0x61, 0x62, 0x63]  // 4..<10, data 7..<10
            + [0x0f, 0x04, 0x02, 0x02, 0x78, 0x79]  // 10..<16, data 14..<16
            + [0x10] + Self.maxVarint  // 16..<25
            + [0x18, 0x01, 0x00, 0x04, 0xa1, 0xa2, 0xa3, 0xa4] + [UInt8](repeating: 0x5e, count: 16)  // 25..<49, cid 29..<33
        let (ok, frames) = Self.frames(payload)
        #expect(ok)
        #expect(frames.map(\.1) == [0..<3, 3..<4, 4..<10, 10..<16, 16..<25, 25..<49])
        guard frames.count == 6 else { return }
        if case .padding = frames[0].0 {} else { Issue.record("not padding: \(frames[0].0)") }
        if case .other = frames[1].0 {} else { Issue.record("not other: \(frames[1].0)") }
        if case .crypto(let offset, let data) = frames[2].0 {
            #expect(offset == 5)
            #expect(data == 7..<10)
        } else { Issue.record("not crypto: \(frames[2].0)") }
        if case .stream(let id, let offset, let data, let fin) = frames[3].0 {
            #expect(id == 4)
            #expect(offset == 2)
            #expect(data == 14..<16)
            #expect(fin)
        } else { Issue.record("not stream: \(frames[3].0)") }
        if case .other = frames[4].0 {} else { Issue.record("not other: \(frames[4].0)") }
        if case .newConnectionID(let cid) = frames[5].0 { #expect(cid == 29..<33) } else {
            Issue.record("not new connection id: \(frames[5].0)")
        }
    }

    @Test func streamWithoutLengthRunsToTheEnd() throws {
        // 0x08: no OFF, no LEN, no FIN; id 0; the data is the rest.
        let (ok, frames) = Self.frames([0x08, 0x00, 1, 2, 3, 4])
        #expect(ok)
        guard frames.count == 1, case .stream(let id, let offset, let data, let fin) = frames[0].0 else {
            Issue.record("\(frames)")
            return
        }
        #expect(id == 0 && offset == 0 && data == 2..<6 && !fin)
    }

    @Test func anEightByteVarintTypeIsReadAsItsValue() {
        // PING (0x01) encoded in 8 bytes: 0xc0 00 00 00 00 00 00 01.
        let (ok, frames) = Self.frames([0xc0, 0, 0, 0, 0, 0, 0, 0x01])
        #expect(ok)
        #expect(frames.map(\.1) == [0..<8])
        // A type with the largest value is unknown: refused.
        #expect(!Self.frames(Self.maxVarint).ok)
    }

    @Test func streamOffsetPlusLengthOver2To62IsRefused() {
        // STREAM 0x0e (OFF, LEN) id 0, offset 2^62 − 1, length 1: the last byte would be at 2^62 (§19.8).
        #expect(!Self.frames([0x0e, 0x00] + Self.maxVarint + [0x01, 0x7a]).ok)
        // Offset 2^62 − 2 with 1 byte ends at 2^62 − 1: allowed.
        let below: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]
        let (ok, frames) = Self.frames([0x0e, 0x00] + below + [0x01, 0x7a])
        #expect(ok)
        if frames.count == 1, case .stream(_, let offset, let data, _) = frames[0].0 {
            #expect(offset == (1 << 62) - 2)
            #expect(data == 11..<12)
        } else { Issue.record("\(frames)") }
        // Offset 2^62 − 1 with no data (LEN 0): still within bounds.
        #expect(Self.frames([0x0e, 0x00] + Self.maxVarint + [0x00]).ok)
        // Offset 2^62 − 1 and 3 bytes without LEN.
        #expect(!Self.frames([0x0c, 0x00] + Self.maxVarint + [1, 2, 3]).ok)
    }

    @Test func ackWithMoreRangesThanThePayloadHoldsIsRefused() {
        // ACK: largest 0, delay 0, range count 0x3fffffff (4-byte varint bf ff ff ff), first range 0.
        #expect(!Self.frames([0x02, 0x00, 0x00, 0xbf, 0xff, 0xff, 0xff, 0x00]).ok)
        // Range count 2^62 − 1.
        #expect(!Self.frames([0x02, 0x00, 0x00] + Self.maxVarint + [0x00]).ok)
        // Range count 2, one (gap, length) pair present.
        #expect(!Self.frames([0x02, 0x00, 0x00, 0x02, 0x00, 0x01, 0x01]).ok)
        // Range count 1, the pair present: 7 bytes.
        let (ok, frames) = Self.frames([0x02, 0x00, 0x00, 0x01, 0x00, 0x01, 0x01])
        #expect(ok)
        #expect(frames.map(\.1) == [0..<7])
        // ACK_ECN (0x03) needs three ECN counts after the ranges.
        #expect(!Self.frames([0x03, 0x05, 0x00, 0x00, 0x00, 0x01, 0x01]).ok)
        #expect(Self.frames([0x03, 0x05, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01]).ok)
    }

    @Test func cryptoLengthPastTheEndIsRefused() {
        // CRYPTO offset 0, length 16, 1 byte of data.
        #expect(!Self.frames([0x06, 0x00, 0x10, 0x61]).ok)
        // Length 2^62 − 1.
        #expect(!Self.frames([0x06, 0x00] + Self.maxVarint + [0x61]).ok)
        // Offset 2^62 − 1 is read (CRYPTO offsets are not bounded by the frame), with its data.
        let (ok, frames) = Self.frames([0x06] + Self.maxVarint + [0x01, 0x61])
        #expect(ok)
        if frames.count == 1, case .crypto(let offset, let data) = frames[0].0 {
            #expect(offset == (1 << 62) - 1)
            #expect(data == 10..<11)
        } else { Issue.record("\(frames)") }
    }

    @Test func truncatedAndUnknownFramesAreRefused() {
        #expect(!Self.frames([0x40]).ok)  // a 2-byte varint type cut short
        #expect(!Self.frames([0x21]).ok)  // no frame type 0x21
        #expect(!Self.frames([0x04, 0x00, 0x00]).ok)  // RESET_STREAM without its final size
        #expect(!Self.frames([0x18, 0x01, 0x00, 0x15] + [UInt8](repeating: 1, count: 21 + 16)).ok)  // 21-byte CID
        #expect(!Self.frames([0x18, 0x01, 0x00, 0x00] + [UInt8](repeating: 1, count: 16)).ok)  // 0-byte CID
        #expect(!Self.frames([0x18, 0x01, 0x00, 0x04, 1, 2, 3, 4] + [UInt8](repeating: 1, count: 15)).ok)  // short token
        #expect(!Self.frames([0x1a, 1, 2, 3, 4, 5, 6, 7]).ok)  // PATH_CHALLENGE with 7 bytes
        #expect(!Self.frames([0x1c, 0x00, 0x00, 0x05, 0x61]).ok)  // CONNECTION_CLOSE reason past the end
        #expect(!Self.frames([0x07, 0x03, 0x61]).ok)  // NEW_TOKEN past the end
        #expect(Self.frames([]).ok && Self.frames([]).frames.isEmpty)
        // Frames before the bad one are still reported.
        let (ok, frames) = Self.frames([0x01, 0x01, 0x21])
        #expect(!ok)
        #expect(frames.map(\.1) == [0..<1, 1..<2])
    }

    /// Random payloads: never a trap; the reported frames tile the payload from 0 without gaps or overlap, and
    /// every data range lies inside its frame.
    @Test func randomPayloadsNeverTrap() async {
        await propertyCheck(count: 2000, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let length = Int.random(in: 0...200, using: &rng)
            var payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Bias toward real frame types, so that parsing goes deep.
            let types: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0a, 0x0e, 0x0f, 0x10, 0x11,
                                  0x18, 0x1a, 0x1c, 0x1d, 0x1e, 0x30, 0x31]
            var i = 0
            while i < payload.count {
                if Bool.random(using: &rng) { payload[i] = types.randomElement(using: &rng)! }
                i += Int.random(in: 1...12, using: &rng)
            }
            let (ok, frames) = Self.frames(payload)
            var position = 0
            var tiles = true
            for (frame, range) in frames {
                if range.lowerBound != position || range.upperBound > payload.count || range.isEmpty { tiles = false }
                switch frame {
                case .crypto(_, let data), .stream(_, _, let data, _), .newConnectionID(let data):
                    if data.lowerBound < range.lowerBound || data.upperBound > range.upperBound { tiles = false }
                default: break
                }
                position = range.upperBound
            }
            #expect(tiles, "seed \(seed)")
            if ok { #expect(position == payload.count, "seed \(seed)") }
        }
    }
}
