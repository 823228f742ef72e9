import NavCore
import NavJSON
import NavSessions

/// The feed in PostgreSQL: each record is a row of `feed`, written by the statement of its change
/// (the creation's insert, the group's update, the delete, the expiry), so it commits with the
/// change or not at all.
///
/// A record's cursor is its transaction's id, then its position (a sequence). Several processes'
/// transactions commit in any order, so a reader paging past the newest record it sees could
/// skip a record an older transaction commits later. Records are handed out only below the
/// horizon: the oldest transaction id still running (`pg_snapshot_xmin` of the read's own
/// snapshot). Every transaction below it has ended, so the records below it are all there
/// for good, and any record written from now on has an id at or above it. A reader paging on
/// with `next` thus sees every record once. A transaction that has written and is left open,
/// anywhere in the cluster, holds the horizon, and the feed waits for it.
extension PostgresStore {
    /// A record as parameters of ``recordInsert(session:from:first:)``: version, whether it is an
    /// end, graph, time, attributes, the full form, the analytics form, cost, and its view's scenes
    /// (NULL when it is not a view); all NULL without one.
    package static func recordParameters(_ record: FeedRecord?) -> [String?] {
        guard let record else { return Array(repeating: nil, count: 10) }
        return [
            String(record.version), record.isEnd ? "t" : "f", record.graph, String(record.time),
            String(decoding: record.attributesJSON, as: UTF8.self), String(decoding: record.full, as: UTF8.self),
            String(decoding: record.analyticsIfDifferent, as: UTF8.self), String(record.cost), record.toScene, record.fromScene
        ]
    }

    /// `INSERT … SELECT` of a record (``recordParameters(_:)`` from `$first`) for the session
    /// `session` of each row of `source`: none when the change wrote no row.
    static func recordInsert(session: String, from source: String, first: Int) -> String {
        let p = (first..<first + 10).map { "$" + String($0) }
        return """
            INSERT INTO feed (session_id, version, is_end, graph, time, attributes, full_form, analytics, cost, to_scene, from_scene)
            SELECT \(session), \(p[0])::bigint, \(p[1])::boolean, \(p[2])::text, \(p[3])::bigint, \(p[4])::jsonb, \(p[5])::text, \
            \(p[6])::text, \(p[7])::integer, \(p[8])::text, \(p[9])::text FROM \(source)
            """
    }

    /// Runs `body` in a transaction of its own on `connection` and commits it; when `body` answers
    /// nil, rolls it back and runs it again in a new one (at most a few times).
    ///
    /// For a delete or an expiry, whose end record must sort after the session's other records. A
    /// change starts from a version that has committed, so its transaction's id is newer than
    /// the previous record's (``plainRecordedUpdateSQL``); a delete does not: its transaction may
    /// take its id, then wait for the session's row while a change that took a newer id updates
    /// it, and delete what that change wrote. Its record would then sort before the change's. So
    /// the delete reads back whether the row's writer is newer than its own transaction
    /// (`age(xmin) < 0`) and answers nil then: the next transaction gets an id newer than that
    /// change's, which has committed by then.
    static func inTransaction<T>(on connection: PostgresConnection, _ body: () throws(StoreError) -> T?) throws(StoreError) -> T {
        for _ in 0..<8 {
            try connection.execute("BEGIN")
            let value: T?
            do {
                value = try body()
                try connection.execute(value == nil ? "ROLLBACK" : "COMMIT", reconnecting: false)
            } catch {
                _ = try? connection.execute("ROLLBACK", reconnecting: false)
                throw error
            }
            if let value { return value }
        }
        throw StoreError(message: "a delete kept finding its sessions changed by newer transactions", kind: .unavailable)
    }

    /// How many expired sessions one transaction deletes and ends.
    static var expiryBatch: Int { 256 }

