import TrafficConcurrency

/// Shared by the readers of one list of runs (it may be read on another thread than the caller's).
package final class SpoolReadStatus: Sendable {
    package let failure = LockedValue<String?>(nil)

    package init() {}

    package func fail(_ reason: String) {
        failure.withLock { if $0 == nil { $0 = reason } }
    }
}
