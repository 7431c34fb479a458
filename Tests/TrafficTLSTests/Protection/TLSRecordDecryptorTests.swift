import Testing
import TrafficTLS

/// TLS 1.1/1.2 record protection against records sealed by Python's `cryptography` (make-tls12-vectors.py), and
/// the failure modes of `open` on every kind of suite.
@Suite struct TLSRecordDecryptorTests {
    static func decryptors(_ vector: TLS12VectorConnection) throws -> (
        client: TLSRecordDecryptor, server: TLSRecordDecryptor
    ) {
        let parameters = try #require(TLSCipherParameters(suite: vector.suite, version: vector.version))
        return TLS12KeySchedule.decryptors(
            parameters: parameters, version: vector.version, masterSecret: vector.masterSecret,
            clientRandom: vector.clientRandom, serverRandom: vector.serverRandom,
            encryptThenMAC: vector.encryptThenMAC)
    }

    static func direction(
        _ pair: (client: TLSRecordDecryptor, server: TLSRecordDecryptor), fromClient: Bool
    ) -> TLSRecordDecryptor {
        fromClient ? pair.client : pair.server
    }

    /// Every generated record opens to its plaintext and content type, or fails as the generator broke it.
    @Test(arguments: TLS12Vectors.connections)
    func generatedRecordsOpen(_ vector: TLS12VectorConnection) throws {
        for record in vector.records {
            var decryptor = Self.direction(try Self.decryptors(vector), fromClient: record.fromClient)
            decryptor.sequenceNumber = record.sequence
            if let error = record.error {
                #expect(throws: error, "\(record)") { try decryptor.open(record: record.record) }
            } else {
                let opened = try decryptor.open(record: record.record)
                #expect(opened.type == record.contentType, "\(record)")
                #expect(opened.plaintext == record.plaintext, "\(record)")
            }
            #expect(decryptor.sequenceNumber == record.sequence + 1)
        }
    }

    /// `seal` with the generator's explicit nonce or IV reproduces its records byte for byte (GCM reads the
    /// explicit nonce from the record, CBC the IV; ChaCha20 has neither).
    @Test(arguments: TLS12Vectors.connections)
    func sealReproducesGeneratedRecords(_ vector: TLS12VectorConnection) throws {
        for record in vector.records where record.error == nil {
            var decryptor = Self.direction(try Self.decryptors(vector), fromClient: record.fromClient)
            decryptor.sequenceNumber = record.sequence
            let recordIVLength = decryptor.parameters.recordIVLength
            let explicit = recordIVLength == 0 ? nil : Array(record.record[5..<(5 + recordIVLength)])
            // CBC padding beyond the minimum, as the generator chose it: the last plaintext byte before the MAC
            // (MtE) or of the ciphertext (EtM) is not visible without decrypting, so compare lengths instead.
            let sealed = decryptor.seal(
                contentType: record.contentType, plaintext: record.plaintext, recordIV: explicit)
            if sealed.count == record.record.count {
                #expect(sealed == record.record, "\(record)")
            } else {
                #expect(decryptor.parameters.isCBC && sealed.count < record.record.count, "\(record)")
            }
        }
    }

    /// Every suite family, both MAC orders for CBC, TLS 1.1 and 1.3: seal → open gives the plaintext back, in
    /// every direction, for lengths around block boundaries, across several sequence numbers.
    @Test(arguments: [
        (0xc02f, TLSVersion.tls12, false), (0xc030, .tls12, false), (0xcca9, .tls12, false),
        (0xc009, .tls12, false), (0xc009, .tls12, true), (0xc00a, .tls12, false), (0xc00a, .tls12, true),
        (0xc023, .tls12, false), (0xc023, .tls12, true), (0x003d, .tls12, true),
        (0xc024, .tls12, false), (0xc024, .tls12, true), (0x0035, .tls11, false), (0x0035, .tls11, true),
        (0x1301, .tls13, false), (0x1302, .tls13, false), (0x1303, .tls13, false),
    ])
    func roundTrip(_ suite: Int, _ version: TLSVersion, _ encryptThenMAC: Bool) throws {
        let (sender, receiver) = try Self.pair(suite, version, encryptThenMAC: encryptThenMAC)
        var seal = sender
        var open = receiver
        for (index, length) in [0, 1, 15, 16, 17, 31, 32, 33, 255, 1000, 16384].enumerated() {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
            let type: UInt8 = index % 3 == 0 ? 22 : 23
            let record = seal.seal(contentType: type, plaintext: plaintext, padding: index % 2)
            var appended: [UInt8] = [9, 9]  // open appends: what the caller had stays
            let header = (record[0], record[1], record[2], record[3], record[4])
            let opened = try record.withUnsafeBytes { bytes throws(TLSDecryptionError) in
                try open.open(
                    header: header, fragment: UnsafeRawBufferPointer(rebasing: bytes[5...]), appendingTo: &appended)
            }
            #expect(opened == type)
            #expect(appended == [9, 9] + plaintext)
            #expect(Int(record[3]) << 8 | Int(record[4]) == record.count - 5)
        }
        #expect(seal.sequenceNumber == 11 && open.sequenceNumber == 11)
    }

