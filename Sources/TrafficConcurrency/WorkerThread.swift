#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An OS thread running `body` with an 8 MiB stack (deep protocol code, like a main thread); `join` waits for it.
package final class WorkerThread: @unchecked Sendable {
    #if canImport(Glibc)
    private var thread = pthread_t()
    #else
    private var thread: pthread_t?  // an optional pointer on Darwin
    #endif
    /// Dropped once it has run: it usually captures the object that owns this thread.
    private var body: (() -> Void)?

    package init(_ body: @escaping () -> Void) { self.body = body }

    package func start() {
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

    package func join() {
        #if canImport(Glibc)
        pthread_join(thread, nil)
        #else
        if let thread { pthread_join(thread, nil) }
        #endif
    }
}
