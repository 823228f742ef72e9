import NavCore
import NavJSON
import NavSnapshot

/// One session as a store keeps it.
package struct StoredSession: Sendable {
    package var id: String
    package var graphName: String
    package var graphVersion: Int
    /// SHA-256 of the session's bearer token; the token itself is never stored.
    package var tokenDigest: TokenDigest
    package var state: SessionState
    /// Milliseconds since the Unix epoch.
    package var createdAt: Int64
    package var touchedAt: Int64
    /// Read from a process-local cache (PostgreSQL, ``SessionStore/loadForChange(_:)``): another
    /// process may have changed the session since. Only a change may start from such a session,
    /// and only its compare-and-set can confirm it: every other outcome is worked out again on a
    /// fresh read.
    package var mayBeStale = false
    /// What the session counts in the daemon's `session_bytes` budget
    /// (``SessionStore/sessionBytes(of:)``), as it was last written or read:
    /// a change is charged what it adds to this and gives back what it takes off.
    package var storedBytes = 0
    /// The snapshot of `state`, when the service has written it already to count it: a store
    /// writes these bytes rather than encoding the state again. Set only after the last change to
    /// `state`, and only for a store that counts sessions by their snapshot
    /// (``SessionStore/sessionBytes(of:)``), whose caches drop it (``withoutEncodedSnapshot``).
    package var encodedSnapshot: [UInt8]? = nil

    package init(
        id: String, graphName: String, graphVersion: Int, tokenDigest: TokenDigest, state: SessionState, createdAt: Int64,
        touchedAt: Int64, mayBeStale: Bool = false
    ) {
        self.id = id
        self.graphName = graphName
        self.graphVersion = graphVersion
        self.tokenDigest = tokenDigest
        self.state = state
        self.createdAt = createdAt
        self.touchedAt = touchedAt
        self.mayBeStale = mayBeStale
    }
}

extension StoredSession {
    /// How deep a stored snapshot may nest: client values (at most `JSONValue.maximumDepth`)
    /// sit under the snapshot, a screen and up to one tab bar per stage level.
    package static let snapshotDepth = JSONValue.maximumViewDepth

    /// The snapshot a store keeps: the state, and the graph version it runs on (which a graph
    /// upgrade changes: a snapshot's `graphVersion` wins over the version a row was created with).
    package var snapshotBytes: [UInt8] {
        encodedSnapshot ?? state.snapshotBytes(graphVersion: graphVersion)
    }

    /// The same session without ``encodedSnapshot``: what a cache keeps, so that a session held
    /// for long holds its decoded state only.
    package var withoutEncodedSnapshot: StoredSession {
        var copy = self
        copy.encodedSnapshot = nil
        return copy
    }
}

/// A session the sweep deleted, and what it counted in the `session_bytes` budget.
package struct ExpiredSession: Sendable, Equatable {
    package var id: String
    /// ``StoredSession/storedBytes`` of its last version.
    package var bytes: Int

    package init(id: String, bytes: Int) {
        self.id = id
        self.bytes = bytes
    }
}

/// A store failure: I/O, a constraint, a snapshot that no longer fits its graph.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable {
        /// I/O or database failure: the daemon's problem, a 500.
        case failure
        /// The store cannot take work now (a full disk, an I/O error, PostgreSQL down or restarting,
        /// no connection free) but may again later: nothing was changed, and a retry may succeed
        /// (a 503 `store_unavailable`).
        case unavailable
        /// One session's stored stage no longer fits its graph: that session cannot be served.
        case incompatible
        /// Another process holds the store (a second navd on the same SQLite file, by whatever
        /// name): nothing is wrong with it, and nothing was touched. `navd serve` exits 75.
        case inUse
    }

    package var message: String
    package var kind: Kind = .failure
    package var description: String { message }

    package init(message: String, kind: Kind = .failure) {
        self.message = message
        self.kind = kind
    }
}