    /// Deletes sessions not touched since `cutoff` with their end records (``expiryBatch`` a
    /// transaction): each deleted row is read back (`RETURNING`) and decoded for `ending`, and
    /// the records are written in the same transaction. Sessions a change holds are skipped (a
    /// change moves them on); a session whose snapshot no longer decodes is deleted without a
    /// record, as nothing can be said of its stage.
    func deleteExpired(touchedBefore cutoff: Int64, recording ending: @Sendable (StoredSession) -> FeedRecord) throws(StoreError)
        -> [ExpiredSession]
    {
        var ids: [ExpiredSession] = []
        while true {
            let batch = try pool.with { connection throws(StoreError) in
                try Self.inTransaction(on: connection) { () throws(StoreError) -> [ExpiredSession]? in
                    try expireBatch(before: cutoff, ending: ending, on: connection)
                }
            }
            for expired in batch { cache.remove(expired.id) }
            ids += batch
            if batch.count < Self.expiryBatch { return ids }
        }
    }

    private func expireBatch(before cutoff: Int64, ending: @Sendable (StoredSession) -> FeedRecord, on connection: PostgresConnection)
        throws(StoreError) -> [ExpiredSession]?
    {
        let result = try connection.execute(
            """
            WITH d AS (
                DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions WHERE touched_at < $1 ORDER BY touched_at LIMIT $3 FOR UPDATE SKIP LOCKED)
                RETURNING id, graph, graph_version, encode(token_hash, 'hex') AS token, snapshot, created_at, touched_at,
                    age(xmin) < 0 AS newer),
            e AS (DELETE FROM event_log WHERE session_id IN (SELECT id FROM d)),
            k AS (DELETE FROM idempotency WHERE session_id IN (SELECT id FROM d) OR (created_at < $1 AND key NOT LIKE 'create %')),
            notified AS (SELECT pg_notify('navd_changes', $2 || ' ' || id || ' expired') FROM d)
            SELECT id, graph, graph_version, token, snapshot, created_at, touched_at, newer, (SELECT count(*) FROM notified) FROM d
            """,
            [String(cutoff), processTag, String(Self.expiryBatch)], prepare: true, reconnecting: false)
        let rows = 0..<result.rowCount
        // Before any record is made: `ending` counts what it makes, and this batch goes again.
        if rows.contains(where: { result.text($0, 7) == "t" }) { return nil }
        var ids: [ExpiredSession] = []
        var records: [FeedRecord] = []
        for row in rows {
            let id = result.text(row, 0)
            ids.append(ExpiredSession(id: id, bytes: result.bytes(row, 4).count))
            if let session = try? session(id: id, result, row, offset: 1) { records.append(ending(session)) }
        }
        guard !records.isEmpty else { return ids }
        // One statement for every record: each column as an array.
        let columns = records.map(Self.recordParameters)
        try connection.execute(
            """
            INSERT INTO feed (session_id, version, is_end, graph, time, attributes, full_form, analytics, cost)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::boolean[], $4::text[], $5::bigint[], $6::jsonb[], $7::text[], $8::text[],
                $9::integer[])
            """,
            [Self.arrayLiteral(records.map(\.session))] + (0..<8).map { column in Self.arrayLiteral(columns.map { $0[column] ?? "" }) },
            prepare: true, reconnecting: false)
        return ids
    }

    /// A PostgreSQL array literal of `values`, each quoted (`"` and `\` escaped).
    package static func arrayLiteral(_ values: [String]) -> String {
        var text = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            text += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
    }

    // MARK: Reading

    /// The columns an entry is read from, after the horizon: transaction, position, session,
    /// version, whether it is an end, time, the form's members (`$form`: the full form when true).
    private static func entryColumns(form: Int) -> String {
        "transaction_id, position, session_id, version, is_end, time, CASE WHEN $\(form)::boolean THEN full_form ELSE COALESCE(NULLIF(analytics, ''), full_form) END"
    }

    /// Up to $3 records after ($1, $2), below the horizon, which the first column gives (the
    /// only row when there are no records).
    private static let feedAfterSQL = """
        SELECT h.horizon::text, r.transaction_id::text, r.position, r.session_id, r.version, r.is_end, r.time, r.members
        FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon) h
        LEFT JOIN LATERAL (
            SELECT \(entryColumns(form: 4)) AS members FROM feed
            WHERE (transaction_id, position) > ($1::xid8, $2::bigint) AND transaction_id < h.horizon
            ORDER BY transaction_id, position LIMIT $3) r ON true
        ORDER BY r.transaction_id, r.position
        """

