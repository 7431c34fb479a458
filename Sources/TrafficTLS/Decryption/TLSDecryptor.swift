import TrafficCapture
import TrafficReassembly
import TrafficSessions

/// Decrypts the records of one TLS connection with logged secrets and hands the application data to a child
/// stage, which parses it as it would parse cleartext (Zeek's SSL analyzer feeding its HTTP child).
///
/// Fed the same two byte streams as the keyless `TLSConnectionParser` (which keeps counting the record layer
/// for the connection's summary), in the `StreamAnalyzer` call order. Per direction it frames records,
/// buffering one record's fragment (at most 2^14 + 2048 bytes, RFC 5246 §6.2.3) because a tag or MAC covers
/// the whole record; reads the handshake messages that change keys; and decrypts.
///
/// Key changes (which keys protect the next record):
/// - TLS ≤ 1.2 (RFC 5246 §7.1): each side's records after its change_cipher_spec, with the key block of the
///   logged master secret (`CLIENT_RANDOM`), or of the resumed session's (session ID or ticket, from an
///   earlier connection of the run).
/// - TLS 1.3 (RFC 8446 §7): the server's records after its ServerHello with its handshake traffic secret,
///   after its Finished with its application traffic secret 0; the client's likewise after the ServerHello
///   and its own Finished. 0-RTT records (§4.2.10) with the client early traffic secret until EndOfEarlyData;
///   early data the server rejected is not decryptable by anyone and is counted as undecrypted, as the server
///   skips it (§4.2.10, "trial decryption"). KeyUpdate (§4.6.3) moves its sender to the next secret.
///
/// The child sees only plaintext: `WireSpan.framingBytes` carries each record's overhead beyond its plaintext
/// and `overheadBytes` the TCP/IP headers of the segments that carried it (those of handshake records go with
/// the next application data of the direction). Packet events (ACKs, retransmissions) are moved from TCP
/// stream positions to plaintext positions through the recent records' positions, so that the child's
/// overhead attribution finds the message they belong to.
public final class TLSDecryptor {
    private let context: TLSDecryptionContext
    private let makeChild: () -> any SessionStage
    /// The child, made as soon as the connection has keys (so that every packet event after the ServerHello goes
    /// straight to it), or at the first early data; owned (see StreamAnalyzer's no-retain rule).
    private var child: Unmanaged<SessionStageBox>?
    private var sides = [Side(), Side()]
    private var clientHello: TLSClientHello?
    private var serverHello: TLSServerHello?
    private var parameters: TLSCipherParameters?
    private var secrets: TLSKeyLog.Secrets?
    private var masterSecret: [UInt8]?
    /// TLS ≤ 1.2 renegotiation: the new ClientHello, then each side's keys until its change_cipher_spec.
    private var renegotiationHello: TLSClientHello?
    private var renegotiated: [TLSRecordDecryptor?] = [nil, nil]
    private var isTLS13 = false
    /// Protected records whose tag or MAC verified, and those whose did not.
    private var verifiedRecords = 0
    private var failedRecords = 0
    /// Why keys could not be set up (no secret, an unsupported suite), when that is known.
    private var reason: TLSDecryptionOutcome?
    /// Packet events before the child existed, replayed to it: the few ACKs before the ServerHello (bounded: a
    /// connection whose server never answers makes no child, and its events are the `tls` records' then).
    private var heldEvents: [TCPPacketEvent] = []
    private var scratch: [UInt8] = []
    private var finished = false

    static let heldEventLimit = 256

    /// Called once, before the first application data reaches the child: when the handshake began (the
    /// ClientHello's record) and ended (the last handshake record before application data, either side).
    public var handshakeEnded: ((_ start: CaptureTime, _ end: CaptureTime) -> Void)?
    private var handshakeStart: CaptureTime?
    private var lastControlTime = CaptureTime.zero
    private var handshakeReported = false

    public init(context: TLSDecryptionContext, makeChild: @escaping () -> any SessionStage) {
        self.context = context
        self.makeChild = makeChild
    }

    deinit { child?.release() }

    /// How the connection went; final after `finish`.
    public var outcome: TLSDecryptionOutcome {
        if verifiedRecords > 0 { return .decrypted }
        if let reason { return reason }
        return failedRecords > 0 ? .decryptFailed : .noKey
    }

