import Synchronization

/// The bytes of answers kept under an `Idempotency-Key`, per session and in all, wherever they
/// are held (the store's table and log, the daemon's memory of answers): see `docs/design.md`,
/// "Idempotency answers".
///
/// A keyed change must make room for its answer before it is applied: the oldest answers of its
/// own session are forgotten first, then (when the daemon's budget is full) the oldest of any
/// session. An answer younger than ``protection`` is never forgotten: a client that retries
/// within that time must get its first answer, so making room that way is refused instead, and
/// the refused request changes nothing. Only keyed requests come here: unkeyed ones pay nothing.
///
/// One mutex over plain dictionaries: a keyed request takes it twice at most (its admission and,
/// if its write fails, its removal), never while waiting for the store.
package final class KeptAnswerLedger: Sendable {
    /// Why an answer cannot be kept now, and in how many milliseconds the answer that stands in
    /// its way is old enough to be forgotten.
    package enum Refusal: Error, Sendable {
        /// The session's own answers fill its budget and the oldest is younger than ``protection``.
        case session(retryAfterMilliseconds: Int64)
        /// The daemon's budget is full and its oldest answer is younger than ``protection``.
        case daemon(retryAfterMilliseconds: Int64)
    }

    /// One kept answer as the ledger counts it: its key, session, cost and when it was given.
    package typealias Entry = KeptAnswerSize

    /// The most bytes one session's answers may take (the newest alone may take more).
    package let perSession: Int
    /// The daemon-wide bound, `idempotency_bytes` at `/metrics`.
    package let budget: Budget
    /// How long an answer is kept whatever the budgets say (ms): a retry comes within seconds.
    package let protection: Int64
    private let evictions = Atomic<Int>(0)
    private let state = Mutex(State())
    private let forgottenHandler = Mutex<(@Sendable ([String]) -> Void)?>(nil)

    package init(perSession: Int, budget: Budget, protection: Int64 = 60_000) {
        self.perSession = max(0, perSession)
        self.budget = budget
        self.protection = max(0, protection)
    }

    /// Answers forgotten to make room so far (`navd_idempotency_evicted_total`).
    package var evicted: Int { evictions.load(ordering: .relaxed) }

    /// What all kept answers take now.
    package var bytes: Int { state.withLock { $0.bytes } }

    /// What session `id`'s kept answers take now.
    package func bytes(of id: String) -> Int {
        state.withLock { $0.sessions[id]?.bytes ?? 0 }
    }

    /// Whether an answer is counted under `key`.
    package func holds(_ key: String) -> Bool {
        state.withLock { $0.entries[key] != nil }
    }

    /// Sets who is told of keys forgotten here (the daemon's memory of answers drops them too).
    package func onForgotten(_ handler: @escaping @Sendable ([String]) -> Void) {
        forgottenHandler.withLock { $0 = handler }
    }

    private func tell(_ keys: [String]) {
        guard !keys.isEmpty, let handler = forgottenHandler.withLock({ $0 }) else { return }
        handler(keys)
    }

    /// Counts `entry`, first forgetting the oldest answers in its way: its session's while they
    /// take more than ``perSession`` with it, then anyone's while all take more than the budget.
    /// Nothing is forgotten and nothing counted when it is refused.
    /// - Returns: the keys forgotten, which the caller deletes from the store.
    package func admit(_ entry: Entry, now: Int64) throws(Refusal) -> [String] {
        let forgotten = try state.withLock { state throws(Refusal) -> [String] in
            let replaced = state.entries[entry.key]
            var plan: [String] = []
            var planned = 0
            var sessionBytes = (state.sessions[entry.session]?.bytes ?? 0) - (replaced?.session == entry.session ? replaced?.cost ?? 0 : 0)
            if let queue = state.sessions[entry.session] {
                var index = queue.head
                while sessionBytes + entry.cost > perSession, index < queue.items.count {
                    let item = queue.items[index]
                    index += 1
                    guard item.key != entry.key, let held = state.entries[item.key], held.seq == item.seq else { continue }
                    guard now - held.givenAt >= protection else {
                        throw .session(retryAfterMilliseconds: held.givenAt + protection - now)
                    }
                    plan.append(item.key)
                    planned += held.cost
                    sessionBytes -= held.cost
                }
            }
            var total = state.bytes - planned - (replaced?.cost ?? 0)
            if total + entry.cost > budget.limit {
                let skip = Set(plan)
                var index = state.order.head
                while total + entry.cost > budget.limit {
                    guard index < state.order.items.count else { throw .daemon(retryAfterMilliseconds: protection) }
                    let item = state.order.items[index]
                    index += 1
                    guard item.key != entry.key, !skip.contains(item.key), let held = state.entries[item.key], held.seq == item.seq else {
                        continue
                    }
                    guard now - held.givenAt >= protection else {
                        throw .daemon(retryAfterMilliseconds: held.givenAt + protection - now)
                    }
                    plan.append(item.key)
                    total -= held.cost
                }
            }
            for key in plan { remove(key, from: &state) }
            remove(entry.key, from: &state)
            state.seq &+= 1
            let seq = state.seq
            state.entries[entry.key] = Held(seq: seq, session: entry.session, cost: entry.cost, givenAt: entry.createdAt)
            state.sessions[entry.session, default: Queue()].append(entry.key, seq, cost: entry.cost)
            state.order.append(entry.key, seq, cost: entry.cost)
            state.bytes += entry.cost
            budget.force(entry.cost)
            return plan
        }
        if !forgotten.isEmpty { evictions.wrappingAdd(forgotten.count, ordering: .relaxed) }
        tell(forgotten)
        return forgotten
    }

    /// Stops counting the answer under `key`: its write failed, or lost to another's.
    package func remove(_ key: String) {
        state.withLock { remove(key, from: &$0) }
    }

    /// Stops counting session `id`'s answers: it is deleted or expired, and the store's go with it.
    package func forget(sessions ids: [String]) {
        var keys: [String] = []
        state.withLock { state in
            for id in ids {
                guard let queue = state.sessions[id] else { continue }
                for item in queue.items[queue.head...] where state.entries[item.key]?.seq == item.seq {
                    keys.append(item.key)
                    remove(item.key, from: &state)
                }
                state.sessions[id] = nil
            }
        }
        tell(keys)
    }

    /// Stops counting the answers to changes given before `cutoff` (the store sweeps them once
    /// older than the session TTL); a create's stays while its session lives.
    package func expire(before cutoff: Int64) {
        var keys: [String] = []
        state.withLock { state in
            // Found first, removed after: a removal may compact the queue being walked.
            for item in state.order.items[state.order.head...] {
                guard let held = state.entries[item.key], held.seq == item.seq else { continue }
                guard held.givenAt < cutoff else { break }
                guard !item.key.hasPrefix("create ") else { continue }
                keys.append(item.key)
            }
            for key in keys { remove(key, from: &state) }
        }
        tell(keys)
    }

    /// Counts what a store holds already (at start-up), oldest first, without forgetting any.
    package func rebuild(_ entries: [Entry]) {
        state.withLock { state in
            for entry in entries.sorted(by: { $0.createdAt < $1.createdAt }) {
                remove(entry.key, from: &state)
                state.seq &+= 1
                state.entries[entry.key] = Held(seq: state.seq, session: entry.session, cost: entry.cost, givenAt: entry.createdAt)
                state.sessions[entry.session, default: Queue()].append(entry.key, state.seq, cost: entry.cost)
                state.order.append(entry.key, state.seq, cost: entry.cost)
                state.bytes += entry.cost
                budget.force(entry.cost)
            }
        }
    }

    // MARK: State

    private struct Held {
        /// Which admission counted it: a queue's item for the same key with another seq is stale.
        var seq: UInt64
        var session: String
        var cost: Int
        var givenAt: Int64
    }

    /// Keys in the order they were counted. Removal leaves an item behind (stale: its seq is no
    /// longer the key's); stale items are skipped, and dropped once they outnumber the live ones.
    private struct Queue {
        var items: [(key: String, seq: UInt64)] = []
        var head = 0
        var count = 0
        var bytes = 0

        mutating func append(_ key: String, _ seq: UInt64, cost: Int) {
            items.append((key, seq))
            count += 1
            bytes += cost
        }

        mutating func removed(cost: Int, entries: [String: Held]) {
            count -= 1
            bytes -= cost
            if items.count - head > 2 * count + 16 {
                items = items[head...].filter { entries[$0.key]?.seq == $0.seq }
                head = 0
            }
        }
    }

    private struct State {
        var entries: [String: Held] = [:]
        var sessions: [String: Queue] = [:]
        var order = Queue()
        var seq: UInt64 = 0
        var bytes = 0
    }

    private func remove(_ key: String, from state: inout State) {
        guard let held = state.entries.removeValue(forKey: key) else { return }
        state.bytes -= held.cost
        budget.release(held.cost)
        state.order.removed(cost: held.cost, entries: state.entries)
        if var queue = state.sessions.removeValue(forKey: held.session) {
            queue.removed(cost: held.cost, entries: state.entries)
            if queue.count > 0 { state.sessions[held.session] = queue }
        }
    }
}
