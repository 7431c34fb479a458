import Foundation
import Testing
import TrafficCapture

/// Reading captures through libpcap: every committed format variant of http-basic holds the same
/// 25 frames of 26820 bytes (tshark: `capinfos samples/http-basic.pcap`), whatever the container.
@Suite struct CaptureFileTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    static func path(_ name: String) -> String { samples.appendingPathComponent(name).path }

    func totals(_ name: String) throws -> (packets: Int, bytes: Int, first: CaptureTime?, damage: CaptureDamage?) {
        let file = try CaptureFile(path: Self.path(name))
        var packets = 0, bytes = 0
        var first: CaptureTime?
        let damage = file.readPackets { packet in
            packets += 1
            bytes += packet.originalLength
            if first == nil { first = packet.time }
        }
        return (packets, bytes, first, damage)
    }

    @Test(arguments: ["http-basic.pcap", "http-basic.pcapng", "http-basic.pcap.gz", "http-basic-nsec.pcap",
                      "http-basic-be.pcap"])
    func sameFramesInEveryContainer(name: String) throws {
        let (packets, bytes, first, damage) = try totals(name)
        let reference = try totals("http-basic.pcap")
        #expect(packets == 25)
        #expect(bytes == 26820)  // capinfos: data size 26 820 bytes
        #expect(damage == nil)
        // The nanosecond capture was taken at the same moment by a second tcpdump: same second.
        #expect(first.map { $0.nanoseconds / 1_000_000_000 } == reference.first.map { $0.nanoseconds / 1_000_000_000 })
        if name != "http-basic-nsec.pcap" { #expect(first == reference.first, "\(name): microsecond stamps") }
    }

    @Test func timestampsAreExact() throws {
        // tshark -T fields -e frame.time_epoch, first frame: nanosecond and microsecond captures of the same moment.
        #expect(try totals("http-basic-nsec.pcap").first?.decimalString == "1795240650.351058970")
        #expect(try totals("http-basic.pcap").first?.decimalString == "1795240650.351059000")
    }

    @Test func linkTypesAreNamed() throws {
        #expect(try CaptureFile(path: Self.path("http-basic.pcap")).linkType == .ethernet)
        #expect(try CaptureFile(path: Self.path("http-basic-sll.pcap")).linkType == .linuxSLL)
        #expect(try CaptureFile(path: Self.path("http-basic-sll2.pcap")).linkType == .linuxSLL2)
        #expect(try CaptureFile(path: Self.path("http-basic-null.pcap")).linkType == .null)
        #expect(LinkType.ethernet.description == "EN10MB (1)")
    }

    /// A classic pcap file of records with these capture lengths (original length 1 500), in little- or
    /// big-endian order, with `snaplen` in its header.
    static func classicPcap(caplens: [Int], snaplen: UInt32 = 65_535, bigEndian: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: bigEndian ? v.bigEndian : v.littleEndian) { bytes += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: bigEndian ? v.bigEndian : v.littleEndian) { bytes += $0 } }
        u32(0xa1b2_c3d4); u16(2); u16(4); u32(0); u32(0); u32(snaplen); u32(1)
        for (i, caplen) in caplens.enumerated() {
            u32(1_700_000_000 + UInt32(i)); u32(UInt32(i)); u32(UInt32(caplen)); u32(1_500)
            bytes += (0..<caplen).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }
        }
        return bytes
    }

    func read(_ bytes: [UInt8]) throws -> (lengths: [Int], damage: CaptureDamage?) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("traffic-classic-\(UUID()).pcap").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try CaptureFile(path: path)
        var lengths: [Int] = []
        let damage = file.readPackets { lengths.append($0.bytes.count) }
        return (lengths, damage)
    }

    /// A plain classic pcap is read through a plain stdio stream whose position is summed record by record:
    /// cut anywhere inside its last record, the damage is at that record's start, 24 + Σ(16 + caplen) of the
    /// records before it, in both byte orders.
    @Test(arguments: [false, true])
    func damageOffsetIsTheStartOfTheCutRecord(bigEndian: Bool) throws {
        let caplens = [60, 1_514, 0, 77, 200]
        let whole = Self.classicPcap(caplens: caplens, bigEndian: bigEndian)
        let lastStart = 24 + caplens.dropLast().reduce(0) { $0 + 16 + $1 }
        #expect(try read(whole).damage == nil)
        #expect(try read(whole).lengths == caplens)
        for cut in lastStart + 1..<whole.count {
            let (lengths, damage) = try read(Array(whole[..<cut]))
            #expect(lengths == Array(caplens.dropLast()))
            #expect(damage?.offset == Int64(lastStart), "cut at \(cut)")
        }
    }

    /// Records longer than the file's snapshot length are cut to it by libpcap, which skips the rest: their
    /// size on disk is not what the reader is given, and the offset after them still comes out exact.
    @Test func damageOffsetAfterRecordsLongerThanTheSnapshot() throws {
        let caplens = [100, 64, 30, 100, 50]
        let whole = Self.classicPcap(caplens: caplens, snaplen: 64)
        let lastStart = 24 + caplens.dropLast().reduce(0) { $0 + 16 + $1 }
        #expect(try read(whole).lengths == [64, 64, 30, 64, 50])
        let (lengths, damage) = try read(Array(whole.dropLast(10)))
        #expect(lengths == [64, 64, 30, 64])
        #expect(damage?.offset == Int64(lastStart))
    }

    @Test func truncatedFileReportsTheOffsetOfTheDamage() throws {
        let (packets, _, _, damage) = try totals("http-segments-truncated.pcap")
        let found = try #require(damage)
        #expect(packets > 0)
        // Everything before the damage was read: the offset is past the 24-byte header, inside the file.
        let size = try FileManager.default.attributesOfItem(atPath: Self.path("http-segments-truncated.pcap"))[.size] as! Int
        #expect(found.offset > 24 && found.offset < Int64(size))
        #expect(found.description.contains("byte offset \(found.offset)"))
    }

    @Test func notACaptureIsAClearError() throws {
        let readme = Self.samples.appendingPathComponent("README.md").path
        #expect(throws: CaptureError.self) { try CaptureFile(path: readme) }
        do {
            _ = try CaptureFile(path: readme)
        } catch {
            #expect(error.description.hasPrefix("\(readme): not a pcap or pcapng capture"))
        }
        do {
            _ = try CaptureFile(path: "/nonexistent/file.pcap")
        } catch {
            #expect(error == .cannotOpen(path: "/nonexistent/file.pcap", reason: "No such file or directory"))
        }
    }

    @Test func bpfFilterIsAppliedAndBadOnesAreErrors() throws {
        let file = try CaptureFile(path: Self.path("http-basic.pcap"))
        try file.setFilter("tcp src port 80")
        var packets = 0
        _ = file.readPackets { _ in packets += 1 }
        #expect(packets == 11)  // the server's frames (connections.tshark.csv: server_to_client_packets)
        #expect(throws: CaptureError.self) { try file.setFilter("tcp port") }
    }
}