    /// Records whose tag or MAC did not verify.
    public var failedRecordCount: Int { failedRecords }

    /// Per direction, where the stream's bytes went.
    public struct Accounting: Sendable, Equatable {
        /// Application data handed to the child.
        public var plaintextBytes = 0
        /// The rest of the records that carried it (headers, nonces, tags or MACs, padding, inner types).
        public var framingBytes = 0
        /// Whole handshake, change_cipher_spec, alert and heartbeat records (TLS 1.3: by their inner type).
        public var controlBytes = 0
        /// Captured bytes in no readable record: no keys, a failed tag, a record cut by a gap or by the end,
        /// rejected early data, bytes after the framing was lost.
        public var undecryptedBytes = 0
        /// Bytes never captured.
        public var missingBytes = 0

        public init() {}
    }

    public func accounting(_ direction: Direction) -> Accounting { sides[direction.rawValue].accounting }

    /// TCP/IP header bytes of `direction` that no application data carried to the child yet: the segments of
    /// records after the last application data (a close_notify alert, a ticket); the child's last message of
    /// the direction takes them, as a cleartext stage's trailing segments go.
    public func pendingOverheadBytes(_ direction: Direction) -> Int { sides[direction.rawValue].pendingOverhead }

    /// The end of `direction`'s plaintext so far: where every ACK and retransmission maps once finished.
    public func plaintextEnd(_ direction: Direction) -> Int { sides[direction.rawValue].plain }

    // MARK: Streams

