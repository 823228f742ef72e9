import NavHTTP
import NavJSON
import NavSessions
import Synchronization

/// Answers already given to requests with an `Idempotency-Key`, so a retry gets the first answer
/// again, on a store that keeps none itself (the memory store).
///
/// It has no bound of its own: it holds an answer only while the session service's
/// ``KeptAnswerLedger`` counts it (admitted before its change was applied), and forgets what the
/// ledger forgets (to make room, with its session, past the TTL). So what it holds is within
/// `--max-idempotency-bytes` and each session's share within its own budget.
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

    private struct State {
        var records: [String: Record] = [:]
        /// What the records take, by ``IdempotencyCache/cost(_:_:)``.
        var bytes = 0
    }

    private let state = Mutex(State())

    /// About the memory a record takes: its answer's body and header text, its key and digest,
    /// as the ledger counts it.
    static func cost(_ key: String, _ record: Record) -> Int {
        KeptAnswer.cost(key: key, fingerprint: record.fingerprint, headers: record.response.headers, body: record.response.body)
    }

    /// What the records take now, by ``cost(_:_:)``.
    var bytes: Int { state.withLock { $0.bytes } }

    /// The keys held now.
    var keys: Set<String> { state.withLock { Set($0.records.keys) } }

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

    /// Forgets the answers under `keys`: the ledger forgot them.
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
        record.response.body = record.response.body.fitted()
        let cost = Self.cost(key, record)
        state.withLock { state in
            if let replaced = state.records.updateValue(record, forKey: key) { state.bytes -= Self.cost(key, replaced) }
            state.bytes += cost
        }
    }
}
