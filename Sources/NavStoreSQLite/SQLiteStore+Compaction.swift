import Dispatch
import NavSessions

/// Compaction: a generation of the change log sealed every ``SQLiteStore/compactionThreshold``
/// changes, and folded into `sessions`, `event_log` and `idempotency` by the compactor thread, a chunk of
/// sessions per transaction.
extension SQLiteStore {
    /// One session's logged changes as compaction will write them.
    package struct Fold: Sendable {
        package var version: Int64
        package var snapshot: [UInt8]
        var touchedAt: Int64
        /// The logged transitions' events, oldest first; only as many as are retained.
        package var batches: [(first: Int64, last: Int64, body: [UInt8])] = []
        var eventCount: Int64 = 0
        /// The answers kept by its changes, by key (``KeptAnswer/key``): the newest under each,
        /// found without a scan (a retry looks here first).
        package var answers: [String: KeptAnswer] = [:]
        /// Its session was deleted while the fold waited to be written (``Published/remove(_:_:)``):
        /// reads no longer see it, and its write finds no row.
        var removed = false
        /// Its batches' bytes are accounted for in the `session_bytes` budget: written to
        /// `event_log`, or told released for a session that was gone (``SQLiteStore/releasedEvents``).
        /// A fold written again (a retry after a failure between chunks) tells nothing again.
        var settled = false

        /// What its batches took when they were charged: their JSON's bytes.
        var batchBytes: Int { batches.reduce(0) { $0 + $1.body.count } }
    }

    /// A generation of the log closed for compaction.
    package struct Generation: Sendable {
        var folds: [String: Fold]
        /// The seq of its last change, recorded with it in the database.
        var lastSeq: Int64
        /// Its change log file.
        package var file: Int
        /// Whether a chunk of it is in the tables already (``writeSealedGeneration(closing:)``).
        var partlyWritten = false
        /// Its changes' feed records, in position order.
        var feed: [LoggedFeedRecord] = []
        /// How many of ``feed``, from the first, are committed in `feed`: a retry after a failure
        /// goes on from there, so the fold inserts each record once and needs no `OR REPLACE`.
        var feedWritten = 0
    }

    /// - Returns: the bytes of the batches it dropped, older than the retained events.
    @discardableResult
    static func fold(_ record: ChangeLog.Record, into folds: inout [String: Fold], retainedEvents: Int) -> Int {
        var dropped = 0
        var entry =
            folds.removeValue(forKey: record.sessionID)
            ?? Fold(version: record.version, snapshot: record.snapshot, touchedAt: record.touchedAt)
        entry.version = record.version
        entry.snapshot = record.snapshot
        entry.touchedAt = record.touchedAt
        if let answer = record.answer { entry.answers[answer.key] = answer }
        if record.firstEvent > 0 {
            entry.batches.append((record.firstEvent, record.lastEvent, record.events))
            entry.eventCount += record.lastEvent - record.firstEvent + 1
            // A hot session's log may hold many transitions: keep what is retained.
            let retained = Int64(retainedEvents)
            while let oldest = entry.batches.first, entry.eventCount - (oldest.last - oldest.first + 1) >= retained {
                entry.eventCount -= oldest.last - oldest.first + 1
                dropped += oldest.body.count
                entry.batches.removeFirst()
            }
        }
        folds[record.sessionID] = entry
        return dropped
    }

    /// Closes the current generation for the compactor, if it holds changes and none is being
    /// compacted. Under the append lock: no change is appended meanwhile, and only its holder
    /// seals, so the generation seen free stays free. - Returns: whether it did.
    func sealGeneration(_ append: inout AppendState) -> Bool {
        guard append.pendingChanges > 0, withPublished({ $0.compacting == nil }), let file = try? append.log.rotate() else { return false }
        withPublished { $0.seal(file: file, append) }
        append.pendingChanges = 0
        append.pendingAnswerBytes = 0
        append.pendingFeedBytes = 0
        return true
    }

    /// The compactor's work: writes the sealed generation, if any. A failure leaves it sealed,
    /// to be written by the next attempt (the log keeps its changes meanwhile); when the disk could
    /// not take it, that attempt comes a second later.
    func compactSealedGeneration() {
        do {
            try folding { fold throws(StoreError) in try writeSealedGeneration(fold) }
        } catch let error where error.kind == .unavailable {
            scheduleCompactionRetry()
        } catch {}
    }

    private func scheduleCompactionRetry() {
        let schedule = withPublished { published -> Bool in
            guard !published.closed, !published.compactionRetryScheduled else { return false }
            published.compactionRetryScheduled = true
            return true
        }
        guard schedule else { return }
        compactor.asyncAfter(deadline: .now() + .seconds(1)) { [weak self] in
            guard let self else { return }
            self.withPublished { $0.compactionRetryScheduled = false }
            self.compactSealedGeneration()
        }
    }

