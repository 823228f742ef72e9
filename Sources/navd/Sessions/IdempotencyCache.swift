import Synchronization

/// Answers already given to POSTs with an `Idempotency-Key`, so a retry gets the first answer again.
///
/// Bounded: the oldest records are dropped first once `capacity` is reached.
final class IdempotencyCache: Sendable {
    struct Record: Sendable {
        /// SHA-256 of method, path and body: the same key with another request is refused.
        var fingerprint: [UInt8]
        var response: HTTPResponse
    }

    private let state: Mutex<State>
    private let capacity: Int

    private struct State {
        var records: [String: Record] = [:]
        var order: [String] = []
        var head = 0
    }

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
        self.state = Mutex(State())
    }

    func lookup(_ key: String) -> Record? {
        state.withLock { $0.records[key] }
    }

    func store(_ key: String, _ record: Record) {
        let capacity = self.capacity
        state.withLock { state in
            if state.records.updateValue(record, forKey: key) == nil {
                state.order.append(key)
            }
            while state.records.count > capacity, state.head < state.order.count {
                state.records.removeValue(forKey: state.order[state.head])
                state.head += 1
            }
            if state.head > capacity {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }
}
