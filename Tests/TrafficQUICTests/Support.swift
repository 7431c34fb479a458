@testable import TrafficQUIC

extension QUICPacketKeys {
    /// The raw bytes of the AEAD key and the header protection key (SymmetricKey does not compare its bytes).
    var keyBytes: [UInt8] { key.withUnsafeBytes { Array($0) } }
    var headerKeyBytes: [UInt8] { headerKey.withUnsafeBytes { Array($0) } }
}