    /// Writes the sealed generation in transactions of at most ``foldChunk`` sessions, each
    /// holding the writer lock for its own time only: a create or a delete waits for one chunk, not
    /// for the whole generation. The last chunk records the generation's last seq as compacted, so
    /// after a crash between chunks start-up folds the whole generation again (``write(_:through:_:retainedEvents:repeating:)``
    /// with `repeating`: what a chunk wrote is written once). Under the fold lock (`fold`), not the
    /// writer's; `closing` lets ``close()`` write while the store refuses everything else.
    func writeSealedGeneration(_ fold: borrowing FoldState, closing: Bool = false) throws(StoreError) {
        guard let generation = withPublished({ $0.compacting }) else { return }
        let started = ContinuousClock.now
        // The feed records first, each inserted once (a retry goes on from the first not
        // committed); a record stays in the tail reads merge in until the whole generation is
        // folded.
        try writeFeed(generation.feed, from: generation.feedWritten, fold, closing: closing)
        let folds = Array(generation.folds)
        var start = 0
        repeat {
            let end = min(start + foldChunk, folds.count)
            try withWriter(closing: closing) { connection throws(StoreError) in
                let released = try noting(.database) { () throws(StoreError) -> Int in
                    try Self.write(
                        folds[start..<end], through: end == folds.count ? generation.lastSeq : nil, connection,
                        retainedEvents: retainedEvents, repeating: generation.partlyWritten)
                }
                // Committed: told once, under the writer lock a delete of these sessions waits for.
                releasedEvents.add(released)
                withPublished { $0.settle(folds[start..<end].lazy.map(\.key), fold) }
            }
            start = end
            // A retry after a failure from here on may repeat a chunk written above.
            if start < folds.count, !generation.partlyWritten { withPublished { $0.partlyWritten(fold) } }
        } while start < folds.count
        let took = ContinuousClock.now - started
        compactions.wrappingAdd(1, ordering: .relaxed)
        compactionNanoseconds.wrappingAdd(
            Int(took.components.seconds) * 1_000_000_000 + Int(took.components.attoseconds / 1_000_000_000), ordering: .relaxed
        )
        compactedSeq.store(generation.lastSeq, ordering: .relaxed)
        try appending { append throws(StoreError) in
            withPublished { $0.folded(append) }
            append.log.remove(through: generation.file)
        }
        // Reads are short, so this usually copies the whole WAL, which the next write then restarts
        // (one a read holds back is copied by the next checkpoint). With a connection of its own,
        // under the fold lock only: copying a generation's pages takes longer than writing them
        // (0.3–0.4 s for 4,000 sessions), and creates and deletes go on meanwhile (a passive
        // checkpoint never blocks the writer).
        try fold.checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// Inserts a sealed generation's feed records from the first not committed yet, in
    /// transactions that each take at least four ``foldChunk``s of them (512 by default) and then
    /// go on while no other thread waits for the writer lock.
    ///
    /// Each transaction writes every index page its records' entries land on, once: with the
    /// `feed_blocks` index those are the newest block's few dozen pages, where an index led by
    /// session took a page for each session among the records. The fewer transactions a
    /// generation's records take, the fewer times the fold writes those pages, and the checkpoint
    /// copies them (BENCHMARKS.md, "Navigation analytics"). A create or a delete still waits for
    /// at most one chunk.
    func writeFeed(
        _ records: [LoggedFeedRecord], from written: Int, _ fold: borrowing FoldState, closing: Bool
    ) throws(StoreError) {
        var start = written
        while start < records.endIndex {
            start = try withWriter(closing: closing) { connection throws(StoreError) -> Int in
                let end = try noting(.database) { () throws(StoreError) -> Int in
                    try connection.transaction { () throws(StoreError) -> Int in
                        var index = start
                        repeat {
                            try Self.insertFeed(records[index], connection, replacing: false)
                            index += 1
                        } while index < records.endIndex
                            && (index - start < foldChunk * 4 || writersWaiting.load(ordering: .relaxed) == 0)
                        return index
                    }
                }
                withPublished { $0.feedWritten(through: end, fold) }
                return end
            }
        }
    }

    /// The backlog, the compactions and the cache, for `/metrics`; the session count as ``count()``.
    package func statistics() -> StoreStatistics {
        var statistics = StoreStatistics(sessions: try? count())
        if let next = try? appending({ append throws(StoreError) in append.nextSeq }) {
            statistics.changeLogBacklog = Int(max(0, next - 1 - compactedSeq.load(ordering: .relaxed)))
        }
        statistics.compactions = compactions.load(ordering: .relaxed)
        statistics.compactionNanoseconds = compactionNanoseconds.load(ordering: .relaxed)
        let (bytes, sessions, limit) = withPublished { ($0.cache.bytes, $0.cache.count, $0.cache.limit) }
        statistics.cacheBytes = bytes
        statistics.cacheSessions = sessions
        statistics.cacheLimitBytes = limit
        statistics.cacheHits = cacheHits.load(ordering: .relaxed)
        statistics.cacheMisses = cacheMisses.load(ordering: .relaxed)
        return statistics
    }

    /// Writes every logged change to the database. Under the fold lock, not the writer's.
    func compactEverything(_ fold: borrowing FoldState, closing: Bool = false) throws(StoreError) {
        try writeSealedGeneration(fold, closing: closing)
        if try appending({ append throws(StoreError) in sealGeneration(&append) }) { try writeSealedGeneration(fold, closing: closing) }
    }

    /// Writes folded changes into `sessions`, `event_log` and `idempotency` in one transaction, and records
    /// `lastSeq` as compacted when given.
    /// - Parameter repeating: some of these changes may be in the tables already (a fold cut short
    ///   by a crash or a failure between its chunks): a session's batches are then first removed
    ///   from its first logged seq on, so each is stored once. Rows are set, not added to, either way.
    /// - Parameter feed: feed records to set by their positions in the same transaction (start-up's fold).
    /// - Returns: the bytes of retained events it let go (``SessionStore/takeReleasedEventBytes()``),
    ///   once committed: batches of sessions deleted since, the bytes joining a session's batches
    ///   into one saved, and the batches trimmed from the table.
    @discardableResult
    package static func write(
        _ folds: some Sequence<(key: String, value: Fold)>, through lastSeq: Int64?, _ connection: SQLiteConnection, retainedEvents: Int,
        repeating: Bool, feed: [LoggedFeedRecord] = []
    ) throws(StoreError) -> Int {
        let retained = Int64(retainedEvents)
        return try connection.transaction { () throws(StoreError) -> Int in
            var released = 0
            // Whether or not the session still has a row: a deleted session's records stay.
            for logged in feed { try insertFeed(logged, connection, replacing: true) }
            for (id, entry) in folds {
                let charged = entry.settled ? 0 : entry.batchBytes
                guard !entry.removed else {
                    released += charged
                    continue
                }
                try connection.statement("UPDATE sessions SET version = ?, snapshot = ?, touched_at = ? WHERE id = ?")
                    .bind(1, entry.version).bind(2, utf8: entry.snapshot).bind(3, entry.touchedAt).bind(4, id).run()
                // A session deleted since its change was logged stays deleted, and so do its answers.
                guard connection.changes == 1 else {
                    released += charged
                    continue
                }
                // Set, not added to: a repeated fold writes each once. The newest answer under a key
                // replaces an older one, as the log answered before this fold (a key used again once
                // its answer was older than the TTL, before the sweep, applied anew).
                for answer in entry.answers.values { try insertAnswer(answer, connection, replacing: true) }
                guard let first = entry.batches.first, let last = entry.batches.last else { continue }
                if repeating {
                    try connection.statement("DELETE FROM event_log WHERE session_id = ? AND first_seq >= ?").bind(1, id).bind(
                        2, first.first
                    ).run()
                }
                var body = first.body
                for batch in entry.batches.dropFirst() { appendJSONArray(batch.body, to: &body) }
                try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
                    .bind(1, id).bind(2, first.first).bind(3, last.last).bind(4, utf8: body).run()
                if charged > 0 { released += charged - body.count }
                // Whole batches leave once all their events are older than the retained ones.
                if last.last > retained {
                    released += try connection.statement(
                        "DELETE FROM event_log WHERE session_id = ? AND last_seq <= ? RETURNING length(CAST(body AS BLOB))"
                    )
                    .bind(1, id).bind(2, last.last - retained).sum()
                }
            }
            if let lastSeq {
                try connection.statement("UPDATE store_meta SET value = ? WHERE key = 'compacted_seq'").bind(1, lastSeq).run()
            }
            return released
        }
    }

    /// Keeps `answer` in `idempotency`, unless its key is kept already; `replacing` the answer kept
    /// under it instead (a change's, folded: the newest is the answer).
    /// - Returns: whether this kept it (false: the key was kept already, and nothing was written).
    @discardableResult
    static func insertAnswer(_ answer: KeptAnswer, _ connection: SQLiteConnection, replacing: Bool = false) throws(StoreError) -> Bool {
        try connection.statement(
            replacing
                ? "INSERT OR REPLACE INTO idempotency (key, session_id, fingerprint, status, headers, body, created_at) VALUES (?,?,?,?,?,?,?)"
                : "INSERT OR IGNORE INTO idempotency (key, session_id, fingerprint, status, headers, body, created_at) VALUES (?,?,?,?,?,?,?)"
        )
        .bind(1, answer.key).bind(2, answer.session).bind(3, answer.fingerprint).bind(4, Int64(answer.status))
        .bind(5, utf8: answer.headersJSON).bind(6, answer.body).bind(7, answer.createdAt).run()
        return connection.changes == 1
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
}
