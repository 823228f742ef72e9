import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// How a change reaches PostgreSQL (docs/design.md, "PostgreSQL"): each is one `UPDATE … WHERE id = $1 AND version =
/// $expected` that appends its events (and keeps its answer, for an `Idempotency-Key`) in the same
/// statement; the changes waiting for a connection go together (``PostgresGroupCommit``) as one
/// pipeline (`PQpipelineSync`: one round trip) that is one implicit transaction: one commit and
/// one WAL flush; then one `NOTIFY` names every session of the group that changed.
extension PostgresStore {
    /// One change of a group: the statement's parameters and what tells, after a lost connection,
    /// whether it committed.
    struct GroupWrite: Sendable {
        var id: String
        /// ``plainUpdateSQL``, or ``updateSQL`` when the change trims the log or keeps an answer.
        var sql: String
        var parameters: [String?]
        var version: Int
        var lastSeq: Int
        var touchedAt: Int64
        var snapshot: String
        /// The change's events as a JSON array: found in the log under its last seq, they say the
        /// change committed even when the session has moved on since.
        var events: String
    }

    enum GroupOutcome: Sendable {
        case written
        /// The compare-and-set lost (or the key's answer was kept already): nothing was written.
        case lost
        case failed(StoreError)
    }

    /// The compare-and-set of one session and its events: a change with no `Idempotency-Key` that
    /// does not trim the log, nearly every change. Parameters: id, version, snapshot, touched_at,
    /// expected version, events, last seq, first seq.
    static let plainUpdateSQL = plainUpdateWrites + "\n" + countWritten

    private static let plainUpdateWrites = """
        WITH u AS (
            UPDATE sessions SET version = $2, snapshot = $3, touched_at = $4
            WHERE id = $1 AND version = $5
            RETURNING id),
        ins AS (
            INSERT INTO event_log (session_id, last_seq, first_seq, body)
            SELECT u.id, $7, $8, $6 FROM u WHERE $6 <> '[]' RETURNING 1)
        """

    /// Whether the compare-and-set won, and the bytes of the events it trimmed (none here).
    private static let countWritten = "SELECT (SELECT count(*) FROM u), 0"

    /// ``countWritten`` for a change that trims the log: with the bytes of the batches it trimmed.
    private static let countWrittenAndTrimmed = "SELECT (SELECT count(*) FROM u), (SELECT coalesce(sum(bytes), 0) FROM trimmed)"

    /// ``plainUpdateSQL``, then the trim of the session's log (up to $9) and the kept answer (key
    /// $10, fingerprint, status, headers, body: all NULL without a key). A key already kept (by
    /// another process) makes the update write nothing.
    static let updateSQL = updateWrites + "\n" + countWrittenAndTrimmed

    private static let updateWrites = """
        WITH u AS (
            UPDATE sessions SET version = $2, snapshot = $3, touched_at = $4
            WHERE id = $1 AND version = $5
                AND ($10::text IS NULL OR NOT EXISTS (SELECT 1 FROM idempotency WHERE key = $10))
            RETURNING id),
        ins AS (
            INSERT INTO event_log (session_id, last_seq, first_seq, body)
            SELECT u.id, $7, $8, $6 FROM u WHERE $6 <> '[]' RETURNING 1),
        trimmed AS (
            DELETE FROM event_log WHERE session_id = $1 AND last_seq <= $9 AND EXISTS (SELECT 1 FROM u)
            RETURNING octet_length(body) AS bytes),
        kept AS (
            INSERT INTO idempotency (key, session_id, fingerprint, status, headers, body, created_at)
            SELECT $10, u.id, decode($11, 'hex'), $12, $13, $14, $4 FROM u WHERE $10::text IS NOT NULL RETURNING 1)
        """

    /// ``plainUpdateSQL`` that also writes the change's feed record ($9 on: ``recordParameters(_:)``),
    /// only when the compare-and-set won, in the group's transaction.
    ///
    /// The record is ordered by the group's transaction id, which PostgreSQL assigns at the
    /// group's first write, and the session's previous record by the id of the transaction that
    /// wrote the version this change starts from. That transaction committed before this change
    /// was computed: the change starts from a version this process read from the database or
    /// wrote itself, either way committed, and a group is gathered from changes already computed
    /// before its first statement is sent. Ids are handed out in increasing order, so this
    /// change's id is the larger, and its record comes after the session's previous one. (A delete
    /// has no such guarantee: it does not start from a version. See ``inTransaction(on:_:)``.)
    static let plainRecordedUpdateSQL =
        plainUpdateWrites + ",\nrecorded AS (" + recordInsert(session: "u.id", from: "u", first: 9) + ")\n"
        + countWritten

    /// ``updateSQL`` that also writes the change's feed record ($15 on), as ``plainRecordedUpdateSQL``.
    static let recordedUpdateSQL =
        updateWrites + ",\nrecorded AS (" + recordInsert(session: "u.id", from: "u", first: 15) + ")\n"
        + countWrittenAndTrimmed

    /// `touched_at` as the change writes it: its time rounded up to the next whole second, so
    /// that a session's changes within one second leave the indexed column as it was and
    /// PostgreSQL updates the row in place (a HOT update: no new entry in either index, and the
    /// old version pruned within its page, which `fillfactor` keeps room on). A session then
    /// expires up to a second later than its TTL says, never earlier; the sweep runs every
    /// second at the most often anyway.
    static func coarseTouchedAt(_ milliseconds: Int64) -> Int64 {
        let (seconds, rest) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        return (rest > 0 ? seconds + 1 : seconds) * 1000
    }

