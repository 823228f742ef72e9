import NavCore
import Synchronization

/// Sessions in an SQLite file (`--store sqlite:PATH`), the embedded default.
///
/// WAL journal; `synchronous=NORMAL` by default, so a committed change survives the
/// process being killed (`kill -9`); `sqlite:PATH?sync=full` also survives power loss.
/// A change is acknowledged only after its transaction has committed.
///
/// One navd process owns the file (an advisory lock on `PATH.lock` says so, and the connection
/// holds SQLite's exclusive locking mode, which spares every transaction its file-lock system
/// calls), so the store keeps a write-through cache of decoded sessions and reads never touch
/// the disk twice.
///
/// Writes go to a journal first. A change appends one row (the new snapshot and the
/// transition's events) to the `journal` table, whose integer key puts it at the end of the
/// table: a commit writes the table's last page or two, not the pages of a session row, its
/// index entries and its event batches scattered through the file. Compaction folds the
/// journal into `sessions` and `event_log` — each session's latest snapshot once, its
/// events as one batch — when the journal holds ``compactionThreshold`` rows, before a sweep or
/// a listing, and when the store opens (so a crash leaves nothing to replay by hand) or
/// closes. What compaction writes is folded in memory as the rows are written (``Fold``), so it
/// never reads the journal back, except at start-up, after a crash; each compaction is followed by a checkpoint (copying the WAL back into the database
/// file), so a busy store pauses once per ``compactionThreshold`` changes rather than on
/// whichever commit fills the WAL. Every journal row belongs to a session in the cache, which
/// is why reads never need to look in the journal for a snapshot.
///
/// `@unchecked Sendable`: the connection and the cache are only ever used inside `lock`.
final class SQLiteStore: SessionStore, GraphStore, @unchecked Sendable {
    let name: String
    private let lock = Mutex(())
    private let connection: SQLiteConnection
    private let ownership: OwnershipLock
    private let retainedEvents: Int
    private let decode: SnapshotDecoder
    private var cache: [String: StoredSession] = [:]
    /// What the journal holds, by session, folded: compaction writes this.
    private var pending: [String: Fold] = [:]
    private var journalRows = 0
    /// The one statement every change runs, kept at hand.
    private var journalInsert: SQLiteConnection.Statement?
    private var nextJournalSeq: Int64 = 1
    /// Compact once the journal holds this many rows.
    let compactionThreshold: Int
    /// The journal size at which the next change compacts: the threshold, or further off
    /// after a compaction failed, so a failing one is not retried on every change.
    private var compactionDue: Int

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
    ]

    /// - Parameters:
    ///   - path: the database file; its folder is created if missing.
    ///   - decode: turns a stored snapshot back into a state, checked against its graph.
    init(
        path: String, synchronousFull: Bool = false, retainedEvents: Int = 1000, compactionThreshold: Int = 2048,
        decode: @escaping SnapshotDecoder
    ) throws(StoreError) {
        self.name = "sqlite:\(path)"
        self.retainedEvents = retainedEvents
        self.compactionThreshold = compactionThreshold
        self.compactionDue = compactionThreshold
        self.decode = decode
        try FileSystem.createParentDirectory(of: path)
        ownership = try OwnershipLock(path: path + ".lock", owner: path)
        connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA locking_mode=EXCLUSIVE")
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=\(synchronousFull ? "FULL" : "NORMAL")")
        try connection.execute("PRAGMA foreign_keys=ON")
        // 64 MiB of page cache: the write path then rarely reads a page back from disk.
        try connection.execute("PRAGMA cache_size=-65536")
        // No checkpoint on commit: compaction runs one after folding the journal.
        try connection.execute("PRAGMA wal_autocheckpoint=0")
        try migrate()
        // What a crash left in the journal is folded in before anything is served.
        try readJournal()
        try compactJournal(evenIfEmpty: true)
    }

    private func migrate() throws(StoreError) {
        try connection.execute("CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let current = try connection.statement("SELECT COALESCE(MAX(version), 0) FROM migrations")
        _ = try current.step()
        let applied = Int(current.int(0))
        current.reset()
        guard applied <= Self.migrations.count else {
            throw StoreError(message: "the database is at schema \(applied); this navd knows up to \(Self.migrations.count)")
        }
        for (index, sql) in Self.migrations.enumerated().dropFirst(applied) {
            try connection.transaction { () throws(StoreError) in
                try connection.execute(sql)
                try connection.statement("INSERT INTO migrations (version, applied_at) VALUES (?, strftime('%s','now'))")
                    .bind(1, Int64(index + 1)).run()
            }
        }
    }

    private func locked<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try lock.withLock { _ throws(StoreError) -> T in try body() }
    }

    func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        try locked { () throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.statement(
                    "INSERT INTO sessions (id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at) VALUES (?,?,?,?,?,?,?,?,?)"
                )
                .bind(1, session.id).bind(2, session.graphName).bind(3, Int64(session.graphVersion))
                .bind(4, Int64(session.state.version)).bind(5, session.tokenDigest.bytes)
                .bind(6, Int64(SessionState.snapshotSchema)).bind(7, utf8: session.state.snapshotBytes)
                .bind(8, session.createdAt).bind(9, session.touchedAt).run()
                try appendEvents(events, encoded: events.jsonBytes, to: session.id)
            }
            cache[session.id] = session
        }
    }

    func load(_ id: String) throws(StoreError) -> StoredSession? {
        try locked { () throws(StoreError) -> StoredSession? in try cachedOrLoaded(id) }
    }

    private func row(id: String, _ statement: SQLiteConnection.Statement, offset: Int32) throws(StoreError) -> StoredSession {
        let graph = statement.text(offset)
        let graphVersion = Int(statement.int(offset + 1))
        let snapshot: JSONValue
        do {
            snapshot = try JSONValue(parsing: statement.bytes(offset + 3), maximumDepth: StoredSession.snapshotDepth)
        } catch {
            throw StoreError(message: "session \(id): stored snapshot is not JSON: \(error)")
        }
        return StoredSession(
            id: id, graphName: graph, graphVersion: graphVersion, tokenDigest: TokenDigest(bytes: statement.bytes(offset + 2)),
            state: try decode(snapshot, graph, graphVersion), createdAt: statement.int(offset + 4), touchedAt: statement.int(offset + 5)
        )
    }

    func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON encodedEvents: [UInt8]) throws(StoreError) -> Bool {
        // Encode before taking the lock: only the database work is serialised.
        let snapshot = session.state.snapshotBytes
        return try locked { () throws(StoreError) -> Bool in
            // The cache holds every session written since the store opened, and the journal
            // only such sessions, so the cached version is the stored one.
            guard let current = try cachedOrLoaded(session.id), current.state.version == expectedVersion else { return false }
            let seq = nextJournalSeq
            try connection.transaction { () throws(StoreError) in
                try connection.prepared(
                    &journalInsert,
                    "INSERT INTO journal (seq, session_id, version, snapshot, touched_at, first_seq, last_seq, events) VALUES (?,?,?,?,?,?,?,?)"
                )
                .bind(1, seq).bind(2, session.id).bind(3, Int64(session.state.version)).bind(4, utf8: snapshot)
                .bind(5, session.touchedAt).bind(6, Int64(events.first?.seq ?? 0)).bind(7, Int64(events.last?.seq ?? 0))
                .bind(8, utf8: encodedEvents).run()
            }
            nextJournalSeq += 1
            journalRows += 1
            fold(
                seq: seq, id: session.id, version: Int64(session.state.version), snapshot: snapshot, touchedAt: session.touchedAt,
                batch: events.first.map { (Int64($0.seq), Int64(events.last?.seq ?? $0.seq), encodedEvents) }
            )
            cache[session.id] = session
            // The change is committed whatever compaction does; a failed one is retried later.
            if journalRows >= compactionDue {
                do {
                    try compactJournal()
                } catch {
                    compactionDue = journalRows + compactionThreshold
                }
            }
            return true
        }
    }

    /// The cached session, or the stored one (then cached). Caller holds the lock.
    private func cachedOrLoaded(_ id: String) throws(StoreError) -> StoredSession? {
        if let cached = cache[id] { return cached }
        let statement = try connection.statement(
            "SELECT graph, graph_version, token_hash, snapshot, created_at, touched_at FROM sessions WHERE id = ?"
        )
        try statement.bind(1, id)
        // Reset when done: a statement left mid-run keeps a read transaction open and the WAL growing.
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let session = try row(id: id, statement, offset: 0)
        cache[id] = session
        return session
    }

    /// One session's journalled changes as compaction will write them.
    private struct Fold {
        var version: Int64
        var snapshot: [UInt8]
        var touchedAt: Int64
        /// The journalled transitions' events, oldest first; only as many as are retained.
        var batches: [(first: Int64, last: Int64, body: [UInt8])] = []
        var eventCount: Int64 = 0
        /// The session's journal rows.
        var seqs: [Int64] = []
    }

    /// Adds one journal row to ``pending``. Caller holds the lock.
    private func fold(seq: Int64, id: String, version: Int64, snapshot: [UInt8], touchedAt: Int64, batch: (Int64, Int64, [UInt8])?) {
        var entry = pending.removeValue(forKey: id) ?? Fold(version: version, snapshot: snapshot, touchedAt: touchedAt)
        entry.version = version
        entry.snapshot = snapshot
        entry.touchedAt = touchedAt
        entry.seqs.append(seq)
        if let (first, last, body) = batch {
            entry.batches.append((first, last, body))
            entry.eventCount += last - first + 1
            // A hot session's journal may hold many transitions: keep what is retained.
            let retained = Int64(retainedEvents)
            while let oldest = entry.batches.first, entry.eventCount - (oldest.last - oldest.first + 1) >= retained {
                entry.eventCount -= oldest.last - oldest.first + 1
                entry.batches.removeFirst()
            }
        }
        pending[id] = entry
    }

    /// Folds what a crash left in the journal into ``pending``. Caller holds the lock.
    private func readJournal() throws(StoreError) {
        pending = [:]
        journalRows = 0
        let rows = try connection.statement(
            "SELECT seq, session_id, version, snapshot, touched_at, first_seq, last_seq, events FROM journal ORDER BY seq"
        )
        defer { rows.reset() }
        while try rows.step() {
            let first = rows.int(5)
            fold(
                seq: rows.int(0), id: rows.text(1), version: rows.int(2), snapshot: rows.bytes(3), touchedAt: rows.int(4),
                batch: first > 0 ? (first, rows.int(6), rows.bytes(7)) : nil
            )
            journalRows += 1
        }
    }

    /// Writes ``pending`` into `sessions` and `event_log` and empties the journal, in one
    /// transaction, then checkpoints. Caller holds the lock.
    private func compactJournal(evenIfEmpty: Bool = false) throws(StoreError) {
        guard journalRows > 0 || evenIfEmpty else { return }
        let retained = Int64(retainedEvents)
        try connection.transaction { () throws(StoreError) in
            for (id, entry) in pending {
                try connection.statement("UPDATE sessions SET version = ?, snapshot = ?, touched_at = ? WHERE id = ?")
                    .bind(1, entry.version).bind(2, utf8: entry.snapshot).bind(3, entry.touchedAt).bind(4, id).run()
                guard connection.changes == 1, let first = entry.batches.first, let last = entry.batches.last else { continue }
                var body = first.body
                for batch in entry.batches.dropFirst() { Self.appendJSONArray(batch.body, to: &body) }
                try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
                    .bind(1, id).bind(2, first.first).bind(3, last.last).bind(4, utf8: body).run()
                // Whole batches leave once all their events are older than the retained ones.
                if last.last > retained {
                    try connection.statement("DELETE FROM event_log WHERE session_id = ? AND last_seq <= ?")
                        .bind(1, id).bind(2, last.last - retained).run()
                }
            }
            try connection.statement("DELETE FROM journal").run()
        }
        pending = [:]
        journalRows = 0
        nextJournalSeq = 1
        compactionDue = compactionThreshold
        // Nothing else reads the file, so this copies the whole WAL, which the next write restarts.
        try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// `[a,b]` + `[c]` → `[a,b,c]`, on the JSON bytes of two arrays.
    private static func appendJSONArray(_ array: [UInt8], to merged: inout [UInt8]) {
        guard array.count > 2 else { return }
        guard merged.count > 2 else {
            merged = array
            return
        }
        merged.removeLast()  // "]"
        merged.append(UInt8(ascii: ","))
        merged.append(contentsOf: array.dropFirst())
    }

    private func appendEvents(_ events: [LifecycleEvent], encoded: [UInt8], to id: String) throws(StoreError) {
        guard let first = events.first, let last = events.last else { return }
        try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
            .bind(1, id).bind(2, Int64(first.seq)).bind(3, Int64(last.seq)).bind(4, utf8: encoded).run()
    }

    func delete(_ id: String) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            let journalled = pending[id]?.seqs ?? []
            let deleted = try connection.transaction { () throws(StoreError) -> Bool in
                for seq in journalled {
                    try connection.statement("DELETE FROM journal WHERE seq = ?").bind(1, seq).run()
                }
                try connection.statement("DELETE FROM event_log WHERE session_id = ?").bind(1, id).run()
                try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                return connection.changes > 0
            }
            cache[id] = nil
            pending[id] = nil
            journalRows -= journalled.count
            return deleted
        }
    }

    func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        try locked { () throws(StoreError) -> [LifecycleEvent] in
            // Batches are trimmed whole, so older events may linger: show the retained ones only.
            let newest = try cachedOrLoaded(id)?.state.eventCounter ?? 0
            let after = max(after, newest - retainedEvents)
            var events: [LifecycleEvent] = []
            func collect(_ body: [UInt8]) {
                for element in (try? JSONValue(parsing: body))?.arrayValue ?? [] {
                    guard let event = LifecycleEvent(json: element), event.seq > after, events.count < limit else { continue }
                    events.append(event)
                }
            }
            let batches = try connection.statement(
                "SELECT body FROM event_log WHERE session_id = ? AND last_seq > ? ORDER BY first_seq")
            try batches.bind(1, id).bind(2, Int64(after))
            defer { batches.reset() }
            while events.count < limit, try batches.step() { collect(batches.bytes(0)) }
            batches.reset()
            // Newer than every compacted batch: what the journal holds for this session.
            for batch in pending[id]?.batches ?? [] where events.count < limit && batch.last > after {
                collect(batch.body)
            }
            return events
        }
    }

    func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> Int {
        try locked { () throws(StoreError) -> Int in
            // `touched_at` in `sessions` is current only once the journal is folded in.
            try compactJournal()
            return try connection.transaction { () throws(StoreError) -> Int in
                try connection.statement("DELETE FROM event_log WHERE session_id IN (SELECT id FROM sessions WHERE touched_at < ?)")
                    .bind(1, cutoff).run()
                try connection.statement("DELETE FROM sessions WHERE touched_at < ?").bind(1, cutoff).run()
                let removed = connection.changes
                if removed > 0 { cache = cache.filter { $0.value.touchedAt >= cutoff } }
                return removed
            }
        }
    }

    func list(limit: Int) throws(StoreError) -> [StoredSession] {
        try locked { () throws(StoreError) -> [StoredSession] in
            try compactJournal()
            let statement = try connection.statement(
                "SELECT id, graph, graph_version, token_hash, snapshot, created_at, touched_at FROM sessions ORDER BY created_at LIMIT ?"
            )
            try statement.bind(1, Int64(limit))
            var sessions: [StoredSession] = []
            while try statement.step() {
                // A session that no longer fits its graph is left out of the listing, not fatal to it.
                if let session = try? row(id: statement.text(0), statement, offset: 1) { sessions.append(session) }
            }
            return sessions
        }
    }

    func count() throws(StoreError) -> Int {
        try locked { () throws(StoreError) -> Int in
            let statement = try connection.statement("SELECT COUNT(*) FROM sessions")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
    }

    func saveGraph(_ document: JSONValue, name: String, version: Int) throws(StoreError) {
        try locked { () throws(StoreError) in
            try connection.statement("INSERT OR IGNORE INTO graphs (name, version, document) VALUES (?,?,?)")
                .bind(1, name).bind(2, Int64(version)).bind(3, document.jsonString).run()
        }
    }

    func loadGraphs() throws(StoreError) -> [(document: JSONValue, version: Int)] {
        try locked { () throws(StoreError) -> [(document: JSONValue, version: Int)] in
            let statement = try connection.statement("SELECT document, version FROM graphs ORDER BY name, version")
            var graphs: [(document: JSONValue, version: Int)] = []
            while try statement.step() {
                do {
                    graphs.append((try JSONValue(parsing: statement.bytes(0)), Int(statement.int(1))))
                } catch {
                    throw StoreError(message: "a stored graph is not JSON: \(error)")
                }
            }
            return graphs
        }
    }

    func close() {
        lock.withLock { _ in
            try? compactJournal()
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        ownership.release()
    }
}

/// Restores a stored snapshot for a session of graph `name` at `version`.
typealias SnapshotDecoder = @Sendable (_ snapshot: JSONValue, _ name: String, _ version: Int) throws(StoreError) -> SessionState
