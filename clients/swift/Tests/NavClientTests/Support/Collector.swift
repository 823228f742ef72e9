import Foundation
import NavClient
import Synchronization
import Testing

/// Reads an ``EventStream`` in a task of its own and keeps what it read, so a test can wait for
/// a message with a deadline instead of hanging on a stream that never delivers it.
final class Collector: Sendable {
    private struct State {
        var messages: [EventStream.Message] = []
        var finished = false
        var error: (any Error)?
    }

    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: EventStream) {
        let reader = Task { [weak self] in
            do {
                for try await message in stream {
                    self?.state.withLock { $0.messages.append(message) }
                }
                self?.state.withLock { $0.finished = true }
            } catch {
                self?.state.withLock {
                    $0.error = error
                    $0.finished = true
                }
            }
        }
        task.withLock { $0 = reader }
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    var messages: [EventStream.Message] { state.withLock { $0.messages } }
    var finished: Bool { state.withLock { $0.finished } }
    /// What the stream threw (a NavClientError; anything else is recorded as an issue).
    var error: NavClientError? {
        guard let error = state.withLock({ $0.error }) else { return nil }
        guard let error = error as? NavClientError else {
            Issue.record("the stream threw something other than a NavClientError: \(error)")
            return nil
        }
        return error
    }

    /// The lifecycle events read so far.
    var events: [LifecycleEvent] {
        messages.compactMap { if case .lifecycle(let event) = $0 { event } else { nil } }
    }

    /// The views read so far.
    var views: [SessionView] {
        messages.compactMap { if case .view(let view) = $0 { view } else { nil } }
    }

    /// Waits until `condition` holds of what was read, or the stream ends, or `seconds` pass.
    /// - Returns: whether it holds.
    @discardableResult
    func wait(seconds: Double = 10, until condition: (Collector) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            if finished { return condition(self) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(self)
    }

    /// Waits for a view of at least `version`.
    func waitForView(_ version: Int, seconds: Double = 10) async -> Bool {
        await wait(seconds: seconds) { $0.views.contains { $0.version >= version } }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }
}

/// The problem a call was refused with, or nil when it was not refused (or failed otherwise).
/// (Closures are not inferred to throw a typed error, so `call` throws any error; NavClient's
/// calls throw only ``NavClientError``.)
func refusal<T>(_ call: () async throws -> T) async -> NavProblem? {
    do {
        _ = try await call()
        return nil
    } catch let error as NavClientError {
        return error.problem
    } catch {
        Issue.record("not a NavClientError: \(error)")
        return nil
    }
}
