import Dispatch
import NavCore
import NavJSON
import NavSessions
import NavSnapshot
import Synchronization

/// Sessions in PostgreSQL (`--store postgres://user@host:port/db`), shared by several navd processes.
///
/// Every write is one statement that compare-and-sets on `version` (`UPDATE … WHERE version = $expected`)
/// and appends the events in the same statement, so a change is either wholly there or not at all,
/// and a process that lost a race learns it and re-reads instead of overwriting.
package final class PostgresStore: SessionStore, GraphStore, ChangeFeed {
    package let name: String
    let pool: PostgresPool
    /// The sessions this process last wrote or read, for changes (``loadForChange(_:)``).
    let cache = PostgresSessionCache()
    /// Retained events' bytes let go (``takeReleasedEventBytes()``): trimmed by a change, or
    /// deleted with their session.
    let releasedEvents = ReleasedBytes()
    /// Sends committed groups' notices (nil with `NAVD_PG_NOTIFY=off`, which measures without them).
    let notifier: PostgresNotifier?
    /// Changes waiting for a connection, committed together (``PostgresGroupCommit``).
    private let groups: PostgresGroupCommit<GroupWrite, GroupOutcome>
    let url: String
    /// This process's mark on the notices it sends (`NOTIFY navd_changes`), so that it skips its
    /// own: its watchers have had those changes from the thread that applied them.
    let processTag: String
    /// Set by `close()`: the notice listener stops.
    let closing = Atomic<Bool>(false)
    /// When ``keepCheckpoint(of:version:snapshot:within:)`` trims the checkpoints' bytes.
    let checkpointTrimming = CheckpointTrimming()
    /// The last session count and when it was taken (monotonic seconds): see ``statistics()``.
    private let countCache = Mutex<(at: Double, count: Int?)>((-.infinity, nil))
    /// The feed's usage and when it was taken (monotonic seconds): see ``feedUsage()``.
    let feedUsageCache = Mutex<(at: Double, usage: (records: Int, bytes: Int))>((-.infinity, (0, 0)))
    private let retainedEvents: Int
    private let decode: SnapshotDecoder

    package init(
        url: String, connections: Int, retainedEvents: Int = 1000, notifies: Bool = true, decode: @escaping SnapshotDecoder
    ) throws(StoreError) {
        self.name = Self.redacted(url)
        self.url = url
        var random = SystemRandomNumberGenerator()
        self.processTag = String(random.next() as UInt64, radix: 36)
        self.retainedEvents = retainedEvents
        self.decode = decode
        let pool = try PostgresPool(conninfo: url, size: max(1, connections))
        self.pool = pool
        self.groups = PostgresGroupCommit(leaders: pool.size)
        self.notifier =
            notifies
            ? PostgresNotifier(prefix: processTag + " changes") { payload in
                _ = try? pool.with { connection throws(StoreError) in try connection.execute(Self.notifySQL, [payload], prepare: true) }
            } : nil
        try migrate()
    }

    /// The URL without its password, for logs.
    static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@"), let scheme = url.firstRange(of: "://"),
            let colon = url[scheme.upperBound..<at].firstIndex(of: ":")
        else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// Applies pending migrations under an advisory lock, so processes starting together do it once.
    private func migrate() throws(StoreError) {
        try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT pg_advisory_lock(7301)")
            defer { _ = try? connection.execute("SELECT pg_advisory_unlock(7301)") }
            try connection.execute("CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)")
            let applied = Int(try connection.execute("SELECT COALESCE(MAX(version), 0) FROM migrations").int(0, 0))
            guard applied <= Self.migrations.count else {
                throw StoreError(message: "the database is at schema \(applied); this navd knows up to \(Self.migrations.count)")
            }
            for (index, sql) in Self.migrations.enumerated().dropFirst(applied) {
                try connection.execute("BEGIN")
                do throws(StoreError) {
                    try connection.executeScript(sql)
                    try connection.execute(
                        "INSERT INTO migrations (version, applied_at) VALUES ($1, extract(epoch from now())::bigint)", [String(index + 1)])
                    try connection.execute("COMMIT")
                } catch {
                    _ = try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }

    private static func eventsJSON(_ events: [LifecycleEvent]) -> String {
        String(decoding: events.jsonBytes, as: UTF8.self)
    }

    private static func snapshotJSON(_ session: StoredSession) -> String {
        String(decoding: session.snapshotBytes, as: UTF8.self)
    }

    package func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        _ = try insert(session, events: events, keeping: nil, record: nil)
    }

    /// One statement: the kept answer first (`ON CONFLICT DO NOTHING` waits for a process
    /// inserting the same key and then writes nothing), and the session, its events and its
    /// creation's record only if the answer was kept — so a create retried through two processes
    /// at once makes one session, and one record.
    package func insert(_ session: StoredSession, events: [LifecycleEvent], keeping answer: KeptAnswer?, record: FeedRecord?)
        throws(StoreError) -> Bool
    {
        guard SessionID.isValid(session.id) else { throw SessionID.invalid(session.id) }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                WITH k AS (
                    INSERT INTO idempotency (key, session_id, fingerprint, status, headers, body, created_at)
                    SELECT $13, $1, decode($14, 'hex'), $15, $16, $17, $8 WHERE $13::text IS NOT NULL
                    ON CONFLICT (key) DO NOTHING RETURNING 1),
                s AS (
                    INSERT INTO sessions (id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at)
                    SELECT $1, $2, $3, $4, decode($5, 'hex'), $6, $7, $8, $9 WHERE $13::text IS NULL OR EXISTS (SELECT 1 FROM k)
                    RETURNING id),
                e AS (
                    INSERT INTO event_log (session_id, last_seq, first_seq, body) SELECT s.id, $11, $12, $10 FROM s WHERE $10 <> '[]'),
                f AS (\(Self.recordInsert(session: "s.id", from: "s", first: 18)) WHERE $18::bigint IS NOT NULL)
                SELECT count(*) FROM s
                """,
                [
                    session.id, session.graphName, String(session.graphVersion), String(session.state.version),
                    Hex.string(session.tokenDigest.bytes), String(SessionState.snapshotSchema), Self.snapshotJSON(session),
                    String(session.createdAt), String(session.touchedAt), Self.eventsJSON(events),
                    String(events.last?.seq ?? 0), String(events.first?.seq ?? 0)
                ] + Self.answerParameters(answer) + Self.recordParameters(record),
                prepare: true
            )
        }
        return result.int(0, 0) == 1
    }

    package func load(_ id: String) throws(StoreError) -> StoredSession? {
        guard SessionID.isValid(id) else { return nil }
        let row = try pool.with { connection throws(StoreError) in
            try connection.execute(
                "SELECT graph, graph_version, encode(token_hash, 'hex'), snapshot, created_at, touched_at FROM sessions WHERE id = $1",
                [id], prepare: true)
        }
        guard row.rowCount == 1 else {
            cache.remove(id)
            return nil
        }
        let session = try session(id: id, row, 0, offset: 0)
        cache.put(session)
        return session
    }

    /// The session as this process last wrote or read it (``PostgresSessionCache``), else read.
    package func loadForChange(_ id: String) throws(StoreError) -> StoredSession? {
        guard SessionID.isValid(id) else { return nil }
        if let cached = cache.get(id) { return cached }
        return try load(id)
    }

    func session(id: String, _ result: PostgresResult, _ row: Int, offset: Int) throws(StoreError) -> StoredSession {
        let graph = result.text(row, offset)
        let graphVersion = Int(result.int(row, offset + 1))
        let bytes = result.bytes(row, offset + 3)
        let snapshot: JSONValue
        do {
            snapshot = try JSONValue(parsing: bytes, maximumDepth: StoredSession.snapshotDepth)
        } catch {
            throw StoreError(message: "session \(id): stored snapshot is not JSON: \(error)")
        }
        let (state, current) = try decode(snapshot, graph, graphVersion)
        var session = StoredSession(
            id: id, graphName: graph, graphVersion: current, tokenDigest: TokenDigest(bytes: Hex.bytes(result.text(row, offset + 2)) ?? []),
            state: state, createdAt: result.int(row, offset + 4), touchedAt: result.int(row, offset + 5)
        )
        session.storedBytes = bytes.count
        return session
    }

    package func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8]) throws(StoreError)
        -> Bool
    {
        try update(session, expectedVersion: expectedVersion, events: events, eventsJSON: eventsJSON, keeping: nil, record: nil)
    }

    /// Commits the change, and its record, in a group with the changes of other sessions waiting
    /// meanwhile (``PostgresStore/commitGroup(_:)``); answered once the group has committed.
    package func update(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8], keeping answer: KeptAnswer?,
        record: FeedRecord?
    ) throws(StoreError) -> Bool {
        guard SessionID.isValid(session.id) else { throw SessionID.invalid(session.id) }
        switch groups.commit(
            groupWrite(session, expectedVersion: expectedVersion, events: events, eventsJSON: eventsJSON, keeping: answer, record: record),
            run: commitGroup, then: notify)
        {
        case .written:
            cache.put(session)
            return true
        case .lost:
            cache.remove(session.id)
            return false
        case .failed(let error):
            throw error
        }
    }

    /// The change as a group commits it: the statement's parameters and what reads it back.
    func groupWrite(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8], keeping answer: KeptAnswer?,
        record: FeedRecord? = nil
    ) -> GroupWrite {
        let snapshot = Self.snapshotJSON(session)
        let lastSeq = events.last?.seq ?? session.state.eventCounter
        let firstSeq = events.first?.seq ?? lastSeq
        let touchedAt = Self.coarseTouchedAt(session.touchedAt)
        // The log is trimmed when a change crosses a multiple of 64 seqs, not by every change:
        // between `retainedEvents` and 64 more are kept (reads show the retained ones only).
        let trimmed = (firstSeq - 1) / 64 != lastSeq / 64 ? String(lastSeq - retainedEvents) : nil
        let eventsText = String(decoding: eventsJSON, as: UTF8.self)
        var parameters: [String?] = [
            session.id, String(session.state.version), snapshot, String(touchedAt), String(expectedVersion),
            eventsText, String(lastSeq), String(firstSeq)
        ]
        let full = trimmed != nil || answer != nil
        if full {
            parameters += [trimmed] + Self.answerParameters(answer)
        }
        let sql: String
        if record != nil {
            parameters += Self.recordParameters(record)
            sql = full ? Self.recordedUpdateSQL : Self.plainRecordedUpdateSQL
        } else {
            sql = full ? Self.updateSQL : Self.plainUpdateSQL
        }
        return GroupWrite(
            id: session.id, sql: sql, parameters: parameters, version: session.state.version,
            lastSeq: lastSeq, touchedAt: touchedAt,
            snapshot: snapshot, events: eventsText
        )
    }

    package var keepsAnswers: Bool { true }

    package func keptAnswer(_ key: String) throws(StoreError) -> KeptAnswer? {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                "SELECT session_id, encode(fingerprint, 'hex'), status, headers, body, created_at FROM idempotency WHERE key = $1", [key],
                prepare: true)
        }
        guard result.rowCount == 1 else { return nil }
        return KeptAnswer(
            key: key, session: result.text(0, 0), fingerprint: Hex.bytes(result.text(0, 1)) ?? [], status: Int(result.int(0, 2)),
            headers: KeptAnswer.headers(fromJSON: result.bytes(0, 3)), body: result.bytes(0, 4), createdAt: result.int(0, 5))
    }

    /// Only while its session lives (a delete through another process deletes its answers first).
    package func keep(_ answer: KeptAnswer) throws(StoreError) {
        _ = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                INSERT INTO idempotency (key, session_id, fingerprint, status, headers, body, created_at)
                SELECT $1, $6, decode($2, 'hex'), $3, $4, $5, $7 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $6)
                ON CONFLICT (key) DO NOTHING
                """,
                Self.answerParameters(answer) + [answer.session, String(answer.createdAt)],
                prepare: true)
        }
    }

    /// One statement for all `keys` (a text array).
    package func forget(answers keys: [String]) throws(StoreError) {
        guard !keys.isEmpty else { return }
        let array = "{" + keys.map { "\"" + $0 + "\"" }.joined(separator: ",") + "}"
        _ = try pool.with { connection throws(StoreError) in
            try connection.execute("DELETE FROM idempotency WHERE key = ANY($1::text[])", [array], prepare: true)
        }
    }

    package func keptAnswerEntries() throws(StoreError) -> [KeptAnswerSize] {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                "SELECT key, session_id, octet_length(fingerprint), headers, octet_length(body), created_at FROM idempotency ORDER BY created_at",
                [], prepare: false)
        }
        return (0..<result.rowCount).map { row in
            let key = result.text(row, 0)
            let cost = KeptAnswer.cost(
                key: key, fingerprintBytes: Int(result.int(row, 2)), headersJSON: result.bytes(row, 3), bodyBytes: Int(result.int(row, 4)))
            return KeptAnswerSize(key: key, session: result.text(row, 1), cost: cost, createdAt: result.int(row, 5))
        }
    }

    /// A kept answer as statement parameters: key, fingerprint (hex), status, headers, body; all
    /// NULL without one.
    private static func answerParameters(_ answer: KeptAnswer?) -> [String?] {
        [
            answer?.key, answer.map { Hex.string($0.fingerprint) }, answer.map { String($0.status) },
            answer.map { String(decoding: $0.headersJSON, as: UTF8.self) }, answer.map { String(decoding: $0.body, as: UTF8.self) }
        ]
    }

    /// One statement. With an end record, which it writes only when the session was there, it
    /// runs in a transaction of its own: the record must come after the session's others in the
    /// feed, so its transaction must be newer than theirs (``inTransaction(on:_:)``).
    package func delete(_ id: String, record: FeedRecord?) throws(StoreError) -> Bool {
        guard SessionID.isValid(id) else { return false }
        cache.remove(id)
        let parameters = [id, notice(id, "deleted")]
        guard let record else {
            let result = try pool.with { connection throws(StoreError) in
                try connection.execute(
                    """
                    WITH d AS (DELETE FROM sessions WHERE id = $1 RETURNING id),
                    \(Self.deleteEvents),
                    k AS (DELETE FROM idempotency WHERE session_id = $1),
                    notified AS (SELECT pg_notify('navd_changes', $2) FROM d)
                    SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM notified), (SELECT coalesce(sum(bytes), 0) FROM e)
                    """,
                    parameters, prepare: true)
            }
            releasedEvents.add(Int(result.int(0, 2)))
            return result.int(0, 0) > 0
        }
        var eventBytes = 0
        let existed = try pool.with { connection throws(StoreError) in
            try Self.inTransaction(on: connection) { () throws(StoreError) -> Bool? in
                let result = try connection.execute(
                    """
                    WITH d AS (DELETE FROM sessions WHERE id = $1 RETURNING id, age(xmin) < 0 AS newer),
                    \(Self.deleteEvents),
                    k AS (DELETE FROM idempotency WHERE session_id = $1),
                    f AS (\(Self.recordInsert(session: "d.id", from: "d", first: 3))),
                    notified AS (SELECT pg_notify('navd_changes', $2) FROM d)
                    SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM d WHERE newer), (SELECT count(*) FROM notified),
                        (SELECT coalesce(sum(bytes), 0) FROM e)
                    """,
                    parameters + Self.recordParameters(record), prepare: true, reconnecting: false)
                guard result.int(0, 1) == 0 else { return nil }
                // Committed once this returns: ``inTransaction(on:_:)`` goes again only on a nil.
                eventBytes = Int(result.int(0, 3))
                return result.int(0, 0) > 0
            }
        }
        releasedEvents.add(eventBytes)
        return existed
    }

    package func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        guard SessionID.isValid(id) else { return [] }
        // Batches are trimmed whole, so older events may linger: show the retained ones only. A
        // batch holds at least one event, so `limit` batches hold enough.
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                WITH newest AS (SELECT COALESCE(MAX(last_seq), 0) AS seq FROM event_log WHERE session_id = $1)
                SELECT b.body, newest.seq FROM event_log b, newest
                WHERE b.session_id = $1 AND b.last_seq > GREATEST($2, newest.seq - $4) ORDER BY b.last_seq LIMIT $3
                """,
                [id, String(after), String(limit), String(retainedEvents)], prepare: true)
        }
        guard result.rowCount > 0 else { return [] }
        let floor = max(after, Int(result.int(0, 1)) - retainedEvents)
        var events: [LifecycleEvent] = []
        for row in 0..<result.rowCount {
            guard let batch = (try? JSONValue(parsing: result.bytes(row, 0)))?.arrayValue else {
                throw StoreError(message: "session \(id): a stored event batch is not a JSON array")
            }
            for element in batch {
                guard let event = LifecycleEvent(json: element) else {
                    throw StoreError(message: "session \(id): a stored event is not an event")
                }
                if event.seq > floor, events.count < limit { events.append(event) }
            }
        }
        return events
    }

    /// One statement without records; with them (`ending`), batches of ``expiryBatch``
    /// sessions, each deleted, read back and ended in a transaction of its own.
    package func deleteExpired(touchedBefore cutoff: Int64, ending: (@Sendable (StoredSession) -> FeedRecord)?) throws(StoreError)
        -> [ExpiredSession]
    {
        if let ending { return try deleteExpired(touchedBefore: cutoff, recording: ending) }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                WITH d AS (DELETE FROM sessions WHERE touched_at < $1 RETURNING id, octet_length(snapshot) AS bytes),
                e AS (DELETE FROM event_log WHERE session_id IN (SELECT id FROM d)),
                k AS (DELETE FROM idempotency WHERE session_id IN (SELECT id FROM d) OR (created_at < $1 AND key NOT LIKE 'create %')),
                notified AS (SELECT pg_notify('navd_changes', $2 || ' ' || id || ' expired') FROM d)
                SELECT id, bytes, (SELECT count(*) FROM notified) FROM d
                """,
                [String(cutoff), processTag], prepare: true)
        }
        let expired = (0..<result.rowCount).map { ExpiredSession(id: result.text($0, 0), bytes: Int(result.int($0, 1))) }
        for session in expired { cache.remove(session.id) }
        return expired
    }

    /// A page of ``listPage`` rows at a time, each page's snapshots dropped before the next is
    /// read: a result holds every row's text, and a thousand sessions of megabytes each would take
    /// gigabytes in one.
    package func list(limit: Int, _ each: (StoredSession) -> Void) throws(StoreError) {
        var after: (createdAt: Int64, id: String)?
        var listed = 0
        while listed < limit {
            let page = min(Self.listPage, limit - listed)
            let result = try pool.with { connection throws(StoreError) in
                try connection.execute(
                    "SELECT id, graph, graph_version, encode(token_hash, 'hex'), snapshot, created_at, touched_at FROM sessions WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3",
                    [String(after?.createdAt ?? Int64.min), after?.id ?? "", String(page)], prepare: true)
            }
            for row in 0..<result.rowCount {
                let id = result.text(row, 0)
                after = (result.int(row, 5), id)
                if let session = try? session(id: id, result, row, offset: 1) { each(session) }
            }
            listed += result.rowCount
            if result.rowCount < page { return }
        }
    }

    /// Sessions a listing reads at once (``list(limit:_:)``).
    static let listPage = 16

    package func ids(ofGraph name: String, after: String, limit: Int) throws(StoreError) -> [String] {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                "SELECT id FROM sessions WHERE graph = $1 AND id > $2 ORDER BY id LIMIT $3", [name, after, String(limit)], prepare: true)
        }
        return (0..<result.rowCount).map { result.text($0, 0) }
    }

    package func count() throws(StoreError) -> Int {
        let result = try pool.with { connection throws(StoreError) in try connection.execute("SELECT count(*) FROM sessions", prepare: true)
        }
        return Int(result.int(0, 0))
    }

    /// The bytes of every session's snapshot and retained events, read from the tables (a scan of
    /// them: navd asks when it starts and at each sweep, not per change).
    package func storedSessionBytes() throws(StoreError) -> Int {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                SELECT (SELECT coalesce(sum(octet_length(snapshot)), 0) FROM sessions)
                    + (SELECT coalesce(sum(octet_length(body)), 0) FROM event_log)
                """, prepare: true)
        }
        return Int(result.int(0, 0))
    }

    /// A change's events count their JSON, which `event_log` keeps as it is. Those of expired
    /// sessions are not told here: the sweep counts the tables again after it.
    package func takeReleasedEventBytes() -> Int { releasedEvents.take() }

    /// `e`: the deletion of session $1's retained events, with the bytes of each (`bytes`).
    static let deleteEvents = "e AS (DELETE FROM event_log WHERE session_id = $1 RETURNING octet_length(body) AS bytes)"

    package func dropRetainedEvents(of id: String) throws(StoreError) {
        guard SessionID.isValid(id) else { return }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                WITH \(Self.deleteEvents)
                SELECT coalesce(sum(bytes), 0) FROM e
                """, [id], prepare: true)
        }
        releasedEvents.add(Int(result.int(0, 0)))
    }

    /// The pool's waits and the session count, which `count(*)` reads the whole table for: counted
    /// at most every ``StoreStatistics/sessionCountSeconds`` (one scrape pays for it, the others
    /// reuse it), so that scraping every replica does not scan the table each time.
    package func statistics() -> StoreStatistics {
        let now = Clock.seconds()
        let (due, last) = countCache.withLock { cache -> (Bool, Int?) in
            guard now - cache.at >= Double(StoreStatistics.sessionCountSeconds) else { return (false, cache.count) }
            cache.at = now
            return (true, cache.count)
        }
        var sessions = last
        if due, let counted = try? count() {
            sessions = counted
            countCache.withLock { $0.count = counted }
        }
        var statistics = StoreStatistics(sessions: sessions)
        statistics.sessionsCached = true
        statistics.poolConnections = pool.size
        statistics.poolWaits = pool.waits.load(ordering: .relaxed)
        statistics.poolWaitNanoseconds = pool.waitNanoseconds.load(ordering: .relaxed)
        statistics.poolTimeouts = pool.timeouts.load(ordering: .relaxed)
        statistics.groupCommits = groups.groups.load(ordering: .relaxed)
        statistics.groupChanges = groups.changes.load(ordering: .relaxed)
        return statistics
    }

    /// Allocates the version in the database: the next number after the latest stored one,
    /// inserted under the `(name, version)` primary key. A process that loses the race for a
    /// number inserts nothing (`ON CONFLICT DO NOTHING` waits for the winner's commit) and
    /// looks again: then its document gets the next number, or the winner's when it was the same.
    package func storeGraph(_ document: JSONValue, name: String) throws(StoreError) -> (version: Int, stored: Bool) {
        let text = document.jsonString
        for _ in 0..<16 {
            let result = try pool.with { connection throws(StoreError) in
                try connection.execute(
                    """
                    WITH latest AS (
                        SELECT version, document = $2 AS same FROM graphs WHERE name = $1 ORDER BY version DESC LIMIT 1),
                    inserted AS (
                        INSERT INTO graphs (name, version, document)
                        SELECT $1, COALESCE((SELECT version FROM latest), 0) + 1, $2
                        WHERE NOT EXISTS (SELECT 1 FROM latest WHERE same)
                        ON CONFLICT (name, version) DO NOTHING RETURNING version),
                    first AS (
                        INSERT INTO store_meta (key, value) SELECT 'default_graph', $1 FROM inserted
                        ON CONFLICT (key) DO NOTHING)
                    SELECT version, 1 FROM inserted UNION ALL SELECT version, 0 FROM latest WHERE same
                    """,
                    [name, text])
            }
            if result.rowCount == 1 { return (Int(result.int(0, 0)), result.int(0, 1) == 1) }
        }
        throw StoreError(message: "graph '\(name)': no version number could be allocated in 16 attempts")
    }

    package func graph(_ name: String, version: Int) throws(StoreError) -> JSONValue? {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT document FROM graphs WHERE name = $1 AND version = $2", [name, String(version)], prepare: true)
        }
        guard result.rowCount == 1 else { return nil }
        return try Self.graphDocument(result, 0, 0)
    }

    package func latestGraph(_ name: String, newerThan known: Int) throws(StoreError) -> (document: JSONValue, version: Int)? {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                "SELECT document, version FROM graphs WHERE name = $1 AND version > $2 ORDER BY version DESC LIMIT 1",
                [name, String(known)], prepare: true)
        }
        guard result.rowCount == 1 else { return nil }
        return (try Self.graphDocument(result, 0, 0), Int(result.int(0, 1)))
    }

    package func removeGraph(_ name: String, version: Int) throws(StoreError) -> Bool {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("DELETE FROM graphs WHERE name = $1 AND version = $2 RETURNING version", [name, String(version)])
        }
        return result.rowCount == 1
    }

    package func latestGraphVersions() throws(StoreError) -> [(name: String, version: Int)] {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT name, MAX(version) FROM graphs GROUP BY name ORDER BY name")
        }
        return (0..<result.rowCount).map { (result.text($0, 0), Int(result.int($0, 1))) }
    }

    package func firstGraphName() throws(StoreError) -> String? {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT value FROM store_meta WHERE key = 'default_graph'")
        }
        return result.rowCount == 1 ? result.text(0, 0) : nil
    }

    private static func graphDocument(_ result: PostgresResult, _ row: Int, _ column: Int) throws(StoreError) -> JSONValue {
        do {
            return try JSONValue(parsing: result.bytes(row, column))
        } catch {
            throw StoreError(message: "a stored graph is not JSON: \(error)")
        }
    }

    /// `SELECT 1` on a pooled connection: false while PostgreSQL cannot be reached.
    package func isAvailable() -> Bool {
        do {
            try pool.with { connection throws(StoreError) in _ = try connection.execute("SELECT 1", prepare: true) }
            return true
        } catch {
            return false
        }
    }

    package func loadGraphs() throws(StoreError) -> [(document: JSONValue, version: Int)] {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT document, version FROM graphs ORDER BY stored")
        }
        var graphs: [(document: JSONValue, version: Int)] = []
        for row in 0..<result.rowCount {
            graphs.append((try Self.graphDocument(result, row, 0), Int(result.int(row, 1))))
        }
        return graphs
    }

    package func close() {
        closing.store(true, ordering: .relaxed)
        notifier?.close()
        pool.close()
    }
}

