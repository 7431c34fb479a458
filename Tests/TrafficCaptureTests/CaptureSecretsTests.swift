import Foundation
import Testing
import TrafficCapture

/// pcapng Decryption Secrets Blocks found by walking the file's blocks (pcapng §4.7). The files are built here
/// byte by byte from the block layout (type, total length, body, total length; the section's byte order from
/// its byte-order magic), so the expected secrets are the bytes put in.
@Suite struct CaptureSecretsTests {
    /// A block of `type` around `body` (padded to 32 bits), in the byte order `bigEndian` says.
    static func block(_ type: UInt32, _ body: [UInt8], bigEndian: Bool) -> [UInt8] {
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
            return bigEndian ? b : b.reversed()
        }
        let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
        let total = UInt32(12 + padded.count)
        return u32(type) + u32(total) + padded + u32(total)
    }

    static func sectionHeader(bigEndian: Bool) -> [UInt8] {
        // Byte-order magic 0x1A2B3C4D as written, version 1.0, section length -1.
        let magic: [UInt8] = bigEndian ? [0x1A, 0x2B, 0x3C, 0x4D] : [0x4D, 0x3C, 0x2B, 0x1A]
        let version: [UInt8] = bigEndian ? [0, 1, 0, 0] : [1, 0, 0, 0]
        return block(0x0A0D_0D0A, magic + version + [UInt8](repeating: 0xff, count: 8), bigEndian: bigEndian)
    }

    /// A Decryption Secrets Block: secrets type, secrets length, the secrets.
    static func secrets(_ text: String, type: UInt32 = 0x544C_534B, bigEndian: Bool) -> [UInt8] {
        let data = Array(text.utf8)
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
            return bigEndian ? b : b.reversed()
        }
        return block(0x0000_000A, u32(type) + u32(UInt32(data.count)) + data, bigEndian: bigEndian)
    }

    static func scan(_ bytes: [UInt8]) throws -> [String] {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString).pcapng")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try CaptureSecrets.tlsKeyLogs(path: url.path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test(arguments: [false, true])
    func secretsAnywhereInEitherByteOrder(bigEndian: Bool) throws {
        let packet = Self.block(6, [UInt8](repeating: 0x42, count: 61), bigEndian: bigEndian)
        let file = Self.sectionHeader(bigEndian: bigEndian) + packet
            + Self.secrets("CLIENT_RANDOM aa bb\n", bigEndian: bigEndian) + packet
            + Self.secrets("WireGuard keys", type: 0x5747_4B4C, bigEndian: bigEndian)  // not TLS: skipped
            + Self.secrets("SERVER_TRAFFIC_SECRET_0 cc dd", bigEndian: bigEndian)
        #expect(try Self.scan(file) == ["CLIENT_RANDOM aa bb\n", "SERVER_TRAFFIC_SECRET_0 cc dd"])
    }

    /// A second section may switch byte order; its blocks are read in its own.
    @Test func sectionsKeepTheirOwnByteOrder() throws {
        let file = Self.sectionHeader(bigEndian: false) + Self.secrets("first", bigEndian: false)
            + Self.sectionHeader(bigEndian: true) + Self.secrets("second", bigEndian: true)
        #expect(try Self.scan(file) == ["first", "second"])
    }

    /// Damage: the walk stops at a block that cannot be one, keeps what it found before, and never traps.
    @Test func damagedFilesGiveWhatCameBefore() throws {
        let good = Self.sectionHeader(bigEndian: false) + Self.secrets("kept", bigEndian: false)
        let full = good + Self.secrets("cut", bigEndian: false)
        // A block cut after its whole secrets (in its padding or trailing length) still gives them: the key log is
        // whole. Cut anywhere before that, it gives nothing.
        let secretsEnd = good.count + 16 + 3
        for cut in good.count..<full.count {
            #expect(try Self.scan(Array(full[..<cut])) == (cut >= secretsEnd ? ["kept", "cut"] : ["kept"]), "cut at \(cut)")
        }
        // A block length below the minimum, and one not a multiple of 4.
        for length: UInt32 in [4, 13] {
            let bad = good + [10, 0, 0, 0] + [UInt8(length), 0, 0, 0] + [UInt8](repeating: 0, count: 16)
            #expect(try Self.scan(bad) == ["kept"])
        }
        // A secrets length past its block.
        var lying = Self.secrets("abc", bigEndian: false)
        lying[12] = 0xff
        #expect(try Self.scan(good + lying) == ["kept"])
    }

    @Test func classicPcapHasNone() throws {
        let pcap = CaptureFileTests.samples.appendingPathComponent("http-basic.pcap").path
        #expect(try CaptureSecrets.tlsKeyLogs(path: pcap).isEmpty)
        #expect(throws: CaptureError.self) { try CaptureSecrets.tlsKeyLogs(path: "/nonexistent.pcapng") }
    }
}
