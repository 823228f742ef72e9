import NavHTTP
import NavSessions
import Synchronization

/// Answers already given to requests with an `Idempotency-Key`, so a retry gets the first answer again.
///
/// Bounded by count and by bytes: the oldest records are dropped first once `capacity` records
/// or `byteLimit` bytes are reached. The byte bound matters because an answer is a whole session
/// view (up to megabytes with large screen states), and anyone holding a session could otherwise
/// fill memory with retries of no-ops under fresh keys.
final class IdempotencyCache: Sendable {
    struct Record: Sendable {
        /// SHA-256 of method, path and body: the same key with another request is refused.
        var fingerprint: [UInt8]
        var response: HTTPResponse
        /// The session the answer is about, if any: its records go when it is deleted.
        var session: String? = nil
        /// When the answer was first given (ms since the epoch): a change's is forgotten once
        /// older than the session TTL, when the store sweeps it too.
        var givenAt: Int64 = 0
    }

    private let state: Mutex<State>
    private let capacity: Int
    /// The most bytes the kept records may take, by ``cost(_:_:)``; the newest record is always kept.
    let byteLimit: Int

    private struct State {
        var records: [String: Record] = [:]
        var order: [String] = []
        var head = 0
        /// What the kept records take, by ``IdempotencyCache/cost(_:_:)``.
        var bytes = 0
    }

    init(capacity: Int = 10_000, byteLimit: Int = 64 << 20) {
        self.capacity = max(1, capacity)
        self.byteLimit = max(0, byteLimit)
        self.state = Mutex(State())
    }

    /// About the memory a record takes: its answer's body and header text, its key and digest.
    static func cost(_ key: String, _ record: Record) -> Int {
        KeptAnswer.cost(key: key, fingerprint: record.fingerprint, headers: record.response.headers, body: record.response.body)
    }

    func lookup(_ key: String) -> Record? {
        state.withLock { $0.records[key] }
    }

    /// Forgets every answer about session `id`, once it is deleted: a replay must never hand out
    /// a session that is gone (a retried create whose session was deleted since creates anew).
    func forget(session id: String) {
        state.withLock { state in
            for (key, record) in state.records where record.session == id {
                state.records[key] = nil
                state.bytes -= Self.cost(key, record)
            }
        }
    }

    /// Forgets the answers under `keys`: forgotten to make room for newer ones, or expired.
    func forget(keys: [String]) {
        state.withLock { state in
            for key in keys {
                guard let record = state.records.removeValue(forKey: key) else { continue }
                state.bytes -= Self.cost(key, record)
            }
        }
    }

    func store(_ key: String, _ record: Record) {
        // Held in a buffer of its own size, so it takes what ``cost(_:_:)`` counts.
        var record = record
        record.response.body = KeptAnswer.exact(record.response.body)
        let capacity = self.capacity
        let byteLimit = self.byteLimit
        let cost = Self.cost(key, record)
        state.withLock { state in
            if let replaced = state.records.updateValue(record, forKey: key) {
                state.bytes -= Self.cost(key, replaced)
            } else {
                state.order.append(key)
            }
            state.bytes += cost
            while state.records.count > capacity || (state.bytes > byteLimit && state.records.count > 1), state.head < state.order.count {
                let oldest = state.order[state.head]
                state.head += 1
                // A key stored again keeps its place in the order as the newest.
                if oldest == key {
                    state.order.append(key)
                    continue
                }
                guard let dropped = state.records.removeValue(forKey: oldest) else { continue }
                state.bytes -= Self.cost(oldest, dropped)
            }
            if state.head > capacity {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }
}