/// A fixed set of connections, each used by one thread at a time.
///
/// `@unchecked Sendable`: a connection is only reachable by the thread that took it out of
/// `idle` (under the mutex) until it puts it back.
package final class PostgresPool: @unchecked Sendable {
    private let idle: Mutex<[PostgresConnection]>
    private let available: DispatchSemaphore
    private let closed = Atomic<Bool>(false)
    package let size: Int
    /// Times a caller found no connection free and waited, the time it waited (nanoseconds), and
    /// the waits that gave up: for `/metrics`.
    package let waits = Atomic<Int>(0)
    package let waitNanoseconds = Atomic<Int>(0)
    package let timeouts = Atomic<Int>(0)

    package init(conninfo: String, size: Int) throws(StoreError) {
        self.size = size
        var connections: [PostgresConnection] = []
        for _ in 0..<size { connections.append(try PostgresConnection(conninfo: conninfo)) }
        idle = Mutex(connections)
        available = DispatchSemaphore(value: size)
    }

    package func with<T>(_ body: (PostgresConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .relaxed) else { throw StoreError(message: "the PostgreSQL store is closed") }
        // The common case takes a free connection without a clock read; only a wait is timed.
        if available.wait(timeout: .now()) != .success {
            let started = ContinuousClock.now
            waits.wrappingAdd(1, ordering: .relaxed)
            let result = available.wait(timeout: .now() + .seconds(10))
            let waited = ContinuousClock.now - started
            waitNanoseconds.wrappingAdd(
                Int(waited.components.seconds) * 1_000_000_000 + Int(waited.components.attoseconds / 1_000_000_000), ordering: .relaxed)
            guard result == .success else {
                timeouts.wrappingAdd(1, ordering: .relaxed)
                throw StoreError(message: "no PostgreSQL connection free within 10 s", kind: .unavailable)
            }
        }
        defer { available.signal() }
        guard let connection = idle.withLock({ $0.popLast() }) else {
            throw StoreError(message: "the PostgreSQL pool is empty")
        }
        defer { idle.withLock { $0.append(connection) } }
        return try body(connection)
    }

    package func close() {
        closed.store(true, ordering: .relaxed)
        idle.withLock { connections in
            for connection in connections { connection.close() }
        }
    }
}
