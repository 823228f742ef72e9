import Dispatch
import NavCore
import NavJSON
import NavSessions
import NavSnapshot
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sessions in an SQLite file (`--store sqlite:PATH`), the embedded default.
///
/// WAL journal; `synchronous=NORMAL` by default, so a committed change survives the
/// process being killed (`kill -9`); `sqlite:PATH?sync=full` also survives power loss.
///
/// One navd process owns the file (an advisory lock on the database file itself, ``DatabaseLock``,
/// says so, whatever name the file is opened by), so the store keeps a write-through cache of
/// decoded sessions and reads never touch the disk twice. Another process holding it is reported
/// as in use (`StoreError.Kind.inUse`, naming its PID), never as damage.
///
/// A change is appended to the ``ChangeLog`` (`PREFIX-changes-NNNNNN`, where the database records
/// `PREFIX`: the file's real path when it was created, so a symlink, a hard link or a `..` path
/// finds the same log; `SQLiteStore+Location.swift`; one `pwrite` of one record) and acknowledged
/// once that write has returned (with `sync=full`, once it is on disk). The database catches up in the background: every ``compactionThreshold`` changes (or
/// ``answerBytesPerGeneration`` of kept answers, or ``logBytesPerGeneration`` of log) the log starts a new generation, and the compactor thread folds the previous one into `sessions`
/// and `event_log` — each session's newest snapshot once, its events as one batch, and the answers
/// its changes kept under an `Idempotency-Key` into `idempotency` — a chunk of
/// sessions per transaction, the last of which also records the last change it holds
/// (`store_meta.compacted_seq`), then checkpoints and removes that generation's file. Changes
/// keep being appended meanwhile. What compaction writes is folded in memory as changes are
/// appended (``Fold``), so nothing is read back. At start-up, whatever the files hold past `compacted_seq` (a crash's leftovers) is
/// folded in before anything is served; a sweep or a listing folds everything first.
///
/// The cache of decoded sessions is bounded by an estimate of their memory (``SessionCache``);
/// a session read after it left the cache comes from its row, with its newest logged change (the
/// folds hold each session's newest snapshot) laid over it.
///
/// Three connections: ``WriterState/connection`` writes (compaction, creation, deletion, graphs,
/// and counts), ``ReaderState/connection`` reads rows (a session the cache does not hold, events,
/// graphs), and ``FoldState/checkpointer`` copies the WAL into the file after each fold. WAL
/// lets the reader read what is committed while a write transaction is open, so such a read never
/// waits for a compaction, however many sessions' changes it folds (``load(_:)`` says how the row and the log are
/// combined without one); a fold takes the writing connection for one chunk of sessions at a
/// time, and checkpoints without it, so a create or a delete waits for one chunk at most. All
/// three open the file through SQLite's `unix-excl` VFS: the
/// process takes one exclusive lock on the file for good, so no other process opens it and no
/// transaction makes a locking system call, and the WAL index is in this process's memory, not
/// a `-shm` file. (The exclusive locking mode did the same for one connection, and keeps a
/// second one out.)
///
/// Start-up refuses damage instead of dropping acknowledged changes silently: a database that
/// fails `PRAGMA quick_check`, or a change log with changes missing (seqs are consecutive, and a
/// crash can only cut the last record short). `navd store repair --accept-loss` folds what is
/// valid (``init(path:synchronousFull:retainedEvents:compactionThreshold:answerBytesPerGeneration:logBytesPerGeneration:foldChunk:cacheBytes:checkDatabase:acceptingLoss:files:decode:)``
/// with `acceptingLoss`) and sets the damaged file aside. A database of a schema this navd does
/// not know is refused before anything is written to it (``schemaVersion``).
///
/// A write the disk cannot take (full, failing) throws an `unavailable` error and changes
/// nothing; ``isAvailable()`` then probes the disk about once a second, and a failed compaction is
/// retried every second, so the store recovers by itself once there is room.
///
/// The analytics feed's records are written with their changes: a create's and a delete's (an
/// expiry's) in the SQL transaction that makes the change, an update's inside its change log
/// record, folded into the `feed` table with the rest of its generation (or at start-up). One
/// process owns the file, so it numbers the records itself (``FeedState``, kept with what reads
/// see): a write takes its positions before it makes its records durable (an update under the
/// append lock, before its `pwrite`; the others under the writer lock, before their transaction)
/// and shows them once they are; one that fails gives them up. A read merges the table with the
/// records not folded yet and hands out only positions below the oldest still in flight, so a
/// reader paging on sees every record once, in the order they became visible. The newest position
/// a purge or a sweep removed is kept in `store_meta`, so after a restart numbering goes on above
/// every position ever handed out.
///
/// The tables and their upgrades are in `SQLiteStore+Schema.swift`, the session and graph
/// operations in `+Sessions` and `+Graphs`, the feed in `+Feed`, sealing and folding generations
/// in `+Compaction`, start-up after a crash and `navd store check` in `+Recovery`.
///
/// Locks, outermost first; a lock is never taken while a later one is held:
/// `fold` (``FoldState``, one fold of a generation at a time) → `writer` (``WriterState``) →
/// `appender` (``AppendState``) → `reader` (``ReaderState``) → `published` (``Published``).
/// Each holds its state, reached only inside it (``folding(_:)``, ``withWriter(closing:_:)``,
/// ``appending(_:)``, ``withReader(_:)``, ``withPublished(_:)``); what needs an outer lock takes
/// its state as a witness (publishing a change needs the ``AppendState``, a fold's progress the
/// ``FoldState``); debug builds also stop at a lock taken against the order (``LockOrder``).
/// A read takes `reader` and `published` only; an update takes `appender`, and `published` only
/// to compare and to publish, so a read never waits for a `pwrite` or an `fdatasync`, and sees a
/// change only once it is durable.
package final class SQLiteStore: SessionStore, GraphStore, Sendable {
    package let name: String
    private let fold: Mutex<FoldState>
    private let writer: Mutex<WriterState>
    /// Threads waiting for ``writer`` (``withWriter(closing:_:)``): a fold's transaction of feed
    /// records, which runs on while nobody waits, commits early for them.
    let writersWaiting = Atomic<Int>(0)
    private let appender: Mutex<AppendState>
    private let reader: Mutex<ReaderState>
    private let published: Mutex<Published>
    private let ownership: DatabaseLock
    let retainedEvents: Int
    package let decode: SnapshotDecoder
    /// The change log's prefix (``ChangeLog/prefix``): the log itself is ``AppendState/log``.
    package let logPrefix: String
    let compactor = DispatchQueue(label: "navd.sqlite.compactor")
    /// Which part could not take its last write (``Part`` bits): set by a write the disk could not
    /// take, cleared by the next write to that part that succeeds (or a probe of both).
    private let failing = Atomic<UInt8>(0)
    /// When ``keepCheckpoint(of:version:snapshot:within:)`` trims the checkpoints' bytes.
    let checkpointTrimming = CheckpointTrimming()
    /// Retained events' bytes let go (``takeReleasedEventBytes()``): batches trimmed or joined
    /// by a fold, dropped from the log's folds, or deleted with their session.
    let releasedEvents = ReleasedBytes()
    /// Start a new generation after this many changes.
    let compactionThreshold: Int
    /// Start a new generation once its kept answers take this many bytes, even before
    /// ``compactionThreshold`` changes: an answer is a whole session view, held in memory until
    /// folded, so changes sent with fresh `Idempotency-Key`s must not grow memory without bound.
    let answerBytesPerGeneration: Int
    /// Start a new generation once its file takes this many bytes, even before
    /// ``compactionThreshold`` changes. A change logs its session's whole snapshot, up to 256
    /// screens of 64 KiB of state each, so a tiny change to a large session logs megabytes;
    /// counted only by changes, a generation of such changes took gigabytes of disk, and its folds
    /// as much memory (each session's newest snapshot waits there to be folded). By its bytes, the
    /// log holds at most about four times this: the generation being folded, sealed at up to
    /// twice this, and the current one, whose writers wait for that fold once it reaches twice
    /// this. The folds in memory hold no more than the log.
    let logBytesPerGeneration: Int
    /// How many sessions' changes one transaction of a fold writes: a create or a delete waits
    /// for at most one such chunk (about 10 ms), not for a whole generation (0.3–0.7 s for 4,000
    /// sessions), and a chunk is still large enough that its commit costs little.
    let foldChunk: Int
    /// A generation of about 20 MB of log: large enough that a busy session's changes are folded
    /// many at a time (2,048 made the compactor the bottleneck under load: 13,000–16,000 changes/s
    /// against 19,500–22,000 with 8,192, 12-second runs of 1,000 busy sessions), small enough
    /// that start-up replays it in well under a second.
    package static let defaultCompactionThreshold = 8192
    static let defaultFoldChunk = 128
    /// The default `--max-idempotency-bytes` (the daemon passes a quarter of its budget).
    package static let defaultAnswerBytesPerGeneration = 64 << 20
    /// Some four generations of ordinary changes (8,192 of about 2 KB): only large sessions reach it.
    package static let defaultLogBytesPerGeneration = 64 << 20
    /// The VFS of both connections: `unix` with one lock on the file, held by the process.
    static let vfs = "unix-excl"
    /// The decoded-session cache's default bound (`--cache-size`).
    package static let defaultCacheBytes = 256 << 20
    /// For `/metrics`: the last seq written into the database, the compactions and their time
    /// (nanoseconds), and the session reads the cache answered or missed.
    let compactedSeq = Atomic<Int64>(0)
    let compactions = Atomic<Int>(0)
    let compactionNanoseconds = Atomic<Int>(0)
    let cacheHits = Atomic<Int>(0)
    let cacheMisses = Atomic<Int>(0)
    /// What start-up with `acceptingLoss` left out and set aside, one line each.
    package let recoveryReport: [String]

    /// - Parameters:
    ///   - path: the database file, by any of its names; its folder is created if missing. The
    ///     change log files sit where the database records them (``placeChangeLog(_:path:identity:adopting:)``).
    ///   - cacheBytes: the bound of the decoded-session cache, by ``SessionCache/cost(snapshot:)``.
    ///   - checkDatabase: run `PRAGMA quick_check` first and refuse a damaged database.
    ///   - acceptingLoss: when the change log is damaged, fold the changes that are still whole
    ///     and consistent, rename the damaged files to `….damaged`, and say what was lost in
    ///     ``recoveryReport`` (`navd store repair --accept-loss`); otherwise such a log is refused.
    ///     Likewise a recorded change log folder that cannot be reached is given up for one next to the file.
    ///   - files: the system calls the change log writes with (tests inject failures).
    ///   - decode: turns a stored snapshot back into a state, checked against its graph.
    /// - Throws: when the file is in use (an `inUse` error naming the holder), damaged, of a schema
    ///   this navd does not know (see ``schemaVersion``; the file is then left as it was), cannot be
    ///   opened or written (naming the path and the system's reason), or its change log is not
    ///   where it records it.
    package init(
        path: String, synchronousFull: Bool = false, retainedEvents: Int = 1000,
        compactionThreshold: Int = SQLiteStore.defaultCompactionThreshold,
        answerBytesPerGeneration: Int = SQLiteStore.defaultAnswerBytesPerGeneration,
        logBytesPerGeneration: Int = SQLiteStore.defaultLogBytesPerGeneration, foldChunk: Int = SQLiteStore.defaultFoldChunk,
        cacheBytes: Int = SQLiteStore.defaultCacheBytes, checkDatabase: Bool = true, acceptingLoss: Bool = false,
        files: any ChangeLogFiles = SystemFiles(), decode: @escaping SnapshotDecoder
    ) throws(StoreError) {
        self.name = "sqlite:\(path)"
        self.retainedEvents = retainedEvents
        self.compactionThreshold = max(1, compactionThreshold)
        self.answerBytesPerGeneration = max(1, answerBytesPerGeneration)
        self.logBytesPerGeneration = max(1, logBytesPerGeneration)
        self.foldChunk = max(1, foldChunk)
        self.decode = decode
        try FileSystem.createParentDirectory(of: path)
        let ownership = try DatabaseLock(path: path)
        self.ownership = ownership
        /// What start-up says when the database cannot be used: held by another process (in use,
        /// not damaged), or on a disk that cannot take it (nothing to restore), or damaged.
        func unusable(_ error: StoreError) -> StoreError {
            switch error.kind {
            case .inUse:
                return DatabaseLock.inUse(
                    path, holder: DatabaseLock.holder(of: ownership.descriptor, ownership.identity, holdingFlock: true))
            case .unavailable:
                return StoreError(
                    message: "the database \(path) cannot be opened or written: \(error.message). It is not damaged, and nothing "
                        + "was changed; start again once that is fixed (room on the disk, the file's permissions)", kind: .unavailable
                )
            case .failure, .incompatible:
                return StoreError(
                    message: "the database \(path) cannot be used: \(error.message). Refusing to start; restore it from a backup "
                        + "(`navd store check --store sqlite:\(path)` lists every problem)"
                )
            }
        }
        // SQLite's own side file (the `-wal`) follows the name it opens the file by, and a hard
        // link has another: every connection opens the name the database recorded.
        let databasePath = Self.databasePath(for: path, identity: ownership.identity)
        let connection: SQLiteConnection
        do throws(StoreError) {
            connection = try SQLiteConnection(path: databasePath, vfs: Self.vfs)
        } catch {
            throw unusable(error)
        }
        // Only reads until the schema is known: a file navd refuses is left exactly as it was
        // (even its journal mode, which `journal_mode=WAL` would write into its header).
        let schema: SchemaShape
        do throws(StoreError) {
            if checkDatabase {
                let problems = try Self.integrity(connection, check: "quick_check", limit: 10)
                guard problems.isEmpty else {
                    throw StoreError(message: "PRAGMA quick_check found damage: \(problems.joined(separator: "; "))")
                }
            }
            schema = try Self.schemaShape(of: connection)
        } catch {
            throw unusable(error)
        }
        let step = try Self.schemaStep(for: schema, path: path)
        do throws(StoreError) {
            try connection.execute("PRAGMA journal_mode=WAL")
            try connection.execute("PRAGMA synchronous=\(synchronousFull ? "FULL" : "NORMAL")")
            try connection.execute("PRAGMA foreign_keys=ON")
            // 64 MiB of page cache: compaction then rarely reads a page back from disk.
            try connection.execute("PRAGMA cache_size=-65536")
            // No checkpoint on commit: compaction runs one after each generation.
            try connection.execute("PRAGMA wal_autocheckpoint=0")
        } catch {
            throw unusable(error)
        }
        let place: ChangeLogPlace
        do throws(StoreError) {
            try Self.apply(step, connection)
            place = try Self.placeChangeLog(connection, path: path, identity: ownership.identity, adopting: acceptingLoss)
            if let location = place.record {
                try Self.record(location, connection)
                // Into the file itself at once: a later start through a hard link reads the
                // record from the file (``databasePath(for:identity:)``) before it knows the WAL's name.
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch let error where error.kind != .failure {
            throw unusable(error)
        }
        let reader: SQLiteConnection
        let checkpointer: SQLiteConnection
        do throws(StoreError) {
            reader = try SQLiteConnection(path: databasePath, vfs: Self.vfs)
            // It never writes: a statement that would is an error, not a second writer.
            try reader.execute("PRAGMA query_only=ON")
            checkpointer = try SQLiteConnection(path: databasePath, vfs: Self.vfs)
        } catch {
            throw unusable(error)
        }

        // What a crash left in the change log is folded in before anything is served.
        let recovery: ChangeLogRecovery
        do throws(StoreError) {
            recovery = try Self.recoverChangeLog(
                connection, path: path, prefix: place.prefix, retainedEvents: retainedEvents, acceptingLoss: acceptingLoss
            )
        } catch let error where error.kind != .failure {
            throw unusable(error)
        }
        recoveryReport = (place.note.map { [$0] } ?? []) + recovery.report
        compactedSeq.store(recovery.lastSeq, ordering: .relaxed)
        let feed: FeedState
        do throws(StoreError) {
            feed = try Self.storedFeed(connection)
        } catch let error where error.kind != .failure {
            throw unusable(error)
        }
        let log = try ChangeLog(prefix: place.prefix, after: recovery.lastGeneration, synchronous: synchronousFull, files: files)
        log.remove(through: recovery.lastGeneration)
        logPrefix = log.prefix
        fold = Mutex(FoldState(checkpointer: checkpointer))
        writer = Mutex(WriterState(connection: connection))
        appender = Mutex(AppendState(log: log, nextSeq: recovery.lastSeq + 1))
        self.reader = Mutex(ReaderState(connection: reader))
        published = Mutex(Published(cache: SessionCache(limit: cacheBytes), feed: feed))
    }

    /// Runs `body` holding the fold lock, the outermost: one fold of a generation at a time.
    func folding<T>(_ body: (borrowing FoldState) throws(StoreError) -> T) throws(StoreError) -> T {
        #if DEBUG
            let outer = LockOrder.enter(.fold)
            defer { LockOrder.leave(to: outer) }
        #endif
        return try fold.withLock { state throws(StoreError) -> T in try body(state) }
    }

    /// Runs `body` with the writing connection, on an open store (or on one ``close()`` is
    /// `closing`).
    func withWriter<T>(closing: Bool = false, _ body: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        #if DEBUG
            let outer = LockOrder.enter(.writer)
            defer { LockOrder.leave(to: outer) }
        #endif
        writersWaiting.add(1, ordering: .relaxed)
        return try writer.withLock { state throws(StoreError) -> T in
            writersWaiting.subtract(1, ordering: .relaxed)
            guard closing || !withPublished({ $0.closed }) else { throw Self.closedError }
            return try body(state.connection)
        }
    }

    /// Runs `body` holding the append lock, with the change log and its counters: what an update
    /// compares, appends and publishes under (never taken holding `reader` or `published`).
    func appending<T>(_ body: (inout AppendState) throws(StoreError) -> T) throws(StoreError) -> T {
        #if DEBUG
            let outer = LockOrder.enter(.append)
            defer { LockOrder.leave(to: outer) }
        #endif
        return try appender.withLock { state throws(StoreError) -> T in try body(&state) }
    }

    /// Runs `body` with the reading connection, on an open store. Reset every statement before
    /// returning: one left mid-run holds a read transaction, and the WAL cannot restart past it.
    func withReader<T>(_ body: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        #if DEBUG
            let outer = LockOrder.enter(.reader)
            defer { LockOrder.leave(to: outer) }
        #endif
        return try reader.withLock { state throws(StoreError) -> T in
            guard !withPublished({ $0.closed }) else { throw Self.closedError }
            return try body(state.connection)
        }
    }

    /// Runs `body` holding the innermost lock, with what reads see. Short, and takes no lock:
    /// every update holds it to compare and to publish.
    func withPublished<T>(_ body: (inout Published) -> T) -> T {
        #if DEBUG
            let outer = LockOrder.enter(.published)
            defer { LockOrder.leave(to: outer) }
        #endif
        return published.withLock { state -> T in body(&state) }
    }

    static var closedError: StoreError { StoreError(message: "the SQLite store is closed") }

    /// Where a write goes: appends to the change log, or the database (compaction, creation,
    /// deletion). Either may fail while the other works (a compaction needs more room than an append).
    package enum Part: UInt8 {
        case log = 1
        case database = 2
    }

    /// A write to `part` went through: it takes writes again.
    package func wrote(_ part: Part) {
        if failing.load(ordering: .relaxed) & part.rawValue != 0 { failing.bitwiseAnd(~part.rawValue, ordering: .relaxed) }
    }

    /// Notes a write the disk could not take, for ``isAvailable()``; returns the error.
    package func failed(_ error: StoreError, _ part: Part) -> StoreError {
        if error.kind == .unavailable { failing.bitwiseOr(part.rawValue, ordering: .relaxed) }
        return error
    }

    /// Runs a write to `part`, noting whether the disk took it.
    package func noting<T>(_ part: Part, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do {
            let result = try body()
            wrote(part)
            return result
        } catch {
            throw failed(error, part)
        }
    }

    /// True while writes succeed (one atomic load). After a write the disk could not take, probes
    /// the change log and the database with a small write; a probe that succeeds also restarts
    /// compaction. How often it is asked is ``Readiness``'s business (at most once a second).
    package func isAvailable() -> Bool {
        guard failing.load(ordering: .relaxed) != 0 else { return true }
        let now = DispatchTime.now().uptimeNanoseconds
        do {
            try withWriter { connection throws(StoreError) in
                try appending { append throws(StoreError) in try append.log.probe(4096) }
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
        // No other fold runs meanwhile (a sweep's or a listing's).
        try? folding { fold throws(StoreError) in
            // Closed first: no change is appended after the last compaction below, and nothing
            // else takes the writing connection between its chunks.
            let wasOpen = try withWriter(closing: true) { _ throws(StoreError) -> Bool in
                try appending { append throws(StoreError) -> Bool in withPublished { $0.close(append) } }
            }
            guard wasOpen else { return }
            // Everything logged goes into the database; if that fails the log files stay, and the
            // next start folds them in.
            if (try? compactEverything(fold, closing: true)) != nil {
                try? appending { append throws(StoreError) in append.log.discard() }
            }
            try withWriter(closing: true) { connection throws(StoreError) in
                // No read runs any more (`closed`): the checkpoint below finds no reader in its way.
                // Not through ``withReader(_:)``, which refuses a closed store.
                #if DEBUG
                    let outer = LockOrder.enter(.reader)
                    defer { LockOrder.leave(to: outer) }
                #endif
                reader.withLock { $0.connection.close() }
                fold.checkpointer.close()
                try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                connection.close()
            }
        }
        ownership.release()
    }
}

/// The state each of the store's locks holds, in the order they are taken (see ``SQLiteStore``).
///
/// The connections and the change log are classes that are not `Sendable`; the states holding
/// them are `@unchecked Sendable` for that alone: each lives in its `Mutex` from `init` on, and
/// is reached only inside `withLock` (a connection is handed to a closure, never stored
/// elsewhere), so one thread at a time uses it. Their initialisers are private to this file, so
/// a state (and the witness it is for a later lock) exists only inside its lock; ``Published``'s
/// setters are too, so what its witnessed methods change changes nowhere else.
extension SQLiteStore {
    /// The fold lock's: the connection that copies the WAL into the database after each fold. One
    /// fold at a time (the compactor's, or a sweep's, a listing's or ``close()``'s, which fold
    /// everything first), taking the writer lock for one chunk of sessions at a time.
    struct FoldState: ~Copyable, @unchecked Sendable {
        let checkpointer: SQLiteConnection

        fileprivate init(checkpointer: SQLiteConnection) {
            self.checkpointer = checkpointer
        }
    }

    /// The writer lock's: the writing connection (compaction, creation, deletion, graphs, counts).
    struct WriterState: ~Copyable, @unchecked Sendable {
        let connection: SQLiteConnection

        fileprivate init(connection: SQLiteConnection) {
            self.connection = connection
        }
    }

    /// The append lock's: the change log, the next seq, and the current generation's size. Held
    /// from an update's compare-and-set to its publication, so one update at a time compares,
    /// appends and publishes, and a session's versions are logged, folded and cached in order.
    struct AppendState: ~Copyable, @unchecked Sendable {
        let log: ChangeLog
        var nextSeq: Int64
        /// The current generation's changes, and what their kept answers take
        /// (``KeptAnswer/cost(key:fingerprint:headers:body:)``; held in memory, ``Fold/answers``, until folded).
        var pendingChanges = 0
        var pendingAnswerBytes = 0
        /// What the current generation's feed records take (``FeedRecord/cost``), held in memory
        /// until folded too: counted against ``answerBytesPerGeneration`` with the answers.
        var pendingFeedBytes = 0

        fileprivate init(log: ChangeLog, nextSeq: Int64) {
            self.log = log
            self.nextSeq = nextSeq
        }
    }

    /// The reader lock's: the reading connection, which only reads and never waits for a write
    /// transaction.
    struct ReaderState: ~Copyable, @unchecked Sendable {
        let connection: SQLiteConnection

        fileprivate init(connection: SQLiteConnection) {
            self.connection = connection
        }
    }

    /// The innermost lock's: what reads see. The logged changes, the generation being folded,
    /// ``tableChanges`` and ``closed`` change only with the ``AppendState`` as a witness (both
    /// locks held); a read may cache what it read (``load(_:)`` says when), and the compactor
    /// notes a retry it scheduled.
    struct Published: ~Copyable, Sendable {
        /// The decoded sessions.
        var cache: SessionCache
        /// The current generation's changes, folded by session.
        private(set) var pending: [String: Fold] = [:]
        /// The previous generation, until the compactor has written it to the database.
        private(set) var compacting: Generation?
        /// Counts the writes to the tables a reader's row may be older than while the log no
        /// longer shows why: a generation folded in (its changes leave the log), a session
        /// deleted. A read caches what it read only if this did not move meanwhile (``load(_:)``).
        private(set) var tableChanges: UInt64 = 0
        private(set) var closed = false
        var compactionRetryScheduled = false
        /// The feed's numbering, its counts and its records not folded yet (``FeedState``).
        /// Positions are taken and resolved by writes holding the writer or the append lock.
        var feed: FeedState

        fileprivate init(cache: SessionCache, feed: FeedState) {
            self.cache = cache
            self.feed = feed
        }

        /// The feed records not in the `feed` table yet, in position order: the generation being
        /// folded's, then the current one's.
        var feedTail: [LoggedFeedRecord] {
            guard let folding = compacting?.feed, !folding.isEmpty else { return feed.pending }
            return folding + feed.pending
        }

        /// A session's newest change in the log, if it has one there.
        func newestLogged(_ id: String) -> Fold? {
            pending[id] ?? foldBeingWritten(id)
        }

        /// The session's fold in the generation being folded, unless the session was deleted since.
        func foldBeingWritten(_ id: String) -> Fold? {
            guard let fold = compacting?.folds[id], !fold.removed else { return nil }
            return fold
        }

        /// A change whose append has returned: reads see it from now on.
        /// - Returns: the bytes of the logged batches it made older than the retained events.
        mutating func publish(
            _ record: ChangeLog.Record, _ session: StoredSession, cost: Int, retainedEvents: Int, _ witness: borrowing AppendState
        ) -> Int {
            let dropped = SQLiteStore.fold(record, into: &pending, retainedEvents: retainedEvents)
            if let logged = record.feed { feed.showLogged(logged) }
            cache.put(session, cost: cost)
            return dropped
        }

        /// The current generation's changes become the one being folded, written to `file`.
        mutating func seal(file: Int, _ witness: borrowing AppendState) {
            compacting = Generation(folds: pending, lastSeq: witness.nextSeq - 1, file: file, feed: feed.pending)
            pending = [:]
            feed.pending = []
        }

        /// The generation being folded is in the tables, and leaves the log.
        mutating func folded(_ witness: borrowing AppendState) {
            compacting = nil
            tableChanges += 1
        }

        /// The first `count` feed records of the generation being folded are committed.
        mutating func feedWritten(through count: Int, _ witness: borrowing FoldState) {
            compacting?.feedWritten = count
        }

        /// A chunk of the generation being folded is in the tables: a retry may repeat it.
        mutating func partlyWritten(_ witness: borrowing FoldState) {
            compacting?.partlyWritten = true
        }

        /// Sessions whose rows were deleted: their cached and logged states go too. A fold of the
        /// generation being folded whose events are not accounted for yet stays, marked removed,
        /// for the compactor to tell them released (it may be writing a copy of it now); the
        /// current generation's go at once.
        /// - Returns: the bytes of the logged batches dropped here.
        mutating func remove(_ ids: some Sequence<String>, _ witness: borrowing AppendState) -> Int {
            var dropped = 0
            for id in ids {
                cache.remove(id)
                dropped += pending.removeValue(forKey: id)?.batchBytes ?? 0
                if compacting?.folds[id]?.settled == false {
                    compacting?.folds[id]?.removed = true
                } else {
                    compacting?.folds[id] = nil
                }
            }
            tableChanges += 1
            return dropped
        }

        /// Drops the batches of the session's fold in the current generation (not the one being
        /// folded: the compactor may be writing a copy of it). - Returns: their bytes.
        mutating func dropBatches(of id: String, _ witness: borrowing AppendState) -> Int {
            guard let bytes = pending[id]?.batchBytes, bytes > 0 else { return 0 }
            pending[id]?.batches = []
            pending[id]?.eventCount = 0
            return bytes
        }

        /// Folds of the generation being folded whose events a committed chunk accounted for.
        mutating func settle(_ ids: some Sequence<String>, _ witness: borrowing FoldState) {
            for id in ids { compacting?.folds[id]?.settled = true }
        }

        /// Drops the kept answers under `keys` from the current generation, and from the one being
        /// folded if `alsoCompacting`. - Returns: whether the one being folded holds any of them.
        mutating func forget(answers keys: [String], alsoCompacting: Bool, _ witness: borrowing AppendState) -> Bool {
            var folding = false
            for key in keys {
                guard let space = key.firstIndex(of: " ") else { continue }
                let id = String(key[..<space])
                pending[id]?.answers[key] = nil
                if alsoCompacting {
                    compacting?.folds[id]?.answers[key] = nil
                } else if compacting?.folds[id]?.answers[key] != nil {
                    folding = true
                }
            }
            return folding
        }

        /// Closes the store. - Returns: whether it was open.
        mutating func close(_ witness: borrowing AppendState) -> Bool {
            defer { closed = true }
            return !closed
        }
    }
}

#if DEBUG
    /// The lock order checked at run time, in debug builds (tests): each thread's innermost held lock
    /// of a store, so a lock taken against the order stops the process where it is taken, instead
    /// of deadlocking once in a while under load. Release builds have none of it.
    enum LockOrder: Int {
        case none = 0, fold, writer, append, reader, published

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key, nil)
            return key
        }()

        /// Notes `lock` held by this thread, which must hold only earlier ones. - Returns: what it held.
        static func enter(_ lock: LockOrder) -> LockOrder {
            let outer = held
            precondition(
                outer.rawValue < lock.rawValue, "SQLiteStore: the \(lock) lock taken holding the \(outer) lock, against the lock order")
            held = lock
            return outer
        }

        static func leave(to outer: LockOrder) {
            held = outer
        }

        private static var held: LockOrder {
            get { LockOrder(rawValue: Int(bitPattern: pthread_getspecific(key))) ?? .none }
            set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue.rawValue)) }
        }
    }
#endif