/// Where sessions live. Every write is a compare-and-set on `version`, so that several
/// navd processes can share one store without ever losing an update.
package protocol SessionStore: FeedStore, MetaStore {
    /// A short name for logs: `memory`, `sqlite:PATH`, `postgres://…`.
    var name: String { get }

    /// Adds a new session with the events of its opening transition and, in the same write, its
    /// creation's feed `record` (when the feed is on) and `answer` (the answer to the create, under
    /// its `Idempotency-Key`, where the store keeps answers: ``keepsAnswers``). With a key that is
    /// kept already (the same create through another process), nothing is written and `false` is
    /// returned: the caller then finds the kept answer.
    func insert(_ session: StoredSession, events: [LifecycleEvent], keeping answer: KeptAnswer?, record: FeedRecord?) throws(StoreError)
        -> Bool

    /// The session with this id, or `nil`.
    func load(_ id: String) throws(StoreError) -> StoredSession?

    /// Replaces the session if the stored version is still `expectedVersion`, appending `events`
    /// (`eventsJSON` is the same events as a JSON array, written once for the store and the answer),
    /// and writes in the same write the change's feed `record` (when the feed is on) and `answer`
    /// (the answer to the request that made the change, under its `Idempotency-Key`, where the
    /// store keeps answers: ``keepsAnswers``). With a key that is kept already (by another
    /// process, on PostgreSQL), nothing is written and `false` is returned (the caller then finds
    /// the kept answer); SQLite, one process, has looked the key up first.
    /// - Returns: `false` when another writer got there first (nothing was written).
    func update(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8], keeping answer: KeptAnswer?,
        record: FeedRecord?
    ) throws(StoreError) -> Bool

    /// The session for a change: the same as ``load(_:)`` unless the store keeps a process-local
    /// cache, whose session may be behind (``StoredSession/mayBeStale``).
    func loadForChange(_ id: String) throws(StoreError) -> StoredSession?

    /// Whether answers to requests with an `Idempotency-Key` are kept by the store, so that a retry
    /// replays through every process sharing it and after a restart (docs/design.md, "Idempotency"):
    /// PostgreSQL and SQLite; not the memory store, which keeps nothing across a restart.
    var keepsAnswers: Bool { get }

    /// The answer kept under `key`, if any.
    func keptAnswer(_ key: String) throws(StoreError) -> KeptAnswer?

    /// Keeps the answer to a change that changed nothing (no write for it to ride on), unless its
    /// key is kept already, where the store keeps answers.
    func keep(_ answer: KeptAnswer) throws(StoreError)

    /// Deletes the answers kept under `keys` (forgotten to make room for newer ones: see
    /// ``KeptAnswerLedger``), wherever the store holds them, where the store keeps answers.
    func forget(answers keys: [String]) throws(StoreError)

    /// Every answer the store keeps, by size (``KeptAnswer/cost``): what the daemon counts of
    /// them when it starts, where the store keeps answers.
    func keptAnswerEntries() throws(StoreError) -> [KeptAnswerSize]

    /// Removes a session and its events, writing its end `record` (when the feed is on) in the
    /// same write. - Returns: whether it existed (no record is written when it did not).
    func delete(_ id: String, record: FeedRecord?) throws(StoreError) -> Bool

    /// Retained events with `seq > after`, oldest first, at most `limit`.
    func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent]

    /// Deletes sessions not touched since `cutoff` (ms since the epoch), writing with each the end
    /// record `ending` makes of it (when given: the feed is on). - Returns: them, with their bytes.
    func deleteExpired(touchedBefore cutoff: Int64, ending: (@Sendable (StoredSession) -> FeedRecord)?) throws(StoreError)
        -> [ExpiredSession]

    /// Up to `limit` sessions, oldest first, for the admin listing: each handed to `each` as it is
    /// read, so that a listing holds one decoded session at a time (a thousand sessions of
    /// megabytes each would take gigabytes together), not all it lists.
    func list(limit: Int, _ each: (StoredSession) -> Void) throws(StoreError)

    /// The ids of graph `name`'s sessions after `after` in id order, at most `limit`: a page of
    /// every session of a graph (an admin's graph upgrade), without reading their snapshots.
    func ids(ofGraph name: String, after: String, limit: Int) throws(StoreError) -> [String]

    /// How many sessions the store holds.
    func count() throws(StoreError) -> Int

    /// What `session` counts in the `session_bytes` budget where this store keeps it: its
    /// snapshot's bytes where sessions are kept as snapshots (SQLite, PostgreSQL), then with the
    /// snapshot, which the store writes (``StoredSession/encodedSnapshot``); the memory its decoded
    /// state takes, by estimate, where they are kept decoded (the memory store).
    func sessionBytes(of session: StoredSession) -> (bytes: Int, snapshot: [UInt8]?)

    /// What all the sessions the store holds count in the `session_bytes` budget, their retained
    /// events included: read once when navd starts, and again at every sweep where other
    /// processes share the store.
    func storedSessionBytes() throws(StoreError) -> Int

    /// The bytes of retained events the store has let go (a change's events are charged their
    /// JSON: ``SessionService/charge(_:events:json:)``) since it was last asked: trimmed once older than the retained ones, or deleted
    /// with their session; the service gives them back to the budget. Each byte is told once.
    func takeReleasedEventBytes() -> Int

    /// Drops the session's retained events, as far as the store can at once, to make room in a
    /// full `session_bytes` budget for a change of it: what it drops is told released
    /// (``takeReleasedEventBytes()``). The memory store and PostgreSQL drop them all; SQLite all
    /// but those of the generation its compactor is folding. Watchers that
    /// resume from before then get the session's view, as after any trim.
    func dropRetainedEvents(of id: String) throws(StoreError)

    /// Flushes and closes; later calls fail.
    func close()

    /// Whether the store can take work now, for `/readyz` (``Readiness`` asks at most once a
    /// second, so this need not throttle itself): SQLite answers from its last write and probes
    /// the disk after a failed one; PostgreSQL runs `SELECT 1`.
    func isAvailable() -> Bool

    /// What `/metrics` shows of the store. Cheap enough for every scrape: no store reads its
    /// whole table each time (PostgreSQL counts its sessions at most every
    /// ``StoreStatistics/sessionCountSeconds``).
    func statistics() -> StoreStatistics
}