    /// Up to $2 records from the first below the horizon written at or after $1 and after ($4,
    /// $5), as ``feedAfterSQL``.
    private static let feedSinceSQL = """
        SELECT h.horizon::text, r.transaction_id::text, r.position, r.session_id, r.version, r.is_end, r.time, r.members
        FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon) h
        LEFT JOIN LATERAL (
            SELECT f.transaction_id, f.position, f.session_id, f.version, f.is_end, f.time,
                CASE WHEN $3::boolean THEN f.full_form ELSE COALESCE(NULLIF(f.analytics, ''), f.full_form) END AS members
            FROM feed f, (
                SELECT transaction_id, position FROM feed
                WHERE time >= $1 AND (transaction_id, position) > ($4::xid8, $5::bigint) AND transaction_id < h.horizon
                ORDER BY transaction_id, position LIMIT 1) start_at
            WHERE (f.transaction_id, f.position) >= (start_at.transaction_id, start_at.position) AND f.transaction_id < h.horizon
            ORDER BY f.transaction_id, f.position LIMIT $2) r ON true
        ORDER BY r.transaction_id, r.position
        """

    /// `since` starts at the first record, in cursor order, written at or after the time, and goes
    /// on as `after` would from just before it.
    package func feed(from start: FeedStart, limit: Int, form: FeedForm) throws(StoreError) -> FeedPage {
        let full = form == .full ? "t" : "f"
        let result = try pool.with { connection throws(StoreError) in
            switch start {
            case .oldest:
                try connection.execute(Self.feedAfterSQL, ["0", "0", String(max(0, limit)), full], prepare: true)
            case .after(let cursor):
                try connection.execute(
                    Self.feedAfterSQL, [String(cursor.transaction), String(cursor.position), String(max(0, limit)), full], prepare: true)
            case .since(let time, let cursor):
                try connection.execute(
                    Self.feedSinceSQL,
                    [String(time), String(max(0, limit)), full, String(cursor.transaction), String(cursor.position)], prepare: true)
            }
        }
        var entries: [FeedEntry] = []
        for row in 0..<result.rowCount where !result.isNull(row, 1) {
            entries.append(Self.entry(result, row, offset: 1, form: form))
        }
        if let last = entries.last { return FeedPage(entries: entries, next: last.cursor) }
        if case .after(let cursor) = start { return FeedPage(entries: [], next: cursor) }
        // Every record written from now on has a transaction id at or above the horizon and a
        // position above 0: after this cursor (and every record below it was older than `since`).
        let horizon = FeedCursor(transaction: UInt64(result.text(0, 0)) ?? 0, position: 0)
        if case .since(_, let cursor) = start { return FeedPage(entries: [], next: max(horizon, cursor)) }
        return FeedPage(entries: [], next: horizon)
    }

    /// The entry of `row` whose columns start at `offset` (``entryColumns(form:)``).
    private static func entry(_ result: PostgresResult, _ row: Int, offset: Int, form: FeedForm) -> FeedEntry {
        FeedEntry(
            cursor: FeedCursor(transaction: UInt64(result.text(row, offset)) ?? 0, position: result.int(row, offset + 1)),
            session: result.text(row, offset + 2), version: Int(result.int(row, offset + 3)), isEnd: result.text(row, offset + 4) == "t",
            time: result.int(row, offset + 5), members: result.bytes(row, offset + 6), form: form)
    }