    /// One notice for committed groups (``PostgresNotifier``): `<tag> changes <id>:<last seq> …`.
    static let notifySQL = "SELECT set_config('synchronous_commit', 'off', true), pg_notify('navd_changes', $1)"

    /// Whether a change whose commit went unanswered is there: the row at the version, time and
    /// snapshot it wrote, or (the session moved on since) its events in the log.
    static let verifySQL = """
        SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND version = $2 AND touched_at = $3 AND snapshot = $4)
            OR EXISTS (SELECT 1 FROM event_log WHERE session_id = $1 AND last_seq = $5 AND body = $6)
        """

    /// How long a group whose connection broke tries to reconnect and read back what it wrote.
    static var recoverySeconds: Double { 2 }

    /// Commits `writes` as one transaction on a pooled connection: one outcome each, in order.
    func commitGroup(_ writes: [GroupWrite]) -> [GroupOutcome] {
        do {
            return try pool.with { connection throws(StoreError) in commit(writes, on: connection) }
        } catch {
            // No connection (the pool timed out, or closed): nothing was sent.
            return writes.map { _ in .failed(error) }
        }
    }

    private func commit(_ writes: [GroupWrite], on connection: PostgresConnection) -> [GroupOutcome] {
        // A write the pipeline refuses before sending anything (a NUL in a text parameter, which
        // libpq cannot pass) fails alone, not the other sessions' changes of its group.
        if writes.count > 1, writes.contains(where: { $0.parameters.contains { $0.map(PostgresConnection.containsNUL) == true } }) {
            return writes.flatMap { commit([$0], on: connection) }
        }
        let statements = writes.map { (sql: $0.sql, parameters: $0.parameters) }
        var sent = false
        let results: [PostgresConnection.PipelineResult]
        do {
            results = try connection.pipeline(statements, sent: &sent)
        } catch {
            // Sent, and the connection broke: each change may have committed with its answer lost.
            return sent ? recover(writes, error, on: connection) : writes.map { _ in .failed(error) }
        }
        var outcomes: [GroupOutcome] = []
        var trimmed = 0
        for result in results.prefix(writes.count) {
            switch result {
            case .rows(let rows):
                outcomes.append(rows.int(0, 0) == 1 ? .written : .lost)
                trimmed += Int(rows.int(0, 1))
            case .failed(let error): outcomes.append(.failed(error))
            }
        }
        // Every change is told something: a waiter without an outcome would wait for good.
        while outcomes.count < writes.count {
            outcomes.append(.failed(StoreError(message: "PostgreSQL answered fewer statements than the group sent", kind: .unavailable)))
        }
        let failed = outcomes.contains { if case .failed = $0 { true } else { false } }
        guard failed else {
            releasedEvents.add(trimmed)
            return outcomes
        }
        // One statement failed, so the transaction rolled back: nothing of the group was written.
        // Each change goes again alone, so that only the failing one fails.
        guard writes.count > 1 else { return outcomes }
        return writes.flatMap { commit([$0], on: connection) }
    }

    /// Tells the other processes which sessions the group changed, once it has committed and its
    /// requests have been answered (``PostgresGroupCommit``'s `then`): through ``PostgresNotifier``,
    /// which sends one notice for the groups of a few milliseconds, each in a transaction of its
    /// own that does not wait for its WAL flush (`synchronous_commit` off for it alone). NOTIFY
    /// holds a database-wide lock from before its transaction commits until it has, flush
    /// included: sent inside each group it made the groups of every connection and process commit
    /// one at a time, and one per group still cost a third of the throughput (BENCHMARKS.md). A
    /// notice lost to a crash costs its listeners a read: a listener whose connection broke reads
    /// every watched session again.
    func notify(_ writes: [GroupWrite], _ outcomes: [GroupOutcome]) {
        notifier?.post(
            zip(writes, outcomes).compactMap { write, outcome -> String? in
                if case .written = outcome { " \(write.id):\(write.lastSeq)" } else { nil }
            })
    }

    /// After a connection broke under a sent group: reconnects (for up to ``recoverySeconds``)
    /// and reads back each change. One that is there committed and is answered as written; one
    /// that is not, or that cannot be read back, fails with `error` (a 503: it did not commit, or
    /// nobody can tell yet).
    func recover(_ writes: [GroupWrite], _ error: StoreError, on connection: PostgresConnection) -> [GroupOutcome] {
        let deadline = Clock.seconds() + Self.recoverySeconds
        return writes.map { write in
            while true {
                do throws(StoreError) {
                    let found = try connection.execute(
                        Self.verifySQL,
                        [write.id, String(write.version), String(write.touchedAt), write.snapshot, String(write.lastSeq), write.events],
                        prepare: true)
                    if found.text(0, 0) == "t" { return .written }
                    cache.remove(write.id)
                    return .failed(error)
                } catch let failure where failure.kind == .unavailable && Clock.seconds() < deadline {
                    usleep(50_000)
                } catch {
                    cache.remove(write.id)
                    return .failed(StoreError(message: error.message, kind: .unavailable))
                }
            }
        }
    }
}