    public func receive(_ bytes: UnsafeRawBufferPointer, direction: Direction, span: WireSpan) {
        let d = direction.rawValue
        sides[d].pendingOverhead += span.overheadBytes
        sides[d].time = span.time
        var i = 0
        while i < bytes.count {
            if sides[d].framingLost {
                sides[d].accounting.undecryptedBytes += bytes.count - i
                sides[d].wire += bytes.count - i
                return
            }
            if sides[d].fragmentLength < 0 {
                // Fast path: a whole record in this delivery is read in place.
                if sides[d].headerCount == 0, bytes.count - i >= TLSRecordHeader.byteCount {
                    let length = Int(bytes[i + 3]) << 8 | Int(bytes[i + 4])
                    guard TLSRecordHeader(bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3], bytes[i + 4]) != nil else {
                        loseFraming(d)
                        continue
                    }
                    if bytes.count - i >= TLSRecordHeader.byteCount + length {
                        let header = (bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3], bytes[i + 4])
                        sides[d].recordStart = sides[d].wire
                        sides[d].wire += TLSRecordHeader.byteCount + length
                        let fragment = UnsafeRawBufferPointer(
                            rebasing: bytes[(i + TLSRecordHeader.byteCount)..<(i + TLSRecordHeader.byteCount + length)])
                        i += TLSRecordHeader.byteCount + length
                        process(header: header, fragment: fragment, direction: direction)
                        continue
                    }
                }
                let byte = bytes[i]
                i += 1
                sides[d].wire += 1
                sides[d].pushHeader(byte)
                if sides[d].headerCount == TLSRecordHeader.byteCount {
                    let h = sides[d].header
                    guard TLSRecordHeader(h.0, h.1, h.2, h.3, h.4) != nil else {
                        sides[d].accounting.undecryptedBytes += TLSRecordHeader.byteCount
                        sides[d].headerCount = 0
                        loseFraming(d)
                        continue
                    }
                    sides[d].recordStart = sides[d].wire - TLSRecordHeader.byteCount
                    sides[d].fragmentLength = Int(h.3) << 8 | Int(h.4)
                    sides[d].fragment.removeAll(keepingCapacity: true)
                    sides[d].fragment.reserveCapacity(sides[d].fragmentLength)
                    sides[d].damaged = false
                    if sides[d].fragmentLength == 0 { completeBufferedRecord(direction) }
                }
                continue
            }
            let want = sides[d].fragmentLength - sides[d].fragmentReceived
            let n = min(want, bytes.count - i)
            if !sides[d].damaged { sides[d].fragment.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<i + n])) }
            sides[d].fragmentReceived += n
            sides[d].wire += n
            i += n
            if n == want { completeBufferedRecord(direction) }
        }
    }

    public func skip(_ byteCount: Int, direction: Direction, time: CaptureTime) {
        guard byteCount > 0 else { return }
        let d = direction.rawValue
        sides[d].accounting.missingBytes += byteCount
        sides[d].wire += byteCount
        if !sides[d].framingLost, sides[d].fragmentLength >= 0,
            byteCount <= sides[d].fragmentLength - sides[d].fragmentReceived
        {
            // Inside one record: it can't be verified, but the next one starts where its header said.
            sides[d].damaged = true
            sides[d].missingInRecord += byteCount
            sides[d].fragmentReceived += byteCount
            if sides[d].fragmentReceived == sides[d].fragmentLength { completeBufferedRecord(direction) }
            return
        }
        // Where the next record starts is unknown, and so is its sequence number: decryption of this
        // direction ends here.
        sides[d].accounting.undecryptedBytes += abandonPartialRecord(d)
        sides[d].framingLost = true
        if let child { child._withUnsafeGuaranteedRef { $0.stage.skip(byteCount, direction: direction, time: time) } }
    }

    public func finish(time: CaptureTime) {
        guard !finished else { return }
        finished = true
        for d in 0..<2 {
            // A record cut by the end of the capture.
            sides[d].accounting.undecryptedBytes += abandonPartialRecord(d)
            // A closed connection can linger in the reassembler for late packets: keep only counters (ACKs after
            // the end map to the end of the plaintext).
            sides[d].fragment = []
            sides[d].messageBody = []
            sides[d].marks = Marks()
            sides[d].decryptor = nil
            sides[d].fallback = nil
            sides[d].trafficSecret = nil
        }
        scratch = []
        clientHello = nil
        serverHello = nil
        renegotiationHello = nil
        renegotiated = [nil, nil]
        secrets = nil
        masterSecret = nil
        if let child { child._withUnsafeGuaranteedRef { $0.stage.finish(time: time) } }
    }

    /// A pure ACK or retransmission of the connection, in TCP stream positions.
    public func packet(_ event: TCPPacketEvent) {
        guard let child else {
            if heldEvents.count < Self.heldEventLimit { heldEvents.append(event) }
            return
        }
        let mapped = plaintextEvent(event)
        child._withUnsafeGuaranteedRef { $0.stage.packet(mapped) }
    }

    /// The reassembler lets go of the connection.
    public func connectionEnded(_ summary: TCPConnectionSummary) {
        finish(time: summary.end)
        if let child { child._withUnsafeGuaranteedRef { $0.stage.connectionEnded(summary) } }
    }

    // MARK: Records

    /// Drops the record (or header) being read; returns how many of its bytes were captured.
    private func abandonPartialRecord(_ d: Int) -> Int {
        var captured = 0
        if sides[d].fragmentLength >= 0 {
            // The header was read in this path (a record read in place is never partial).
            captured = TLSRecordHeader.byteCount + sides[d].fragmentReceived - sides[d].missingInRecord
        } else {
            captured = sides[d].headerCount
        }
        sides[d].fragmentLength = -1
        sides[d].fragmentReceived = 0
        sides[d].headerCount = 0
        sides[d].damaged = false
        sides[d].missingInRecord = 0
        sides[d].fragment = []
        return captured
    }

    private func loseFraming(_ d: Int) {
        sides[d].framingLost = true
    }

    private func completeBufferedRecord(_ direction: Direction) {
        let d = direction.rawValue
        let h = sides[d].header
        sides[d].headerCount = 0
        sides[d].fragmentLength = -1
        let received = sides[d].fragmentReceived
        sides[d].fragmentReceived = 0
        if sides[d].damaged {
            sides[d].damaged = false
            let captured = TLSRecordHeader.byteCount + received - sides[d].missingInRecord
            sides[d].missingInRecord = 0
            lost(record: (h.0, h.1, h.2, h.3, h.4), capturedBytes: captured, direction: direction)
            return
        }
        let fragment = sides[d].fragment
        // Memory is per open connection: a record's buffer is let go once the record is read, not kept for the
        // connection's life (one allocation per spanning record, next to swift-crypto's own per record).
        sides[d].fragment = []
        fragment.withUnsafeBytes { process(header: (h.0, h.1, h.2, h.3, h.4), fragment: $0, direction: direction) }
        if scratch.capacity > 4096 { scratch = [] }
    }

    /// A record that was cut by a gap: its sender's sequence number moved on; its plaintext is unknown.
    private func lost(record header: (UInt8, UInt8, UInt8, UInt8, UInt8), capturedBytes: Int, direction: Direction) {
        let d = direction.rawValue
        sides[d].accounting.undecryptedBytes += capturedBytes
        let protected = sides[d].encrypted && (!isTLS13 || header.0 == TLSContentType.applicationData.rawValue)
        guard protected, var decryptor = sides[d].decryptor else { return }
        decryptor.sequenceNumber &+= 1
        sides[d].decryptor = decryptor
        skipPlaintext(of: header, direction: direction)
    }

    /// A protected record whose plaintext is lost: if it held application data, the child hears of a gap of its
    /// plaintext's size (the fragment less the suite's fixed overhead; TLS 1.3 padding cannot be known).
    private func skipPlaintext(of header: (UInt8, UInt8, UInt8, UInt8, UInt8), direction: Direction) {
        let d = direction.rawValue
        // TLS ≤ 1.2 says the type in the header; TLS 1.3 hides it, and after the handshake it is application data.
        let isApplication = isTLS13 ? sides[d].handshakeDone : header.0 == TLSContentType.applicationData.rawValue
        guard isApplication, verifiedRecords > 0 else { return }
        let plaintext = max(0, (Int(header.3) << 8 | Int(header.4)) - fixedOverhead)
        ensureChild()
        sides[d].plain += plaintext
        child?._withUnsafeGuaranteedRef { $0.stage.skip(plaintext, direction: direction, time: sides[d].time) }
    }

    /// Record bytes beyond the plaintext that every record of the suite has (padding aside).
    private var fixedOverhead: Int {
        guard let p = parameters else { return 0 }
        return p.recordIVLength + p.tagOrMACLength + (isTLS13 ? 1 : 0) + (p.mac == .aead ? 0 : 1)
    }

    private func process(header: (UInt8, UInt8, UInt8, UInt8, UInt8), fragment: UnsafeRawBufferPointer, direction: Direction) {
        let d = direction.rawValue
        let recordBytes = TLSRecordHeader.byteCount + fragment.count
        let type = header.0
        if type == TLSContentType.changeCipherSpec.rawValue || type == TLSContentType.handshake.rawValue {
            noteHandshakeRecord(d)
        }
        if type == TLSContentType.changeCipherSpec.rawValue {
            sides[d].accounting.controlBytes += recordBytes
            // RFC 5246 §7.1: the sender's next records are protected. In TLS 1.3 a compatibility no-op (§D.4).
            if !isTLS13, serverHello != nil {
                // A renegotiation's change_cipher_spec is itself protected under the keys it ends (RFC 5246
                // §7.4.1.2): it takes a sequence number of theirs, and the renegotiated keys start after it.
                if sides[d].encrypted, var current = sides[d].decryptor {
                    current.sequenceNumber &+= 1
                    sides[d].decryptor = current
                }
                if let next = renegotiated[d] {
                    sides[d].decryptor = next
                    renegotiated[d] = nil
                }
                sides[d].encrypted = true
            }
            return
        }
        let protected = sides[d].encrypted && (!isTLS13 || type == TLSContentType.applicationData.rawValue)
        guard protected else {
            if type == TLSContentType.applicationData.rawValue {
                // 0-RTT data before the ServerHello said which suite, or application data without keys.
                if d == Direction.clientToServer.rawValue, serverHello == nil, clientHello?.offersEarlyData == true,
                    tryEarlyData(header: header, fragment: fragment, direction: direction)
                {
                    return
                }
                sides[d].accounting.undecryptedBytes += recordBytes
                return
            }
            sides[d].accounting.controlBytes += recordBytes
            if type == TLSContentType.handshake.rawValue { readHandshake(fragment, direction: direction) }
            return
        }
        guard var decryptor = sides[d].decryptor else {
            sides[d].accounting.undecryptedBytes += recordBytes
            return
        }
        scratch.removeAll(keepingCapacity: true)
        do {
            let inner = try decryptor.open(header: header, fragment: fragment, appendingTo: &scratch)
            sides[d].decryptor = decryptor
            verifiedRecords += 1
            handle(inner: inner, recordBytes: recordBytes, direction: direction)
        } catch {
            sides[d].decryptor = decryptor
            // TLS 1.3 client: early data the server did not take, or the end of early data, shows as a record
            // the current keys can't open while the next ones can.
            if var next = sides[d].fallback {
                scratch.removeAll(keepingCapacity: true)
                if let inner = try? next.open(header: header, fragment: fragment, appendingTo: &scratch) {
                    sides[d].decryptor = next
                    sides[d].fallback = nil
                    verifiedRecords += 1
                    handle(inner: inner, recordBytes: recordBytes, direction: direction)
                    return
                }
                if sides[d].inEarlyData {
                    // Rejected 0-RTT data: nobody can read it, and the server skips it too.
                    sides[d].accounting.undecryptedBytes += recordBytes
                    return
                }
            }
            failedRecords += 1
            lostAfterFailure(header: header, recordBytes: recordBytes, direction: direction)
        }
    }

    private func lostAfterFailure(header: (UInt8, UInt8, UInt8, UInt8, UInt8), recordBytes: Int, direction: Direction) {
        sides[direction.rawValue].accounting.undecryptedBytes += recordBytes
        skipPlaintext(of: header, direction: direction)
    }

    /// 0-RTT records that come before the ServerHello: the suite is the resumed session's, which only the
    /// secret's length hints at (SHA-256 or SHA-384), so the suites of that hash are tried.
    private func tryEarlyData(
        header: (UInt8, UInt8, UInt8, UInt8, UInt8), fragment: UnsafeRawBufferPointer, direction: Direction
    ) -> Bool {
        let d = direction.rawValue
        guard sides[d].decryptor == nil, let hello = clientHello,
            let early = context.keyLog.secrets(clientRandom: hello.random)?.clientEarlyTrafficSecret
        else { return false }
        let candidates: [UInt16] = early.count == 48 ? [0x1302] : [0x1301, 0x1303]
        for code in candidates {
            guard let p = TLSCipherParameters(suite: TLSCipherSuite(rawValue: code), version: .tls13) else { continue }
            var trial = TLS13KeySchedule.decryptor(parameters: p, trafficSecret: early)
            scratch.removeAll(keepingCapacity: true)
            if let inner = try? trial.open(header: header, fragment: fragment, appendingTo: &scratch) {
                isTLS13 = true
                parameters = p
                sides[d].decryptor = trial
                sides[d].inEarlyData = true
                sides[d].encrypted = true
                verifiedRecords += 1
                handle(inner: inner, recordBytes: TLSRecordHeader.byteCount + fragment.count, direction: direction)
                return true
            }
        }
        return false
    }

    /// A decrypted record of real content type `inner`, its plaintext in `scratch`.
    private func handle(inner: UInt8, recordBytes: Int, direction: Direction) {
        let d = direction.rawValue
        switch inner {
        case TLSContentType.applicationData.rawValue:
            deliver(recordBytes: recordBytes, direction: direction)
        case TLSContentType.handshake.rawValue:
            noteHandshakeRecord(d)
            sides[d].accounting.controlBytes += recordBytes
            let plaintext = scratch
            plaintext.withUnsafeBytes { readHandshake($0, direction: direction) }
        default:
            sides[d].accounting.controlBytes += recordBytes
        }
    }

    /// A handshake record of either side before the first application data ends the handshake so far.
    private func noteHandshakeRecord(_ d: Int) {
        if !handshakeReported { lastControlTime = max(lastControlTime, sides[d].time) }
    }

    private func deliver(recordBytes: Int, direction: Direction) {
        let d = direction.rawValue
        ensureChild()
        if !handshakeReported {
            handshakeReported = true
            if let handshakeStart { handshakeEnded?(handshakeStart, max(handshakeStart, lastControlTime)) }
        }
        let framing = recordBytes - scratch.count
        let span = WireSpan(time: sides[d].time, overheadBytes: sides[d].pendingOverhead, framingBytes: framing)
        sides[d].pendingOverhead = 0
        sides[d].accounting.plaintextBytes += scratch.count
        sides[d].accounting.framingBytes += framing
        let start = sides[d].plain
        sides[d].plain += scratch.count
        sides[d].marks.append(
            Mark(wireStart: sides[d].recordStart, wireEnd: sides[d].recordStart + recordBytes, plainStart: start,
                 plainEnd: sides[d].plain))
        guard !scratch.isEmpty, let child else { return }
        scratch.withUnsafeBytes { bytes in
            child._withUnsafeGuaranteedRef { $0.stage.receive(bytes, direction: direction, span: span) }
        }
    }

    private func ensureChild() {
        guard child == nil else { return }
        child = Unmanaged.passRetained(SessionStageBox(makeChild()))
        let events = heldEvents
        heldEvents = []
        for event in events { packet(event) }
    }

    // MARK: Handshake messages

    /// Handshake bytes of `direction` (plaintext or decrypted), message by message (RFC 8446 §4: type(1)
    /// length(3) body); bodies are kept only for the messages read here.
    private func readHandshake(_ bytes: UnsafeRawBufferPointer, direction: Direction) {
        let d = direction.rawValue
        var i = 0
        while i < bytes.count {
            if sides[d].messageRemaining < 0 {
                sides[d].messageHeader = sides[d].messageHeader << 8 | UInt32(bytes[i])
                sides[d].messageHeaderCount += 1
                i += 1
                guard sides[d].messageHeaderCount == 4 else { continue }
                sides[d].messageHeaderCount = 0
                sides[d].messageType = UInt8(truncatingIfNeeded: sides[d].messageHeader >> 24)
                sides[d].messageRemaining = Int(sides[d].messageHeader & 0xff_ffff)
                sides[d].messageBody.removeAll(keepingCapacity: true)
                let keeps = [1, 2, 4].contains(sides[d].messageType) && sides[d].messageRemaining <= 1 << 16
                sides[d].keepsBody = keeps
                if sides[d].messageRemaining == 0 { handshakeMessage(direction) }
                continue
            }
            let n = min(sides[d].messageRemaining, bytes.count - i)
            if sides[d].keepsBody { sides[d].messageBody.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<i + n])) }
            sides[d].messageRemaining -= n
            i += n
            if sides[d].messageRemaining == 0 { handshakeMessage(direction) }
        }
    }

    private func handshakeMessage(_ direction: Direction) {
        let d = direction.rawValue
        sides[d].messageRemaining = -1
        let type = sides[d].messageType
        let body = sides[d].keepsBody ? sides[d].messageBody : []
        switch (type, direction) {
        case (1, .clientToServer):
            if handshakeStart == nil { handshakeStart = sides[d].time }
            // After a HelloRetryRequest the client repeats its hello with the same random (RFC 8446 §4.1.4).
            if clientHello == nil {
                clientHello = body.withUnsafeBytes { TLSClientHello.parse($0) }
            } else if !isTLS13, serverHello != nil {
                // TLS ≤ 1.2 renegotiation (RFC 5246 §7.4.1.2): a new hello inside the protected stream.
                renegotiationHello = body.withUnsafeBytes { TLSClientHello.parse($0) }
            }
        case (2, .serverToClient):
            guard let hello = body.withUnsafeBytes({ TLSServerHello.parse($0) }), !hello.isHelloRetryRequest else { return }
            guard serverHello == nil else {
                if !isTLS13, let client = renegotiationHello { renegotiate(client, hello) }
                return
            }
            serverHello = hello
            setUpKeys(hello)
        case (4, .serverToClient):
            // RFC 5077 §3.3: a TLS ≤ 1.2 ticket; its session is this connection's (TLS 1.3 resumes with a PSK,
            // whose secrets the key log holds for the new connection).
            guard !isTLS13, let master = masterSecret, body.count >= 6 else { return }
            let length = Int(body[4]) << 8 | Int(body[5])
            guard body.count >= 6 + length else { return }
            context.sessions.store(TLSSessionCache.ticketKey(Array(body[6..<6 + length])), masterSecret: master)
        case (5, .clientToServer):
            // EndOfEarlyData (RFC 8446 §4.5): the client's next records use its handshake secret.
            if let next = sides[d].fallback {
                sides[d].decryptor = next
                sides[d].fallback = nil
            }
            sides[d].inEarlyData = false
        case (20, _):
            guard isTLS13, let p = parameters else { return }
            sides[d].inEarlyData = false
            sides[d].fallback = nil
            let secret = direction == .clientToServer ? secrets?.clientTrafficSecret0 : secrets?.serverTrafficSecret0
            sides[d].handshakeDone = true
            if let secret {
                sides[d].trafficSecret = secret
                sides[d].decryptor = TLS13KeySchedule.decryptor(parameters: p, trafficSecret: secret)
            } else {
                sides[d].decryptor = nil
            }
        case (24, _):
            // KeyUpdate (RFC 8446 §4.6.3): the sender's next records use the next generation of its secret.
            guard isTLS13, let p = parameters, let secret = sides[d].trafficSecret else { return }
            let next = TLS13KeySchedule.nextTrafficSecret(p.hash, secret)
            sides[d].trafficSecret = next
            sides[d].decryptor = TLS13KeySchedule.decryptor(parameters: p, trafficSecret: next)
        default:
            break
        }
    }

    /// The keys of a renegotiated TLS ≤ 1.2 handshake, each side's taking over at its next change_cipher_spec;
    /// without a secret for the new client random the records after it fail (and are counted so).
    private func renegotiate(_ client: TLSClientHello, _ hello: TLSServerHello) {
        renegotiationHello = nil
        guard let p = TLSCipherParameters(suite: hello.cipherSuite, version: hello.negotiatedVersion),
            hello.negotiatedVersion != .tls13,
            let master = context.keyLog.secrets(clientRandom: client.random)?.masterSecret
                ?? (hello.sessionID == client.sessionID
                    ? context.sessions.masterSecret(TLSSessionCache.sessionIDKey(hello.sessionID)) : nil)
        else { return }
        let keys = TLS12KeySchedule.decryptors(
            parameters: p, version: hello.negotiatedVersion, masterSecret: master, clientRandom: client.random,
            serverRandom: hello.random, encryptThenMAC: hello.encryptThenMAC)
        renegotiated = [keys.client, keys.server]
        parameters = p
    }

    private func setUpKeys(_ hello: TLSServerHello) {
        let version = hello.negotiatedVersion
        isTLS13 = version == .tls13
        guard let p = TLSCipherParameters(suite: hello.cipherSuite, version: version) else {
            reason = .unsupportedCipher
            return
        }
        parameters = p
        guard let client = clientHello else { return }
        let logged = context.keyLog.secrets(clientRandom: client.random)
        secrets = logged
        let c = Direction.clientToServer.rawValue, s = Direction.serverToClient.rawValue
        if isTLS13 {
            guard let serverSecret = logged?.serverHandshakeTrafficSecret,
                let clientSecret = logged?.clientHandshakeTrafficSecret
            else {
                reason = .noKey
                return
            }
            sides[s].decryptor = TLS13KeySchedule.decryptor(parameters: p, trafficSecret: serverSecret)
            sides[s].encrypted = true
            let clientHandshake = TLS13KeySchedule.decryptor(parameters: p, trafficSecret: clientSecret)
            if sides[c].inEarlyData {
                // Already reading 0-RTT data: the handshake keys take over at EndOfEarlyData.
                sides[c].fallback = clientHandshake
            } else if client.offersEarlyData, let early = logged?.clientEarlyTrafficSecret {
                sides[c].decryptor = TLS13KeySchedule.decryptor(parameters: p, trafficSecret: early)
                sides[c].fallback = clientHandshake
                sides[c].inEarlyData = true
            } else {
                sides[c].decryptor = clientHandshake
                // Early data without its secret: those records fail with the handshake keys and are skipped.
                sides[c].inEarlyData = client.offersEarlyData
                if client.offersEarlyData { sides[c].fallback = clientHandshake }
            }
            sides[c].encrypted = true
            ensureChild()
            return
        }
        var master = logged?.masterSecret
        if master == nil {
            // A resumed session (RFC 5246 §7.4.1.3: the server echoes the offered session ID; RFC 5077 §3.4: or
            // accepts the offered ticket) under a secret logged for the connection that made it.
            if !hello.sessionID.isEmpty, hello.sessionID == client.sessionID {
                master = context.sessions.masterSecret(TLSSessionCache.sessionIDKey(hello.sessionID))
            }
            if master == nil, !client.sessionTicket.isEmpty {
                master = context.sessions.masterSecret(TLSSessionCache.ticketKey(client.sessionTicket))
            }
        }
        guard let master else {
            reason = .noKey
            return
        }
        masterSecret = master
        context.sessions.store(TLSSessionCache.sessionIDKey(hello.sessionID), masterSecret: master)
        let keys = TLS12KeySchedule.decryptors(
            parameters: p, version: version, masterSecret: master, clientRandom: client.random, serverRandom: hello.random,
            encryptThenMAC: hello.encryptThenMAC)
        sides[c].decryptor = keys.client
        sides[s].decryptor = keys.server
        // In TLS ≤ 1.2 the handshake is over for the child's purposes once each side's Finished is through.
        sides[c].handshakeDone = true
        sides[s].handshakeDone = true
        ensureChild()
    }

    // MARK: Positions

    private func plaintextEvent(_ event: TCPPacketEvent) -> TCPPacketEvent {
        var mapped = event
        switch event.kind {
        case .ack:
            mapped.streamOffset = Int64(plaintextPosition(Int(event.streamOffset), in: event.direction.opposite, ack: true))
        case .retransmission:
            mapped.streamOffset = Int64(plaintextPosition(Int(event.streamOffset), in: event.direction, ack: false))
        }
        return mapped
    }

    /// The plaintext position for TCP stream position `wire` of `direction`: the end of the plaintext of the
    /// records before it. An ACK inside an application record acknowledges part of that record's plaintext
    /// (one byte past its start, so that the last acknowledged byte falls inside it).
    private func plaintextPosition(_ wire: Int, in direction: Direction, ack: Bool) -> Int {
        if finished { return sides[direction.rawValue].plain }
        let marks = sides[direction.rawValue].marks
        var result = 0
        var found = false
        marks.forEachNewestFirst { mark in
            if mark.wireEnd <= wire {
                result = mark.plainEnd
                found = true
                return false
            }
            if mark.wireStart < wire {
                result = ack && mark.plainEnd > mark.plainStart ? mark.plainStart + 1 : mark.plainStart
                found = true
                return false
            }
            return true
        }
        if !found { result = marks.oldestPlainStart ?? sides[direction.rawValue].plain }
        return result
    }
}

