import Dispatch
import NavCore
import Synchronization

/// Sessions in an SQLite file (`--store sqlite:PATH`), the embedded default.
///
/// WAL journal; `synchronous=NORMAL` by default, so a committed change survives the
/// process being killed (`kill -9`); `sqlite:PATH?sync=full` also survives power loss.
///
/// One navd process owns the file (an advisory lock on `PATH.lock` says so, and the connection
/// holds SQLite's exclusive locking mode, which spares every transaction its file-lock system
/// calls), so the store keeps a write-through cache of decoded sessions and reads never touch
/// the disk twice.
///
/// A change is appended to the ``ChangeLog`` (`PATH-changes-NNNNNN`: one `pwrite` of one
/// record) and acknowledged once that write has returned (with `sync=full`, once it is on
/// disk). The database catches up in the background: every ``compactionThreshold`` changes the
/// log starts a new generation, and the compactor thread folds the previous one into `sessions`
/// and `event_log` — each session's newest snapshot once, its events as one batch — in one
/// transaction that also records the last change it holds (`store_meta.compacted_seq`), then
/// checkpoints and removes that generation's file. Changes keep being appended meanwhile. What
/// compaction writes is folded in memory as changes are appended (``Fold``), so nothing is read
/// back. At start-up, whatever the files hold past `compacted_seq` (a crash's leftovers) is
/// folded in before anything is served; a sweep or a listing folds everything first.
///
/// Every session with changes in the log is in the cache, which is why reads never need the log.
///
/// Locks: `database` guards the connection, `lock` the cache, the log and the folded
/// generations; a thread holding both took `database` first. An update takes only `lock`.
/// `@unchecked Sendable`: all mutable state is used only inside those locks.
final class SQLiteStore: SessionStore, GraphStore, @unchecked Sendable {
    let name: String
    private let database = Mutex(())
    private let lock = Mutex(())
    private let connection: SQLiteConnection
    private let ownership: OwnershipLock
    private let retainedEvents: Int
    private let decode: SnapshotDecoder
    private let log: ChangeLog
    private let compactor = DispatchQueue(label: "navd.sqlite.compactor")
    private var cache: [String: StoredSession] = [:]
    /// The current generation's changes, folded by session, and how many there are.
    private var pending: [String: Fold] = [:]
    private var pendingChanges = 0
    /// The previous generation, until the compactor has written it to the database.
    private var compacting: Generation?
    private var nextSeq: Int64
    private var closed = false
    /// Start a new generation after this many changes.
    let compactionThreshold: Int
    /// A generation of about 20 MB of log: large enough that a busy session's changes are folded
    /// many at a time (2,048 made the compactor the bottleneck under load: 13,000–16,000 changes/s
    /// against 19,500–22,000 with 8,192, 12-second runs of 1,000 busy sessions), small enough
    /// that start-up replays it in well under a second.
    static let defaultCompactionThreshold = 8192

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

    /// - Parameters:
    ///   - path: the database file; its folder is created if missing. The change log files sit
    ///     next to it (`PATH-changes-NNNNNN`).
    ///   - decode: turns a stored snapshot back into a state, checked against its graph.
    init(
        path: String, synchronousFull: Bool = false, retainedEvents: Int = 1000, compactionThreshold: Int = SQLiteStore.defaultCompactionThreshold,
        decode: @escaping SnapshotDecoder
    ) throws(StoreError) {
        self.name = "sqlite:\(path)"
        self.retainedEvents = retainedEvents
        self.compactionThreshold = max(1, compactionThreshold)
        self.decode = decode
        try FileSystem.createParentDirectory(of: path)
        ownership = try OwnershipLock(path: path + ".lock", owner: path)
        connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA locking_mode=EXCLUSIVE")
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=\(synchronousFull ? "FULL" : "NORMAL")")
        try connection.execute("PRAGMA foreign_keys=ON")
        // 64 MiB of page cache: compaction then rarely reads a page back from disk.
        try connection.execute("PRAGMA cache_size=-65536")
        // No checkpoint on commit: compaction runs one after each generation.
        try connection.execute("PRAGMA wal_autocheckpoint=0")
        try Self.migrate(connection, through: 3)
        // Changes an older navd left in its journal table, before migration 4 drops it.
        try Self.foldLegacyJournal(connection, retainedEvents: retainedEvents)
        try Self.migrate(connection, through: Self.migrations.count)

        // What a crash left in the change log is folded in before anything is served.
        let compacted = try Self.compactedSeq(connection)
        let (records, lastGeneration) = try ChangeLog.read(prefix: path)
        var recovered: [String: Fold] = [:]
        var lastSeq = compacted
        for record in records where record.seq > compacted {
            Self.fold(record, into: &recovered, retainedEvents: retainedEvents)
            lastSeq = max(lastSeq, record.seq)
        }
        try Self.write(recovered, through: lastSeq, connection, retainedEvents: retainedEvents)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        nextSeq = lastSeq + 1
        log = try ChangeLog(prefix: path, after: lastGeneration, synchronous: synchronousFull)
        log.remove(through: lastGeneration)
    }

