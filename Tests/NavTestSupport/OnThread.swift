import Foundation
import NavSessions

/// A blocking call run on a thread of its own, its result taken later: a request that waits for
/// something the test does meanwhile (a long poll answered by a change).
///
/// Not `async let`: its child task needs one of the concurrency pool's threads, which are as many
/// as the cores; on two cores two blocking tests elsewhere hold both, and the child does not start
/// — or the parent does not wake from its sleep — until one of them returns (a CI run's long poll
/// timed out that way while a daemon took 10 s to stop in another suite).
final class OnThread<Value: Sendable>: Sendable {
    private let outcome = Locked<Result<Value, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> Value) {
        let (outcome, finished) = (outcome, finished)
        Thread {
            let result = Result(catching: body)
            outcome.withLock { $0 = result }
            finished.signal()
        }.start()
    }

    /// Waits for the call to return. - Returns: its value. - Throws: its error.
    func value() throws -> Value {
        finished.wait()
        finished.signal()
        guard let result = outcome.withLock({ $0 }) else { throw CancellationError() }
        return try result.get()
    }
}
