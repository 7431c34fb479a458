import TrafficAggregation
import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficHTTP2
import TrafficQUIC
import TrafficReassembly
import TrafficSessions
import TrafficTLS
import TrafficWire
import TrafficConcurrency

/// Runs the whole pipeline over captures: capture → packets → TCP streams → HTTP records → report.
public enum TrafficAnalyzer {
    /// Analyses `paths` in order into one combined report. Throws the first capture that cannot be
    /// read at all; damage part-way through a capture becomes a warning and the rest is still reported.
    public static func analyze(
        paths: [String], options: ReportOptions, progress: ((Int, Int64, Int64?) -> Void)? = nil
    ) throws(CaptureError) -> TrafficReport {
        let builder = ReportBuilder(options: options, capturePaths: paths)
        var captures: [CaptureSummary] = []
        var anomalies: [String: Int] = [:]
        var warnings: [AnalysisWarning] = []
        var analysisOptions = options.analysis
        analysisOptions.keepConnections = false
        // Frames without new stream bytes matter only to packet-overhead attribution (SessionRecords' ledger).
        analysisOptions.reassemblyLimits.packetEvents = options.overhead.contains(.packets)
        // Grouping by connection needs the final numbers while grouping: that stays on one thread.
        let jobs = options.groupBy.contains(.connection) ? 1 : max(1, options.jobs)
        let decryption = try decryptionContexts(paths: paths, keyLogPaths: options.analysis.keyLogPaths, warnings: &warnings)
        // Many captures use every core twice over: captures run side by side, each sharded over the jobs left to it
        // (as many at a time as there are jobs, one job each, once there are more captures than jobs).
        let concurrent = min(jobs, paths.count)
        if concurrent <= 1 {
            let scratch = DecodingScratch()
            for (index, path) in paths.enumerated() {
                let report = progress.map { report in { (read: Int64, total: Int64?) in report(index, read, total) } }
                let analysis = try analyzeCapture(
                    path: path, capture: index, jobs: jobs, builder: builder, scratch: scratch, options: options,
                    analysisOptions: analysisOptions, decryption: decryption[index], progress: report)
                captures.append(analysis.summary)
                anomalies.merge(analysis.anomalies, uniquingKeysWith: +)
                warnings += analysis.warnings
            }
        } else {
            let results = try analyzeConcurrently(
                paths: paths, concurrent: concurrent, jobs: max(1, jobs / concurrent), options: options,
                analysisOptions: analysisOptions, decryption: decryption, capturePaths: builder.capturePaths,
                progress: progress)
            // Merged in capture order: groups, summary and records as a run over the captures one by one.
            for (index, result) in results.enumerated() {
                builder.merge(result.builder, capture: index, renumber: [])
                captures.append(result.analysis.summary)
                anomalies.merge(result.analysis.anomalies, uniquingKeysWith: +)
                warnings += result.analysis.warnings
            }
        }
        if builder.summary.tlsFailedRecords > 0 {
            let n = builder.summary.tlsFailedRecords
            warnings.append(AnalysisWarning(
                capture: paths.count == 1 ? paths[0] : "captures",
                message: "\(plural(n, "TLS record")) of decrypted connections did not verify (a secret for one "
                    + "direction or key epoch is wrong or missing); \(n == 1 ? "its" : "their") plaintext counts as missing"))
        }
        let unreadable = builder.summary.tlsUndecryptedBytes
        if unreadable > 0 {
            warnings.append(AnalysisWarning(
                capture: paths.count == 1 ? paths[0] : "captures",
                message: "\(plural(unreadable, "byte")) of decrypted TLS connections could not be read (records cut by "
                    + "a gap or by the capture's end, rejected early data, records that did not verify): in no "
                    + "record"))
        }
        if builder.summary.decodeErrors > 0 {
            warnings.append(AnalysisWarning(
                capture: paths.count == 1 ? paths[0] : "captures",
                message: "\(builder.summary.decodeErrors) \(builder.summary.decodeErrors == 1 ? "body" : "bodies") could not be "
                    + "content-decoded (corrupt, cut by a gap, or over the decoding cap); decoded size unknown"))
        }
        return builder.build(captures: captures, anomalies: anomalies, warnings: warnings)
    }