    /// A flipped bit anywhere in the fragment (and, for TLS 1.3, in the header, its additional data) fails with
    /// `authenticationFailed`; in a CBC MAC-then-encrypt record it may show as bad padding instead. TLS 1.2's
    /// header length is not authenticated as such (the caller frames records by it; the AAD length is the
    /// fragment's), so bytes 3 and 4 are left out there, and the type byte is checked on its own below.
    @Test(arguments: [
        (0xc02f, TLSVersion.tls12, false), (0xcca8, .tls12, false), (0xc013, .tls12, false),
        (0xc013, .tls12, true), (0xc028, .tls12, false), (0x1301, .tls13, false), (0x1303, .tls13, false),
    ])
    func tamperingFails(_ suite: Int, _ version: TLSVersion, _ encryptThenMAC: Bool) throws {
        var (sender, receiver) = try Self.pair(suite, version, encryptThenMAC: encryptThenMAC)
        let record = sender.seal(contentType: 23, plaintext: Array("GET / HTTP/1.1\r\n\r\n".utf8))
        let mayBePadding = receiver.parameters.isCBC && !encryptThenMAC
        for index in 0..<record.count where version == .tls13 || !(0..<5).contains(index) || index == 1 || index == 2 {
            var damaged = record
            damaged[index] ^= 0x04
            var copy = receiver
            do {
                _ = try copy.open(record: damaged)
                Issue.record("byte \(index) changed and the record still opened")
            } catch {
                if mayBePadding && index >= 5 {
                    #expect(error == .authenticationFailed || error == .badPadding, "byte \(index): \(error)")
                } else {
                    #expect(error == .authenticationFailed, "byte \(index): \(error)")
                }
            }
        }
        // TLS 1.2 binds the content type through the MAC/AAD, not the header: a changed type byte fails too.
        if version != .tls13 {
            var damaged = record
            damaged[0] = 22
            #expect(throws: TLSDecryptionError.authenticationFailed) { try receiver.open(record: damaged) }
        }
    }

    /// The same record at the wrong sequence number does not verify.
    @Test(arguments: [(0xc02f, false), (0xcca8, false), (0xc013, false), (0xc013, true), (0xc028, false)])
    func sequenceMismatchFails(_ suite: Int, _ encryptThenMAC: Bool) throws {
        var (sender, receiver) = try Self.pair(suite, .tls12, encryptThenMAC: encryptThenMAC)
        sender.sequenceNumber = 5
        let record = sender.seal(contentType: 23, plaintext: [1, 2, 3])
        receiver.sequenceNumber = 4
        #expect(throws: TLSDecryptionError.authenticationFailed) { try receiver.open(record: record) }
        #expect(receiver.sequenceNumber == 5)
        #expect(try receiver.open(record: record).plaintext == [1, 2, 3])
        #expect(receiver.sequenceNumber == 6)
    }

    /// Every prefix of a record that is shorter than its suite's fixed overhead is `recordTooShort`; no length
    /// traps, whatever it is.
    @Test(arguments: [
        (0xc02f, TLSVersion.tls12, false, 24), (0xcca8, .tls12, false, 16),
        // MtE: IV + the blocks that hold a 20-byte MAC and the padding length byte = 16 + 32.
        (0xc013, .tls12, false, 48), (0xc013, .tls12, true, 52), (0xc028, .tls12, false, 80),
        (0xc028, .tls12, true, 80), (0x1301, .tls13, false, 16),
    ])
    func shortFragments(_ suite: Int, _ version: TLSVersion, _ encryptThenMAC: Bool, _ minimum: Int) throws {
        var (sender, receiver) = try Self.pair(suite, version, encryptThenMAC: encryptThenMAC)
        let record = sender.seal(contentType: 23, plaintext: [UInt8](repeating: 0x41, count: 100))
        for length in 0..<record.count {
            var copy = receiver
            let prefix = Array(record.prefix(length))
            do {
                _ = try copy.open(record: prefix)
                Issue.record("a \(length)-byte prefix opened")
            } catch {
                if length - 5 < minimum {
                    #expect(error == .recordTooShort, "\(length) bytes")
                } else {
                    #expect(error != .recordTooShort, "\(length) bytes")
                }
            }
            #expect(copy.sequenceNumber == 1)
        }
    }