extension TLSDecryptor {
    /// A record's place on the wire and in the plaintext.
    struct Mark {
        var wireStart: Int
        var wireEnd: Int
        var plainStart: Int
        var plainEnd: Int
    }

    /// The last records of a direction (ACKs refer to bytes in flight, a few windows at most).
    struct Marks {
        static let capacity = 64
        private var items: [Mark] = []
        private var head = 0

        mutating func append(_ mark: Mark) {
            if items.count < Self.capacity {
                items.append(mark)
            } else {
                items[head] = mark
                head = (head + 1) % Self.capacity
            }
        }

        var oldestPlainStart: Int? { items.isEmpty ? nil : items[items.count < Self.capacity ? 0 : head].plainStart }

        /// Calls `body` from the newest mark back while it returns true.
        func forEachNewestFirst(_ body: (Mark) -> Bool) {
            guard !items.isEmpty else { return }
            var index = (items.count < Self.capacity ? items.count : head) - 1
            for _ in 0..<items.count {
                if index < 0 { index += items.count }
                if !body(items[index]) { return }
                index -= 1
            }
        }
    }

    /// One direction's state.
    struct Side {
        // Record framing.
        var header: (UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0)
        var headerCount = 0
        /// The fragment length of the record being read, or -1 between records.
        var fragmentLength = -1
        var fragmentReceived = 0
        var fragment: [UInt8] = []
        /// A gap fell inside the record being read (`missingInRecord` of its bytes).
        var damaged = false
        var missingInRecord = 0
        var framingLost = false
        var recordStart = 0
        var wire = 0
        var plain = 0
        var time = CaptureTime.zero
        var pendingOverhead = 0
        var marks = Marks()
        // Keys.
        var encrypted = false
        var decryptor: TLSRecordDecryptor?
        /// The keys to try when the current ones fail (TLS 1.3 client: handshake keys during early data).
        var fallback: TLSRecordDecryptor?
        var inEarlyData = false
        var handshakeDone = false
        var trafficSecret: [UInt8]?
        // Handshake messages.
        var messageHeader: UInt32 = 0
        var messageHeaderCount = 0
        var messageRemaining = -1
        var messageType: UInt8 = 0
        var keepsBody = false
        var messageBody: [UInt8] = []
        var accounting = Accounting()

        mutating func pushHeader(_ byte: UInt8) {
            switch headerCount {
            case 0: header.0 = byte
            case 1: header.1 = byte
            case 2: header.2 = byte
            case 3: header.3 = byte
            default: header.4 = byte
            }
            headerCount += 1
        }
    }
}
