/// The SQLite store's tables: migrations run in order at start-up, each recorded in `migrations`.
extension SQLiteStore {
    /// Migrations in order; each runs once, recorded in `migrations`.
    static let migrations: [String] = [
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            graph TEXT NOT NULL,
            graph_version INTEGER NOT NULL,
            version INTEGER NOT NULL,
            token_hash BLOB NOT NULL,
            snapshot_schema INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            touched_at INTEGER NOT NULL
        );
        CREATE INDEX sessions_touched_at ON sessions (touched_at);
        CREATE TABLE events (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID;
        CREATE TABLE graphs (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            document TEXT NOT NULL,
            PRIMARY KEY (name, version)
        );
        """,
        // One row per transition instead of one per event: a write inserts one row, not ten.
        """
        CREATE TABLE event_batches (
            session_id TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, first_seq)
        ) WITHOUT ROWID;
        INSERT INTO event_batches (session_id, first_seq, last_seq, body)
            SELECT session_id, seq, seq, '[' || body || ']' FROM events;
        DROP TABLE events;
        """,
        // Changes are appended here and folded into sessions and the event batches by compaction.
        """
        CREATE TABLE journal (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            touched_at INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            events TEXT NOT NULL
        );
        -- Compaction writes a session's journalled events as one batch of several kilobytes: in
        -- a table clustered by session (WITHOUT ROWID) such rows split pages wherever they land;
        -- in a rowid table they are appended, and only a small index entry lands by session.
        CREATE TABLE event_log (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            body TEXT NOT NULL
        );
        CREATE INDEX event_log_session ON event_log (session_id, first_seq);
        INSERT INTO event_log (session_id, first_seq, last_seq, body)
            SELECT session_id, first_seq, last_seq, body FROM event_batches ORDER BY session_id, first_seq;
        DROP TABLE event_batches;
        """,
        // Changes go to the change log files now; the journal table is folded in before this runs.
        """
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO store_meta (key, value) VALUES ('compacted_seq', 0);
        DROP TABLE journal;
        """,
    ]

    static func migrate(_ connection: SQLiteConnection, through last: Int) throws(StoreError) {
        try connection.execute("CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let current = try connection.statement("SELECT COALESCE(MAX(version), 0) FROM migrations")
        _ = try current.step()
        let applied = Int(current.int(0))
        current.reset()
        guard applied <= migrations.count else {
            throw StoreError(message: "the database is at schema \(applied); this navd knows up to \(migrations.count)")
        }
        for (index, sql) in migrations.enumerated().prefix(last).dropFirst(applied) {
            try connection.transaction { () throws(StoreError) in
                try connection.execute(sql)
                try connection.statement("INSERT INTO migrations (version, applied_at) VALUES (?, strftime('%s','now'))")
                    .bind(1, Int64(index + 1)).run()
            }
        }
    }

    /// Folds and empties the journal table of schema 3, if this database still has one.
    static func foldLegacyJournal(_ connection: SQLiteConnection, retainedEvents: Int) throws(StoreError) {
        let exists = try connection.statement("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'journal'")
        _ = try exists.step()
        let hasJournal = exists.int(0) > 0
        exists.reset()
        guard hasJournal else { return }
        var folds: [String: Fold] = [:]
        let rows = try connection.statement(
            "SELECT seq, session_id, version, snapshot, touched_at, first_seq, last_seq, events FROM journal ORDER BY seq"
        )
        defer { rows.reset() }
        while try rows.step() {
            let record = ChangeLog.Record(
                seq: rows.int(0), sessionID: rows.text(1), version: rows.int(2), touchedAt: rows.int(4),
                firstEvent: rows.int(5), lastEvent: rows.int(6), snapshot: rows.bytes(3), events: rows.bytes(7)
            )
            fold(record, into: &folds, retainedEvents: retainedEvents)
        }
        rows.reset()
        try write(folds, through: nil, connection, retainedEvents: retainedEvents) { () throws(StoreError) in
            try connection.statement("DELETE FROM journal").run()
        }
    }
}
