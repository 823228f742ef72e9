import Synchronization

/// A bound for the whole daemon on one resource that clients can make navd hold: watchers,
/// bytes buffered for them, idempotency answers, sessions' bytes, graph memory, heavy graph work.
///
/// Every such resource also has a bound per item (a session's watchers, one answer's size); the
/// budget is what keeps many items within reach of one machine. Taking is a compare-and-swap on
/// one atomic, so a budget costs no lock on the paths that use it. `/metrics` shows each budget
/// as `navd_budget_used{resource}` and `navd_budget_limit{resource}`.
package final class Budget: Sendable {
    /// The resource's name, the `resource` label of its metrics: `watchers`, `watcher_buffer_bytes`.
    package let resource: String
    /// The most that may be held at once.
    package let limit: Int
    private let held = Atomic<Int>(0)

    package init(resource: String, limit: Int) {
        self.resource = resource
        self.limit = max(0, limit)
    }

    /// What is held now.
    package var used: Int { held.load(ordering: .relaxed) }

    /// What is left before the limit.
    package var available: Int { max(0, limit - used) }

    /// Takes `amount` if it fits within the limit.
    /// - Returns: false, taking nothing, when it does not.
    package func acquire(_ amount: Int = 1) -> Bool {
        var current = held.load(ordering: .relaxed)
        while true {
            guard amount <= limit - current else { return false }
            let (exchanged, original) = held.compareExchange(
                expected: current, desired: current + amount, ordering: .acquiringAndReleasing
            )
            if exchanged { return true }
            current = original
        }
    }

    /// Takes `amount` whether or not it fits: for what is already held when it is counted (a
    /// buffer a write has filled); the holder then makes room, for instance by dropping the
    /// largest holder.
    /// - Returns: what is held now.
    @discardableResult
    package func force(_ amount: Int) -> Int {
        held.wrappingAdd(amount, ordering: .acquiringAndReleasing).newValue
    }

    /// Sets what is held to `amount`, counted anew elsewhere (a store several processes share).
    package func recount(_ amount: Int) {
        held.store(amount, ordering: .releasing)
    }

    /// Gives back `amount` taken by ``acquire(_:)`` or ``force(_:)``.
    package func release(_ amount: Int = 1) {
        held.wrappingSubtract(amount, ordering: .acquiringAndReleasing)
    }
}

/// The daemon's budgets, in the order they were made, for `/metrics`.
package final class Budgets: Sendable {
    private let list = Mutex<[Budget]>([])

    package init() {}

    /// Makes a budget and lists it; a resource named twice gets the first one's budget back.
    package func make(_ resource: String, limit: Int) -> Budget {
        list.withLock { list in
            if let made = list.first(where: { $0.resource == resource }) { return made }
            let budget = Budget(resource: resource, limit: limit)
            list.append(budget)
            return budget
        }
    }

    /// Lists a budget made elsewhere (a store's).
    package func add(_ budget: Budget) {
        list.withLock { list in
            if !list.contains(where: { $0 === budget }) { list.append(budget) }
        }
    }

    /// Every budget listed, in order.
    package var all: [Budget] { list.withLock { $0 } }

    /// The budget of `resource`, if one is listed.
    package subscript(resource: String) -> Budget? {
        list.withLock { $0.first(where: { $0.resource == resource }) }
    }
}
