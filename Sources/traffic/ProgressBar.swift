#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on stderr (bytes read of the file size, rate, ETA), only on a terminal.
final class ProgressBar {
    private let enabled: Bool
    private var start = timespec()
    private var lastDraw: Double = 0
    private var drawn = false

    init(enabled: Bool) {
        self.enabled = enabled
        clock_gettime(CLOCK_MONOTONIC, &start)
    }

    private func elapsed() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
    }

    func update(capture: Int, read: Int64, total: Int64?) {
        guard enabled else { return }
        let seconds = elapsed()
        // Quiet for short runs, and at most ten redraws a second.
        guard seconds > 0.5, seconds - lastDraw > 0.1 else { return }
        lastDraw = seconds
        let rate = Double(read) / seconds
        var line = "\r"
        if let total, total > 0 {
            let fraction = min(1, Double(read) / Double(total))
            let filled = Int(fraction * 30)
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled) + "] "
            line += "\(Int(fraction * 100))%  "
            let eta = rate > 0 ? Double(total - read) / rate : 0
            line += "\(Int(rate / 1_048_576)) MiB/s  ETA \(Int(eta))s   "
        } else {
            line += "\(read / 1_048_576) MiB read  \(Int(rate / 1_048_576)) MiB/s   "
        }
        _ = line.withCString { write(2, $0, strlen($0)) }
        drawn = true
    }

    func clear() {
        guard drawn else { return }
        let blank = "\r" + String(repeating: " ", count: 70) + "\r"
        _ = blank.withCString { write(2, $0, strlen($0)) }
        drawn = false
    }
}