    private static func migrate(_ connection: SQLiteConnection, through last: Int) throws(StoreError) {
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
    private static func foldLegacyJournal(_ connection: SQLiteConnection, retainedEvents: Int) throws(StoreError) {
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

    private static func compactedSeq(_ connection: SQLiteConnection) throws(StoreError) -> Int64 {
        let statement = try connection.statement("SELECT value FROM store_meta WHERE key = 'compacted_seq'")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int(0)
    }

    private func locked<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try lock.withLock { _ throws(StoreError) -> T in try body() }
    }

    /// Runs `body` holding `database`, on an open store.
    private func withDatabase<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try database.withLock { _ throws(StoreError) -> T in
            guard !(try locked { closed }) else { throw StoreError(message: "the SQLite store is closed") }
            return try body()
        }
    }

    func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        try withDatabase { () throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.statement(
                    "INSERT INTO sessions (id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at) VALUES (?,?,?,?,?,?,?,?,?)"
                )
                .bind(1, session.id).bind(2, session.graphName).bind(3, Int64(session.graphVersion))
                .bind(4, Int64(session.state.version)).bind(5, session.tokenDigest.bytes)
                .bind(6, Int64(SessionState.snapshotSchema)).bind(7, utf8: session.state.snapshotBytes)
                .bind(8, session.createdAt).bind(9, session.touchedAt).run()
                if let first = events.first, let last = events.last {
                    try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
                        .bind(1, session.id).bind(2, Int64(first.seq)).bind(3, Int64(last.seq)).bind(4, utf8: events.jsonBytes).run()
                }
            }
            try locked { cache[session.id] = session }
        }
    }

    func load(_ id: String) throws(StoreError) -> StoredSession? {
        if let cached = try locked({ cache[id] }) { return cached }
        return try withDatabase { () throws(StoreError) -> StoredSession? in try loadHoldingDatabase(id) }
    }

    /// The cached session, or the stored one (then cached). Caller holds `database`.
    private func loadHoldingDatabase(_ id: String) throws(StoreError) -> StoredSession? {
        if let cached = try locked({ cache[id] }) { return cached }
        let statement = try connection.statement(
            "SELECT graph, graph_version, token_hash, snapshot, created_at, touched_at FROM sessions WHERE id = ?"
        )
        try statement.bind(1, id)
        // Reset when done: a statement left mid-run keeps a read transaction open and the WAL growing.
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let stored = try row(id: id, statement, offset: 0)
        // Only an update changes a cached session, and only a cached one: this row is current.
        return try locked { () -> StoredSession in
            if let cached = cache[id] { return cached }
            cache[id] = stored
            return stored
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

    func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON encodedEvents: [UInt8]) throws(StoreError) -> Bool {
        // The compare-and-set below is against the cache: bring the session into it first.
        guard try load(session.id) != nil else { return false }
        // Encode before taking the lock: only the append is serialised.
        let snapshot = session.state.snapshotBytes
        var startCompaction = false
        var behind = false
        let written = try locked { () throws(StoreError) -> Bool in
            guard !closed else { throw StoreError(message: "the SQLite store is closed") }
            guard let current = cache[session.id], current.state.version == expectedVersion else { return false }
            let record = ChangeLog.Record(
                seq: nextSeq, sessionID: session.id, version: Int64(session.state.version), touchedAt: session.touchedAt,
                firstEvent: Int64(events.first?.seq ?? 0), lastEvent: Int64(events.last?.seq ?? 0),
                snapshot: snapshot, events: encodedEvents
            )
            try log.append(record)
            nextSeq += 1
            Self.fold(record, into: &pending, retainedEvents: retainedEvents)
            pendingChanges += 1
            cache[session.id] = session
            if pendingChanges >= compactionThreshold {
                startCompaction = sealGeneration()
                // The database is far behind (a slow disk, a failing compaction): wait for it.
                behind = pendingChanges >= 8 * compactionThreshold
            }
            return true
        }
        if startCompaction {
            compactor.async { [weak self] in self?.compactSealedGeneration() }
        } else if behind {
            compactor.sync { compactSealedGeneration() }
        }
        return written
    }

    // MARK: Compaction

    /// One session's logged changes as compaction will write them.
    private struct Fold {
        var version: Int64
        var snapshot: [UInt8]
        var touchedAt: Int64
        /// The logged transitions' events, oldest first; only as many as are retained.
        var batches: [(first: Int64, last: Int64, body: [UInt8])] = []
        var eventCount: Int64 = 0
    }

    /// A generation of the log closed for compaction.
    private struct Generation {
        var folds: [String: Fold]
        /// The seq of its last change, recorded with it in the database.
        var lastSeq: Int64
        /// Its change log file.
        var file: Int
    }

    private static func fold(_ record: ChangeLog.Record, into folds: inout [String: Fold], retainedEvents: Int) {
        var entry = folds.removeValue(forKey: record.sessionID)
            ?? Fold(version: record.version, snapshot: record.snapshot, touchedAt: record.touchedAt)
        entry.version = record.version
        entry.snapshot = record.snapshot
        entry.touchedAt = record.touchedAt
        if record.firstEvent > 0 {
            entry.batches.append((record.firstEvent, record.lastEvent, record.events))
            entry.eventCount += record.lastEvent - record.firstEvent + 1
            // A hot session's log may hold many transitions: keep what is retained.
            let retained = Int64(retainedEvents)
            while let oldest = entry.batches.first, entry.eventCount - (oldest.last - oldest.first + 1) >= retained {
                entry.eventCount -= oldest.last - oldest.first + 1
                entry.batches.removeFirst()
            }
        }
        folds[record.sessionID] = entry
    }

    /// Closes the current generation for the compactor, if it holds changes and none is being
    /// compacted. Caller holds `lock`. - Returns: whether it did.
    private func sealGeneration() -> Bool {
        guard compacting == nil, pendingChanges > 0, let file = try? log.rotate() else { return false }
        compacting = Generation(folds: pending, lastSeq: nextSeq - 1, file: file)
        pending = [:]
        pendingChanges = 0
        return true
    }

    /// The compactor's work: writes the sealed generation, if any. A failure leaves it sealed,
    /// to be written by the next attempt (the log keeps its changes meanwhile).
    private func compactSealedGeneration() {
        try? withDatabase { () throws(StoreError) in try writeSealedGeneration() }
    }

    /// Caller holds `database`.
    private func writeSealedGeneration() throws(StoreError) {
        // Read under `lock` now, not when sealed: a delete may have taken a session out since.
        guard let generation = try locked({ compacting }) else { return }
        try Self.write(generation.folds, through: generation.lastSeq, connection, retainedEvents: retainedEvents)
        try locked {
            compacting = nil
            log.remove(through: generation.file)
        }
        // Nothing else reads the file, so this copies the whole WAL, which the next write restarts.
        try connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// Writes every logged change to the database. Caller holds `database`.
    private func compactEverything() throws(StoreError) {
        try writeSealedGeneration()
        if try locked({ sealGeneration() }) { try writeSealedGeneration() }
    }

    /// Writes folded changes into `sessions` and `event_log` in one transaction, with `extra`,
    /// and records `lastSeq` as compacted.
    private static func write(
        _ folds: [String: Fold], through lastSeq: Int64?, _ connection: SQLiteConnection, retainedEvents: Int,
        extra: () throws(StoreError) -> Void = {}
    ) throws(StoreError) {
        let retained = Int64(retainedEvents)
        try connection.transaction { () throws(StoreError) in
            for (id, entry) in folds {
                try connection.statement("UPDATE sessions SET version = ?, snapshot = ?, touched_at = ? WHERE id = ?")
                    .bind(1, entry.version).bind(2, utf8: entry.snapshot).bind(3, entry.touchedAt).bind(4, id).run()
                // A session deleted since its change was logged stays deleted.
                guard connection.changes == 1, let first = entry.batches.first, let last = entry.batches.last else { continue }
                var body = first.body
                for batch in entry.batches.dropFirst() { appendJSONArray(batch.body, to: &body) }
                try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
                    .bind(1, id).bind(2, first.first).bind(3, last.last).bind(4, utf8: body).run()
                // Whole batches leave once all their events are older than the retained ones.
                if last.last > retained {
                    try connection.statement("DELETE FROM event_log WHERE session_id = ? AND last_seq <= ?")
                        .bind(1, id).bind(2, last.last - retained).run()
                }
            }
            if let lastSeq {
                try connection.statement("UPDATE store_meta SET value = ? WHERE key = 'compacted_seq'").bind(1, lastSeq).run()
            }
            try extra()
        }
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

    // MARK: Reads and maintenance

    func delete(_ id: String) throws(StoreError) -> Bool {
        try withDatabase { () throws(StoreError) -> Bool in
            // Its logged changes stay in the log files; compaction (or recovery) finds no row for them.
            try locked {
                cache[id] = nil
                pending[id] = nil
                compacting?.folds[id] = nil
            }
            return try connection.transaction { () throws(StoreError) -> Bool in
                try connection.statement("DELETE FROM event_log WHERE session_id = ?").bind(1, id).run()
                try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                return connection.changes > 0
            }
        }
    }

    func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        try withDatabase { () throws(StoreError) -> [LifecycleEvent] in
            // Batches are trimmed whole, so older events may linger: show the retained ones only.
            let newest = try loadHoldingDatabase(id)?.state.eventCounter ?? 0
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
            // Newer than every compacted batch: the log's, oldest generation first. Holding
            // `database`, a sealed generation is one the compactor has not written yet.
            let logged = try locked { (compacting?.folds[id]?.batches ?? []) + (pending[id]?.batches ?? []) }
            for batch in logged where events.count < limit && batch.last > after { collect(batch.body) }
            return events
        }
    }

    func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> Int {
        try withDatabase { () throws(StoreError) -> Int in
            // `touched_at` in `sessions` is current once the log is folded in.
            try compactEverything()
            return try lock.withLock { _ throws(StoreError) -> Int in
                // Updates wait here: none can touch a session between this check and its deletion.
                let expired = try connection.statement("SELECT id FROM sessions WHERE touched_at < ?")
                try expired.bind(1, cutoff)
                var ids: [String] = []
                while try expired.step() {
                    let id = expired.text(0)
                    // Touched since the compaction above: its change is only in the log.
                    if let cached = cache[id], cached.touchedAt >= cutoff { continue }
                    ids.append(id)
                }
                expired.reset()
                try connection.transaction { () throws(StoreError) in
                    for id in ids {
                        try connection.statement("DELETE FROM event_log WHERE session_id = ?").bind(1, id).run()
                        try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                    }
                }
                for id in ids {
                    cache[id] = nil
                    pending[id] = nil
                }
                return ids.count
            }
        }
    }

    func list(limit: Int) throws(StoreError) -> [StoredSession] {
        try withDatabase { () throws(StoreError) -> [StoredSession] in
            try compactEverything()
            let statement = try connection.statement(
                "SELECT id, graph, graph_version, token_hash, snapshot, created_at, touched_at FROM sessions ORDER BY created_at LIMIT ?"
            )
            try statement.bind(1, Int64(limit))
            defer { statement.reset() }
            var sessions: [StoredSession] = []
            while try statement.step() {
                let id = statement.text(0)
                // The cache is newer than the row for a session changed since the compaction above.
                if let cached = try locked({ cache[id] }) {
                    sessions.append(cached)
                } else if let session = try? row(id: id, statement, offset: 1) {
                    // A session that no longer fits its graph is left out of the listing, not fatal to it.
                    sessions.append(session)
                }
            }
            return sessions
        }
    }

    func count() throws(StoreError) -> Int {
        try withDatabase { () throws(StoreError) -> Int in
            let statement = try connection.statement("SELECT COUNT(*) FROM sessions")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
    }

    /// Allocates the version here too (one process holds the file, under `database`): the next
    /// number after the latest stored one, unless that one already is this document.
    func storeGraph(_ document: JSONValue, name: String) throws(StoreError) -> (version: Int, stored: Bool) {
        let text = document.jsonString
        return try withDatabase { () throws(StoreError) -> (version: Int, stored: Bool) in
            let latest = try connection.statement("SELECT version, document = ? FROM graphs WHERE name = ? ORDER BY version DESC LIMIT 1")
                .bind(1, text).bind(2, name)
            let found = try latest.step()
            let (version, same) = found ? (Int(latest.int(0)), latest.int(1) == 1) : (0, false)
            latest.reset()
            if same { return (version, false) }
            try connection.statement("INSERT INTO graphs (name, version, document) VALUES (?,?,?)")
                .bind(1, name).bind(2, Int64(version + 1)).bind(3, text).run()
            return (version + 1, true)
        }
    }

    func graph(_ name: String, version: Int) throws(StoreError) -> JSONValue? {
        try withDatabase { () throws(StoreError) -> JSONValue? in
            let statement = try connection.statement("SELECT document FROM graphs WHERE name = ? AND version = ?")
                .bind(1, name).bind(2, Int64(version))
            defer { statement.reset() }
            return try statement.step() ? try Self.graphDocument(statement.bytes(0)) : nil
        }
    }

    func latestGraph(_ name: String, newerThan known: Int) throws(StoreError) -> (document: JSONValue, version: Int)? {
        try withDatabase { () throws(StoreError) -> (document: JSONValue, version: Int)? in
            let statement = try connection.statement("SELECT document, version FROM graphs WHERE name = ? AND version > ? ORDER BY version DESC LIMIT 1")
                .bind(1, name).bind(2, Int64(known))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return (try Self.graphDocument(statement.bytes(0)), Int(statement.int(1)))
        }
    }

    func latestGraphVersions() throws(StoreError) -> [(name: String, version: Int)] {
        try withDatabase { () throws(StoreError) -> [(name: String, version: Int)] in
            let statement = try connection.statement("SELECT name, MAX(version) FROM graphs GROUP BY name ORDER BY name")
            defer { statement.reset() }
            var versions: [(name: String, version: Int)] = []
            while try statement.step() { versions.append((statement.text(0), Int(statement.int(1)))) }
            return versions
        }
    }

    func firstGraphName() throws(StoreError) -> String? {
        try withDatabase { () throws(StoreError) -> String? in
            let statement = try connection.statement("SELECT name FROM graphs ORDER BY rowid LIMIT 1")
            defer { statement.reset() }
            return try statement.step() ? statement.text(0) : nil
        }
    }

    private static func graphDocument(_ bytes: [UInt8]) throws(StoreError) -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw StoreError(message: "a stored graph is not JSON: \(error)")
        }
    }

    func loadGraphs() throws(StoreError) -> [(document: JSONValue, version: Int)] {
        try withDatabase { () throws(StoreError) -> [(document: JSONValue, version: Int)] in
            let statement = try connection.statement("SELECT document, version FROM graphs ORDER BY rowid")
            defer { statement.reset() }
            var graphs: [(document: JSONValue, version: Int)] = []
            while try statement.step() {
                graphs.append((try Self.graphDocument(statement.bytes(0)), Int(statement.int(1))))
            }
            return graphs
        }
    }

    /// Waits until the compactor is idle (it may have a generation to write).
    func waitForCompaction() {
        compactor.sync {}
    }

    func close() {
        waitForCompaction()
        database.withLock { _ in
            // Closed first: no change is appended after the last compaction below.
            let wasOpen = (try? locked { () -> Bool in
                defer { closed = true }
                return !closed
            }) ?? false
            guard wasOpen else { return }
            // Everything logged goes into the database; if that fails the log files stay, and the
            // next start folds them in.
            if (try? compactEverything()) != nil {
                try? locked { log.discard() }
            }
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        ownership.release()
    }
}

/// Restores a stored snapshot for a session of graph `name` at `version`.
typealias SnapshotDecoder = @Sendable (_ snapshot: JSONValue, _ name: String, _ version: Int) throws(StoreError) -> SessionState
