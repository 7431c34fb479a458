import Testing
import TrafficTestSupport

@testable import TrafficHTTP2

/// The Huffman code of RFC 7541 Appendix B and its §5.2 decoding rules.
@Suite struct HPACKHuffmanTests {
    static func decode(_ bytes: [UInt8]) -> Result<[UInt8], HPACKError> {
        bytes.withUnsafeBytes { input in
            let output = UnsafeMutableRawBufferPointer.allocate(
                byteCount: HPACKHuffman.maxDecodedCount(input.count), alignment: 1)
            defer { output.deallocate() }
            do throws(HPACKError) {
                let count = try HPACKHuffman.decode(input, into: output.baseAddress!)
                return .success(Array(output[0..<count]))
            } catch {
                return .failure(error)
            }
        }
    }

    /// A plain bit-by-bit encoder over the derived codes, to feed the decoder every octet.
    static func encode(_ octets: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        var accumulator: UInt64 = 0
        var bits = 0
        for octet in octets {
            let length = Int(HPACKHuffman.codeLengths[Int(octet)])
            accumulator = accumulator << length | UInt64(HPACKHuffman.codes[Int(octet)])
            bits += length
            while bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> bits))
            }
        }
        if bits > 0 {
            // §5.2: pad with the most significant bits of EOS, all ones.
            bytes.append(UInt8(truncatingIfNeeded: accumulator << (8 - bits)) | UInt8(0xff >> bits))
        }
        return bytes
    }

    /// Strings and their codes as printed in RFC 7541 Appendix C.4 and C.6.
    @Test(arguments: [
        ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
        ("no-cache", "a8eb 1064 9cbf"),
        ("custom-key", "25a8 49e9 5ba9 7d7f"),
        ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
        ("302", "6402"),
        ("307", "640e ff"),
        ("private", "aec3 771a 4b"),
        ("Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"),
        ("Mon, 21 Oct 2013 20:13:22 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"),
        ("https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"),
        ("gzip", "9bd9 ab"),
        (
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"
        ),
        ("", ""),
    ])
    func rfcVectors(text: String, code: String) {
        #expect(Self.decode(hex(code)) == .success(Array(text.utf8)))
        #expect(Self.encode(Array(text.utf8)) == hex(code))
    }

    // A few codes as Appendix B prints them, so the canonical derivation is checked against the table itself.
    @Test func derivedCodesMatchAppendixB() {
        let printed: [(symbol: Int, code: UInt32, length: UInt8)] = [
            (0, 0x1ff8, 13), (10, 0x3fff_fffc, 30), (32, 0x14, 6), (48, 0x0, 5), (65, 0x21, 6), (97, 0x3, 5),
            (127, 0xfff_fffc, 28), (128, 0xfffe6, 20), (255, 0x3ff_ffee, 26), (256, 0x3fff_ffff, 30),
        ]
        for entry in printed {
            #expect(HPACKHuffman.codes[entry.symbol] == entry.code, "symbol \(entry.symbol)")
            #expect(HPACKHuffman.codeLengths[entry.symbol] == entry.length, "symbol \(entry.symbol)")
        }
        // The code is complete: Kraft's sum is exactly 1 (2^30 in units of the longest code).
        #expect(HPACKHuffman.codeLengths.reduce(0) { $0 + (1 << (30 - Int($1))) } == 1 << 30)
    }

    @Test func everyOctetRoundTrips() {
        let all = (0...255).map { UInt8($0) }
        #expect(Self.decode(Self.encode(all)) == .success(all))
        for octet in all {
            #expect(Self.decode(Self.encode([octet])) == .success([octet]), "octet \(octet)")
            #expect(Self.decode(Self.encode([octet, 0x61, octet])) == .success([octet, 0x61, octet]))
        }
    }

    /// Random octet strings of every length up to 80 (so every split between the 8-octet loop and the octet-wise
    /// end of the decoder): each decodes back; with an octet of ones more (8 more padding bits), or with its
    /// last padding bit cleared, it is refused.
    @Test func randomStringsRoundTripAndBadPaddingIsRefused() {
        var rng = SplitMix(state: 7541)
        for length in 0...80 {
            for _ in 0..<40 {
                // Mostly header-like octets (short codes), sometimes any octet (codes up to 30 bits).
                let octets = (0..<length).map { _ in
                    Bool.random(using: &rng)
                        ? Array("abcdefghijklmnopqrstuvwxyz0123456789-/=;,. ".utf8).randomElement(using: &rng)!
                        : UInt8.random(in: 0...255, using: &rng)
                }
                let code = Self.encode(octets)
                #expect(Self.decode(code) == .success(octets), "\(octets)")
                #expect(Self.decode(code + [0xff]) == .failure(.invalidHuffman), "\(octets)")
                let paddingBits = code.count * 8 - octets.reduce(0) { $0 + Int(HPACKHuffman.codeLengths[Int($1)]) }
                if paddingBits > 0 {
                    var cleared = code
                    cleared[cleared.count - 1] &= 0xfe
                    #expect(Self.decode(cleared) == .failure(.invalidHuffman), "\(octets)")
                }
            }
        }
    }

    // §5.2: padding is up to 7 bits, all ones (the most significant bits of EOS), and EOS itself is an error.
    @Test(arguments: [
        // 'a' is 00011: its three padding bits must be 111.
        ("1f", true),
        ("18", false),
        ("1e", false),
        // 'a' and 11 bits of ones: padding longer than 7 bits.
        ("1fff", false),
        // Only padding, 8 bits of ones.
        ("ff", false),
        // EOS (30 ones) and 2 padding bits.
        ("ffff ffff", false),
        // 'a' (00011), EOS (30 ones), 'a' (00011): 40 bits, EOS inside the string.
        ("1fff ffff e3", false),
        // "aaaaa": 25 bits and the longest allowed padding, 7 ones.
        ("18c6 31ff", true),
        // The same followed by a whole octet of ones: 15 bits of padding.
        ("18c6 31ff ff", false),
        // 7 padding bits that are not all ones.
        ("18c6 3180", false),
    ])
    func padding(code: String, valid: Bool) {
        switch Self.decode(hex(code)) {
        case .success: #expect(valid, "\(code) decoded")
        case .failure(let error): #expect(!valid && error == .invalidHuffman, "\(code): \(error)")
        }
    }

    /// Names and values are octets, not text: invalid UTF-8, NUL and every high octet decode as sent, raw and
    /// Huffman-coded, and are stored in the dynamic table as such.
    @Test func namesAndValuesAreOctets() {
        let name: [UInt8] = [0x00, 0xff, 0xc3, 0x28, 0x80, 0x7f]
        let value: [UInt8] = (0...255).map { UInt8($0) }
        let huffmanName = Self.encode(name)
        let huffmanValue = Self.encode(value)
        var block: [UInt8] = [0x40] + hpackString(name) + hpackString(value)
        block += [0x00] + hpackInteger(huffmanName.count, prefixBits: 7, pattern: 0x80) + huffmanName
        block += hpackInteger(huffmanValue.count, prefixBits: 7, pattern: 0x80) + huffmanValue
        block += [0xbe]
        var decoder = HPACKDecoder()
        let fields = decoder.fields(block)
        #expect(fields.map(\.name) == [name, name, name])
        #expect(fields.map(\.value) == [value, value, value])
        #expect(fields.map(\.kind) == [.incrementalIndexing, .withoutIndexing, .indexed])
        #expect(fields.reduce(0) { $0 + $1.representationBytes } == block.count)
    }
}
