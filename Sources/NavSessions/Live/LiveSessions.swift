import Dispatch
import NavCore
import Synchronization

/// Why a session's watchers are let go (docs/design.md, "Event stream": the `end` message's `reason`).
package enum EndReason: String, Sendable {
    case deleted, expired, lagging, shutdown
}

/// Why a watcher was not added (docs/design.md, "Watchers").
package enum WatchRefusal: Error, Sendable, Equatable {
    /// The session has as many watchers as one session may (`--max-watchers-per-session`).
    case sessionFull(limit: Int)
    /// The daemon has as many watchers as it may (half of `--max-connections`).
    case daemonFull(limit: Int)
    /// The daemon is stopping: its watchers have been ended.
    case shuttingDown
}

/// One applied change, as the session's watchers receive it: published by the process that
/// applied it, right after it was stored and in the order its session's changes were applied.
package struct LiveChange: Sendable {
    package var session: StoredSession
    package var events: [LifecycleEvent]
    /// The first and last `seq` of `events`.
    package var seqs: ClosedRange<Int>
    /// The change as server-sent-event messages, written once for every watcher: one `lifecycle`
    /// message per event, then the session's `view`.
    package var messages: [UInt8]
}

/// Someone following a session: an event stream, a long poll.
///
/// Called on the thread that applied a change (``receive(_:)``: never wait or do I/O there, it
/// holds up the writer), or on the live queue (everything else).
package protocol SessionWatcher: AnyObject, Sendable {
    /// A change applied in this process.
    func receive(_ change: LiveChange)
    /// The session may have changed where this process did not see it (another navd on the same
    /// PostgreSQL): look in the store.
    func refresh()
    /// The session is gone or the daemon stops: the watcher is already let go.
    func end(_ reason: EndReason)
    /// A heartbeat: a stream writes its `: ping` comment.
    func ping()
}