extension SessionStore {
    package func isAvailable() -> Bool { true }

    /// ``insert(_:events:keeping:record:)`` with no answer and no record; throws when the id is taken.
    package func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        guard try insert(session, events: events, keeping: nil, record: nil) else {
            throw StoreError(message: "session \(session.id) exists")
        }
    }

    /// ``update(_:expectedVersion:events:eventsJSON:keeping:record:)`` with no answer and no record.
    package func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8]) throws(StoreError)
        -> Bool
    {
        try update(session, expectedVersion: expectedVersion, events: events, eventsJSON: eventsJSON, keeping: nil, record: nil)
    }

    /// ``list(limit:_:)``, gathered (for tests and small listings).
    package func list(limit: Int) throws(StoreError) -> [StoredSession] {
        var sessions: [StoredSession] = []
        try list(limit: limit) { sessions.append($0) }
        return sessions
    }

    /// ``delete(_:record:)`` with no record.
    package func delete(_ id: String) throws(StoreError) -> Bool {
        try delete(id, record: nil)
    }

    package func sessionBytes(of session: StoredSession) -> (bytes: Int, snapshot: [UInt8]?) {
        let snapshot = session.snapshotBytes
        return (snapshot.count, snapshot)
    }

    package func takeReleasedEventBytes() -> Int { 0 }

    package func dropRetainedEvents(of id: String) throws(StoreError) {}

    /// ``deleteExpired(touchedBefore:ending:)`` with no records.
    package func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> [ExpiredSession] {
        try deleteExpired(touchedBefore: cutoff, ending: nil)
    }

    package func loadForChange(_ id: String) throws(StoreError) -> StoredSession? { try load(id) }

    package var keepsAnswers: Bool { false }

    package func keptAnswer(_ key: String) throws(StoreError) -> KeptAnswer? { nil }

    package func keep(_ answer: KeptAnswer) throws(StoreError) {}

    package func forget(answers keys: [String]) throws(StoreError) {}

    package func keptAnswerEntries() throws(StoreError) -> [KeptAnswerSize] { [] }

    package func statistics() -> StoreStatistics {
        StoreStatistics(sessions: try? count())
    }
}

