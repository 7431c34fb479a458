#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with its condition variable (what `NSCondition` is), so that the analysis does not
/// load Foundation: about 10 MiB of resident memory for two primitives.
final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Releases the lock while waiting; holds it again on return (spurious wake-ups: wait in a loop).
    func wait() { pthread_cond_wait(condition, mutex) }
    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
}

/// An OS thread running `body` with an 8 MiB stack (deep protocol code, like a main thread); `join` waits for it.
final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    /// Dropped once it has run: it usually captures the object that owns this thread.
    private var body: (() -> Void)?

    init(_ body: @escaping () -> Void) { self.body = body }

    func start() {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 8 << 20)
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, &attributes, { context in
            let worker = Unmanaged<WorkerThread>.fromOpaque(context!).takeRetainedValue()
            worker.body?()
            worker.body = nil
            return nil
        }, context)
        precondition(result == 0, "pthread_create failed: \(result)")
    }

    func join() { pthread_join(thread, nil) }
}
