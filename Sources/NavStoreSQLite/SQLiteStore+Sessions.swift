import NavCore
import NavJSON
import NavSessions
import NavSnapshot

/// The session operations: writes appended to the change log, reads from the cache, the log and the database.
extension SQLiteStore {
    package func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        _ = try insert(session, events: events, keeping: nil, record: nil)
    }

    package func insert(_ session: StoredSession, events: [LifecycleEvent], keeping answer: KeptAnswer?) throws(StoreError) -> Bool {
        try insert(session, events: events, keeping: answer, record: nil)
    }

    /// One transaction: the kept answer first, and the session, its events and its creation's
    /// feed record only if the answer's key was not kept yet (a retry after a restart finds the
    /// answer before it gets here). The record's position is taken before the transaction and
    /// shown to readers once it has committed (``FeedState``).
    package func insert(_ session: StoredSession, events: [LifecycleEvent], keeping answer: KeptAnswer?, record feedRecord: FeedRecord?)
        throws(StoreError) -> Bool
    {
        guard SessionID.isValid(session.id) else { throw SessionID.invalid(session.id) }
        let snapshot = session.snapshotBytes
        return try withWriter { connection throws(StoreError) -> Bool in
            let positions = feedRecord.map { _ in withPublished { $0.feed.allocate(1) } }
            let inserted: Bool
            do throws(StoreError) {
                inserted = try noting(.database) { () throws(StoreError) -> Bool in
                    try connection.transaction { () throws(StoreError) -> Bool in
                        // Kept when the session was made, as a change's is when it was made (and as on PostgreSQL).
                        if var answer {
                            answer.createdAt = session.createdAt
                            guard try Self.insertAnswer(answer, connection) else { return false }
                        }
                        try connection.statement(
                            "INSERT INTO sessions (id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at) VALUES (?,?,?,?,?,?,?,?,?)"
                        )
                        .bind(1, session.id).bind(2, session.graphName).bind(3, Int64(session.graphVersion))
                        .bind(4, Int64(session.state.version)).bind(5, session.tokenDigest.bytes)
                        .bind(6, Int64(SessionState.snapshotSchema)).bind(7, utf8: snapshot)
                        .bind(8, session.createdAt).bind(9, session.touchedAt).run()
                        if let first = events.first, let last = events.last {
                            try connection.statement("INSERT INTO event_log (session_id, first_seq, last_seq, body) VALUES (?,?,?,?)")
                                .bind(1, session.id).bind(2, Int64(first.seq)).bind(3, Int64(last.seq)).bind(4, utf8: events.jsonBytes)
                                .run()
                        }
                        if let feedRecord, let positions {
                            try Self.insertFeed(
                                LoggedFeedRecord(position: positions.lowerBound, record: feedRecord), connection, replacing: true)
                        }
                        return true
                    }
                }
            } catch {
                if let positions { withPublished { $0.feed.resolve(positions, shown: []) } }
                throw error
            }
            withPublished { published in
                if inserted { published.cache.put(session, cost: SessionCache.cost(snapshot: snapshot)) }
                if let positions { published.feed.resolve(positions, shown: inserted ? feedRecord.map { [$0] } ?? [] : []) }
            }
            return inserted
        }
    }

    /// The cached session, or the stored one with its newest logged change laid over it (then cached).
    ///
    /// The row comes from the reading connection, so no lock a write holds is waited for: a
    /// compaction may commit while the row is read, and a delete. What makes the combination exact:
    /// the log is looked at *before* the row is read. A change not in the log then is in the
    /// committed tables (a generation leaves the log only after its commit), so the row read after
    /// holds it or a newer one; a change in the log then is the newest, unless a newer one came
    /// since, which the versions compare. And the result is cached only if nothing moved
    /// meanwhile: no newer change published (the cache, the log), no generation folded and no
    /// delete (``Published/tableChanges``) — otherwise it is read again.
    package func load(_ id: String) throws(StoreError) -> StoredSession? {
        // Another form never names a session, nor makes a cache entry (SessionID).
        guard SessionID.isValid(id) else { return nil }
        for attempt in 0..<8 {
            // A hit looks nothing else up: it is every cached read's and every change's path.
            let (cached, logged, changes) = withPublished { published -> (StoredSession?, Fold?, UInt64) in
                if let cached = published.cache.get(id) { return (cached, nil, 0) }
                return (nil, published.newestLogged(id), published.tableChanges)
            }
            if let cached {
                if attempt == 0 { cacheHits.wrappingAdd(1, ordering: .relaxed) }
                return cached
            }
            if attempt == 0 { cacheMisses.wrappingAdd(1, ordering: .relaxed) }
            guard
                let row = try withReader({ reader throws(StoreError) in
                    try StoredRow.read(id, reader, skippingSnapshotUpTo: logged?.version)
                })
            else { return nil }
            // Decoded outside every lock.
            let (stored, cost) = try session(id: id, row, logged: logged)
            let current = withPublished { published -> StoredSession? in
                if let cached = published.cache.get(id) { return cached }
                guard published.tableChanges == changes, published.newestLogged(id)?.version == logged?.version else { return nil }
                published.cache.put(stored, cost: cost)
                return stored
            }
            if let current { return current }
        }
        throw StoreError(message: "session \(id) changed too often to be read", kind: .unavailable)
    }

    /// A row of `sessions`, copied out of its statement.
    struct StoredRow {
        var graph: String
        var graphVersion: Int
        var tokenHash: [UInt8]
        /// Empty when it was not needed (a newer change is in the log).
        var snapshot: [UInt8]
        var createdAt: Int64
        var touchedAt: Int64
        var version: Int64

        static let columns = "graph, graph_version, token_hash, snapshot, created_at, touched_at, version"

        /// The row from ``columns`` at `offset` on; its snapshot only if newer than `logged`.
        init(_ statement: SQLiteConnection.Statement, offset: Int32, skippingSnapshotUpTo logged: Int64? = nil) {
            let version = statement.int(offset + 6)
            self.version = version
            graph = statement.text(offset)
            graphVersion = Int(statement.int(offset + 1))
            tokenHash = statement.bytes(offset + 2)
            snapshot = (logged ?? -1) >= version ? [] : statement.bytes(offset + 3)
            createdAt = statement.int(offset + 4)
            touchedAt = statement.int(offset + 5)
        }

        /// Session `id`'s row, if it has one, read with `connection`.
        static func read(_ id: String, _ connection: SQLiteConnection, skippingSnapshotUpTo logged: Int64?) throws(StoreError) -> StoredRow?
        {
            let statement = try connection.statement("SELECT \(columns) FROM sessions WHERE id = ?")
            try statement.bind(1, id)
            // Reset when done: a statement left mid-run keeps a read transaction open and the WAL growing.
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return StoredRow(statement, offset: 0, skippingSnapshotUpTo: logged)
        }
    }

    /// A session from its row, with its logged change laid over it when that is newer.
    /// - Returns: the session and what it takes in the cache (``SessionCache/cost(snapshot:)``).
    private func session(id: String, _ row: StoredRow, logged: Fold?) throws(StoreError) -> (StoredSession, Int) {
        let newer = logged.flatMap { $0.version >= row.version ? $0 : nil }
        let bytes = newer?.snapshot ?? row.snapshot
        let snapshot: JSONValue
        do {
            snapshot = try JSONValue(parsing: bytes, maximumDepth: StoredSession.snapshotDepth)
        } catch {
            throw StoreError(message: "session \(id): stored snapshot is not JSON: \(error)")
        }
        let (state, graphVersion) = try decode(snapshot, row.graph, row.graphVersion)
        var session = StoredSession(
            id: id, graphName: row.graph, graphVersion: graphVersion, tokenDigest: TokenDigest(bytes: row.tokenHash), state: state,
            createdAt: row.createdAt, touchedAt: newer?.touchedAt ?? row.touchedAt
        )
        session.storedBytes = bytes.count
        return (session, SessionCache.cost(snapshot: bytes))
    }

    /// Whether the session is in the decoded-session cache now.
    func isCached(_ id: String) -> Bool {
        withPublished { $0.cache.version(of: id) != nil }
    }

    /// The decoded-session cache's size: sessions, and bytes by its estimate.
    var cacheUsage: (sessions: Int, bytes: Int, limit: Int) {
        withPublished { ($0.cache.count, $0.cache.bytes, $0.cache.limit) }
    }

    package func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON encodedEvents: [UInt8])
        throws(StoreError) -> Bool
    {
        try update(session, expectedVersion: expectedVersion, events: events, eventsJSON: encodedEvents, keeping: nil, record: nil)
    }

    package func update(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON encodedEvents: [UInt8],
        keeping answer: KeptAnswer?
    ) throws(StoreError) -> Bool {
        try update(session, expectedVersion: expectedVersion, events: events, eventsJSON: encodedEvents, keeping: answer, record: nil)
    }

    /// The change and the answer kept under its `Idempotency-Key` go in one change log record, so
    /// they are durable together, and compaction folds the answer into `idempotency`. One process
    /// owns the file and runs a key's requests one at a time, having looked the key up first, so
    /// the answer is never what refuses the change here: a key found kept is replayed, and one kept
    /// again (used anew once its answer was older than the TTL) replaces that answer when folded.
    /// The change's feed record rides in the same record, with the position taken for it under the
    /// append lock before the `pwrite`: shown to readers when the change is published, given up
    /// if the append fails (``FeedState``).
    package func update(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON encodedEvents: [UInt8],
        keeping answer: KeptAnswer?, record feedRecord: FeedRecord?
    ) throws(StoreError) -> Bool {
        guard SessionID.isValid(session.id) else { throw SessionID.invalid(session.id) }
        // The compare-and-set below is against the cache: bring the session into it first.
        guard try load(session.id) != nil else { return false }
        // Encode before taking the lock: only the append is serialised.
        let snapshot = session.snapshotBytes
        let cost = SessionCache.cost(snapshot: snapshot)
        var startCompaction = false
        var behind = false
        for _ in 0..<8 {
            let written = try appending { append throws(StoreError) -> Bool? in
                // The version to compare with: the cached session's, else its newest logged change's;
                // else the row's, which is read (and cached) below, outside the lock. Only a holder
                // of the append lock changes it, so it still holds when this change is published.
                let (closed, current, position) = withPublished { published -> (Bool, Int?, Int64?) in
                    let current = published.cache.version(of: session.id) ?? published.newestLogged(session.id).map({ Int($0.version) })
                    // The record's position, only for a change about to be appended.
                    guard !published.closed, current == expectedVersion, feedRecord != nil else { return (published.closed, current, nil) }
                    return (false, current, published.feed.allocate(1).lowerBound)
                }
                guard !closed else { throw Self.closedError }
                guard let current else { return nil }
                guard current == expectedVersion else { return false }
                let record = ChangeLog.Record(
                    seq: append.nextSeq, sessionID: session.id, version: Int64(session.state.version), touchedAt: session.touchedAt,
                    firstEvent: Int64(events.first?.seq ?? 0), lastEvent: Int64(events.last?.seq ?? 0),
                    snapshot: snapshot, events: encodedEvents,
                    answer: answer.map { answer in
                        var kept = answer
                        kept.createdAt = session.touchedAt
                        return kept
                    },
                    feed: position.flatMap { position in feedRecord.map { LoggedFeedRecord(position: position, record: $0) } }
                )
                // Without `published`: reads go on while this waits for the disk. A failed append
                // changes nothing here: no seq, no fold, no cache entry, no feed record.
                do throws(StoreError) {
                    try noting(.log) { () throws(StoreError) in try append.log.append(record) }
                } catch {
                    if let position { withPublished { $0.feed.resolve(position...position, shown: []) } }
                    throw error
                }
                append.nextSeq += 1
                append.pendingChanges += 1
                if let feed = record.feed { append.pendingFeedBytes += feed.record.cost }
                if let answer = record.answer {
                    append.pendingAnswerBytes += KeptAnswer.cost(
                        key: answer.key, fingerprint: answer.fingerprint, headers: answer.headers, body: answer.body)
                }
                // Durable now: reads may see it.
                releasedEvents.add(withPublished { $0.publish(record, session, cost: cost, retainedEvents: retainedEvents, append) })
                let heldBytes = append.pendingAnswerBytes + append.pendingFeedBytes
                if append.pendingChanges >= compactionThreshold || heldBytes >= answerBytesPerGeneration
                    || append.log.size >= logBytesPerGeneration
                {
                    startCompaction = sealGeneration(&append)
                    // The database is far behind (a slow disk, a failing compaction, a previous
                    // generation of large sessions still folding): wait for it.
                    // Divided, not multiplied: `&compact=N` may be any positive Int.
                    behind =
                        append.pendingChanges / 8 >= compactionThreshold
                        || (append.pendingAnswerBytes + append.pendingFeedBytes) / 2 >= answerBytesPerGeneration
                        || append.log.size / 2 >= logBytesPerGeneration
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

    package var keepsAnswers: Bool { true }

    /// In `idempotency` directly: a change that changed nothing logs no record to carry it. Its key
    /// can only be held by an answer that has outlived the TTL (the route replays any other), which
    /// it replaces, as a fold does.
    package func keep(_ answer: KeptAnswer) throws(StoreError) {
        try withWriter { connection throws(StoreError) in
            try noting(.database) { () throws(StoreError) in _ = try Self.insertAnswer(answer, connection, replacing: true) }
        }
    }

    /// The answer kept under `key`: a change's from the log while its record is not folded yet
    /// (the key names its session: ``KeptAnswer/key``), else from `idempotency`. The log is looked
    /// at first, as ``load(_:)`` does: an answer not in the log then is in the table already.
    package func keptAnswer(_ key: String) throws(StoreError) -> KeptAnswer? {
        if let space = key.firstIndex(of: " ") {
            let id = String(key[..<space])
            // The newer generation first: a key kept again replaces its older answer.
            let logged = withPublished { $0.pending[id]?.answers[key] ?? $0.foldBeingWritten(id)?.answers[key] }
            if let logged { return logged }
        }
        return try withReader { reader throws(StoreError) -> KeptAnswer? in
            let statement = try reader.statement(
                "SELECT session_id, fingerprint, status, headers, body, created_at FROM idempotency WHERE key = ?")
            try statement.bind(1, key)
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return KeptAnswer(
                key: key, session: statement.text(0), fingerprint: statement.bytes(1), status: Int(statement.int(2)),
                headers: KeptAnswer.headers(fromJSON: statement.bytes(3)), body: statement.bytes(4), createdAt: statement.int(5))
        }
    }

    /// From the log's folds and from `idempotency`. A fold the compactor may be writing now is
    /// waited for (``folding(_:)``), so that it cannot put back an answer deleted from the table; one
    /// only logged is dropped from its fold, and never reaches the table. Its bytes stay in the log
    /// file until the generation is folded (at most ``answerBytesPerGeneration`` a generation).
    package func forget(answers keys: [String]) throws(StoreError) {
        guard !keys.isEmpty else { return }
        func drop(_ keys: [String], compacting alsoCompacting: Bool) throws(StoreError) -> Bool {
            try appending { append throws(StoreError) -> Bool in
                withPublished { $0.forget(answers: keys, alsoCompacting: alsoCompacting, append) }
            }
        }
        func delete() throws(StoreError) {
            try withWriter { connection throws(StoreError) in
                try noting(.database) { () throws(StoreError) in
                    try connection.transaction { () throws(StoreError) in
                        for key in keys { try connection.statement("DELETE FROM idempotency WHERE key = ?").bind(1, key).run() }
                    }
                }
            }
        }
        if try drop(keys, compacting: false) {
            try folding { _ throws(StoreError) in
                _ = try drop(keys, compacting: true)
                try delete()
            }
        } else {
            try delete()
        }
    }

    /// The table's answers, once every logged change is folded in (as at start-up, after recovery).
    package func keptAnswerEntries() throws(StoreError) -> [KeptAnswerSize] {
        try folding { fold throws(StoreError) in try compactEverything(fold) }
        return try withReader { reader throws(StoreError) -> [KeptAnswerSize] in
            let statement = try reader.statement(
                "SELECT key, session_id, length(fingerprint), headers, length(body), created_at FROM idempotency ORDER BY created_at")
            defer { statement.reset() }
            var entries: [KeptAnswerSize] = []
            while try statement.step() {
                let key = statement.text(0)
                let cost = KeptAnswer.cost(
                    key: key, fingerprintBytes: Int(statement.int(2)), headersJSON: statement.bytes(3), bodyBytes: Int(statement.int(4)))
                entries.append(KeptAnswerSize(key: key, session: statement.text(1), cost: cost, createdAt: statement.int(5)))
            }
            return entries
        }
    }

    // MARK: Reads and maintenance

    /// One transaction: the session's rows and, if it had one, its end record. Its feed records
    /// stay (its history), until swept or purged.
    package func delete(_ id: String, record feedRecord: FeedRecord?) throws(StoreError) -> Bool {
        guard SessionID.isValid(id) else { return false }
        return try withWriter { connection throws(StoreError) -> Bool in
            let positions = feedRecord.map { _ in withPublished { $0.feed.allocate(1) } }
            let existed: Bool
            let eventBytes: Int
            do throws(StoreError) {
                (existed, eventBytes) = try noting(.database) { () throws(StoreError) -> (Bool, Int) in
                    try connection.transaction { () throws(StoreError) -> (Bool, Int) in
                        let eventBytes = try Self.deleteEvents(of: id, connection)
                        try connection.statement("DELETE FROM idempotency WHERE session_id = ?").bind(1, id).run()
                        try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                        guard connection.changes > 0 else { return (false, eventBytes) }
                        if let feedRecord, let positions {
                            try Self.insertFeed(
                                LoggedFeedRecord(position: positions.lowerBound, record: feedRecord), connection, replacing: true)
                        }
                        return (true, eventBytes)
                    }
                }
            } catch {
                if let positions { withPublished { $0.feed.resolve(positions, shown: []) } }
                throw error
            }
            releasedEvents.add(eventBytes)
            // Only once the row is gone (a failed delete keeps every logged change). Its logged
            // changes stay in the log files; compaction (or recovery) finds no row for them. Under
            // the append lock: an update in flight publishes first, and is removed here, not after.
            try appending { append throws(StoreError) in
                withPublished { published in
                    releasedEvents.add(published.remove(CollectionOfOne(id), append))
                    if let positions { published.feed.resolve(positions, shown: existed ? feedRecord.map { [$0] } ?? [] : []) }
                }
            }
            return existed
        }
    }

    /// The retained events after `after`: the compacted batches from the reading connection, then
    /// the logged ones.
    ///
    /// Without the writer lock, a compaction may commit between the two looks, so the log is looked at
    /// first: a batch not in the log then is committed, and the table read after holds it. A
    /// batch found in both (committed in between) is taken once, by its seqs.
    package func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        guard SessionID.isValid(id) else { return [] }
        // Batches are trimmed whole, so older events may linger: show the retained ones only.
        let newest = try load(id)?.state.eventCounter ?? 0
        let after = max(after, newest - retainedEvents)
        // Newer than every compacted batch: the log's, oldest generation first.
        let logged = withPublished { ($0.foldBeingWritten(id)?.batches ?? []) + ($0.pending[id]?.batches ?? []) }
        // The bodies are copied out and parsed after: the reader is held for the copy only. A
        // batch holds the events `first_seq...last_seq`, so its count says when there are enough.
        let stored = try withReader { reader throws(StoreError) -> [[UInt8]] in
            let batches = try reader.statement(
                "SELECT first_seq, last_seq, body FROM event_log WHERE session_id = ? AND last_seq > ? ORDER BY first_seq")
            try batches.bind(1, id).bind(2, Int64(after))
            defer { batches.reset() }
            var bodies: [[UInt8]] = []
            var count: Int64 = 0
            while count < Int64(limit), try batches.step() {
                count += batches.int(1) - max(batches.int(0) - 1, Int64(after))
                bodies.append(batches.bytes(2))
            }
            return bodies
        }
        var events: [LifecycleEvent] = []
        // A batch that does not read back is damage: an error, never a silently shorter list.
        func collect(_ body: [UInt8]) throws(StoreError) {
            guard let elements = (try? JSONValue(parsing: body))?.arrayValue else {
                throw StoreError(
                    message: "session \(id): a stored event batch is not a JSON array (is the database damaged? see navd store check)")
            }
            for element in elements {
                guard let event = LifecycleEvent(json: element) else {
                    throw StoreError(
                        message: "session \(id): a stored event is not an event (is the database damaged? see navd store check)")
                }
                // Past `after`, and past what was collected already (a batch both committed and logged).
                guard event.seq > max(after, events.last?.seq ?? 0), events.count < limit else { continue }
                events.append(event)
            }
        }
        for body in stored where events.count < limit { try collect(body) }
        for batch in logged where events.count < limit && batch.last > after { try collect(batch.body) }
        return events
    }

    /// Each expired session's end record (`ending` of its decoded session) goes in the
    /// transaction that deletes it; a session that no longer decodes (its graph changed under it)
    /// is deleted without one.
    package func deleteExpired(touchedBefore cutoff: Int64, ending: (@Sendable (StoredSession) -> FeedRecord)?) throws(StoreError)
        -> [ExpiredSession]
    {
        // `touched_at` in `sessions` is current once the log is folded in (a chunk at a time:
        // creates and deletes go on between chunks).
        try folding { fold throws(StoreError) in try compactEverything(fold) }
        return try withWriter { connection throws(StoreError) -> [ExpiredSession] in
            // The snapshot's bytes, not its characters (`length` of text counts those).
            let expired = try connection.statement("SELECT id, length(CAST(snapshot AS BLOB)) FROM sessions WHERE touched_at < ?")
            try expired.bind(1, cutoff)
            var candidates: [String] = []
            // What each counts (``sessionBytes(of:)``): a session changed since is not deleted.
            var bytes: [String: Int] = [:]
            while try expired.step() {
                let id = expired.text(0)
                candidates.append(id)
                bytes[id] = Int(expired.int(1))
            }
            expired.reset()
            var deleted: [ExpiredSession] = []
            // A chunk at a time, like a fold: updates wait for one chunk's check and deletion, not
            // for a sweep of many expired sessions.
            for start in stride(from: 0, to: candidates.count, by: foldChunk) {
                try appending { append throws(StoreError) in
                    // Updates wait here: none can touch a session between this check and its deletion.
                    // Reads take `published` only, and go on. Touched since the compaction above: its
                    // change is only in the log (or the cache).
                    let ids = withPublished { published in
                        candidates[start..<min(start + foldChunk, candidates.count)].filter { id in
                            (published.cache.touchedAt(id) ?? published.newestLogged(id)?.touchedAt).map { $0 < cutoff } ?? true
                        }
                    }
                    guard !ids.isEmpty else { return }
                    // Decoded under the append lock: no change comes between this and the delete.
                    // Mostly from the cache (the reader lock comes after this one).
                    var records: [String: FeedRecord] = [:]
                    if let ending {
                        for id in ids { if let session = try? load(id) { records[id] = ending(session) } }
                    }
                    let positions = records.isEmpty ? nil : withPublished { $0.feed.allocate(records.count) }
                    var shown: [FeedRecord] = []
                    var eventBytes = 0
                    do throws(StoreError) {
                        try noting(.database) { () throws(StoreError) in
                            try connection.transaction { () throws(StoreError) in
                                shown = []
                                eventBytes = 0
                                var position = positions?.lowerBound ?? 0
                                for id in ids {
                                    eventBytes += try Self.deleteEvents(of: id, connection)
                                    try connection.statement("DELETE FROM idempotency WHERE session_id = ?").bind(1, id).run()
                                    try connection.statement("DELETE FROM sessions WHERE id = ?").bind(1, id).run()
                                    guard connection.changes > 0, let record = records[id] else { continue }
                                    try Self.insertFeed(LoggedFeedRecord(position: position, record: record), connection, replacing: true)
                                    shown.append(record)
                                    position += 1
                                }
                            }
                        }
                    } catch {
                        if let positions { withPublished { $0.feed.resolve(positions, shown: []) } }
                        throw error
                    }
                    releasedEvents.add(eventBytes)
                    withPublished { published in
                        releasedEvents.add(published.remove(ids, append))
                        if let positions { published.feed.resolve(positions, shown: shown) }
                    }
                    deleted += ids.map { ExpiredSession(id: $0, bytes: bytes[$0] ?? 0) }
                }
            }
            // A change's answer is kept for the session TTL (a create's while its session lives):
            // every change is folded in by now, so the table holds every answer this deletes.
            try noting(.database) { () throws(StoreError) in
                try connection.statement("DELETE FROM idempotency WHERE created_at < ? AND substr(key, 1, 7) <> 'create '").bind(1, cutoff)
                    .run()
            }
            return deleted
        }
    }

    package func ids(ofGraph name: String, after: String, limit: Int) throws(StoreError) -> [String] {
        // Sessions are inserted and deleted in the table itself: the change log holds no ids it lacks.
        try withWriter { connection throws(StoreError) -> [String] in
            let statement = try connection.statement("SELECT id FROM sessions WHERE graph = ? AND id > ? ORDER BY id LIMIT ?")
            try statement.bind(1, name)
            try statement.bind(2, after)
            try statement.bind(3, Int64(limit))
            defer { statement.reset() }
            var ids: [String] = []
            while try statement.step() { ids.append(statement.text(0)) }
            return ids
        }
    }

    package func list(limit: Int, _ each: (StoredSession) -> Void) throws(StoreError) {
        try folding { fold throws(StoreError) in try compactEverything(fold) }
        try withWriter { connection throws(StoreError) in
            let statement = try connection.statement("SELECT id, \(StoredRow.columns) FROM sessions ORDER BY created_at LIMIT ?")
            try statement.bind(1, Int64(limit))
            defer { statement.reset() }
            while try statement.step() {
                let id = statement.text(0)
                // The cache and the log are newer than the row for a session changed since the
                // compaction above.
                let (cached, logged) = withPublished { ($0.cache.peek(id), $0.newestLogged(id)) }
                if let cached {
                    each(cached)
                } else if let listed = try? session(id: id, StoredRow(statement, offset: 1), logged: logged) {
                    // A session that no longer fits its graph is left out of the listing, not fatal to it.
                    each(listed.0)
                }
            }
        }
    }

    /// With the writing connection, whose page cache keeps the table: the reader's is emptied by
    /// every write of the other connection, so there each create's count read the index again
    /// (14% fewer creates a second, one client on 10,000 sessions). A create writes next anyway.
    package func count() throws(StoreError) -> Int {
        try withWriter { connection throws(StoreError) -> Int in
            let statement = try connection.statement("SELECT COUNT(*) FROM sessions")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
    }
    /// The bytes of every session's newest snapshot and of its retained events: the tables', with
    /// the log folded in first.
    package func storedSessionBytes() throws(StoreError) -> Int {
        try folding { fold throws(StoreError) in try compactEverything(fold) }
        return try withWriter { connection throws(StoreError) -> Int in
            try connection.statement(
                """
                SELECT (SELECT coalesce(sum(length(CAST(snapshot AS BLOB))), 0) FROM sessions)
                    + (SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM event_log)
                """
            ).sum()
        }
    }

    /// A change's events count their JSON, which the log and `event_log` keep as it is.
    package func takeReleasedEventBytes() -> Int { releasedEvents.take() }

    /// The table's and the current generation's; those of the generation being folded stay
    /// until it is (the compactor may be writing them now). A crash brings the current
    /// generation's back from the log file, counted again at start-up.
    package func dropRetainedEvents(of id: String) throws(StoreError) {
        guard SessionID.isValid(id) else { return }
        let dropped = try withWriter { connection throws(StoreError) -> Int in
            let stored = try noting(.database) { () throws(StoreError) -> Int in try Self.deleteEvents(of: id, connection) }
            return try stored + appending { append throws(StoreError) -> Int in withPublished { $0.dropBatches(of: id, append) } }
        }
        releasedEvents.add(dropped)
    }

    /// Deletes a session's retained events from `event_log`. - Returns: the bytes they took.
    static func deleteEvents(of id: String, _ connection: SQLiteConnection) throws(StoreError) -> Int {
        try connection.statement("DELETE FROM event_log WHERE session_id = ? RETURNING length(CAST(body AS BLOB))").bind(1, id).sum()
    }
}
