import Dispatch
import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// Sends the notices of committed groups (docs/design.md, "Across processes"), several groups to a
/// notice: a leader hands over the sessions its group changed and goes on; a queue of the
/// store's own waits ``pacing`` for more, then sends one `NOTIFY` naming them all (in as many
/// notices as PostgreSQL's 8,000-byte payload needs).
///
/// Why: a notifying transaction takes a database-wide lock until it has committed, and every
/// listener is woken for every notice. One per group cost a third of the throughput with one
/// process (BENCHMARKS.md); one per pacing interval costs a few hundred transactions a second at
/// most, and delays delivery by at most the interval (the goal is 100 ms).
final class PostgresNotifier: Sendable {
    /// How long the queue waits for more changes before it sends what it has.
    static var pacingMicroseconds: UInt32 { 5_000 }
    /// The most bytes of one payload (PostgreSQL's limit is 8,000).
    static var payloadBytes: Int { 7_900 }

    private struct State: Sendable {
        var entries: [String] = []
        var closed = false
    }

    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the queue; `send` sends one payload (on the queue's thread).
    /// - Parameter prefix: what every payload starts with (`<process tag> changes`).
    init(prefix: String, send: @escaping @Sendable (String) -> Void) {
        DispatchQueue(label: "navd.postgres.notifier").async { [state, wake, finished] in
            defer { finished.signal() }
            while true {
                wake.wait()
                usleep(Self.pacingMicroseconds)
                let (entries, closed) = state.withLock { state in
                    defer { state.entries.removeAll(keepingCapacity: true) }
                    return (state.entries, state.closed)
                }
                var payload = prefix
                for entry in entries {
                    if payload.utf8.count + entry.utf8.count > Self.payloadBytes {
                        send(payload)
                        payload = prefix
                    }
                    payload += entry
                }
                if payload.utf8.count > prefix.utf8.count { send(payload) }
                if closed { return }
            }
        }
    }

    /// Queues notices about changed sessions (`" <id>:<last seq>"` each).
    func post(_ entries: [String]) {
        guard !entries.isEmpty else { return }
        let first = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            let first = state.entries.isEmpty
            state.entries += entries
            return first
        }
        // The queue is woken once per batch: later entries find it awake and wait their turn.
        if first { wake.signal() }
    }

    /// Sends what is queued and stops (waiting up to a second for it).
    func close() {
        state.withLock { $0.closed = true }
        wake.signal()
        _ = finished.wait(timeout: .now() + .seconds(1))
    }
}