    /// One capture into `builder`: read, reassembled (sharded over `jobs`), its QUIC connections, and its totals added
    /// to the builder's summary.
    private static func analyzeCapture(
        path: String, capture index: Int, jobs: Int, builder: ReportBuilder, scratch: DecodingScratch,
        options: ReportOptions, analysisOptions: AnalysisOptions, decryption: TLSDecryptionContext?,
        progress report: ((Int64, Int64?) -> Void)?
    ) throws(CaptureError) -> CaptureAnalysis {
        // QUIC runs on the reading thread: a datagram's connection is found by IDs that any path may carry.
        let quic = quicTable(capture: index, builder: builder, scratch: scratch, options: options, decryption: decryption)
        // With more than one job QUIC gets a thread of its own (the main builder is touched by no shard while the
        // capture is read); with one it runs on the reading thread.
        let worker = jobs > 1 ? QUICWorker(table: quic) : nil
        let datagrams = { (d: UDPDatagram, time: CaptureTime, packet: Int) in
            worker?.take(d, time: time, packetIndex: packet) ?? quic.process(d, time: time, packetIndex: packet)
        }
        var analysis: CaptureAnalysis
        if jobs == 1 {
            let reassembler = TCPReassembler(
                limits: analysisOptions.reassemblyLimits,
                makeHandler: handlerFactory(
                    capture: index, builder: builder, scratch: scratch, options: options, decryption: decryption),
                connectionEnded: { _ in })
            analysis = try CaptureAnalysis.read(
                path: path, options: analysisOptions, into: LocalSegmentSink(reassembler), progress: report,
                datagrams: datagrams)
        } else {
            analysis = try analyzeSharded(
                path: path, capture: index, jobs: jobs, builder: builder, options: options, decryption: decryption,
                analysisOptions: analysisOptions, progress: report, datagrams: datagrams)
        }
        worker?.finish()
        quic.finish()
        // Datagrams of connections no packet proved QUIC are other UDP after all, and so are those the worker
        // found not to be QUIC (taken on trust while reading).
        let notQUIC = quic.unconfirmedDatagrams + (worker?.rejectedDatagrams ?? 0)
        let notQUICBytes = quic.unconfirmedFrameBytes + (worker?.rejectedFrameBytes ?? 0)
        analysis.summary.quicDatagrams -= notQUIC
        analysis.summary.quicFrameBytes -= notQUICBytes
        analysis.summary.nonTCPPackets += notQUIC
        analysis.summary.nonTCPFrameBytes += notQUICBytes
        let s = analysis.summary
        builder.summary.captures += 1
        builder.summary.packets += s.packets
        builder.summary.bytes += s.frameBytes
        builder.summary.durationNanoseconds = CaptureTime(nanoseconds: builder.summary.durationNanoseconds).adding(s.duration).nanoseconds
        builder.summary.connections += analysis.connectionCount
        builder.summary.nonTCPPackets += s.nonTCPPackets + s.undecodedPackets
        builder.summary.otherProtocolPackets += s.nonTCPPackets
        builder.summary.captureFrameBytes += s.frameBytes
        builder.summary.nonTCPFrameBytes += s.nonTCPFrameBytes + s.undecodedFrameBytes
        return analysis
    }

    /// Captures side by side, `concurrent` at a time, each into a builder of its own; results in capture order.
    /// Throws the error of the first capture (in order) that could not be read, as a run one by one would.
    private static func analyzeConcurrently(
        paths: [String], concurrent: Int, jobs: Int, options: ReportOptions, analysisOptions: AnalysisOptions,
        decryption: [TLSDecryptionContext?], capturePaths: [String], progress: ((Int, Int64, Int64?) -> Void)?
    ) throws(CaptureError) -> [(builder: ReportBuilder, analysis: CaptureAnalysis)] {
        let work = ConcurrentCaptures(count: paths.count)
        let progressLock = LockedValue(())
        var threads: [WorkerThread] = []
        for _ in 0..<concurrent {
            let thread = WorkerThread {
                let scratch = DecodingScratch()
                while let index = work.next() {
                    let builder = ReportBuilder(options: options, capturePaths: capturePaths)
                    let report = progress.map { report in
                        { (read: Int64, total: Int64?) in progressLock.withLock { _ in report(index, read, total) } }
                    }
                    do throws(CaptureError) {
                        let analysis = try analyzeCapture(
                            path: paths[index], capture: index, jobs: jobs, builder: builder, scratch: scratch,
                            options: options, analysisOptions: analysisOptions, decryption: decryption[index], progress: report)
                        builder.flushStreamedRecords()
                        work.finish(index, .success((builder, analysis)))
                    } catch {
                        work.finish(index, .failure(error))
                    }
                }
            }
            thread.start()
            threads.append(thread)
        }
        for thread in threads { thread.join() }
        return try work.results()
    }

