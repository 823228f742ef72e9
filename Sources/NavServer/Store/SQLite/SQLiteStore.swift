import Dispatch
import NavCore
import NavJSON
import NavWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

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
/// The cache of decoded sessions is bounded by an estimate of their memory (``SessionCache``);
/// a session read after it left the cache comes from its row, with its newest logged change (the
/// folds below hold each session's newest snapshot) laid over it.
///
/// Start-up refuses damage instead of dropping acknowledged changes silently: a database that
/// fails `PRAGMA quick_check`, or a change log with changes missing (seqs are consecutive, and a
/// crash can only cut the last record short). `navd store repair --accept-loss` folds what is
/// valid (``init(path:synchronousFull:retainedEvents:compactionThreshold:cacheBytes:checkDatabase:acceptingLoss:files:decode:)``
/// with `acceptingLoss`) and sets the damaged file aside.
///
/// A write the disk cannot take (full, failing) throws an `unavailable` error and changes
/// nothing; ``isAvailable()`` then probes the disk about once a second, and a failed compaction is
/// retried every second, so the store recovers by itself once there is room.
///
/// Locks: `database` guards the connection, `lock` the cache, the log and the folded
/// generations; a thread holding both took `database` first. An update takes only `lock`.
/// `@unchecked Sendable`: all mutable state is used only inside those locks.
package final class SQLiteStore: SessionStore, GraphStore, @unchecked Sendable {
    package let name: String
    private let database = Mutex(())
    private let lock = Mutex(())
    private let connection: SQLiteConnection
    private let ownership: OwnershipLock
    private let retainedEvents: Int
    private let decode: SnapshotDecoder
    private let log: ChangeLog
    private let compactor = DispatchQueue(label: "navd.sqlite.compactor")
    private var cache: SessionCache
    /// Which part could not take its last write (``Part`` bits): set by a write the disk could not
    /// take, cleared by the next write to that part that succeeds (or a probe of both).
    private let failing = Atomic<UInt8>(0)
    private var compactionRetryScheduled = false
    /// The current generation's changes, folded by session, and how many there are.
    private var pending: [String: Fold] = [:]
    private var pendingChanges = 0
    /// The previous generation, until the compactor has written it to the database.
    private var compacting: Generation?
    private var nextSeq: Int64
    private var closed = false
    /// Start a new generation after this many changes.
    package let compactionThreshold: Int
    /// A generation of about 20 MB of log: large enough that a busy session's changes are folded
    /// many at a time (2,048 made the compactor the bottleneck under load: 13,000–16,000 changes/s
    /// against 19,500–22,000 with 8,192, 12-second runs of 1,000 busy sessions), small enough
    /// that start-up replays it in well under a second.
    package static let defaultCompactionThreshold = 8192
    /// The decoded-session cache's default bound (`--cache-size`).
    package static let defaultCacheBytes = 256 << 20
    /// What start-up with `acceptingLoss` left out and set aside, one line each.
    package private(set) var recoveryReport: [String] = []

    /// Migrations in order; each runs once, recorded in `migrations`.
    package static let migrations: [String] = [
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
    ///   - cacheBytes: the bound of the decoded-session cache, by ``SessionCache/cost(snapshotBytes:)``.
    ///   - checkDatabase: run `PRAGMA quick_check` first and refuse a damaged database.
    ///   - acceptingLoss: when the change log is damaged, fold the changes that are still whole
    ///     and consistent, rename the damaged files to `….damaged`, and say what was lost in
    ///     ``recoveryReport`` (`navd store repair --accept-loss`); otherwise such a log is refused.
    ///   - files: the system calls the change log writes with (tests inject failures).
    ///   - decode: turns a stored snapshot back into a state, checked against its graph.
    /// - Throws: when the file is in use, damaged, or cannot be opened.
    package init(
        path: String, synchronousFull: Bool = false, retainedEvents: Int = 1000, compactionThreshold: Int = SQLiteStore.defaultCompactionThreshold,
        cacheBytes: Int = SQLiteStore.defaultCacheBytes, checkDatabase: Bool = true, acceptingLoss: Bool = false,
        files: any ChangeLogFiles = SystemFiles(), decode: @escaping SnapshotDecoder
    ) throws(StoreError) {
        self.name = "sqlite:\(path)"
        self.retainedEvents = retainedEvents
        self.compactionThreshold = max(1, compactionThreshold)
        self.decode = decode
        self.cache = SessionCache(limit: cacheBytes)
        try FileSystem.createParentDirectory(of: path)
        ownership = try OwnershipLock(path: path + ".lock", owner: path)
        connection = try SQLiteConnection(path: path)
        do throws(StoreError) {
            try connection.execute("PRAGMA locking_mode=EXCLUSIVE")
            try connection.execute("PRAGMA journal_mode=WAL")
            try connection.execute("PRAGMA synchronous=\(synchronousFull ? "FULL" : "NORMAL")")
            try connection.execute("PRAGMA foreign_keys=ON")
            // 64 MiB of page cache: compaction then rarely reads a page back from disk.
            try connection.execute("PRAGMA cache_size=-65536")
            // No checkpoint on commit: compaction runs one after each generation.
            try connection.execute("PRAGMA wal_autocheckpoint=0")
            if checkDatabase {
                let problems = try Self.integrity(connection, check: "quick_check", limit: 10)
                guard problems.isEmpty else {
                    throw StoreError(message: "PRAGMA quick_check found damage: \(problems.joined(separator: "; "))")
                }
            }
        } catch {
            throw StoreError(
                message: "the database \(path) cannot be used: \(error.message). Refusing to start; restore it from a backup "
                    + "(`navd store check --store sqlite:\(path)` lists every problem)"
            )
        }
        try Self.migrate(connection, through: 3)
        // Changes an older navd left in its journal table, before migration 4 drops it.
        try Self.foldLegacyJournal(connection, retainedEvents: retainedEvents)
        try Self.migrate(connection, through: Self.migrations.count)

        // What a crash left in the change log is folded in before anything is served.
        let compacted = try Self.compactedSeq(connection)
        let scans = try ChangeLog.scan(prefix: path)
        let lastGeneration = scans.last?.generation ?? 0
        let recovery = try Self.recover(scans, after: compacted, connection, path: path, acceptingLoss: acceptingLoss)
        var recovered: [String: Fold] = [:]
        for record in recovery.records {
            Self.fold(record, into: &recovered, retainedEvents: retainedEvents)
        }
        try Self.write(recovered, through: recovery.lastSeq, connection, retainedEvents: retainedEvents)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // Only now that the database holds what was kept: a crash before this repeats the repair.
        for file in recovery.damagedFiles {
            guard rename(file, file + ".damaged") == 0 else {
                throw StoreError(message: "cannot rename \(file) to \(file).damaged: \(String(cString: strerror(errno)))")
            }
        }
        recoveryReport = recovery.report
        nextSeq = recovery.lastSeq + 1
        log = try ChangeLog(prefix: path, after: lastGeneration, synchronous: synchronousFull, files: files)
        log.remove(through: lastGeneration)
    }

    /// The first problems `PRAGMA quick_check` or `integrity_check` reports (none: the file is sound).
    package static func integrity(_ connection: SQLiteConnection, check: String, limit: Int) throws(StoreError) -> [String] {
        let statement = try connection.statement("PRAGMA \(check)(\(limit))")
        defer { statement.reset() }
        var problems: [String] = []
        while try statement.step() {
            let line = statement.text(0)
            if line != "ok" { problems.append(line) }
        }
        return problems
    }

    // MARK: Recovery

    /// Changes missing from the change log: seqs are consecutive, so every seq after the last one
    /// compacted must be in the files; a crash can only cut the last record short.
    package struct Damage {
        /// The file and the byte where the unreadable bytes start (the record after the gap when
        /// no bytes are unreadable, e.g. a file was removed).
        package var file: String
        package var offset: Int
        package var unreadableBytes: Int
        /// The seqs of the changes that are missing.
        package var lost: ClosedRange<Int64>

        package var description: String {
            let changes = lost.count == 1 ? "change seq \(lost.lowerBound) is" : "\(lost.count) changes (seqs \(lost.lowerBound)…\(lost.upperBound)) are"
            let bytes = unreadableBytes > 0 ? "\(unreadableBytes) bytes are not records, yet whole records follow them" : "changes are missing before this record"
            return "\(file) at byte offset \(offset): \(bytes); \(changes) missing"
        }
    }

    /// Every place where changes after `compacted` are missing from the files.
    package static func damage(in scans: [ChangeLog.FileScan], after compacted: Int64) -> [Damage] {
        var found: [Damage] = []
        var expected = compacted + 1
        var previous: (scan: Int, offset: Int)?
        for (scanIndex, scan) in scans.enumerated() {
            for (index, record) in scan.records.enumerated() {
                defer { previous = (scanIndex, scan.offsets[index]) }
                guard record.seq > compacted else { continue }
                defer { expected = max(expected, record.seq + 1) }
                guard record.seq != expected else { continue }
                let offset = scan.offsets[index]
                // The unreadable bytes just before this record: in this file after the previous
                // record, or at the end of the previous file.
                let before = previous.map { $0.scan == scanIndex ? $0.offset : -1 } ?? -1
                var place = (file: scan.path, offset: offset, bytes: 0)
                if let problem = scan.problems.last(where: { $0.offset < offset && $0.offset > before }) {
                    place = (scan.path, problem.offset, problem.length)
                } else if scanIndex > 0, let problem = scans[scanIndex - 1].problems.last, before < 0 || previous?.scan != scanIndex {
                    place = (scans[scanIndex - 1].path, problem.offset, problem.length)
                }
                let lost = record.seq > expected ? expected...(record.seq - 1) : record.seq...record.seq
                found.append(Damage(file: place.file, offset: place.offset, unreadableBytes: place.bytes, lost: lost))
            }
        }
        return found
    }

    private struct Recovery {
        package var records: [ChangeLog.Record] = []
        package var lastSeq: Int64
        package var damagedFiles: [String] = []
        package var report: [String] = []
    }

    /// The logged changes start-up folds in: all of them after `compacted`, unless some are
    /// missing. Then it refuses, or with `acceptingLoss` keeps each session's changes up to its
    /// first missing version (its later ones would leave a gap in its versions and events).
    private static func recover(
        _ scans: [ChangeLog.FileScan], after compacted: Int64, _ connection: SQLiteConnection, path: String, acceptingLoss: Bool
    ) throws(StoreError) -> Recovery {
        let records = scans.flatMap(\.records).filter { $0.seq > compacted }
        var recovery = Recovery(lastSeq: max(compacted, records.map(\.seq).max() ?? compacted))
        let damage = damage(in: scans, after: compacted)
        guard let first = damage.first else {
            recovery.records = records
            return recovery
        }
        guard acceptingLoss else {
            let more = damage.count > 1 ? " (and \(damage.count - 1) more places)" : ""
            throw StoreError(
                message: "the change log is damaged: \(first.description)\(more). A crash only cuts the last record short, so "
                    + "acknowledged changes would be lost: refusing to start, and the files are kept. Inspect them with "
                    + "`navd store check --store sqlite:\(path)`; to fold what is valid and set the damaged file aside, losing "
                    + "those changes, run `navd store repair --store sqlite:\(path) --accept-loss`"
            )
        }
        var versions: [String: Int64] = [:]
        var deleted: Set<String> = []
        var dropped: [String: (kept: Int64, versions: [Int64])] = [:]
        let stored = try connection.statement("SELECT version FROM sessions WHERE id = ?")
        for record in records {
            let id = record.sessionID
            if dropped[id] != nil {
                dropped[id]?.versions.append(record.version)
                continue
            }
            if deleted.contains(id) { continue }
            if versions[id] == nil {
                try stored.bind(1, id)
                let found = try stored.step()
                let version = stored.int(0)
                stored.reset()
                // A session deleted since: its changes were never going to be folded.
                guard found else {
                    deleted.insert(id)
                    continue
                }
                versions[id] = version
            }
            let current = versions[id] ?? 0
            if record.version == current + 1 {
                recovery.records.append(record)
                versions[id] = record.version
            } else {
                dropped[id] = (current, [record.version])
            }
        }
        for place in damage {
            recovery.report.append("lost: \(place.description)")
            if !recovery.damagedFiles.contains(place.file), place.unreadableBytes > 0 { recovery.damagedFiles.append(place.file) }
        }
        for (id, loss) in dropped.sorted(by: { $0.key < $1.key }) {
            let versions = loss.versions.count == 1 ? "version \(loss.versions[0])" : "versions \(loss.versions.first ?? 0)…\(loss.versions.last ?? 0)"
            let count = loss.versions.count == 1 ? "1 change" : "\(loss.versions.count) changes"
            recovery.report.append("session \(id): kept at version \(loss.kept); its \(versions) (\(count) after the missing ones) dropped")
        }
        recovery.report.append(
            "sessions whose missing changes were their last ones keep their version before them; they cannot be named, since their ids were in the damaged bytes"
        )
        for file in recovery.damagedFiles { recovery.report.append("set aside: \(file) → \(file).damaged") }
        return recovery
    }

    /// What `navd store check` prints: the database's `PRAGMA integrity_check`, every change log
    /// file with its records and the bytes that are not records, and every place changes are
    /// missing. Changes nothing; refuses while another process (a running navd) owns the store.
    /// - Returns: the report's lines, and whether anything is damaged.
    package static func inspect(path: String) throws(StoreError) -> (lines: [String], damaged: Bool) {
        let ownership = try OwnershipLock(path: path + ".lock", owner: path)
        defer { ownership.release() }
        var lines: [String] = []
        var damaged = false
        var compacted: Int64 = 0
        if access(path, F_OK) == 0 {
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            do {
                let problems = try integrity(connection, check: "integrity_check", limit: 100)
                if problems.isEmpty {
                    lines.append("\(path): ok (PRAGMA integrity_check)")
                } else {
                    damaged = true
                    lines.append("\(path): DAMAGED (PRAGMA integrity_check):")
                    lines += problems.map { "  \($0)" }
                }
                compacted = (try? compactedSeq(connection)) ?? 0
                lines.append("  changes folded into it: through seq \(compacted)")
            } catch {
                damaged = true
                lines.append("\(path): DAMAGED: \(error.message)")
            }
        } else {
            lines.append("\(path): no database yet")
        }
        let scans = try ChangeLog.scan(prefix: path)
        for scan in scans {
            let seqs = scan.records.first.map { "seqs \($0.seq)…\(scan.records.last?.seq ?? $0.seq)" } ?? "no records"
            lines.append("\(scan.path): \(scan.size) bytes, \(scan.records.count) records (\(seqs))")
            for problem in scan.problems {
                lines.append(
                    problem.followedByRecords
                        ? "  byte offset \(problem.offset): \(problem.length) bytes are not records, and records follow"
                        : "  byte offset \(problem.offset): the last \(problem.length) bytes are a record cut short (a crash's unacknowledged tail, dropped at start)"
                )
            }
        }
        for place in damage(in: scans, after: compacted) {
            damaged = true
            lines.append("DAMAGE: \(place.description)")
        }
        if damaged, !scans.isEmpty {
            lines.append("navd refuses to start on this store. To fold what is valid and set the damaged files aside: navd store repair --store sqlite:\(path) --accept-loss")
        }
        return (lines, damaged)
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

    /// Where a write goes: appends to the change log, or the database (compaction, creation,
    /// deletion). Either may fail while the other works (a compaction needs more room than an append).
    private enum Part: UInt8 {
        case log = 1
        case database = 2
    }

    /// A write to `part` went through: it takes writes again.
    private func wrote(_ part: Part) {
        if failing.load(ordering: .relaxed) & part.rawValue != 0 { failing.bitwiseAnd(~part.rawValue, ordering: .relaxed) }
    }

    /// Notes a write the disk could not take, for ``isAvailable()``; returns the error.
    private func failed(_ error: StoreError, _ part: Part) -> StoreError {
        if error.kind == .unavailable { failing.bitwiseOr(part.rawValue, ordering: .relaxed) }
        return error
    }

    /// Runs a write to the database, noting whether the disk took it.
    private func writing<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do {
            let result = try body()
            wrote(.database)
            return result
        } catch {
            throw failed(error, .database)
        }
    }

    package func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        guard SessionID.isValid(session.id) else { throw SessionID.invalid(session.id) }
        let snapshot = session.state.snapshotBytes
        try withDatabase { () throws(StoreError) in
            try writing { () throws(StoreError) in try connection.transaction { () throws(StoreError) in
                try connection.statement(
                    "INSERT INTO sessions (id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at) VALUES (?,?,?,?,?,?,?,?,?)"
                )
                .bind(1, session.id).bind(2, session.graphName).bind(3, Int64(session.graphVersion))
                .bind(4, Int64(session.state.version)).bind(5, session.tokenDigest.bytes)
                .bind(6, Int64(SessionState.snapshotSchema)).bind(7, utf8: snapshot)
                .bind(8, session.createdAt).bind(9, session.touchedAt).run()
                if let first = events.first, let last = events.last {
                    try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
                        .bind(1, session.id).bind(2, Int64(first.seq)).bind(3, Int64(last.seq)).bind(4, utf8: events.jsonBytes).run()
                }
            } }
            try locked { cache.put(session, cost: SessionCache.cost(snapshotBytes: snapshot.count)) }
        }
    }

    package func load(_ id: String) throws(StoreError) -> StoredSession? {
        // Another form never names a session, nor makes a cache entry (SessionID).
        guard SessionID.isValid(id) else { return nil }
        if let cached = try locked({ cache.get(id) }) { return cached }
        return try withDatabase { () throws(StoreError) -> StoredSession? in try loadHoldingDatabase(id) }
    }

    /// A session's newest change in the log, if it has one there. Caller holds `lock`.
    private func newestLogged(_ id: String) -> Fold? {
        pending[id] ?? compacting?.folds[id]
    }

    /// The cached session, or the stored one with its newest logged change laid over it (then
    /// cached). Caller holds `database`, so no compaction or delete runs meanwhile.
    private func loadHoldingDatabase(_ id: String) throws(StoreError) -> StoredSession? {
        if let cached = try locked({ cache.get(id) }) { return cached }
        let statement = try connection.statement(
            "SELECT graph, graph_version, token_hash, snapshot, created_at, touched_at, version FROM sessions WHERE id = ?"
        )
        // Updates only take `lock`: one may log a newer change while this one decodes. Then the
        // decoded one is not cached (it would be stale) and the read starts over.
        for _ in 0..<8 {
            try statement.bind(1, id)
            // Reset when done: a statement left mid-run keeps a read transaction open and the WAL growing.
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            let rowVersion = statement.int(6)
            let logged = try locked { newestLogged(id) }
            let (stored, snapshotBytes) = try row(id: id, statement, offset: 0, logged: logged)
            let version = logged?.version ?? rowVersion
            let current = try locked { () -> StoredSession? in
                if let cached = cache.get(id) { return cached }
                guard (newestLogged(id)?.version ?? rowVersion) == version else { return nil }
                cache.put(stored, cost: SessionCache.cost(snapshotBytes: snapshotBytes))
                return stored
            }
            if let current { return current }
        }
        throw StoreError(message: "session \(id) changed too often to be read", kind: .unavailable)
    }

    /// A session from its row (graph, graph_version, token_hash, snapshot, created_at, touched_at
    /// from column `offset` on), with its newest logged change, if any, laid over it.
    /// - Returns: the session and the size of its snapshot's JSON.
    private func row(
        id: String, _ statement: SQLiteConnection.Statement, offset: Int32, logged: Fold? = nil
    ) throws(StoreError) -> (StoredSession, Int) {
        let graph = statement.text(offset)
        let graphVersion = Int(statement.int(offset + 1))
        let bytes = logged?.snapshot ?? statement.bytes(offset + 3)
        let snapshot: JSONValue
        do {
            snapshot = try JSONValue(parsing: bytes, maximumDepth: StoredSession.snapshotDepth)
        } catch {
            throw StoreError(message: "session \(id): stored snapshot is not JSON: \(error)")
        }
        let session = StoredSession(
            id: id, graphName: graph, graphVersion: graphVersion, tokenDigest: TokenDigest(bytes: statement.bytes(offset + 2)),
            state: try decode(snapshot, graph, graphVersion), createdAt: statement.int(offset + 4),
            touchedAt: logged?.touchedAt ?? statement.int(offset + 5)
        )
        return (session, bytes.count)
    }

    /// Whether the session is in the decoded-session cache now.
    package func isCached(_ id: String) -> Bool {
        (try? locked { cache.version(of: id) != nil }) ?? false
    }

    /// The decoded-session cache's size: sessions, and bytes by its estimate.
    package var cacheUsage: (sessions: Int, bytes: Int, limit: Int) {
        (try? locked { (cache.count, cache.bytes, cache.limit) }) ?? (0, 0, 0)
    }

    package func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON encodedEvents: [UInt8]) throws(StoreError) -> Bool {
        guard SessionID.isValid(session.id) else { throw SessionID.invalid(session.id) }
        // The compare-and-set below is against the cache: bring the session into it first.
        guard try load(session.id) != nil else { return false }
        // Encode before taking the lock: only the append is serialised.
        let snapshot = session.state.snapshotBytes
        let cost = SessionCache.cost(snapshotBytes: snapshot.count)
        var startCompaction = false
        var behind = false
        for _ in 0..<8 {
            let written = try locked { () throws(StoreError) -> Bool? in
                guard !closed else { throw StoreError(message: "the SQLite store is closed") }
                // The version to compare with: the cached session's, else its newest logged change's;
                // else the row's, which is read (and cached) below, outside the lock.
                guard let current = cache.version(of: session.id) ?? newestLogged(session.id).map({ Int($0.version) }) else {
                    return nil
                }
                guard current == expectedVersion else { return false }
                let record = ChangeLog.Record(
                    seq: nextSeq, sessionID: session.id, version: Int64(session.state.version), touchedAt: session.touchedAt,
                    firstEvent: Int64(events.first?.seq ?? 0), lastEvent: Int64(events.last?.seq ?? 0),
                    snapshot: snapshot, events: encodedEvents
                )
                // A failed append changes nothing here: no seq, no fold, no cache entry.
                do throws(StoreError) {
                    try log.append(record)
                } catch {
                    throw failed(error, .log)
                }
                wrote(.log)
                nextSeq += 1
                Self.fold(record, into: &pending, retainedEvents: retainedEvents)
                pendingChanges += 1
                cache.put(session, cost: cost)
                if pendingChanges >= compactionThreshold {
                    startCompaction = sealGeneration()
                    // The database is far behind (a slow disk, a failing compaction): wait for it.
                    behind = pendingChanges >= 8 * compactionThreshold
                }
                return true
            }
            guard let written else {
                guard try load(session.id) != nil else { return false }
                continue
            }
            if startCompaction {
                compactor.async { [weak self] in self?.compactSealedGeneration() }
            } else if behind {
                compactor.sync { compactSealedGeneration() }
            }
            return written
        }
        return false
    }

    // MARK: Compaction

    /// One session's logged changes as compaction will write them.
    private struct Fold {
        package var version: Int64
        package var snapshot: [UInt8]
        package var touchedAt: Int64
        /// The logged transitions' events, oldest first; only as many as are retained.
        package var batches: [(first: Int64, last: Int64, body: [UInt8])] = []
        package var eventCount: Int64 = 0
    }

    /// A generation of the log closed for compaction.
    private struct Generation {
        package var folds: [String: Fold]
        /// The seq of its last change, recorded with it in the database.
        package var lastSeq: Int64
        /// Its change log file.
        package var file: Int
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
    /// to be written by the next attempt (the log keeps its changes meanwhile); when the disk could
    /// not take it, that attempt comes a second later.
    private func compactSealedGeneration() {
        do {
            try withDatabase { () throws(StoreError) in try writeSealedGeneration() }
        } catch where error.kind == .unavailable {
            scheduleCompactionRetry()
        } catch {}
    }

    private func scheduleCompactionRetry() {
        let schedule = (try? locked { () -> Bool in
            guard !closed, !compactionRetryScheduled else { return false }
            compactionRetryScheduled = true
            return true
        }) ?? false
        guard schedule else { return }
        compactor.asyncAfter(deadline: .now() + .seconds(1)) { [weak self] in
            guard let self else { return }
            try? self.locked { self.compactionRetryScheduled = false }
            self.compactSealedGeneration()
        }
    }

    /// Caller holds `database`.
    private func writeSealedGeneration() throws(StoreError) {
        // Read under `lock` now, not when sealed: a delete may have taken a session out since.
        guard let generation = try locked({ compacting }) else { return }
        try writing { () throws(StoreError) in
            try Self.write(generation.folds, through: generation.lastSeq, connection, retainedEvents: retainedEvents)
        }
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

    package func delete(_ id: String) throws(StoreError) -> Bool {
        guard SessionID.isValid(id) else { return false }
        return try withDatabase { () throws(StoreError) -> Bool in
            let existed = try writing { () throws(StoreError) -> Bool in
                try connection.transaction { () throws(StoreError) -> Bool in
                    try connection.statement("DELETE FROM event_log WHERE session_id = ?").bind(1, id).run()
                    try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                    return connection.changes > 0
                }
            }
            // Only once the row is gone (a failed delete keeps every logged change). Its logged
            // changes stay in the log files; compaction (or recovery) finds no row for them.
            try locked {
                cache.remove(id)
                pending[id] = nil
                compacting?.folds[id] = nil
            }
            return existed
        }
    }

    package func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        guard SessionID.isValid(id) else { return [] }
        return try withDatabase { () throws(StoreError) -> [LifecycleEvent] in
            // Batches are trimmed whole, so older events may linger: show the retained ones only.
            let newest = try loadHoldingDatabase(id)?.state.eventCounter ?? 0
            let after = max(after, newest - retainedEvents)
            var events: [LifecycleEvent] = []
            // A batch that does not read back is damage: an error, never a silently shorter list.
            func collect(_ body: [UInt8]) throws(StoreError) {
                guard let elements = (try? JSONValue(parsing: body))?.arrayValue else {
                    throw StoreError(message: "session \(id): a stored event batch is not a JSON array (is the database damaged? see navd store check)")
                }
                for element in elements {
                    guard let event = LifecycleEvent(json: element) else {
                        throw StoreError(message: "session \(id): a stored event is not an event (is the database damaged? see navd store check)")
                    }
                    guard event.seq > after, events.count < limit else { continue }
                    events.append(event)
                }
            }
            let batches = try connection.statement(
                "SELECT body FROM event_log WHERE session_id = ? AND last_seq > ? ORDER BY first_seq")
            try batches.bind(1, id).bind(2, Int64(after))
            defer { batches.reset() }
            while events.count < limit, try batches.step() { try collect(batches.bytes(0)) }
            batches.reset()
            // Newer than every compacted batch: the log's, oldest generation first. Holding
            // `database`, a sealed generation is one the compactor has not written yet.
            let logged = try locked { (compacting?.folds[id]?.batches ?? []) + (pending[id]?.batches ?? []) }
            for batch in logged where events.count < limit && batch.last > after { try collect(batch.body) }
            return events
        }
    }

    package func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> Int {
        try withDatabase { () throws(StoreError) -> Int in
            // `touched_at` in `sessions` is current once the log is folded in.
            try writing { () throws(StoreError) in try compactEverything() }
            return try lock.withLock { _ throws(StoreError) -> Int in
                // Updates wait here: none can touch a session between this check and its deletion.
                let expired = try connection.statement("SELECT id FROM sessions WHERE touched_at < ?")
                try expired.bind(1, cutoff)
                var ids: [String] = []
                while try expired.step() {
                    let id = expired.text(0)
                    // Touched since the compaction above: its change is only in the log.
                    if let touched = cache.touchedAt(id) ?? newestLogged(id)?.touchedAt, touched >= cutoff { continue }
                    ids.append(id)
                }
                expired.reset()
                try writing { () throws(StoreError) in
                    try connection.transaction { () throws(StoreError) in
                        for id in ids {
                            try connection.statement("DELETE FROM event_log WHERE session_id = ?").bind(1, id).run()
                            try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                        }
                    }
                }
                for id in ids {
                    cache.remove(id)
                    pending[id] = nil
                    compacting?.folds[id] = nil
                }
                return ids.count
            }
        }
    }

    package func list(limit: Int) throws(StoreError) -> [StoredSession] {
        try withDatabase { () throws(StoreError) -> [StoredSession] in
            try writing { () throws(StoreError) in try compactEverything() }
            let statement = try connection.statement(
                "SELECT id, graph, graph_version, token_hash, snapshot, created_at, touched_at FROM sessions ORDER BY created_at LIMIT ?"
            )
            try statement.bind(1, Int64(limit))
            defer { statement.reset() }
            var sessions: [StoredSession] = []
            while try statement.step() {
                let id = statement.text(0)
                // The cache and the log are newer than the row for a session changed since the
                // compaction above.
                let (cached, logged) = try locked { (cache.peek(id), newestLogged(id)) }
                if let cached {
                    sessions.append(cached)
                } else if let listed = try? row(id: id, statement, offset: 1, logged: logged) {
                    // A session that no longer fits its graph is left out of the listing, not fatal to it.
                    sessions.append(listed.0)
                }
            }
            return sessions
        }
    }

    package func count() throws(StoreError) -> Int {
        try withDatabase { () throws(StoreError) -> Int in
            let statement = try connection.statement("SELECT COUNT(*) FROM sessions")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
    }

    /// Allocates the version here too (one process holds the file, under `database`): the next
    /// number after the latest stored one, unless that one already is this document.
    package func storeGraph(_ document: JSONValue, name: String) throws(StoreError) -> (version: Int, stored: Bool) {
        let text = document.jsonString
        return try withDatabase { () throws(StoreError) -> (version: Int, stored: Bool) in
            let latest = try connection.statement("SELECT version, document = ? FROM graphs WHERE name = ? ORDER BY version DESC LIMIT 1")
                .bind(1, text).bind(2, name)
            let found = try latest.step()
            let (version, same) = found ? (Int(latest.int(0)), latest.int(1) == 1) : (0, false)
            latest.reset()
            if same { return (version, false) }
            // Through `writing`, like every other write: a full disk here shows in `/readyz` too.
            try writing { () throws(StoreError) in
                try connection.statement("INSERT INTO graphs (name, version, document) VALUES (?,?,?)")
                    .bind(1, name).bind(2, Int64(version + 1)).bind(3, text).run()
            }
            return (version + 1, true)
        }
    }

    package func graph(_ name: String, version: Int) throws(StoreError) -> JSONValue? {
        try withDatabase { () throws(StoreError) -> JSONValue? in
            let statement = try connection.statement("SELECT document FROM graphs WHERE name = ? AND version = ?")
                .bind(1, name).bind(2, Int64(version))
            defer { statement.reset() }
            return try statement.step() ? try Self.graphDocument(statement.bytes(0)) : nil
        }
    }

    package func latestGraph(_ name: String, newerThan known: Int) throws(StoreError) -> (document: JSONValue, version: Int)? {
        try withDatabase { () throws(StoreError) -> (document: JSONValue, version: Int)? in
            let statement = try connection.statement("SELECT document, version FROM graphs WHERE name = ? AND version > ? ORDER BY version DESC LIMIT 1")
                .bind(1, name).bind(2, Int64(known))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return (try Self.graphDocument(statement.bytes(0)), Int(statement.int(1)))
        }
    }

    package func latestGraphVersions() throws(StoreError) -> [(name: String, version: Int)] {
        try withDatabase { () throws(StoreError) -> [(name: String, version: Int)] in
            let statement = try connection.statement("SELECT name, MAX(version) FROM graphs GROUP BY name ORDER BY name")
            defer { statement.reset() }
            var versions: [(name: String, version: Int)] = []
            while try statement.step() { versions.append((statement.text(0), Int(statement.int(1)))) }
            return versions
        }
    }

    package func firstGraphName() throws(StoreError) -> String? {
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

    package func loadGraphs() throws(StoreError) -> [(document: JSONValue, version: Int)] {
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

    /// True while writes succeed (one atomic load). After a write the disk could not take, probes
    /// the change log and the database with a small write; a probe that succeeds also restarts
    /// compaction. How often it is asked is ``Readiness``'s business (at most once a second).
    package func isAvailable() -> Bool {
        guard failing.load(ordering: .relaxed) != 0 else { return true }
        let now = DispatchTime.now().uptimeNanoseconds
        do {
            try withDatabase { () throws(StoreError) in
                try locked { () throws(StoreError) in try log.probe(4096) }
                // A value that changes, so the commit writes a page.
                try connection.transaction { () throws(StoreError) in
                    try connection.statement(
                        "INSERT INTO store_meta (key, value) VALUES ('probed_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                    ).bind(1, Int64(bitPattern: now)).run()
                }
            }
        } catch {
            return false
        }
        failing.store(0, ordering: .relaxed)
        compactor.async { [weak self] in self?.compactSealedGeneration() }
        return true
    }

    /// Waits until the compactor is idle (it may have a generation to write).
    package func waitForCompaction() {
        compactor.sync {}
    }

    package func close() {
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
package typealias SnapshotDecoder = @Sendable (_ snapshot: JSONValue, _ name: String, _ version: Int) throws(StoreError) -> SessionState
