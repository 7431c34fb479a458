import Foundation
import PropertyBased
import Testing
import TrafficCapture
import TrafficTestSupport
@testable import TrafficWire

/// Any stack of supported tunnels, under any supported link, around the real packets of two samples decodes
/// to the same TCP segments as the bare IP packets, with the whole frame as frame bytes.
@Suite struct TunnelPropertyTests {
    /// The IP packets (Ethernet header removed) of samples/http-segments.pcap and samples/http-ipv6.pcap.
    static let packets: [[UInt8]] = {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples")
        var packets: [[UInt8]] = []
        for name in ["http-segments.pcap", "http-ipv6.pcap"] {
            guard let file = try? CaptureFile(path: samples.appendingPathComponent(name).path) else { continue }
            _ = file.readPackets { packets.append(Array($0.bytes[14...])) }
        }
        return packets
    }()

    struct Decoded: Equatable {
        var source: String, destination: String
        var sequenceNumber: UInt32, acknowledgmentNumber: UInt32, flags: UInt8
        var payloadLength: Int, payload: [UInt8]
    }

    static func decode(_ frame: [UInt8], link: LinkType) -> (Decoded, TCPSegment)? {
        var decoder = PacketDecoder(linkType: link)
        return frame.withUnsafeBytes { bytes in
            guard case .tcp(let s) = decoder.decode(CapturedPacket(time: .zero, bytes: bytes, originalLength: frame.count))
            else { return nil }
            let decoded = Decoded(
                source: s.source.description, destination: s.destination.description, sequenceNumber: s.sequenceNumber,
                acknowledgmentNumber: s.acknowledgmentNumber, flags: s.flags.rawValue, payloadLength: s.payloadLength,
                payload: Array(s.payload))
            var segment = s
            segment.payload = UnsafeRawBufferPointer(start: nil, count: 0)  // the frame's memory ends here
            return (decoded, segment)
        }
    }

    @Test func samplesAreLoaded() {
        #expect(Self.packets.count == 28 + 12)
    }

    @Test func randomStacksGiveTheSameSegments() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let link = TunnelFrames.Link.allCases.randomElement(using: &rng)!
            let budget = PacketDecoder.maxTunnelDepth - link.tunnelDepth
            // Layers innermost first; every packet of the run gets the same stack.
            var layers: [TunnelFrames.Layer] = []
            var depth = 0
            var version6 = [false, true]  // whether the packet at this level is IPv6, for IPv4 and IPv6 inner packets
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                let candidates = TunnelFrames.Layer.allCases.filter { layer in
                    depth + layer.depth <= budget && (layer != .teredo || version6 == [true, true])
                }
                guard let layer = candidates.randomElement(using: &rng) else { break }
                layers.append(layer)
                depth += layer.depth
                let outerIPv6 = layer == .greAllFields || layer == .ipInIPv6
                version6 = [outerIPv6, outerIPv6]
            }
            for packet in Self.packets {
                guard let (expected, _) = Self.decode(packet, link: .raw) else {
                    Issue.record("a sample packet is not TCP")
                    return
                }
                var wrapped = packet
                var stack: [Encapsulation.Kind] = []
                for layer in layers {
                    stack = layer.kinds(innerIPv6: TunnelFrames.isIPv6(wrapped)) + stack
                    wrapped = layer.wrap(wrapped)
                }
                let (type, frame, linkKinds) = link.frame(wrapped)
                let context = "seed \(seed): \(link) \(layers)"
                guard let (found, segment) = Self.decode(frame, link: type) else {
                    Issue.record("not decoded: \(context)")
                    return
                }
                #expect(found == expected, "\(context)")
                #expect(segment.frameBytes == frame.count, "\(context)")
                #expect(segment.headerBytes == frame.count - expected.payloadLength, "\(context)")
                #expect(segment.encapsulation.kinds == linkKinds + stack, "\(context)")
            }
        }
    }

    /// Damaged tunnels never trap: random bytes of a random wrapped frame overwritten, under every link, decode
    /// to a segment, a non-TCP packet or a named anomaly (the decoder's counts say which).
    @Test func damagedStacksNeverTrap() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var rng = SplitMix(state: seed)
            let link = TunnelFrames.Link.allCases.randomElement(using: &rng)!
            var packet = Self.packets.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let layer = TunnelFrames.Layer.allCases.filter { $0.fits(packet) }.randomElement(using: &rng)!
                packet = layer.wrap(packet)
            }
            var (type, frame, _) = link.frame(packet)
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                // Mostly in the headers, where the lengths are.
                let index = Int.random(in: 0..<min(frame.count, 160), using: &rng)
                frame[index] = UInt8.random(in: 0...255, using: &rng)
            }
            let cut = Int.random(in: 0...frame.count, using: &rng)
            var decoder = PacketDecoder(linkType: type)
            frame.withUnsafeBytes { bytes in
                let result = decoder.decode(CapturedPacket(
                    time: .zero, bytes: UnsafeRawBufferPointer(rebasing: bytes[..<cut]), originalLength: frame.count))
                let anomalies = decoder.anomalies.reduce(0, +)
                if case .malformed(let anomaly) = result {
                    #expect(decoder.count(of: anomaly) == 1, "seed \(seed)")
                } else if case .tcp(let segment) = result {
                    #expect(segment.payload.count <= segment.payloadLength, "seed \(seed)")
                    #expect(segment.frameBytes == frame.count, "seed \(seed)")
                    #expect(anomalies == 0, "seed \(seed)")
                } else {
                    #expect(anomalies == 0, "seed \(seed)")
                }
            }
        }
    }
}
