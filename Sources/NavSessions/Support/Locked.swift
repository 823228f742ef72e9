import Synchronization

/// A `Mutex` in a class, so that many of them can sit in an array (a `Mutex` cannot be copied).
package final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    package init(_ value: Value) {
        mutex = Mutex(value)
    }

    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in try body(&value) }
    }
}