    package func feedFloor() throws(StoreError) -> FeedCursor {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT floor_transaction::text, floor_position FROM feed_state", prepare: true)
        }
        guard result.rowCount == 1 else { return .start }
        return FeedCursor(transaction: UInt64(result.text(0, 0)) ?? 0, position: result.int(0, 1))
    }

    /// Every cursor handed out is below the horizon when it is read ((horizon, 0) for an empty
    /// page), and the horizon never goes back, whichever process reads it; its position is one the
    /// sequence gave. A cursor of a transaction still running, or above, was never handed out;
    /// nor was one without a transaction (the other stores' form).
    package func feedGave(_ cursor: FeedCursor) throws(StoreError) -> Bool {
        if cursor == .start { return true }
        guard cursor.transaction > 0 else { return false }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                SELECT ($1::xid8, $2::bigint) <= (pg_snapshot_xmin(pg_current_snapshot()), 0::bigint)
                    AND $2::bigint <= COALESCE(pg_sequence_last_value(pg_get_serial_sequence('feed', 'position')::regclass), 0)
                """,
                [String(cursor.transaction), String(cursor.position)], prepare: true)
        }
        return result.rowCount == 1 && result.text(0, 0) == "t"
    }

    /// The session's own records in version order (its end last), whether or not they are below
    /// the horizon yet: each was written after the one before it committed.
    package func history(of id: String, after version: Int, limit: Int) throws(StoreError) -> [FeedEntry] {
        guard SessionID.isValid(id) else { return [] }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                SELECT transaction_id::text, position, session_id, version, is_end, time, full_form FROM feed
                WHERE session_id = $1 AND version > $2 ORDER BY version, is_end, transaction_id, position LIMIT $3
                """,
                [id, String(version), String(max(0, limit))], prepare: true)
        }
        return (0..<result.rowCount).map { Self.entry(result, $0, offset: 0, form: .full) }
    }

    // MARK: Maintenance

    /// Deletes the records, and takes those the sweep has counted off its count: under the lock
    /// of `feed_state`, taken first, so a sweep and a purge never wait for each other's rows.
    package func purgeFeed(_ purge: FeedPurge) throws(StoreError) -> Int {
        let condition: String
        let parameters: [String?]
        let snapshots: String
        switch purge {
        case .session(let id):
            condition = "session_id = $1"
            parameters = [id]
            snapshots = "DELETE FROM feed_checkpoints WHERE session_id = $1"
        case .attribute(let key, let value):
            condition = "attributes -> $1::text = $2::jsonb"
            parameters = [key, value.jsonString]
            snapshots = "DELETE FROM feed_checkpoints WHERE session_id IN (SELECT session_id FROM feed WHERE \(condition))"
        }
        return try pool.with { connection throws(StoreError) in
            try Self.inTransaction(on: connection) { () throws(StoreError) -> Int? in
                try connection.execute("SELECT 1 FROM feed_state FOR UPDATE", prepare: true, reconnecting: false)
                // A snapshot holds the session's context, which the purge is there to forget.
                try connection.execute(snapshots, parameters, prepare: true, reconnecting: false)
                let result = try connection.execute(
                    """
                    WITH d AS (DELETE FROM feed WHERE \(condition) RETURNING transaction_id, position, cost),
                    c AS (
                        SELECT count(d.transaction_id) AS removed,
                            count(d.transaction_id) FILTER (WHERE (d.transaction_id, d.position) <= (s.counted_transaction, s.counted_position)) AS records,
                            COALESCE(sum(d.cost) FILTER (WHERE (d.transaction_id, d.position) <= (s.counted_transaction, s.counted_position)), 0)
                                AS bytes
                        FROM feed_state s LEFT JOIN d ON true),
                    u AS (UPDATE feed_state SET records = feed_state.records - c.records, bytes = feed_state.bytes - c.bytes FROM c)
                    SELECT removed FROM c
                    """,
                    parameters, prepare: true, reconnecting: false)
                return Int(result.int(0, 0))
            }
        }
    }

    /// In one transaction under the lock of `feed_state`: counts the records that came below the
    /// horizon since the last sweep (an index range: only the new ones), deletes those older
    /// than `cutoff`, then the oldest while the bytes counted exceed `maxBytes`, and moves the
    /// floor to the newest it deleted. Only records below the horizon are counted and swept, so
    /// the floor never passes a record a reader has not been able to see.
    ///
    /// The count is kept by the sweep rather than by each change: a running total that every
    /// change updated would be one row every transaction of every process writes, and they would
    /// commit one at a time; summing the whole table each time would read all of it every sweep.
    package func sweepFeed(olderThan cutoff: Int64, maxBytes: Int) throws(StoreError) -> Int {
        let swept = try pool.with { connection throws(StoreError) in
            try Self.inTransaction(on: connection) { () throws(StoreError) -> Int? in
                try sweep(olderThan: cutoff, maxBytes: maxBytes, on: connection)
            }
        }
        // The usage read next is read anew: a figure from before the sweep would have every write
        // that follows sweep again, until it is due.
        feedUsageCache.withLock { $0.at = -.infinity }
        return swept
    }

    private func sweep(olderThan cutoff: Int64, maxBytes: Int, on connection: PostgresConnection) throws(StoreError) -> Int {
        let state = try connection.execute(
            """
            SELECT counted_transaction::text, counted_position, records, bytes, floor_transaction::text, floor_position,
                pg_snapshot_xmin(pg_current_snapshot())::text
            FROM feed_state FOR UPDATE
            """,
            prepare: true, reconnecting: false)
        guard state.rowCount == 1 else { throw StoreError(message: "the feed's state row is missing") }
        func cursor(_ result: PostgresResult, _ row: Int, _ column: Int) -> FeedCursor {
            FeedCursor(transaction: UInt64(result.text(row, column)) ?? 0, position: result.int(row, column + 1))
        }
        let counted = cursor(state, 0, 0)
        var floor = cursor(state, 0, 4)
        let horizon = state.text(0, 6)
        let fresh = try connection.execute(
            """
            SELECT count(*), COALESCE(sum(cost), 0) FROM feed
            WHERE (transaction_id, position) > ($1::xid8, $2::bigint) AND transaction_id < $3::xid8
            """,
            [String(counted.transaction), String(counted.position), horizon], prepare: true, reconnecting: false)
        var records = state.int(0, 2) + fresh.int(0, 0)
        var bytes = state.int(0, 3) + fresh.int(0, 1)
        var swept = 0

        let old = try connection.execute(
            """
            WITH d AS (DELETE FROM feed WHERE time < $1 AND transaction_id < $2::xid8 RETURNING transaction_id, position, cost),
            newest AS (SELECT transaction_id, position FROM d ORDER BY transaction_id DESC, position DESC LIMIT 1)
            SELECT count(*), COALESCE(sum(cost), 0), (SELECT transaction_id::text FROM newest), (SELECT position FROM newest) FROM d
            """,
            [String(cutoff), horizon], prepare: true, reconnecting: false)
        if old.int(0, 0) > 0 {
            swept += Int(old.int(0, 0))
            records -= old.int(0, 0)
            bytes -= old.int(0, 1)
            floor = max(floor, cursor(old, 0, 2))
        }

        while bytes > Int64(maxBytes) {
            let oldest = try connection.execute(
                "SELECT transaction_id::text, position, cost FROM feed WHERE transaction_id < $1::xid8 ORDER BY transaction_id, position LIMIT 512",
                [horizon], prepare: true, reconnecting: false)
            guard oldest.rowCount > 0 else { break }
            var excess = bytes - Int64(maxBytes)
            var through = 0
            while through < oldest.rowCount - 1, excess > oldest.int(through, 2) {
                excess -= oldest.int(through, 2)
                through += 1
            }
            let last = cursor(oldest, through, 0)
            let removed = try connection.execute(
                """
                WITH d AS (DELETE FROM feed WHERE (transaction_id, position) <= ($1::xid8, $2::bigint) RETURNING cost)
                SELECT count(*), COALESCE(sum(cost), 0) FROM d
                """,
                [String(last.transaction), String(last.position)], prepare: true, reconnecting: false)
            swept += Int(removed.int(0, 0))
            records -= removed.int(0, 0)
            bytes -= removed.int(0, 1)
            floor = max(floor, last)
        }

        let newCounted = max(counted, FeedCursor(transaction: UInt64(horizon) ?? 0, position: 0))
        try connection.execute(
            """
            UPDATE feed_state SET counted_transaction = $1::xid8, counted_position = $2, records = $3, bytes = $4,
                floor_transaction = $5::xid8, floor_position = $6
            """,
            [
                String(newCounted.transaction), String(newCounted.position), String(max(0, records)), String(max(0, bytes)),
                String(floor.transaction), String(floor.position)
            ],
            prepare: true, reconnecting: false)
        try Self.sweepCheckpoints(maxBytes: FeedSettings.checkpointBytes(forFeedBytes: maxBytes), on: connection)
        return swept
    }

    /// Counted by PostgreSQL from the `feed_session` index alone (an index-only scan of every
    /// graph's records, the graph, view and time checked in it), grouped by edge. What is
    /// committed is counted: traffic needs no horizon, since it hands out no cursor.
    package func traffic(graph: String, in range: Range<Int64>) throws(StoreError) -> FeedTraffic {
        try pool.with { connection throws(StoreError) -> FeedTraffic in
            let result = try connection.execute(
                """
                SELECT from_scene, to_scene, count(*) FROM feed
                WHERE graph = $1 AND to_scene IS NOT NULL AND time >= $2::bigint AND time < $3::bigint
                GROUP BY from_scene, to_scene
                """,
                [graph, String(range.lowerBound), String(range.upperBound)], prepare: true)
            var traffic = FeedTraffic()
            for row in 0..<result.rowCount {
                traffic.add(
                    from: result.isNull(row, 0) ? nil : result.text(row, 0), to: result.text(row, 1), count: Int(result.int(row, 2)))
            }
            return traffic
        }
    }

    /// The step scenes' views from the `feed_session` index, session by session in version order,
    /// each scene as its place in the steps: a string is made per session, not per row.
    package func funnel(_ query: FunnelQuery) throws(StoreError) -> [Int] {
        let scenes = Array(Set(query.steps)).sorted()
        return try pool.with { connection throws(StoreError) -> [Int] in
            let result = try connection.execute(
                """
                SELECT session_id, time, array_position($4::text[], to_scene) FROM feed
                WHERE graph = $1 AND to_scene IS NOT NULL AND to_scene = ANY($4::text[]) AND time >= $2::bigint AND time < $3::bigint
                ORDER BY session_id, version
                """,
                [query.graph, String(query.range.lowerBound), String(query.range.upperBound), Self.arrayLiteral(scenes)], prepare: true)
            var counter = FunnelCounter(steps: query.steps, within: query.within)
            var session = ""
            var sessionBytes: [UInt8] = []
            for row in 0..<result.rowCount {
                if !result.withBytes(row, 0, { $0.elementsEqual(sessionBytes) }) {
                    sessionBytes = result.bytes(row, 0)
                    session = String(decoding: sessionBytes, as: UTF8.self)
                }
                let place = Int(result.int(row, 2)) - 1
                guard scenes.indices.contains(place) else { continue }
                counter.add(session: session, time: result.int(row, 1), scene: scenes[place])
            }
            return counter.counts
        }
    }

    /// The records and bytes the sweep counted, and those written since: read at most every
    /// ``StoreStatistics/sessionCountSeconds`` (a scrape of every replica does not read the table
    /// each time); the last reading, or none, while PostgreSQL cannot be reached.
    package func feedUsage() -> (records: Int, bytes: Int) {
        let now = Clock.seconds()
        let (due, last) = feedUsageCache.withLock { cache -> (Bool, (records: Int, bytes: Int)) in
            guard now - cache.at >= Double(StoreStatistics.sessionCountSeconds) else { return (false, cache.usage) }
            cache.at = now
            return (true, cache.usage)
        }
        guard due else { return last }
        let result = try? pool.with { connection throws(StoreError) in
            try connection.execute(
                """
                SELECT s.records + count(f.position), s.bytes + COALESCE(sum(f.cost), 0)
                FROM feed_state s LEFT JOIN feed f ON (f.transaction_id, f.position) > (s.counted_transaction, s.counted_position)
                GROUP BY s.records, s.bytes
                """,
                prepare: true)
        }
        guard let result, result.rowCount == 1 else { return last }
        let usage = (records: Int(result.int(0, 0)), bytes: Int(result.int(0, 1)))
        feedUsageCache.withLock { $0.usage = usage }
        return usage
    }
}