    /// The secrets of a run: the key log files, then every Decryption Secrets Block of the captures (all read
    /// before the first packet, so that a secret written after its connection still decrypts it); nil when
    /// there are none. Lines that do not parse are counted in one warning.
    public static func decryptionContext(
        paths: [String], keyLogPaths: [String], warnings: inout [AnalysisWarning]
    ) throws(CaptureError) -> TLSDecryptionContext? {
        let log = try keyLog(paths: paths, keyLogPaths: keyLogPaths, warnings: &warnings)
        return log.isEmpty ? nil : TLSDecryptionContext(keyLog: log)
    }

    /// The secrets of each capture: the key log files, and the capture's own Decryption Secrets Blocks. A capture's
    /// embedded secrets are its own (as in Wireshark, which reads them from the file being opened): one capture's
    /// block never decrypts another's connections, so a run over several captures reports what runs over each one
    /// would, and their reports merge into it exactly (`traffic merge`). Captures without blocks share one context.
    public static func decryptionContexts(
        paths: [String], keyLogPaths: [String], warnings: inout [AnalysisWarning]
    ) throws(CaptureError) -> [TLSDecryptionContext?] {
        let shared = try decryptionContext(paths: [], keyLogPaths: keyLogPaths, warnings: &warnings)
        var contexts: [TLSDecryptionContext?] = []
        for path in paths {
            let embedded = try CaptureSecrets.tlsKeyLogs(path: path)
            if embedded.isEmpty {
                contexts.append(shared)
                continue
            }
            // The files' lines were checked for the shared context; only the capture's own are counted here.
            var ignored: [AnalysisWarning] = []
            let log = try keyLog(paths: [], keyLogPaths: keyLogPaths, warnings: &ignored)
            let before = log.skippedLines
            for text in embedded { log.add(text) }
            if log.skippedLines > before {
                warnings.append(AnalysisWarning(
                    capture: path,
                    message: "\(plural(log.skippedLines - before, "secrets block line")) skipped: not `LABEL <client "
                        + "random> <secret>` with a known label and hex values"))
            }
            contexts.append(log.isEmpty ? nil : TLSDecryptionContext(keyLog: log))
        }
        return contexts
    }

    /// The key log files' secrets and those of the captures' secrets blocks, with warnings for lines that do not parse.
    private static func keyLog(
        paths: [String], keyLogPaths: [String], warnings: inout [AnalysisWarning]
    ) throws(CaptureError) -> TLSKeyLog {
        let log = TLSKeyLog()
        for path in keyLogPaths { try CaptureSecrets.readLines(path: path) { log.add($0) } }
        for path in paths {
            for text in try CaptureSecrets.tlsKeyLogs(path: path) { log.add(text) }
        }
        if log.skippedLines > 0 {
            warnings.append(AnalysisWarning(
                capture: keyLogPaths.count == 1 ? keyLogPaths[0] : "key logs",
                message: "\(plural(log.skippedLines, "key log line")) skipped: not `LABEL <client random> <secret>` "
                    + "with a known label and hex values"))
        }
        if log.isEmpty && !keyLogPaths.isEmpty {
            warnings.append(AnalysisWarning(
                capture: keyLogPaths.count == 1 ? keyLogPaths[0] : "key logs", message: "no TLS secrets in the key log"))
        }
        return log
    }

    /// The QUIC connections of one capture: each ends as two `quic` records, or decrypted as HTTP/3 records.
    static func quicTable(
        capture: Int, builder: ReportBuilder, scratch: DecodingScratch, options: ReportOptions,
        decryption: TLSDecryptionContext?
    ) -> QUICConnectionTable {
        let overhead = options.overhead
        return QUICConnectionTable(
            keyLog: decryption?.keyLog,
            makeConsumer: { connection in
                QUICConnectionRecords.consumer(for: connection, capture: capture, builder: builder, scratch: scratch, options: options)
            },
            ended: { connection in
                QUICConnectionRecords.add(connection, capture: capture, builder: builder, overhead: overhead)
            })
    }

