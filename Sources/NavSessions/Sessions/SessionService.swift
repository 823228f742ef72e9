import Logging
import NavCore
import NavJSON
import NavSnapshot
import NavWire
import Synchronization

/// Sessions: creation, authorisation, serialised mutations with compare-and-set, expiry.
///
/// The navigation itself is NavCore's pure `Navigator`; this type only loads, checks,
/// applies and stores.
package final class SessionService: Sendable {
    package struct Configuration: Sendable {
        package var maxSessions: Int = 100_000
        /// Idle sessions expire after this many milliseconds.
        package var sessionTTL: Int64 = 24 * 3600 * 1000
        var maxEventsPerPage: Int = 1000
        /// The largest context a session may be created with, in bytes of its JSON: `--max-context`.
        package var maxContextBytes: Int = 4096
        /// The admin token's digest: it also opens every session (`--admin-token`).
        package var adminToken: TokenDigest?
        /// When set, creating a session needs this token or the admin token (`--backend-token`).
        package var backendToken: TokenDigest?
        /// The most watchers (streams, long polls) of one session: `--max-watchers-per-session`.
        package var maxWatchersPerSession: Int = 16
        /// The daemon-wide bound on watchers (resource `watchers`); none when nil.
        package var watcherBudget: Budget?
        /// Heavy work run at once (resource `graph_work`, `--max-graph-work`): a past version
        /// rebuilt from further than one checkpoint interval takes a slot; none when nil.
        package var heavyWork: Budget?
        /// The most bytes one session's answers kept under an `Idempotency-Key` may take:
        /// `--max-idempotency-bytes-per-session` (``KeptAnswerLedger``).
        package var maxIdempotencyBytesPerSession: Int = 1 << 20
        /// The most bytes all kept answers may take: `--max-idempotency-bytes`, the budget
        /// `idempotency_bytes` (used when the service is given no budget of its own).
        package var maxIdempotencyBytes: Int = 64 << 20
        /// The most bytes all sessions may take together (``SessionStore/sessionBytes(of:)``):
        /// `--max-session-bytes`, the budget `session_bytes` (used when not given one: ``sessionBudget``).
        package var maxSessionBytes: Int = 1 << 30
        /// The daemon's `session_bytes` budget, listed at `/metrics`; one of
        /// ``maxSessionBytes`` of its own when nil.
        package var sessionBudget: Budget?
        /// What every applied change's feed record carries, and how long records are kept
        /// (docs/design.md, "Navigation analytics"); no records are written when nil.
        package var feed: FeedSettings? = FeedSettings()

        package init(
            maxSessions: Int = 100_000, sessionTTL: Int64 = 24 * 3600 * 1000, maxEventsPerPage: Int = 1000, maxContextBytes: Int = 4096,
            adminToken: TokenDigest? = nil, backendToken: TokenDigest? = nil, maxIdempotencyBytesPerSession: Int = 1 << 20,
            maxIdempotencyBytes: Int = 64 << 20, maxSessionBytes: Int = 1 << 30, feed: FeedSettings? = FeedSettings()
        ) {
            self.feed = feed
            self.maxSessionBytes = maxSessionBytes
            self.maxIdempotencyBytesPerSession = maxIdempotencyBytesPerSession
            self.maxIdempotencyBytes = maxIdempotencyBytes
            self.maxSessions = maxSessions
            self.sessionTTL = sessionTTL
            self.maxEventsPerPage = maxEventsPerPage
            self.maxContextBytes = maxContextBytes
            self.adminToken = adminToken
            self.backendToken = backendToken
        }
    }

    package let store: any SessionStore
    package let graphs: GraphRegistry
    package let configuration: Configuration
    /// The watchers of each session, told of every change applied here (docs/design.md, "Live sessions").
    package let live: LiveSessions
    /// What all sessions take (docs/design.md, "Sessions' bytes"): a create is charged its
    /// session, a change what it adds (``StoredSession/storedBytes``); one that would pass the
    /// limit is refused, 503 `over_capacity`, and writes nothing. A change that adds nothing is
    /// never refused.
    package let sessionBytes: Budget
    /// The bytes of answers kept under an `Idempotency-Key`, per session and in all: a keyed
    /// change makes room for its answer here before it is applied (``admit(_:)``).
    package let answers: KeptAnswerLedger
    /// What `/metrics` counts of the feed records this process writes.
    package let feedCounts = FeedCounts()
    /// Snapshots every ``checkpointInterval`` versions, to rebuild past versions from, within
    /// the bytes the store keeps of its own (an eighth of `--max-feed-bytes`).
    package let checkpoints: HistoryCheckpoints
    /// With a store several processes share: the timer that has the feed's watchers look again.
    let feedPoll = Mutex<FeedPoll?>(nil)
    private let now: @Sendable () -> Int64
    /// Mutations of one session run one at a time: a session always maps to the same stripe.
    private let stripes: [Locked<Void>]
    /// Creates between their count of the store and their insert: each counts the others as
    /// sessions already, so concurrent creates never overshoot `maxSessions` together.
    private let creating = Atomic<Int>(0)

    /// - Parameter answerBudget: the daemon's `idempotency_bytes` budget (listed at `/metrics`);
    ///   without one, a budget of ``Configuration/maxIdempotencyBytes`` of its own.
    package init(
        store: any SessionStore, graphs: GraphRegistry, configuration: Configuration, answerBudget: Budget? = nil,
        now: @escaping @Sendable () -> Int64
    ) {
        self.store = store
        self.graphs = graphs
        self.configuration = configuration
        self.now = now
        self.stripes = (0..<256).map { _ in Locked(()) }
        self.checkpoints = HistoryCheckpoints(
            maxBytes: FeedSettings.checkpointBytes(forFeedBytes: configuration.feed?.maxBytes ?? FeedSettings().maxBytes))
        self.live = LiveSessions(
            maxPerSession: configuration.maxWatchersPerSession,
            budget: configuration.watcherBudget ?? Budget(resource: "watchers", limit: Int.max)
        )
        self.answers = KeptAnswerLedger(
            perSession: configuration.maxIdempotencyBytesPerSession,
            budget: answerBudget ?? Budget(resource: "idempotency_bytes", limit: configuration.maxIdempotencyBytes))
        // What a durable store kept before a restart counts from the start. A store that cannot
        // list them now has them counted as they are kept again (and swept after the TTL).
        if store.keepsAnswers, let kept = try? store.keptAnswerEntries() {
            answers.rebuild(kept)
        }
        sessionBytes = configuration.sessionBudget ?? Budget(resource: "session_bytes", limit: configuration.maxSessionBytes)
        // Whatever the limit: what is held is counted, and only growth is refused.
        let stored = (try? store.storedSessionBytes()) ?? 0
        // What the store let go while it opened and counted (folding its log) is out of its count already.
        _ = store.takeReleasedEventBytes()
        sessionBytes.force(stored)
    }

    private func stripe(_ id: String) -> Locked<Void> {
        var hasher = Hasher()
        hasher.combine(id)
        return stripes[Int(UInt(bitPattern: hasher.finalize()) % UInt(stripes.count))]
    }

    /// Runs `body` while holding the lock of `key`'s stripe.
    package func serialised<T, Failure: Error>(_ key: String, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        try stripe(key).withLock { _ throws(Failure) -> T in try body() }
    }

    // MARK: Create

    package struct Created {
        package var session: StoredSession
        package var token: String
        /// The read-only token of the session (``Token/watchToken(for:)``).
        package var watchToken: String
        package var events: [LifecycleEvent]
    }

    /// Creates a session at `start` (or the graph's start) with `context`. With a backend token
    /// configured, `credentials` must carry it or the admin token (docs/design.md, "Auth and tokens": `requires`
    /// guards are only as trustworthy as whoever may set the context).
    package func create(
        graph name: String?, start: String?, context: [String: JSONValue], credentials: Credentials = Credentials(bearer: nil)
    ) throws(ServiceError) -> Created {
        guard let created = try create(graph: name, start: start, context: context, credentials: credentials, keeping: nil) else {
            // Only a kept answer's key can be kept already.
            throw ServiceError(.internal, "the store wrote no session")
        }
        return created
    }

    /// ``create(graph:start:context:credentials:)``, keeping the answer `keep` makes of the new
    /// session (the answer to a create with an `Idempotency-Key`) with it, where the store keeps
    /// answers. - Returns: nil when that key is kept already (the same create, through another
    /// process): no session was made, and the kept answer is the answer.
    package func create(
        graph name: String?, start: String?, context: [String: JSONValue], credentials: Credentials,
        keeping keep: ((Created) -> KeptAnswer?)?
    ) throws(ServiceError) -> Created? {
        try requireBackend(credentials)
        // Every session keeps its context for life: bound it, so no client can make sessions large.
        if !context.isEmpty {
            let size = JSONValue.object(context).jsonBytes.count
            guard size <= configuration.maxContextBytes else {
                throw ServiceError(
                    .invalidRequest, "the context is \(size) bytes of JSON (limit \(configuration.maxContextBytes))", param: "context"
                )
            }
        }
        let graphName: String?
        if let name { graphName = name } else { graphName = try graphs.defaultName() }
        guard let graphName, let graph = try graphs.latest(graphName) else {
            throw ServiceError(.unknownGraph, "no graph '\(name ?? "")' is loaded")
        }
        let outcome: Outcome
        do {
            outcome = try graph.navigator.start(at: start, context: context)
        } catch {
            throw ServiceError(error)
        }
        let token = Token.generate()
        let time = now()
        var session = StoredSession(
            id: Self.newID(), graphName: graph.graph.name, graphVersion: graph.version, tokenDigest: Token.digest(token),
            state: outcome.state, createdAt: time, touchedAt: time
        )
        // No lock is held over the store's count and insert (I/O): each create in progress counts
        // the others as sessions, so together they never overshoot --max-sessions (within this
        // process; several processes on PostgreSQL can overshoot by their number). Near the limit,
        // one of several racing creates may be refused a session early; never one too many.
        let others = creating.add(1, ordering: .acquiringAndReleasing).newValue - 1
        defer { creating.subtract(1, ordering: .releasing) }
        if try storeCall({ () throws(StoreError) in try store.count() }) + others >= configuration.maxSessions {
            throw ServiceError(.tooManySessions, "the daemon holds its maximum of \(configuration.maxSessions) sessions")
        }
        let charged = try charge(&session, events: outcome.events, json: outcome.events.jsonBytes)
        let created = Created(
            session: session, token: token, watchToken: Token.watchToken(for: session.tokenDigest), events: outcome.events)
        let answer = keep.flatMap { $0(created) }
        try admit(answer, at: time, charged: charged)
        let record = configuration.feed.map { settings in
            FeedRecord.make(
                session: session.id, graph: session.graphName, graphVersion: session.graphVersion, time: time, kind: .create,
                intent: .create(graph: session.graphName, start: start, context: context),
                before: nil, after: session.state, events: outcome.events, settings: settings)
        }
        let inserted: Bool
        do {
            inserted = try writing(record) { () throws(ServiceError) in
                try storeCall { () throws(StoreError) in
                    try store.insert(session, events: outcome.events, keeping: answer, record: record)
                }
            }
        } catch {
            settle(charged, written: false)
            if let answer { answers.remove(answer.key) }
            throw error
        }
        settle(charged, written: inserted)
        if !inserted, let answer { answers.remove(answer.key) }
        if inserted, let record { feedWritten(record, kind: .create) }
        return inserted ? created : nil
    }

    /// Whether an answer kept at `time` (ms since the epoch) is still kept: the store sweeps the
    /// answers to changes once older than the session TTL, so every process forgets them together.
    package func isKept(since time: Int64) -> Bool {
        time >= now() - configuration.sessionTTL
    }

    /// The time as the service reads it (ms since the epoch), to stamp kept answers with.
    package func currentTime() -> Int64 {
        now()
    }

    /// Whether session `id` still lives: in the store and not expired, as every route sees it (a
    /// replayed create's answer must not name one that has ended, swept yet or not).
    package func exists(_ id: String) throws(ServiceError) -> Bool {
        try loadUnexpired(id) != nil
    }

    /// Whether `credentials` may create sessions (``create(graph:start:context:credentials:)``
    /// checks it too): for a retried create, which replays its first answer without creating.
    package func authorizeCreate(_ credentials: Credentials) throws(ServiceError) {
        try requireBackend(credentials)
    }

    /// With `--backend-token` set: the backend or the admin token. RFC 6750 §3.1: a missing token
    /// is ``ServiceError/Code/unauthorized``, a wrong one ``ServiceError/Code/invalidToken``.
    private func requireBackend(_ credentials: Credentials) throws(ServiceError) {
        guard let backendToken = configuration.backendToken else { return }
        guard let presented = credentials.bearer else {
            throw ServiceError(.unauthorized, "creating a session needs the backend token as 'Authorization: Bearer <token>'")
        }
        // Both compared, whichever matches, so the time taken does not tell which token was sent.
        let isBackend = presented.matches(backendToken)
        let isAdmin = configuration.adminToken.map { presented.matches($0) } ?? false
        guard isBackend || isAdmin else {
            throw ServiceError(.invalidToken, "the token is neither the backend token nor the admin token")
        }
    }

    /// 128 random bits as hex: session ids cannot be guessed or enumerated.
    package static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next() as UInt64, generator.next() as UInt64]
        return Hex.string(words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64($0 * 8)) } })
    }

    // MARK: Read

    /// The session, if the request may see it (docs/design.md, "Auth and tokens"). Without a bearer token: 401
    /// `unauthorized` (`WWW-Authenticate: Bearer`). With a token that is not this session's —
    /// including any token for a session that does not exist or has expired: the same 401, with
    /// `Bearer error="invalid_token"`, so a token holder learns nothing about other sessions'
    /// existence. Only the admin token learns 404 `session_not_found`.
    ///
    /// Both refusals take the same steps: the store is asked either way, and a missing session's
    /// digest is replaced by one no token matches, so the comparison still runs.
    ///
    /// With `access: .read` the session's watch token opens it too. A token sent in the URL
    /// (``Credentials/inURL``) opens it only if it is the watch token: URLs end up in logs and
    /// histories, so a write or admin token there is refused like a wrong one.
    ///
    /// `forChange`: the session may come from the store's copy (``SessionStore/loadForChange(_:)``),
    /// for ``apply(_:to:credentials:ifMatch:once:keep:answer:)``, which confirms it by its compare-and-set.
    package func read(_ id: String, credentials: Credentials, access: Access = .change, forChange: Bool = false) throws(ServiceError)
        -> StoredSession
    {
        guard let presented = credentials.bearer else {
            throw ServiceError(.unauthorized, "send the session's token as 'Authorization: Bearer <token>'")
        }
        let isAdmin = !credentials.inURL && (configuration.adminToken.map { presented.matches($0) } ?? false)
        if access == .context, let backendToken = configuration.backendToken {
            return try readAsBackend(
                id, presented: presented, backendToken: backendToken, isAdmin: isAdmin, inURL: credentials.inURL, forChange: forChange)
        }
        let found = try loadUnexpired(id, forChange: forChange)
        let digest = found?.tokenDigest ?? Self.noToken
        var isOwner = !credentials.inURL && presented.matches(digest)
        if !isOwner, access == .read {
            isOwner = presented.matches(Token.digest(Token.watchToken(for: digest)))
        }
        guard let session = found, isOwner || isAdmin else {
            if isAdmin { throw ServiceError(.sessionNotFound, "no session '\(id)'") }
            throw ServiceError(.invalidToken, "the bearer token is not valid for this session")
        }
        return session
    }

    /// A context change with `--backend-token` set: the backend or the admin token opens the
    /// session (a session's own token does not: `requires` guards are only as trustworthy as
    /// whoever may set the context). Both are trusted, so they learn 404 for a missing session.
    private func readAsBackend(
        _ id: String, presented: TokenDigest, backendToken: TokenDigest, isAdmin: Bool, inURL: Bool, forChange: Bool
    ) throws(ServiceError) -> StoredSession {
        guard !inURL, presented.matches(backendToken) || isAdmin else {
            throw ServiceError(.invalidToken, "changing a session's context needs the backend token (or the admin token)")
        }
        let found = try loadUnexpired(id, forChange: forChange)
        guard let session = found else { throw ServiceError(.sessionNotFound, "no session '\(id)'") }
        return session
    }

    /// The session `id`, unless it does not exist or has expired. An id of another form (`…%00x`,
    /// uppercase, a prefix) is a session that does not exist, answered without asking the store
    /// (SessionID). `forChange`: a change may start from the store's cached copy
    /// (``SessionStore/loadForChange(_:)``); a cached copy that looks expired is read again, since
    /// another process may have touched the session since.
    private func loadUnexpired(_ id: String, forChange: Bool = false) throws(ServiceError) -> StoredSession? {
        guard SessionID.isValid(id) else { return nil }
        var found = try storeCall { () throws(StoreError) in try forChange ? store.loadForChange(id) : store.load(id) }
        if let cached = found, cached.mayBeStale, isExpired(cached) {
            found = try storeCall { () throws(StoreError) in try store.load(id) }
        }
        guard let session = found else { return nil }
        return isExpired(session) ? nil : session
    }

    /// A digest no token has (its bytes are not a SHA-256 output anyone can invert to).
    private static let noToken = TokenDigest(bytes: [])

    package func graph(of session: StoredSession) throws(ServiceError) -> GraphVersion {
        guard let graph = graphs.version(session.graphName, session.graphVersion) else {
            throw ServiceError(.unknownGraph, "graph '\(session.graphName)' version \(session.graphVersion) is not loaded")
        }
        return graph
    }

    package func isExpired(_ session: StoredSession) -> Bool {
        session.touchedAt < now() - configuration.sessionTTL
    }

    // MARK: Mutate

    /// What a request asks to change: an intent, or the intent a leave confirmation's token
    /// names (docs/design.md, "Leave confirmation"), applied without asking again.
    package enum Change: Sendable {
        case intent(Intent)
        case confirmation(token: String)
        /// Move the session to another loaded version of its graph: `nil` for the newest.
        case upgrade(version: Int?)

        /// Who may ask: a context change needs the backend or the admin token when a backend
        /// token is configured (docs/design.md, "Auth and tokens").
        var access: Access {
            switch self {
            case .intent(let intent): intent.changesContext ? .context : .change
            case .confirmation(let token): Confirmation.claimedIntent(token)?.changesContext == true ? .context : .change
            case .upgrade: .change
            }
        }
    }

    /// The use case of every change (docs/design.md, "Transitions", "Concurrency and If-Match"): one at a time per session, the caller
    /// authorised, `If-Match` checked, the intent applied by NavCore, written with
    /// compare-and-set, and answered by `answer`.
    ///
    /// - Parameters:
    ///   - once: wraps the change once the session is locked and the caller authorised: the
    ///     daemon's replay of a retried request (`Idempotency-Key`) goes here, so a retry is
    ///     answered only to someone who may see the session, and never races its first try.
    ///   - answer: what the caller makes of the applied change (its answer is what `once` keeps).
    ///   - keep: the answer to keep in the store with the change (``SessionStore/keepsAnswers``):
    ///     called with the change before it is written.
    package func apply<Answer>(
        _ change: Change, to id: String, credentials: Credentials, ifMatch: IfMatch?,
        once: (_ change: () throws -> Answer) throws -> Answer = { try $0() },
        keep: ((Mutation) -> KeptAnswer)? = nil,
        answer: (Mutation) throws -> Answer
    ) throws -> Answer {
        try serialised(id) { () throws -> Answer in
            // Optional, so that the closure below can move the session out (`take()`) and hand it
            // over: a captured value could only be copied, retaining each of its strings and arrays.
            var loaded: StoredSession? = try read(id, credentials: credentials, access: change.access, forChange: true)
            // `answer` runs inside `once`, before either returns.
            return try withoutActuallyEscaping(answer) { answer in
                try once { () throws -> Answer in
                    guard let session = loaded.take() else { throw ServiceError(.internal, "a change ran twice") }
                    var mutation = try mutate(id, change: change, ifMatch: ifMatch, loaded: session, keep: keep)
                    // Still serialised: the session's watchers get its changes in order.
                    if !mutation.events.isEmpty { mutation.watchedView = publish(mutation) }
                    return try answer(mutation)
                }
            }
        }
    }

    package struct Mutation {
        package var session: StoredSession
        package var events: [LifecycleEvent]
        /// `events` as a JSON array: written once, for the store and for the answer.
        package var eventsJSON: [UInt8]
        /// Where each event ends in `eventsJSON`, when the session is watched (its watchers'
        /// `lifecycle` messages are cut out of it); empty otherwise.
        package var eventEnds: [Int] = []
        /// The view written for the session's watchers, if it has any, and where the events go in
        /// it: the answer (``answer(to:)``) puts them there rather than writing the view again.
        package var watchedView: (bytes: [UInt8], eventsOffset: Int)? = nil
    }

    /// Applies a change: checks `If-Match`, applies it with NavCore, and writes with
    /// compare-and-set; a lost race re-reads and re-applies (or answers 412 with `If-Match`, or
    /// for a confirmation, whose token the race made stale).
    ///
    /// A session from the store's cache (``StoredSession/mayBeStale``) is confirmed only by a
    /// won compare-and-set: any other outcome on it (a refusal, a 412, a no-op) is worked out
    /// again on a fresh read, so a cache behind the database never shows in an answer.
    ///
    /// `loaded` is taken over (a mutation's session is changed in place, not copied: a copy
    /// retains and later releases each of its strings and arrays).
    package func mutate(
        _ id: String, change: Change, ifMatch: IfMatch?, loaded session: consuming StoredSession, keep: ((Mutation) -> KeptAnswer)? = nil
    ) throws(ServiceError) -> Mutation {
        for _ in 0..<16 {
            let stale = session.mayBeStale
            let written: Mutation?
            do {
                written = try write(change, ifMatch: ifMatch, to: &session, keep: keep)
            } catch let error where stale && error.code != .storeUnavailable && error.code != .internal {
                session = try reload(id)
                continue
            }
            if let mutation = written, !(stale && mutation.events.isEmpty) { return mutation }
            session = try reload(id)
        }
        throw ServiceError(.versionConflict, "the session changed too often to apply this intent; retry")
    }

    /// One try of ``mutate(_:change:ifMatch:loaded:keep:)``: the mutation, or nil when the
    /// compare-and-set lost (then `session` is spent: read it again).
    private func write(
        _ change: Change, ifMatch: IfMatch?, to session: inout StoredSession, keep: ((Mutation) -> KeptAnswer)?
    ) throws(ServiceError) -> Mutation? {
        try Self.check(ifMatch, session.state.version)
        var (outcome, graphVersion, intent) = try self.outcome(of: change, on: session)
        guard outcome.changed else {
            let unchanged = Mutation(session: session, events: [], eventsJSON: Array("[]".utf8))
            // Nothing is written for its answer to ride on: kept on its own, so a retry after a
            // restart (or through another process) replays it too (a copy that may be behind is
            // read again first: ``mutate(_:change:ifMatch:loaded:keep:)``).
            if let keep, !session.mayBeStale {
                var kept = keep(unchanged)
                kept.createdAt = now()
                try admit(kept, at: kept.createdAt)
                do {
                    try storeCall { () throws(StoreError) in try store.keep(kept) }
                } catch {
                    answers.remove(kept.key)
                    throw error
                }
            }
            return unchanged
        }
        let expected = session.state.version
        // The new state is swapped in (neither is copied); the old one leaves with `outcome`.
        // A lost race reloads the session, so the old state is not needed again.
        swap(&session.state, &outcome.state)
        session.graphVersion = graphVersion
        // Never back in time, even if the clock is set back: a session's records keep their order.
        session.touchedAt = max(now(), session.touchedAt)
        // Room for the session and for the answer first: a refusal writes nothing.
        var eventEnds: [Int] = []
        let eventsJSON = live.isWatched(session.id) ? outcome.events.jsonBytes(eventEnds: &eventEnds) : outcome.events.jsonBytes
        let charged = try charge(&session, events: outcome.events, json: eventsJSON)
        let kept = keep.map { $0(Mutation(session: session, events: outcome.events, eventsJSON: eventsJSON, eventEnds: eventEnds)) }
        try admit(kept, at: session.touchedAt, charged: charged)
        // After the swap above, `outcome.state` is the stage before.
        let record = configuration.feed.map { settings in
            FeedRecord.make(
                session: session.id, graph: session.graphName, graphVersion: graphVersion, time: session.touchedAt,
                kind: change.feedKind, intent: intent, before: outcome.state, after: session.state, events: outcome.events,
                settings: settings)
        }
        let written: Bool
        do {
            written = try writing(record) { () throws(ServiceError) in
                try storeCall { () throws(StoreError) in
                    try store.update(
                        session, expectedVersion: expected, events: outcome.events, eventsJSON: eventsJSON, keeping: kept, record: record)
                }
            }
        } catch {
            settle(charged, written: false)
            if let kept { answers.remove(kept.key) }
            throw error
        }
        settle(charged, written: written)
        guard written else {
            if let kept { answers.remove(kept.key) }
            return nil
        }
        if let record {
            feedWritten(record, kind: change.feedKind)
            if session.state.version % Self.checkpointInterval == 0 {
                keepCheckpoint(session.id, version: session.state.version, graphVersion: graphVersion, snapshot: session.snapshotBytes)
            }
        }
        session.mayBeStale = false
        return Mutation(session: session, events: outcome.events, eventsJSON: eventsJSON, eventEnds: eventEnds)
    }

    /// The session read again from the store (not its cache), after a lost race.
    private func reload(_ id: String) throws(ServiceError) -> StoredSession {
        guard let fresh = try storeCall({ () throws(StoreError) in try store.load(id) }) else {
            throw ServiceError(.sessionNotFound, "no session '\(id)'")
        }
        return fresh
    }

    /// What NavCore makes of `change` on `session`, the graph version the session runs on after,
    /// and the change as its feed record tells it (the intent in the batch-item form, with a
    /// confirmation's intent and an upgrade's version resolved); the intent only when the feed is on.
    private func outcome(of change: Change, on session: StoredSession) throws(ServiceError) -> (
        Outcome, graphVersion: Int, intent: FeedIntent?
    ) {
        let feedOn = configuration.feed != nil
        let intent: Intent
        let confirmed: Bool
        switch change {
        case .intent(let asked): (intent, confirmed) = (asked, false)
        case .confirmation(let token): (intent, confirmed) = (try Confirmation.intent(of: token, session: session), true)
        case .upgrade(let wanted):
            let target = try upgradeTarget(graph: session.graphName, wanted)
            guard target.version != session.graphVersion else {
                return (Outcome(state: session.state, events: []), session.graphVersion, nil)
            }
            do {
                return (
                    try Self.step(.upgrade(from: session.graphVersion, to: target), to: session.state), target.version,
                    feedOn ? .upgrade(version: target.version) : nil
                )
            } catch {
                throw ServiceError(error)
            }
        }
        let current = try graph(of: session)
        do {
            let told: FeedIntent? = feedOn ? (confirmed ? .confirm(intent) : .intent(intent)) : nil
            return (
                try Self.step(.intent(intent, confirmed: confirmed, on: current), to: session.state), session.graphVersion, told
            )
        } catch {
            var refusal = ServiceError(error)
            if error.code == .confirmationRequired, let screen = error.screen {
                refusal.confirmation = Confirmation.json(for: intent, screen: screen, session: session)
            }
            throw refusal
        }
    }

    /// What NavCore is asked for a change, resolved: an intent on the graph version the session
    /// runs on, or an upgrade to another version.
    package enum Step {
        case intent(Intent, confirmed: Bool, on: GraphVersion)
        case upgrade(from: Int, to: GraphVersion)
    }

    /// Applies a resolved change with NavCore: the one call of the live service
    /// (``write(_:ifMatch:to:keep:)``) and of the replay of a session's history
    /// (``pastSession(_:at:)``), so both make the same stage of the same recorded intent.
    package static func step(_ step: Step, to state: SessionState) throws(NavError) -> Outcome {
        switch step {
        case .intent(let intent, let confirmed, let graph): try graph.navigator.apply(intent, to: state, confirmed: confirmed)
        case .upgrade(let from, let target): try target.navigator.upgrade(state, from: from, to: target.version)
        }
    }

    /// Version `wanted` of graph `name`, or its newest: 422 `unknown_graph` when not loaded.
    func upgradeTarget(graph name: String, _ wanted: Int?) throws(ServiceError) -> GraphVersion {
        let target: GraphVersion?
        if let wanted { target = graphs.version(name, wanted) } else { target = try graphs.latest(name) }
        guard let target else {
            throw ServiceError(.unknownGraph, "version \(wanted.map(String.init) ?? "latest") of graph '\(name)' is not loaded")
        }
        return target
    }

    /// 412 `version_conflict` (with the current `ETag`) unless the session at `version`
    /// satisfies the request's `If-Match`; a request without one always passes.
    package static func check(_ ifMatch: IfMatch?, _ version: Int) throws(ServiceError) {
        guard let ifMatch, !ifMatch.matches(version) else { return }
        var error = ServiceError(.versionConflict, "If-Match does not match the session's current version \"\(version)\"")
        error.currentVersion = version
        throw error
    }

    /// Deletes the session, if the caller may see it and `If-Match` holds.
    package func delete(_ id: String, credentials: Credentials, ifMatch: IfMatch?) throws(ServiceError) {
        try serialised(id) { () throws(ServiceError) in
            let session = try read(id, credentials: credentials)
            try Self.check(ifMatch, session.state.version)
            let record = configuration.feed.map { endRecord(of: session, reason: .deleted, settings: $0) }
            let deleted = try writing(record) { () throws(ServiceError) in
                try storeCall { () throws(StoreError) in try store.delete(id, record: record) }
            }
            if deleted { sessionBytes.release(session.storedBytes) }
            releaseEventBytes()
            if deleted, let record { feedWritten(record, kind: .end) }
        }
        answers.forget(sessions: [id])
        checkpoints.forget(id)
        live.end(id, .deleted)
    }

    /// A page of the session's retained events after `after`, with the session's version and the
    /// `after` the page was read from: `after`, or the newest event's `seq` when `after` is past
    /// it (docs/design.md, "Watchers": a client that asks past the end is answered from the end,
    /// so that its `next` names the newest event and what comes next is not skipped).
    package func events(
        of id: String, credentials: Credentials, after: Int, limit: Int
    ) throws(ServiceError) -> (version: Int, events: [LifecycleEvent], after: Int) {
        let session = try read(id, credentials: credentials, access: .read)
        let after = min(after, session.state.eventCounter)
        let events = try storeCall { () throws(StoreError) in
            try store.events(of: id, after: after, limit: min(limit, configuration.maxEventsPerPage))
        }
        return (session.state.version, events, after)
    }

    /// Store failures are the daemon's problem, never the client's: a 503 the client may retry
    /// when the store cannot take work for now (nothing was changed), a bare 500 otherwise.
    package func storeCall<T>(_ body: () throws(StoreError) -> T) throws(ServiceError) -> T {
        do {
            return try body()
        } catch let error where error.kind == .incompatible {
            throw ServiceError(.unknownGraph, error.message)
        } catch {
            throw ServiceError(storeError: error, "the session store failed")
        }
    }
}

/// Who is asking: the digest of the bearer token the request carried, if it carried one.
package struct Credentials: Sendable {
    package var bearer: TokenDigest?
    /// The token came in the URL (`?access_token=`), not in an `Authorization` header.
    package var inURL = false

    package init(bearer: TokenDigest?, inURL: Bool = false) {
        self.bearer = bearer
        self.inURL = inURL
    }
}

/// What a request does with a session: only reads may use its watch token; a context change
/// may need the backend token instead of the session's (docs/design.md, "Auth and tokens").
package enum Access: Sendable {
    case read, change, context
}
