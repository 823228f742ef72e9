import Dispatch
import NavSessions
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Group commit across sessions (docs/design.md, "PostgreSQL"): changes that wait for a connection are committed
/// together, by one connection in one transaction, so one WAL flush answers many requests.
///
/// No thread of its own: the thread whose change finds fewer than `leaders` groups in flight
/// leads one — it takes every change waiting (at most ``maxGroup``), and, unless it is alone,
/// those that arrive in the next ``gatherMicroseconds``; commits them with `run`,
/// and tells each its outcome. Changes that arrive meanwhile wait; when a group is done, its
/// leader hands the lead to the oldest waiting change, whose thread commits the next group
/// (its own change first) while the old leader answers its request. So at most `leaders`
/// connections commit at once, and a change waits for at most one group before its own.
///
/// `run` gets the writes in order and returns one outcome each; each write is still a
/// compare-and-set on its own row, so a lost race in a group costs only its own write.
final class PostgresGroupCommit<Write: Sendable, Outcome: Sendable>: Sendable {
    /// The most changes in one transaction: bounds the pipeline's bytes and the notice's size.
    static var maxGroup: Int { 64 }

    /// How long a leader lets more changes join before it commits, when it is not alone: when
    /// its group already holds others, or another group is committing. Part of a change's cost
    /// to PostgreSQL is its transaction's (the commit, the WAL flush), and with 32 connections
    /// and 4 leaders groups held 2.4 changes: waiting 300 µs made them about 3.5 and cut the
    /// machine's CPU per navigation by a tenth (BENCHMARKS.md). A lone change (an idle daemon)
    /// does not wait.
    static var gatherMicroseconds: UInt32 { 300 }

    /// One waiting change. `outcome` and `group` are written by one thread before it signals
    /// `done` and read by the change's own thread after it waited: the semaphore orders them.
    private final class Ticket: @unchecked Sendable {
        let write: Write
        let done = DispatchSemaphore(value: 0)
        var outcome: Outcome?
        /// Set instead of `outcome` when the lead is handed to this change: the group to commit.
        var group: [Ticket] = []

        init(_ write: Write) {
            self.write = write
        }
    }

    private struct State {
        var waiting: [Ticket] = []
        var leading = 0

        /// The oldest waiting changes, at most `count`.
        mutating func take(_ count: Int) -> [Ticket] {
            let taken = Array(waiting.prefix(count))
            waiting.removeFirst(taken.count)
            return taken
        }
    }

    private let state = Mutex(State())
    private let leaders: Int
    /// Groups committed and the changes in them (their ratio is the mean group size), for `/metrics`.
    let groups = Atomic<Int>(0)
    let changes = Atomic<Int>(0)

    /// - Parameter leaders: how many groups may commit at once (the pool's connections).
    init(leaders: Int) {
        self.leaders = max(1, leaders)
    }

    /// Commits `write` in a group and returns its outcome, once its group has committed.
    /// - Parameters:
    ///   - run: commits a group and returns each write's outcome, in order (every caller passes
    ///     the same: whichever leads runs it).
    ///   - then: what the leader does once the group's changes have their outcomes and the lead
    ///     has passed on (the group's notice), before its own change is answered.
    func commit(_ write: Write, run: ([Write]) -> [Outcome], then: ([Write], [Outcome]) -> Void = { _, _ in }) -> Outcome {
        let ticket = Ticket(write)
        var group = state.withLock { state -> [Ticket] in
            guard state.leading < leaders else {
                state.waiting.append(ticket)
                return []
            }
            state.leading += 1
            return [ticket] + state.take(Self.maxGroup - 1)
        }
        if group.isEmpty {
            ticket.done.wait()
            if let outcome = ticket.outcome { return outcome }
            group = ticket.group
        }
        if group.count > 1 || state.withLock({ $0.leading }) > 1 {
            usleep(Self.gatherMicroseconds)
            group += state.withLock { $0.take(Self.maxGroup - group.count) }
        }
        let outcomes = run(group.map(\.write))
        groups.wrappingAdd(1, ordering: .relaxed)
        changes.wrappingAdd(group.count, ordering: .relaxed)
        for (other, outcome) in zip(group, outcomes).dropFirst() {
            other.outcome = outcome
            other.done.signal()
        }
        let next = state.withLock { state -> (Ticket, [Ticket])? in
            guard !state.waiting.isEmpty else {
                state.leading -= 1
                return nil
            }
            let next = state.waiting.removeFirst()
            return (next, [next] + state.take(Self.maxGroup - 1))
        }
        if let (ticket, group) = next {
            ticket.group = group
            ticket.done.signal()
        }
        then(group.map(\.write), outcomes)
        // The leader's own change is always first in its group.
        return outcomes[0]
    }
}