/// The watchers of every session this process serves, and the changes published to them
/// (docs/design.md, "Live sessions").
///
/// A change reaches the watchers of its session from the thread that applied it, while the
/// session's mutations are still serialised, so watchers in this process see one session's
/// changes in order. What they may have missed — a change applied before they were added, or by
/// another process — they read from the store themselves, on ``queue``.
package final class LiveSessions: Sendable {
    private struct Watchers {
        var bySession: [String: [any SessionWatcher]] = [:]
        /// Set by ``endAll(_:)``: no watcher is added any more.
        var closed = false
    }

    private let watchers = Mutex(Watchers())
    /// Watchers in all: a publish with nobody watching is one atomic load.
    private let watching = Atomic<Int>(0)
    /// Where watchers read the store and where heartbeats run: never a writer's thread.
    package let queue = DispatchQueue(label: "navd.live", attributes: .concurrent)
    private let heartbeat: Mutex<Heartbeat?> = Mutex(nil)
    /// Messages written to watchers (`view`, `lifecycle`, `end`; not heartbeats), for `/metrics`.
    package let messagesSent = Atomic<Int>(0)
    /// Watchers dropped for not keeping up.
    package let watchersDropped = Atomic<Int>(0)
    /// Heartbeat timer ticks so far: which slice of the watchers is pinged next.
    private let heartbeatTicks = Atomic<Int>(0)
    /// Seconds between a stream's heartbeats, rounded up, while they run (0 when they do not):
    /// what a new stream announces first, so that its client knows how long a silence may last.
    private let heartbeatInterval = Atomic<Int>(0)

    /// The seconds a new stream announces in its `: heartbeat` comment; nil when no heartbeat runs.
    package var heartbeatSeconds: Int? {
        let seconds = heartbeatInterval.load(ordering: .relaxed)
        return seconds > 0 ? seconds : nil
    }

    /// A timer source, used only under `heartbeat`'s mutex (Dispatch's sources are thread-safe).
    private struct Heartbeat: @unchecked Sendable {
        let timer: any DispatchSourceTimer
    }

    /// The most watchers one session may have at once.
    package let maxPerSession: Int
    /// Every watcher of the daemon holds one unit (and a connection) while it is added.
    package let budget: Budget

    /// - Parameters:
    ///   - maxPerSession: the most watchers of one session (`--max-watchers-per-session`).
    ///   - budget: the daemon-wide bound on watchers (resource `watchers`).
    package init(maxPerSession: Int = 16, budget: Budget = Budget(resource: "watchers", limit: Int.max)) {
        self.maxPerSession = max(1, maxPerSession)
        self.budget = budget
    }

    /// How many watchers are connected.
    package var count: Int { watching.load(ordering: .relaxed) }

    /// Runs `work` on ``queue``, after `delay` seconds when above 0: a watcher's reads of the
    /// store, never on a writer's thread.
    package func run(after delay: Double = 0, _ work: @escaping @Sendable () -> Void) {
        if delay > 0 {
            queue.asyncAfter(deadline: .now() + delay, execute: work)
        } else {
            queue.async(execute: work)
        }
    }

    /// Whether anyone in this process watches session `id`.
    package func isWatched(_ id: String) -> Bool {
        guard watching.load(ordering: .relaxed) > 0 else { return false }
        return watchers.withLock { $0.bySession[id] != nil }
    }

    /// Adds a watcher of session `id`, within the session's and the daemon's bounds: `limit` for
    /// a key that is not a session's (the feed's watchers), else ``maxPerSession``.
    /// - Throws: ``WatchRefusal`` when a bound is reached or the daemon is stopping; nothing is added.
    package func add(_ watcher: any SessionWatcher, to id: String, limit: Int? = nil) throws(WatchRefusal) {
        let most = limit ?? maxPerSession
        let refusal = watchers.withLock { state -> WatchRefusal? in
            if state.closed { return .shuttingDown }
            let list = state.bySession[id]
            if let list, list.count >= most { return .sessionFull(limit: most) }
            guard budget.acquire(1) else { return .daemonFull(limit: budget.limit) }
            state.bySession[id, default: []].append(watcher)
            return nil
        }
        if let refusal { throw refusal }
        watching.add(1, ordering: .relaxed)
    }

    /// Lets `watcher` go; nothing is sent to it afterwards. Removing one twice is harmless.
    package func remove(_ watcher: any SessionWatcher, from id: String) {
        let removed = watchers.withLock { state -> Bool in
            guard var list = state.bySession[id], let index = list.firstIndex(where: { $0 === watcher }) else { return false }
            list.remove(at: index)
            state.bySession[id] = list.isEmpty ? nil : list
            return true
        }
        if removed {
            watching.subtract(1, ordering: .relaxed)
            budget.release(1)
        }
    }

    /// Hands a change to the session's watchers; `change` is only made when there are some.
    package func publish(_ id: String, _ change: () -> LiveChange) {
        let list = watchers(of: id)
        guard !list.isEmpty else { return }
        let made = change()
        for watcher in list { watcher.receive(made) }
    }

    /// Tells the session's watchers to look in the store (a change seen by another process).
    package func refresh(_ id: String) {
        for watcher in watchers(of: id) { watcher.refresh() }
    }

    /// Tells every watcher to look in the store (notices from other processes may have been missed).
    package func refreshAll() {
        let all = watchers.withLock { $0.bySession.values.flatMap { $0 } }
        for watcher in all { watcher.refresh() }
    }

    /// Ends the session's watchers: it was deleted or it expired.
    package func end(_ id: String, _ reason: EndReason) {
        let list = watchers.withLock { state -> [any SessionWatcher] in
            state.bySession.removeValue(forKey: id) ?? []
        }
        watching.subtract(list.count, ordering: .relaxed)
        budget.release(list.count)
        for watcher in list { watcher.end(reason) }
    }

    /// Ends every watcher: the daemon is stopping. With `.shutdown`, no watcher is added
    /// afterwards (``add(_:to:)`` refuses with ``WatchRefusal/shuttingDown``).
    package func endAll(_ reason: EndReason) {
        let all = watchers.withLock { state -> [any SessionWatcher] in
            let all = state.bySession.values.flatMap { $0 }
            state.bySession = [:]
            if reason == .shutdown { state.closed = true }
            return all
        }
        watching.subtract(all.count, ordering: .relaxed)
        budget.release(all.count)
        for watcher in all { watcher.end(reason) }
    }

    /// Pings every watcher each `seconds`, so a client that went away is noticed and proxies keep
    /// the connection (docs/design.md, "Event stream").
    ///
    /// A slice of the watchers at a time (``heartbeatSlices`` per interval, each watcher always in
    /// the same one), never all at once: a ping resumes its stream's connection, and 10,000
    /// resumed together filled the HTTP server's poll sets for tens of milliseconds, holding up
    /// every answer and every change's delivery meanwhile (BENCHMARKS.md, "Live sessions").
    package func startHeartbeat(every seconds: Double) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let slices = Self.heartbeatSlices
        let interval = DispatchTimeInterval.milliseconds(max(1, Int(seconds * 1000) / slices))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let slice = self.heartbeatTicks.add(1, ordering: .relaxed).newValue % slices
            let due = self.watchers.withLock { state -> [any SessionWatcher] in
                var due: [any SessionWatcher] = []
                for list in state.bySession.values {
                    for watcher in list where Self.heartbeatSlice(of: watcher) == slice { due.append(watcher) }
                }
                return due
            }
            for watcher in due { watcher.ping() }
        }
        timer.resume()
        let previous = heartbeat.withLock { state in
            defer { state = Heartbeat(timer: timer) }
            return state
        }
        previous?.timer.cancel()
        heartbeatInterval.store(max(1, Int(seconds.rounded(.up))), ordering: .relaxed)
    }

    /// Heartbeat slices per interval: 10,000 watchers at the default 15 s are pinged 625 at a time,
    /// about every second.
    static let heartbeatSlices = 16

    /// The heartbeat slice `watcher` is pinged in: its address, mixed (Fibonacci hashing), so that
    /// objects allocated side by side land in different slices.
    static func heartbeatSlice(of watcher: any SessionWatcher) -> Int {
        let address = UInt(bitPattern: ObjectIdentifier(watcher))
        return Int((address &* 0x9E37_79B9_7F4A_7C15) >> 60) % heartbeatSlices
    }

    package func stopHeartbeat() {
        heartbeatInterval.store(0, ordering: .relaxed)
        let previous = heartbeat.withLock { state in
            defer { state = nil }
            return state
        }
        previous?.timer.cancel()
    }

    private func watchers(of id: String) -> [any SessionWatcher] {
        guard watching.load(ordering: .relaxed) > 0 else { return [] }
        return watchers.withLock { $0.bySession[id] ?? [] }
    }
}
