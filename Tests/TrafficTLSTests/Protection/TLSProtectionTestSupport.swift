import Testing
import TrafficTLS

/// Bytes from hex digits; spaces and newlines (as in RFC 8448's dumps) are skipped.
func hex(_ text: String) -> [UInt8] {
    let digits = text.utf8.compactMap { c -> UInt8? in
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

/// One record of a generated vector: who sent it, at which sequence number, and what it carries.
struct TLSVectorRecord: Sendable, CustomTestStringConvertible {
    var fromClient: Bool
    var sequence: UInt64
    var contentType: UInt8
    /// The error `open` must give, or nil when it must decrypt to `plaintext`.
    var error: TLSDecryptionError?
    var plaintext: [UInt8]
    var record: [UInt8]

    init(
        fromClient: Bool, sequence: UInt64, contentType: UInt8, error: TLSDecryptionError?, plaintext: String,
        record: String
    ) {
        self.fromClient = fromClient
        self.sequence = sequence
        self.contentType = contentType
        self.error = error
        self.plaintext = hex(plaintext)
        self.record = hex(record)
    }

    var testDescription: String { "\(fromClient ? "client" : "server") seq \(sequence) type \(contentType)" }
}

/// A TLS 1.1/1.2 connection of the generated vectors: what a key log and the hellos give, and its records.
struct TLS12VectorConnection: Sendable, CustomTestStringConvertible {
    var name: String
    var suite: TLSCipherSuite
    var version: TLSVersion
    var encryptThenMAC: Bool
    var masterSecret: [UInt8]
    var clientRandom: [UInt8]
    var serverRandom: [UInt8]
    var keyBlock: [UInt8]
    var records: [TLSVectorRecord]

    init(
        name: String, suite: UInt16, version: UInt16, encryptThenMAC: Bool, masterSecret: String,
        clientRandom: String, serverRandom: String, keyBlock: String, records: [TLSVectorRecord]
    ) {
        self.name = name
        self.suite = TLSCipherSuite(rawValue: suite)
        self.version = TLSVersion(rawValue: version)
        self.encryptThenMAC = encryptThenMAC
        self.masterSecret = hex(masterSecret)
        self.clientRandom = hex(clientRandom)
        self.serverRandom = hex(serverRandom)
        self.keyBlock = hex(keyBlock)
        self.records = records
    }

    var testDescription: String { name }
}

/// One direction of a TLS 1.3 connection of the generated vectors.
struct TLS13VectorConnection: Sendable, CustomTestStringConvertible {
    var name: String
    var suite: TLSCipherSuite
    var keyUpdates: Int
    var trafficSecret0: [UInt8]
    /// The secret after `keyUpdates` KeyUpdates.
    var trafficSecret: [UInt8]
    var key: [UInt8]
    var iv: [UInt8]
    var records: [TLSVectorRecord]

    init(
        name: String, suite: UInt16, keyUpdates: Int, trafficSecret0: String, trafficSecret: String, key: String,
        iv: String, records: [TLSVectorRecord]
    ) {
        self.name = name
        self.suite = TLSCipherSuite(rawValue: suite)
        self.keyUpdates = keyUpdates
        self.trafficSecret0 = hex(trafficSecret0)
        self.trafficSecret = hex(trafficSecret)
        self.key = hex(key)
        self.iv = hex(iv)
        self.records = records
    }

    var testDescription: String { name }
}

extension TLSRecordDecryptor {
    /// Opens a whole record (header included) the way the connection layer will: header bytes as a tuple,
    /// the fragment borrowed. A record shorter than its header is handed over with the bytes it has.
    mutating func open(record: [UInt8]) throws(TLSDecryptionError) -> (type: UInt8, plaintext: [UInt8]) {
        var padded = record
        while padded.count < 5 { padded.append(0) }
        let header = (padded[0], padded[1], padded[2], padded[3], padded[4])
        var plaintext: [UInt8] = []
        let result: Result<UInt8, TLSDecryptionError> = record.withUnsafeBytes { bytes in
            let fragment = UnsafeRawBufferPointer(rebasing: bytes[min(5, bytes.count)...])
            return Result { () throws(TLSDecryptionError) in
                try open(header: header, fragment: fragment, appendingTo: &plaintext)
            }
        }
        return (try result.get(), plaintext)
    }
}