    /// What HTTP stages keep and decode, from the report's options.
    static func httpLimits(_ options: ReportOptions) -> HTTPLimits {
        HTTPLimits(
            decoding: ContentDecodingLimits(useGzipTrailer: !options.verifyDecoding),
            maxKeptHeadBytes: options.keepHeads ? 256 * 1024 : 0,
            maxKeptRequestBodyBytes: options.keepRequestBodies ? options.keptBodyLimit : 0)
    }

    /// Each connection gets a session that hands it to the TLS stage, or else to the HTTP/1 stage.
    static func handlerFactory(
        capture: Int, builder: ReportBuilder, scratch: DecodingScratch, options: ReportOptions,
        decryption: TLSDecryptionContext?
    ) -> TCPReassembler.HandlerFactory {
        // Heads are kept for HAR up to 256 KiB a message: servers refuse heads far smaller (8–64 KiB).
        let limits = httpLimits(options)
        // One pool per factory, so per shard: its parsers stay on the shard's thread.
        let pool = HTTPParserPool(scratch: scratch, limits: limits)
        let stages = TCPSession.Stages(
            [(TLSConnectionParser.detector, { info in
                TLSConnectionTap(
                    info: info, capture: capture, builder: builder, overhead: options.overhead, decryption: decryption,
                    scratch: scratch, limits: limits, pool: pool)
            }),
            (HTTP2ConnectionParser.detector, { info in
                HTTPConnectionTap(
                    info: info, capture: capture, scratch: scratch, builder: builder, overhead: options.overhead,
                    limits: limits, pool: pool, start: .http2)
            })],
            fallback: { info in
                HTTPConnectionTap(
                    info: info, capture: capture, scratch: scratch, builder: builder, overhead: options.overhead,
                    limits: limits, pool: pool)
            })
        return { info in TCPSession(info: info, stages: stages) }
    }

    /// One capture in `jobs` shards (the reading thread and `jobs − 1` workers); their groups, summaries and
    /// records are merged into `builder`.
    private static func analyzeSharded(
        path: String, capture: Int, jobs: Int, builder: ReportBuilder, options: ReportOptions,
        decryption: TLSDecryptionContext?, analysisOptions: AnalysisOptions, progress: ((Int64, Int64?) -> Void)?,
        datagrams: @escaping (UDPDatagram, CaptureTime, Int) -> Bool
    ) throws(CaptureError) -> CaptureAnalysis {
        var shards: [ReportBuilder] = []
        // Per shard, the first packet of each of its connections by local number: records are renumbered
        // into the capture's order (tshark's tcp.stream) when every shard is done.
        let firstPackets = (0..<jobs).map { _ in FirstPackets() }
        let keepNumbers = options.keepMessages
        // The memory caps hold for the run, not for each shard. The connection cap is split whole (a remainder to
        // the first shards), and new connections are placed only on shards below theirs: one reassembler evicts
        // when more than the cap are open, so the shards together do too, however unevenly load placed them.
        var limits = analysisOptions.reassemblyLimits
        let connectionCaps = (0..<jobs).map { shard in
            max(1, limits.maxConnections / jobs + (shard < limits.maxConnections % jobs ? 1 : 0))
        }
        limits.maxBufferedBytesTotal = max(1, limits.maxBufferedBytesTotal / jobs)
        // A record stream gets records as they are made, numbered across the shards while the capture is read.
        let numbering = options.recordStream.map { ShardRecordNumbering(shards: jobs, stream: $0) }
        let sink = ShardedSegmentSink(
            shards: jobs, placement: options.connectionPlacement, connectionCaps: connectionCaps,
            progress: numbering.map { n in { n.advance(shard: $0, to: $1) } }
        ) { shard, routeEnded in
            let shardBuilder = ReportBuilder(options: options, capturePaths: builder.capturePaths)
            shards.append(shardBuilder)
            let table = firstPackets[shard]
            var makeHandler = handlerFactory(
                capture: capture, builder: shardBuilder, scratch: DecodingScratch(), options: options,
                decryption: decryption)
            if let numbering {
                shardBuilder.streamedLinesSink = { numbering.records($0, shard: shard) }
                shardBuilder.spareStreamedLines = { numbering.spareLines() }
                let make = makeHandler
                makeHandler = { info in
                    numbering.connectionStarted(shard: shard, local: info.id, firstPacket: info.firstPacket)
                    return make(info)
                }
            }
            var shardLimits = limits
            shardLimits.maxConnections = connectionCaps[shard]
            return TCPReassembler(
                limits: shardLimits,
                makeHandler: makeHandler,
                connectionEnded: { ended in
                    routeEnded(ended.info)
                    if keepNumbers { table.record(ended.info.id, ended.info.firstPacket) }
                })
        }
        let analysis = try CaptureAnalysis.read(
            path: path, options: analysisOptions, into: sink, progress: progress, datagrams: datagrams)
        if let numbering {
            for shardBuilder in shards { shardBuilder.flushStreamedRecords() }
            numbering.finish()
        }
        let global = keepNumbers
            ? captureNumbers(firstPackets.map(\.byLocal))
            : firstPackets.map { [Int](repeating: 0, count: $0.byLocal.count) }
        // The largest shard first: its groups are taken over whole, the others merged into them.
        for (shard, shardBuilder) in shards.enumerated().sorted(by: { $0.element.groupCount > $1.element.groupCount }) {
            builder.merge(shardBuilder, capture: capture, renumber: global[shard])
        }
        return analysis
    }
}

