import Synchronization

/// A `Mutex` in a class, so that many of them can sit in an array (a `Mutex` cannot be copied).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in try body(&value) }
    }
}

/// Whether the daemon takes new work; false once shutdown has begun.
final class Readiness: Sendable {
    private let flag = Atomic<Bool>(true)

    var isReady: Bool { flag.load(ordering: .relaxed) }

    func drain() {
        flag.store(false, ordering: .relaxed)
    }
}
