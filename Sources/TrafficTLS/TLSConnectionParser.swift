import TrafficCapture
import TrafficReassembly
import TrafficSessions

/// Follows the TLS record layer of one TCP connection without keys: frames records, counts their
/// bytes per direction and content type, and reads the ClientHello and ServerHello.
///
/// Call order is `StreamAnalyzer`'s: per direction, `receive` and `skip` in stream order (the two
/// directions interleave in capture order); then `finish` once. Memory per connection is bounded:
/// one record header per direction plus the hello being reassembled (`TLSParserLimits`); record
/// fragments are counted, never stored. Never traps on any input: bad bytes become `nonTLSBytes`
/// and flags. A decrypting stage would sit between the record reader and the HTTP parsers.
public final class TLSConnectionParser: SessionStage {
    public let info: TCPConnectionInfo
    public let limits: TLSParserLimits
    /// Called once from `finish` with the final summary.
    private let onFinish: ((TLSConnectionSummary) -> Void)?

    /// Indexed by `Direction.rawValue`.
    private var records = [TLSRecordReader(), TLSRecordReader()]
    private var handshakes: [TLSHandshakeAssembler]
    private var clientHello: TLSClientHello?
    private var serverHello: TLSServerHello?
    private var flags = TLSConnectionFlags()
    private var sawRecord = false
    /// The server sent ServerHelloDone: a full TLS ≤ 1.2 handshake, not a resumed one.
    private var sawServerHelloDone = false
    /// `finish` was called: the summary is final.
    public private(set) var isFinished = false

    /// Makes a parser for one connection; `onFinish` receives the summary when `finish` is called.
    public init(
        info: TCPConnectionInfo, limits: TLSParserLimits = TLSParserLimits(),
        onFinish: ((TLSConnectionSummary) -> Void)? = nil
    ) {
        self.info = info
        self.limits = limits
        self.onFinish = onFinish
        let assembler = TLSHandshakeAssembler(limit: limits.maximumHandshakeMessageBytes)
        handshakes = [assembler, assembler]
    }

    public func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        let d = direction.rawValue
        records[d].noteReceived(bytes.count)
        var offset = 0
        while offset < bytes.count {
            let (consumed, event) = records[d].advance(bytes, from: offset)
            offset += consumed
            switch event {
            case .none:
                break
            case .handshakeFragment(let range):
                feedHandshake(bytes, range, direction: d)
            case .record(let header, let resynchronized):
                sawRecord = true
                if resynchronized { flags.insert(.resynchronized) }
                if header.contentType == .changeCipherSpec { changeCipherSpec(direction: d) }
            case .lostSync:
                flags.insert(.recordDesync)
                // Nothing was lost, only non-TLS bytes inserted: the handshake stream stays aligned
                // unless a message was cut (e.g. a proxy preamble before the ClientHello is harmless).
                if handshakes[d].isInsideMessage { loseHandshake(direction: d) }
            }
        }
    }

    public func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard byteCount > 0 else { return }
        let d = direction.rawValue
        flags.insert(.gap)
        let type = records[d].skip(byteCount)
        // A gap inside application data leaves the handshake stream aligned; anywhere else it doesn't.
        if type != .applicationData && type != .alert && type != .heartbeat { loseHandshake(direction: d) }
    }

    public func finish(time: CaptureTime) {
        guard !isFinished else {
            preconditionFailure("TLSConnectionParser.finish called twice for connection \(info.id)")
        }
        for d in 0..<2 where records[d].finish() { flags.insert(.truncatedRecord) }
        isFinished = true
        onFinish?(summary)
    }

    /// The summary so far; final once `isFinished`.
    public var summary: TLSConnectionSummary {
        var summary = TLSConnectionSummary(info: info)
        summary.isTLS = sawRecord
        if let clientHello {
            summary.sni = clientHello.serverName
            summary.ech = clientHello.hasEncryptedClientHello
            summary.offeredALPN = clientHello.alpnProtocols
            summary.clientLegacyVersion = clientHello.legacyVersion
            summary.offeredVersions = clientHello.supportedVersions
        }
        if let serverHello {
            summary.negotiatedVersion = serverHello.negotiatedVersion
            summary.cipherSuite = serverHello.cipherSuite
            summary.selectedALPN = serverHello.alpnProtocol
        }
        summary.helloRetryRequest = flags.contains(.helloRetryRequest)
        summary.resumed = flags.contains(.resumed)
        summary.flags = flags.anomalies
        summary.clientToServer = records[Direction.clientToServer.rawValue].stats
        summary.serverToClient = records[Direction.serverToClient.rawValue].stats
        return summary
    }

    private func feedHandshake(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, direction d: Int) {
        guard handshakes[d].state != .stopped else { return }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let (consumed, event) = handshakes[d].advance(bytes, from: offset, to: range.upperBound)
            offset += consumed
            switch event {
            case .none: break
            case .tooLarge: flags.insert(.handshakeMessageTooLarge)
            case .message(let type): parseHello(type: type, direction: d)
            case .skipped(let type):
                if type == TLSHandshakeAssembler.serverHelloDone, d == Direction.serverToClient.rawValue {
                    sawServerHelloDone = true
                }
            }
        }
    }

    private func parseHello(type: UInt8, direction d: Int) {
        if type == TLSHandshakeAssembler.clientHello {
            let hello = handshakes[d].body.withUnsafeBytes { TLSClientHello.parse($0) }
            guard let hello else {
                flags.insert(.malformedClientHello)
                return
            }
            // After a HelloRetryRequest the client repeats its hello (RFC 8446 §4.1.4) with the same
            // name and ALPN list: the first one is kept.
            if clientHello == nil { clientHello = hello }
            if hello.hasEncryptedClientHello { flags.insert(.ech) }
        } else {
            let hello = handshakes[d].body.withUnsafeBytes { TLSServerHello.parse($0) }
            guard let hello else {
                flags.insert(.malformedServerHello)
                return
            }
            // A ServerHello after a HelloRetryRequest replaces it: it holds the final choices.
            serverHello = hello
            if hello.isHelloRetryRequest { flags.insert(.helloRetryRequest) }
            if hello.negotiatedVersion == .tls13, hello.acceptsPreSharedKey { flags.insert(.resumed) }
        }
    }

    /// RFC 5246 §7.1: up to TLS 1.2, the sender's records after change_cipher_spec are encrypted,
    /// so its handshake records can't be parsed. In TLS 1.3 the record is a middlebox-compatibility
    /// no-op (RFC 8446 §D.4) and a second ClientHello may still follow it in plaintext.
    private func changeCipherSpec(direction d: Int) {
        guard serverHello?.negotiatedVersion != .tls13 else { return }
        // RFC 5246 §7.3: in an abbreviated (resumed) handshake the server's change_cipher_spec
        // follows its ServerHello directly; a full handshake sends ServerHelloDone first. Only
        // trusted when every server handshake message so far was seen.
        let sawWholeFlight = handshakes[d].state != .stopped && !flags.contains(.gap)
        if d == Direction.serverToClient.rawValue, serverHello != nil, !sawServerHelloDone, sawWholeFlight {
            flags.insert(.resumed)
        }
        handshakes[d].stop()
    }

    /// Handshake bytes were lost: the handshake stream can't be realigned, so hellos are no longer parsed.
    private func loseHandshake(direction d: Int) {
        if handshakes[d].isInsideMessage { flags.insert(.handshakeLost) }
        handshakes[d].stop()
    }
}