/// An answer kept under an `Idempotency-Key` (docs/design.md, "Idempotency"), as a store holds it: what
/// the retry is compared with, and the answer's status, headers and body to replay.
package struct KeptAnswer: Sendable {
    /// The key as the store files it: the session's id, a space, the request's `Idempotency-Key`;
    /// for a create, ``SealedAnswer/storeKey(_:)``.
    package var key: String
    package var session: String
    /// SHA-256 of the request (route, `If-Match`, canonical body): a retry must match it.
    package var fingerprint: [UInt8]
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]

    /// When it was kept (ms since the epoch): the store sweeps a change's answer once older than
    /// the session TTL.
    package var createdAt: Int64

    package init(
        key: String, session: String, fingerprint: [UInt8], status: Int, headers: [(String, String)], body: [UInt8], createdAt: Int64 = 0
    ) {
        self.key = key
        self.session = session
        self.fingerprint = fingerprint
        self.status = status
        self.headers = headers
        self.body = body.fitted()
        self.createdAt = createdAt
    }

    /// About the memory an answer takes where it is held (its body and header text, its key and
    /// digest): the bound of the daemon's memory of answers and of the SQLite log's.
    package static func cost(key: String, fingerprint: [UInt8], headers: [(String, String)], body: [UInt8]) -> Int {
        var bytes = 128 + key.utf8.count + fingerprint.count + body.count
        for (name, value) in headers { bytes += 32 + name.utf8.count + value.utf8.count }
        return bytes
    }

    /// What this answer takes, by ``cost(key:fingerprint:headers:body:)``.
    package var cost: Int {
        Self.cost(key: key, fingerprint: fingerprint, headers: headers, body: body)
    }

    /// The same for an answer a store lists by size (its body not read): ``KeptAnswerSize``.
    package static func cost(key: String, fingerprintBytes: Int, headersJSON: [UInt8], bodyBytes: Int) -> Int {
        var bytes = 128 + key.utf8.count + fingerprintBytes + bodyBytes
        for (name, value) in headers(fromJSON: headersJSON) { bytes += 32 + name.utf8.count + value.utf8.count }
        return bytes
    }

    /// The headers as a store writes them: a JSON array of `[name, value]` pairs.
    package var headersJSON: [UInt8] {
        JSONValue.array(headers.map { JSONValue.array([.string($0.0), .string($0.1)]) }).jsonBytes
    }

    /// Headers written as ``headersJSON``; a pair that does not read back is left out.
    package static func headers(fromJSON bytes: [UInt8]) -> [(String, String)] {
        ((try? JSONValue(parsing: bytes))?.arrayValue ?? []).compactMap { pair -> (String, String)? in
            guard let pair = pair.arrayValue, pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                return nil
            }
            return (name, value)
        }
    }
}

extension KeptAnswer: Equatable {
    package static func == (a: KeptAnswer, b: KeptAnswer) -> Bool {
        a.key == b.key && a.session == b.session && a.fingerprint == b.fingerprint && a.status == b.status
            && a.headers.elementsEqual(b.headers) { $0.0 == $1.0 && $0.1 == $1.1 } && a.body == b.body && a.createdAt == b.createdAt
    }
}

/// An answer a store keeps, without its body: what ``SessionStore/keptAnswerEntries()`` lists
/// and what ``KeptAnswerLedger`` counts.
package struct KeptAnswerSize: Sendable {
    package var key: String
    package var session: String
    /// ``KeptAnswer/cost``.
    package var cost: Int
    /// When it was given (ms since the epoch).
    package var createdAt: Int64

    package init(key: String, session: String, cost: Int, createdAt: Int64) {
        self.key = key
        self.session = session
        self.cost = cost
        self.createdAt = createdAt
    }
}

/// Restores a stored snapshot for a session of graph `name` at `version`.
/// Restores a stored snapshot of graph `name`, created on `version`: its state and the graph version
/// it runs on now (the snapshot's `graphVersion`, else `version`).
package typealias SnapshotDecoder =
    @Sendable (_ snapshot: JSONValue, _ name: String, _ version: Int) throws(StoreError) -> (
        state: SessionState, graphVersion: Int
    )