    /// CBC padding whose bytes differ from the length byte: with EtM the MAC verifies first, so the verdict is
    /// certain; with MtE it is what the record decrypts to (the generator's bad-padding records cover both too).
    @Test(arguments: [false, true])
    func badPadding(_ encryptThenMAC: Bool) throws {
        let vector = try #require(
            TLS12Vectors.connections.first { $0.suite.rawValue == 0xc013 && $0.encryptThenMAC == encryptThenMAC })
        let broken = try #require(vector.records.first { $0.error == .badPadding })
        var decryptor = try Self.decryptors(vector).server
        decryptor.sequenceNumber = broken.sequence
        #expect(throws: TLSDecryptionError.badPadding) { try decryptor.open(record: broken.record) }
    }

    /// A CBC ciphertext that is not whole blocks cannot be padded right.
    @Test(arguments: [false, true])
    func misalignedCBC(_ encryptThenMAC: Bool) throws {
        var (sender, receiver) = try Self.pair(0xc013, .tls12, encryptThenMAC: encryptThenMAC)
        var record = sender.seal(contentType: 23, plaintext: [UInt8](repeating: 1, count: 40))
        record.append(0)
        let length = record.count - 5
        record[3] = UInt8(length >> 8)
        record[4] = UInt8(length & 0xff)
        // EtM: the MAC (over the wrong bytes now) fails first; MtE: the extra byte breaks the block structure.
        #expect(throws: encryptThenMAC ? TLSDecryptionError.authenticationFailed : .badPadding) {
            try receiver.open(record: record)
        }
    }

    /// TLS 1.3 padding is stripped up to the last non-zero byte, the type (RFC 8446 §5.4), so content that
    /// ends in zeros keeps them; an inner plaintext of zeros only has no content type.
    @Test func tls13Padding() throws {
        var (sender, receiver) = try Self.pair(0x1301, .tls13)
        let padded = sender.seal(contentType: 23, plaintext: [0, 0, 5, 0], padding: 300)
        #expect(padded.count == 5 + 4 + 1 + 300 + 16)
        let opened = try receiver.open(record: padded)
        #expect(opened.type == 23 && opened.plaintext == [0, 0, 5, 0])
        // "Type" 0 after two zero bytes of content, and zero padding: all zeros.
        let allZero = sender.seal(contentType: 0, plaintext: [0, 0], padding: 10)
        #expect(throws: TLSDecryptionError.noContentType) { try receiver.open(record: allZero) }
        #expect(receiver.sequenceNumber == 2)
    }

    /// Raw keys of the wrong length, or parameters that are not a table row for the version, give nil.
    @Test func rawKeysAreChecked() throws {
        let gcm = try #require(TLSCipherParameters(suite: TLSCipherSuite(rawValue: 0xc02f), version: .tls12))
        let key = [UInt8](repeating: 1, count: 16)
        #expect(TLSRecordDecryptor(parameters: gcm, version: .tls12, key: key, iv: [1, 2, 3, 4]) != nil)
        #expect(TLSRecordDecryptor(parameters: gcm, version: .tls12, key: key, iv: [1, 2, 3]) == nil)
        #expect(TLSRecordDecryptor(parameters: gcm, version: .tls12, key: key + [0], iv: [1, 2, 3, 4]) == nil)
        #expect(TLSRecordDecryptor(parameters: gcm, version: .tls13, key: key, iv: [1, 2, 3, 4]) == nil)
        var odd = gcm
        odd.tagOrMACLength = 8
        #expect(TLSRecordDecryptor(parameters: odd, version: .tls12, key: key, iv: [1, 2, 3, 4]) == nil)
    }

    /// Two decryptors with the same keys: one to seal, one to open.
    static func pair(
        _ suite: Int, _ version: TLSVersion, encryptThenMAC: Bool = false
    ) throws -> (TLSRecordDecryptor, TLSRecordDecryptor) {
        let parameters = try #require(
            TLSCipherParameters(suite: TLSCipherSuite(rawValue: UInt16(suite)), version: version))
        if version == .tls13 {
            let secret = (0..<parameters.hash.length).map { UInt8($0) }
            let decryptor = TLS13KeySchedule.decryptor(parameters: parameters, trafficSecret: secret)
            return (decryptor, decryptor)
        }
        let client = TLS12KeySchedule.decryptors(
            parameters: parameters, version: version, masterSecret: [UInt8](repeating: 7, count: 48),
            clientRandom: [UInt8](repeating: 1, count: 32), serverRandom: [UInt8](repeating: 2, count: 32),
            encryptThenMAC: encryptThenMAC
        ).client
        return (client, client)
    }
}
