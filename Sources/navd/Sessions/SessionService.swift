import Logging
import NavCore
import Synchronization

/// Sessions: creation, authorisation, serialised mutations with compare-and-set, expiry.
///
/// The navigation itself is NavCore's pure `Navigator`; this type only loads, checks,
/// applies and stores.
final class SessionService: Sendable {
    struct Configuration: Sendable {
        var maxSessions = 100_000
        /// Idle sessions expire after this many milliseconds.
        var sessionTTL: Int64 = 24 * 3600 * 1000
        var maxEventsPerPage = 1000
        /// The largest context a session may be created with, in bytes of its JSON: `--max-context`.
        var maxContextBytes = 4096
    }

    let store: any SessionStore
    let graphs: GraphRegistry
    let configuration: Configuration
    let idempotency = IdempotencyCache()
    private let now: @Sendable () -> Int64
    /// Mutations of one session run one at a time: a session always maps to the same stripe.
    private let stripes: [Locked<Void>]
    /// Taken only by `create`, never while a stripe is held by the same thread.
    private let creating = Mutex(())

    init(store: any SessionStore, graphs: GraphRegistry, configuration: Configuration, now: @escaping @Sendable () -> Int64) {
        self.store = store
        self.graphs = graphs
        self.configuration = configuration
        self.now = now
        self.stripes = (0..<256).map { _ in Locked(()) }
    }

    private func stripe(_ id: String) -> Locked<Void> {
        var hasher = Hasher()
        hasher.combine(id)
        return stripes[Int(UInt(bitPattern: hasher.finalize()) % UInt(stripes.count))]
    }

    /// Runs `body` while holding the lock of `key`'s stripe.
    func serialised<T>(_ key: String, _ body: () throws(APIError) -> T) throws(APIError) -> T {
        try stripe(key).withLock { _ throws(APIError) -> T in try body() }
    }

    // MARK: Create

    struct Created {
        var session: StoredSession
        var token: String
        var events: [LifecycleEvent]
    }

    func create(graph name: String?, start: String?, context: [String: JSONValue]) throws(APIError) -> Created {
        // Every session keeps its context for life: bound it, so no client can make sessions large.
        if !context.isEmpty {
            let size = JSONValue.object(context).jsonBytes.count
            guard size <= configuration.maxContextBytes else {
                throw APIError(
                    .invalidRequest, "the context is \(size) bytes of JSON (limit \(configuration.maxContextBytes))", param: "context"
                )
            }
        }
        let graphName: String?
        if let name { graphName = name } else { graphName = try graphs.defaultName() }
        guard let graphName, let graph = try graphs.latest(graphName) else {
            throw APIError(.unknownGraph, "no graph '\(name ?? "")' is loaded")
        }
        let outcome: Outcome
        do {
            outcome = try graph.navigator.start(at: start, context: context)
        } catch {
            throw APIError(error)
        }
        let token = Token.generate()
        let time = now()
        let session = StoredSession(
            id: Self.newID(), graphName: graph.graph.name, graphVersion: graph.version, tokenDigest: Token.digest(token),
            state: outcome.state, createdAt: time, touchedAt: time
        )
        // Count and insert as one step, so concurrent creates cannot overshoot --max-sessions
        // (within this process; several processes on PostgreSQL can overshoot by their number).
        try creating.withLock { _ throws(APIError) in
            if try storeCall({ () throws(StoreError) in try store.count() }) >= configuration.maxSessions {
                throw APIError(.tooManySessions, "the daemon holds its maximum of \(configuration.maxSessions) sessions")
            }
            try storeCall { () throws(StoreError) in try store.insert(session, events: outcome.events) }
        }
        return Created(session: session, token: token, events: outcome.events)
    }

