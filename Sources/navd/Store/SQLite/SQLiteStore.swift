import NavCore
import Synchronization

/// Sessions in an SQLite file (`--store sqlite:PATH`), the embedded default.
///
/// WAL journal; `synchronous=NORMAL` by default, so a committed change survives the
/// process being killed (`kill -9`); `sqlite:PATH?sync=full` also survives power loss.
/// A change is acknowledged only after its transaction has committed.
///
/// The file is opened in exclusive locking mode: one navd process owns it, so the store keeps
/// a write-through cache of decoded sessions and reads never touch the disk twice.
///
/// `@unchecked Sendable`: the connection and the cache are only ever used inside `lock`.
final class SQLiteStore: SessionStore, GraphStore, @unchecked Sendable {
    let name: String
    private let lock = Mutex(())
    private let connection: SQLiteConnection
    private let retainedEvents: Int
    private let decode: SnapshotDecoder
    private var cache: [String: StoredSession] = [:]

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
    ]

    /// - Parameters:
    ///   - path: the database file; its folder is created if missing.
    ///   - decode: turns a stored snapshot back into a state, checked against its graph.
    init(path: String, synchronousFull: Bool = false, retainedEvents: Int = 1000, decode: @escaping SnapshotDecoder) throws(StoreError) {
        self.name = "sqlite:\(path)"
        self.retainedEvents = retainedEvents
        self.decode = decode
        try FileSystem.createParentDirectory(of: path)
        connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA locking_mode=EXCLUSIVE")
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=\(synchronousFull ? "FULL" : "NORMAL")")
        try connection.execute("PRAGMA foreign_keys=ON")
        // 64 MiB of page cache: the write path then rarely reads a page back from disk.
        try connection.execute("PRAGMA cache_size=-65536")
        // Checkpoint every 20,000 pages (~80 MB of WAL) rather than 1,000: hot pages are copied
        // back once per checkpoint, so fewer checkpoints copy far fewer pages.
        try connection.execute("PRAGMA wal_autocheckpoint=20000")
        try migrate()
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
        try locked { () throws(StoreError) -> StoredSession? in
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

    func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent]) throws(StoreError) -> Bool {
        // Encode before taking the lock: only the database work is serialised.
        let snapshot = session.state.snapshotBytes
        let encodedEvents = events.jsonBytes
        return try locked { () throws(StoreError) -> Bool in
            let written = try connection.transaction { () throws(StoreError) -> Bool in
                try connection.statement("UPDATE sessions SET version = ?, snapshot = ?, touched_at = ? WHERE id = ? AND version = ?")
                    .bind(1, Int64(session.state.version)).bind(2, utf8: snapshot)
                    .bind(3, session.touchedAt).bind(4, session.id).bind(5, Int64(expectedVersion)).run()
                guard connection.changes == 1 else { return false }
                try appendEvents(events, encoded: encodedEvents, to: session.id)
                // Whole batches leave once all their events are older than the retained ones.
                if let last = events.last, last.seq > retainedEvents {
                    try connection.statement("DELETE FROM event_batches WHERE session_id = ? AND last_seq <= ?")
                        .bind(1, session.id).bind(2, Int64(last.seq - retainedEvents)).run()
                }
                return true
            }
            if written { cache[session.id] = session } else { cache[session.id] = nil }
            return written
        }
    }

    private func appendEvents(_ events: [LifecycleEvent], encoded: [UInt8], to id: String) throws(StoreError) {
        guard let first = events.first, let last = events.last else { return }
        try connection.statement("INSERT INTO event_batches (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
            .bind(1, id).bind(2, Int64(first.seq)).bind(3, Int64(last.seq)).bind(4, utf8: encoded).run()
    }

    func delete(_ id: String) throws(StoreError) -> Bool {
        try locked { () throws(StoreError) -> Bool in
            try connection.transaction { () throws(StoreError) -> Bool in
                try connection.statement("DELETE FROM event_batches WHERE session_id = ?").bind(1, id).run()
                try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                cache[id] = nil
                return connection.changes > 0
            }
        }
    }

    func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        try locked { () throws(StoreError) -> [LifecycleEvent] in
            let statement = try connection.statement(
                "SELECT body FROM event_batches WHERE session_id = ? AND last_seq > ? ORDER BY first_seq")
            try statement.bind(1, id).bind(2, Int64(after))
            defer { statement.reset() }
            var events: [LifecycleEvent] = []
            while events.count < limit, try statement.step() {
                for element in (try? JSONValue(parsing: statement.bytes(0)))?.arrayValue ?? [] {
                    guard let event = LifecycleEvent(json: element), event.seq > after, events.count < limit else { continue }
                    events.append(event)
                }
            }
            return events
        }
    }

    func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> Int {
        try locked { () throws(StoreError) -> Int in
            try connection.transaction { () throws(StoreError) -> Int in
                try connection.statement("DELETE FROM event_batches WHERE session_id IN (SELECT id FROM sessions WHERE touched_at < ?)")
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
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
    }
}

/// Restores a stored snapshot for a session of graph `name` at `version`.
typealias SnapshotDecoder = @Sendable (_ snapshot: JSONValue, _ name: String, _ version: Int) throws(StoreError) -> SessionState
