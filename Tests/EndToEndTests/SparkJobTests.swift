import Foundation
import Testing

/// The Spark recipe of issue 27 (scripts/spark/traffic_job.py), run by its own test script with the built binary:
/// unit tests of the reduction, then the job under spark-submit in local mode compared byte for byte with
/// `traffic merge` of the per-capture reports. Without Java, pyspark (`make spark-deps`) or `traffic merge`, the
/// script prints `SKIP: <reason>` and exits 0; the reason is printed here so that it shows in the test output.
@Suite struct SparkJobTests {
    @Test func sparkJobEqualsMergeOfPerCaptureReports() throws {
        let (status, output) = try Harness.runPython(
            "scripts/spark/test_traffic_job.py", ["--traffic", Harness.binary.path])
        let lines = output.split(separator: "\n")
        for line in lines where line.hasPrefix("SKIP:") { print("SparkJobTests: \(line)") }
        let failures = lines.filter { $0.hasPrefix("FAIL") }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(status == 0, "test_traffic_job.py exited \(status):\n\(output)")
        if !lines.contains(where: { $0.hasPrefix("SKIP:") }) {
            // The Spark run happened: its timings are worth seeing in the test log.
            for line in lines where line.hasPrefix("ok spark-submit") || line.hasPrefix("ok Spark job") {
                print("SparkJobTests: \(line)")
            }
        }
    }
}