    /// 128 random bits as hex: session ids cannot be guessed or enumerated.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next() as UInt64, generator.next() as UInt64]
        return Hex.string(words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64($0 * 8)) } })
    }

    // MARK: Read

    /// The session, if the request may see it (DESIGN §4 Auth). Without a bearer token: 401
    /// `unauthorized` (`WWW-Authenticate: Bearer`). With a token that is not this session's —
    /// including any token for a session that does not exist or has expired: the same 401, with
    /// `Bearer error="invalid_token"`, so a token holder learns nothing about other sessions'
    /// existence. Only the admin token learns 404 `session_not_found`.
    ///
    /// Both refusals take the same steps: the store is asked either way, and a missing session's
    /// digest is replaced by one no token matches, so the comparison still runs.
    func authorised(_ id: String, headers: HTTPHeaders, adminToken: TokenDigest?) throws(APIError) -> StoredSession {
        guard let presented = Token.bearerDigest(in: headers) else {
            throw APIError(.unauthorized, "send the session's token as 'Authorization: Bearer <token>'")
        }
        let isAdmin = adminToken.map { presented.matches($0) } ?? false
        // An id of another form (`…%00x`, uppercase, a prefix) is a session that does not exist,
        // answered without asking the store (SessionID).
        var found = SessionID.isValid(id) ? try storeCall({ () throws(StoreError) in try store.load(id) }) : nil
        if let session = found, isExpired(session) { found = nil }
        let isOwner = presented.matches(found?.tokenDigest ?? Self.noToken)
        guard let session = found, isOwner || isAdmin else {
            if isAdmin { throw APIError(.sessionNotFound, "no session '\(id)'") }
            var error = APIError(.unauthorized, "the bearer token is not valid for this session")
            error.headers = [("WWW-Authenticate", "Bearer error=\"invalid_token\"")]
            throw error
        }
        return session
    }

    /// A digest no token has (its bytes are not a SHA-256 output anyone can invert to).
    private static let noToken = TokenDigest(bytes: [])

    func graph(of session: StoredSession) throws(APIError) -> GraphVersion {
        guard let graph = graphs.version(session.graphName, session.graphVersion) else {
            throw APIError(.unknownGraph, "graph '\(session.graphName)' version \(session.graphVersion) is not loaded")
        }
        return graph
    }

    private func isExpired(_ session: StoredSession) -> Bool {
        session.touchedAt < now() - configuration.sessionTTL
    }

    // MARK: Mutate

    struct Mutation {
        var session: StoredSession
        var events: [LifecycleEvent]
        /// `events` as a JSON array: written once, for the store and for the answer.
        var eventsJSON: [UInt8]
    }

    /// Applies an intent: checks `If-Match`, applies it with NavCore, and writes with
    /// compare-and-set; a lost race re-reads and re-applies (or answers 412 with `If-Match`).
    ///
    /// `loaded` is taken over (a mutation's session is changed in place, not copied: a copy
    /// retains and later releases each of its strings and arrays).
    func mutate(_ id: String, intent: Intent, ifMatch: IfMatch?, loaded session: consuming StoredSession) throws(APIError) -> Mutation {
        for _ in 0..<16 {
            try Self.check(ifMatch, session.state.version)
            let graph = try graph(of: session)
            var outcome: Outcome
            do {
                outcome = try graph.navigator.apply(intent, to: session.state)
            } catch {
                throw APIError(error)
            }
            guard outcome.changed else { return Mutation(session: session, events: [], eventsJSON: Array("[]".utf8)) }
            let expected = session.state.version
            // The new state is swapped in (neither is copied); the old one leaves with `outcome`.
            // A lost race below reloads the session, so the old state is not needed again.
            swap(&session.state, &outcome.state)
            session.touchedAt = now()
            let eventsJSON = outcome.events.jsonBytes
            let written = try storeCall { () throws(StoreError) in
                try store.update(session, expectedVersion: expected, events: outcome.events, eventsJSON: eventsJSON)
            }
            if written { return Mutation(session: session, events: outcome.events, eventsJSON: eventsJSON) }
            guard let fresh = try storeCall({ () throws(StoreError) in try store.load(id) }) else {
                throw APIError(.sessionNotFound, "no session '\(id)'")
            }
            session = fresh
        }
        throw APIError(.versionConflict, "the session changed too often to apply this intent; retry")
    }

    /// 412 `version_conflict` (with the current `ETag`) unless the session at `version`
    /// satisfies the request's `If-Match`; a request without one always passes.
    static func check(_ ifMatch: IfMatch?, _ version: Int) throws(APIError) {
        guard let ifMatch, !ifMatch.matches(version) else { return }
        var error = APIError(.versionConflict, "If-Match does not match the session's current version \"\(version)\"")
        error.headers = [("ETag", .etag(version))]
        throw error
    }

    func delete(_ id: String) throws(APIError) {
        _ = try storeCall { () throws(StoreError) in try store.delete(id) }
    }

    func events(_ id: String, after: Int, limit: Int) throws(APIError) -> [LifecycleEvent] {
        try storeCall { () throws(StoreError) in try store.events(of: id, after: after, limit: min(limit, configuration.maxEventsPerPage)) }
    }

    /// Deletes idle sessions. - Returns: how many.
    func sweep() throws(APIError) -> Int {
        let cutoff = now() - configuration.sessionTTL
        return try storeCall { () throws(StoreError) in try store.deleteExpired(touchedBefore: cutoff) }
    }

    /// Store failures are the daemon's problem, never the client's: a 503 the client may retry
    /// when the store cannot take work for now (nothing was changed), a bare 500 otherwise.
    func storeCall<T>(_ body: () throws(StoreError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch where error.kind == .incompatible {
            throw APIError(.unknownGraph, error.message)
        } catch {
            throw APIError(storeError: error, "the session store failed")
        }
    }
}

extension APIError {
    /// An internal error whose cause goes to the log, never into the response.
    init(_ code: Code, _ detail: String, storeMessage: String) {
        self.init(code, detail)
        self.logMessage = storeMessage
    }

    /// A store failure: 503 `store_unavailable` when the store cannot be reached now (its cause
    /// logged, never sent), else an internal error described by `detail`.
    init(storeError error: StoreError, _ detail: String) {
        if error.kind == .unavailable {
            self.init(.storeUnavailable, "the store cannot take work now; nothing was changed, retry later", storeMessage: error.message)
        } else {
            self.init(.internal, detail, storeMessage: error.message)
        }
    }
}
