import TrafficCapture
import TrafficCodecs
import TrafficHTTP
import TrafficReassembly

/// Runs the whole pipeline over captures: capture → packets → TCP streams → HTTP records → report.
public enum TrafficAnalyzer {
    /// Analyses `paths` in order into one combined report. Throws the first capture that cannot be
    /// read at all; damage part-way through a capture becomes a warning and the rest is still reported.
    public static func analyze(
        paths: [String], options: ReportOptions, progress: ((Int, Int64, Int64?) -> Void)? = nil
    ) throws(CaptureError) -> TrafficReport {
        let builder = ReportBuilder(options: options, capturePaths: paths)
        let scratch = DecodingScratch()
        let limits = HTTPLimits(decoding: ContentDecodingLimits(useGzipTrailer: !options.verifyDecoding))
        var captures: [CaptureSummary] = []
        var anomalies: [String: Int] = [:]
        var warnings: [AnalysisWarning] = []
        var analysisOptions = options.analysis
        analysisOptions.keepConnections = false
        for (index, path) in paths.enumerated() {
            let analysis = try CaptureAnalysis.run(
                path: path, options: analysisOptions,
                makeHandler: { info in
                    ProtocolSniffer(
                        makeHTTP: {
                            HTTPConnectionTap(
                                info: info, capture: index, scratch: scratch, builder: builder,
                                overhead: options.overhead, limits: limits)
                        },
                        makeTLS: { TLSConnectionTap(info: info, capture: index, builder: builder, overhead: options.overhead) })
                },
                progress: progress.map { report in { report(index, $0, $1) } })
            captures.append(analysis.summary)
            anomalies.merge(analysis.anomalies, uniquingKeysWith: +)
            warnings += analysis.warnings
            let s = analysis.summary
            builder.summary.captures += 1
            builder.summary.packets += s.packets
            builder.summary.bytes += s.frameBytes
            builder.summary.durationNanoseconds += s.duration.nanoseconds
            builder.summary.connections += analysis.connectionCount
            builder.summary.nonTCPPackets += s.nonTCPPackets + s.undecodedPackets
            builder.summary.captureFrameBytes += s.frameBytes
            builder.summary.nonTCPFrameBytes += s.nonTCPFrameBytes + s.undecodedFrameBytes
        }
        if builder.summary.decodeErrors > 0 {
            warnings.append(AnalysisWarning(
                capture: paths.count == 1 ? paths[0] : "captures",
                message: "\(builder.summary.decodeErrors) bodies could not be content-decoded; their decoded size is unknown"))
        }
        return builder.build(captures: captures, anomalies: anomalies, warnings: warnings)
    }
}