/// Capture-wide connection numbers (tshark's `tcp.stream`: the rank of a connection's first packet over every
/// shard) from each shard's first packets by its own numbers. A shard numbers its connections as it reads them,
/// so each list ascends and one merge of the lists numbers them all; the list of every connection sorted, as
/// before, cost 24 bytes a connection and a sort's buffer as much again (15 MB at the end of reading an 8 GiB
/// API-dense capture with `--messages`: 310 000 connections). Lists that do not ascend are sorted as before.
func captureNumbers(_ byShard: [[Int]]) -> [[Int]] {
    var global = byShard.map { [Int](repeating: 0, count: $0.count) }
    guard byShard.allSatisfy({ list in zip(list, list.dropFirst()).allSatisfy { $0 < $1 } }) else {
        var order: [(first: Int, shard: Int, local: Int)] = []
        for (shard, list) in byShard.enumerated() {
            for (local, first) in list.enumerated() { order.append((first, shard, local)) }
        }
        // Ties (never from a capture: a packet opens one connection) in shard and local order.
        order.sort { ($0.first, $0.shard, $0.local) < ($1.first, $1.shard, $1.local) }
        for (number, entry) in order.enumerated() { global[entry.shard][entry.local] = number }
        return global
    }
    var next = byShard.map { _ in 0 }
    var number = 0
    while true {
        // Few shards (one per job): the smallest head is found by a scan.
        var best = -1
        for shard in byShard.indices where next[shard] < byShard[shard].count {
            if best < 0 || byShard[shard][next[shard]] < byShard[best][next[best]] { best = shard }
        }
        if best < 0 { return global }
        global[best][next[best]] = number
        number += 1
        next[best] += 1
    }
}

/// A shard's connections' first packets, indexed by the shard's own connection numbers.
final class FirstPackets: @unchecked Sendable {
    private(set) var byLocal: [Int] = []

    func record(_ local: Int, _ firstPacket: Int) {
        if byLocal.count <= local { byLocal += repeatElement(0, count: local + 1 - byLocal.count) }
        byLocal[local] = firstPacket
    }
}

/// The captures of a concurrent run: handed out in order, results kept by index (under one lock: a builder is
/// handed from its worker thread to the merging one only through it).
private final class ConcurrentCaptures: @unchecked Sendable {
    typealias Done = (builder: ReportBuilder, analysis: CaptureAnalysis)
    private let lock = ThreadCondition()
    private var nextIndex = 0
    private var failed = false
    private var done: [Result<Done, CaptureError>?]

    init(count: Int) { done = Array(repeating: nil, count: count) }

    /// The next capture to analyse; nil when every one is taken, or after a failure (the rest would be thrown away).
    func next() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard nextIndex < done.count, !failed else { return nil }
        nextIndex += 1
        return nextIndex - 1
    }

    func finish(_ index: Int, _ result: Result<Done, CaptureError>) {
        lock.lock()
        defer { lock.unlock() }
        done[index] = result
        if case .failure = result { failed = true }
    }

    /// Every result in order, or the first (by capture order) failure; after every worker has been joined.
    func results() throws(CaptureError) -> [Done] {
        lock.lock()
        defer { lock.unlock() }
        var values: [Done] = []
        for result in done {
            switch result {
            case let .success(value)?: values.append(value)
            case let .failure(error)?: throw error
            case nil: break
            }
        }
        return values
    }
}
