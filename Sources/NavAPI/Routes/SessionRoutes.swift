import NavCore
import NavHTTP
import NavJSON
import NavSessions
import NavWire

/// `/v1/sessions…`: create, read, navigate, transitions, exit, back, params, state, delete (the
/// events are ``EventRoutes``).
struct SessionRoutes: Sendable {
    let sessions: SessionService
    /// The admin token's digest, computed once: the admin token also opens every session.
    let adminToken: TokenDigest?
    /// Answers already given to requests with an `Idempotency-Key` (docs/design.md, "Idempotency
    /// answers"), filed under the store's key for them (``storeKey(scope:_:)``), on a store that
    /// keeps none (memory); nil on one that does, which is then the one place an answer is held
    /// (a replay reads it there). What the session service forgets to make room
    /// (``KeptAnswerLedger``) leaves here too, so this holds no more than the ledger counts.
    let idempotency: IdempotencyCache?

    init(sessions: SessionService, adminToken: TokenDigest?) {
        self.sessions = sessions
        self.adminToken = adminToken
        if sessions.store.keepsAnswers {
            self.idempotency = nil
        } else {
            let idempotency = IdempotencyCache()
            self.idempotency = idempotency
            sessions.answers.onForgotten { keys in idempotency.forget(keys: keys) }
        }
    }

    func register(in router: inout Routes) {
        router.on("POST", "/v1/sessions") { context in try create(context) }
        router.on("GET", "/v1/sessions") { context in try list(context) }
        router.on("GET", "/v1/sessions/{id}") { context in try read(context) }
        router.on("DELETE", "/v1/sessions/{id}") { context in try delete(context) }
        router.on("GET", "/v1/sessions/{id}/history") { context in try history(context) }
        router.on("POST", "/v1/sessions/{id}/navigate") { context in
            let fields = Fields(object: try context.jsonObject())
            try fields.only(["path"])
            let path = try fields.string("path", required: true) ?? ""
            try checkLength(path, "path")
            return try mutate(context, .navigate(path))
        }
        router.on("POST", "/v1/sessions/{id}/transitions") { context in
            let fields = Fields(object: try context.jsonObject())
            try fields.only(["name", "params"])
            let name = try fields.string("name", required: true) ?? ""
            let params = try fields.params("params") ?? [:]
            return try mutate(context, .link(name: name, params: params))
        }
        router.on("POST", "/v1/sessions/{id}/exit") { context in
            let fields = Fields(object: try context.jsonObject(optional: true))
            try fields.only(["result"])
            return try mutate(context, .exit(result: fields.object["result"]))
        }
        router.on("POST", "/v1/sessions/{id}/back") { context in
            let fields = Fields(object: try context.jsonObject(optional: true))
            try fields.only(["count", "result"])
            let count = try fields.int("count", range: 1...Int(Int32.max)) ?? 1
            return try mutate(context, .back(count, result: fields.object["result"]))
        }
        router.on("PUT", "/v1/sessions/{id}/screens/{screen}/params") { context in
            let params = try context.jsonObject()
            try Fields.checkParams(params)
            let screen = context.parameter("screen")
            return try mutate(context, .setParams(screen: screen, params: params))
        }
        router.on("PATCH", "/v1/sessions/{id}/screens/{screen}/state") { context in
            let patch = try context.jsonObject(mediaTypes: ["application/merge-patch+json", "application/json"])
            let screen = context.parameter("screen")
            return try mutate(context, .patchState(screen: screen, patch: .object(patch)))
        }
        router.on("POST", "/v1/sessions/{id}/screens/{screen}/commands") { context in
            let fields = Fields(object: try context.jsonObject())
            try fields.only(["name", "args"])
            let name = try fields.string("name", required: true) ?? ""
            let args = try fields.object("args") ?? [:]
            return try mutate(context, .command(screen: context.parameter("screen"), name: name, args: args))
        }
        router.on("PATCH", "/v1/sessions/{id}/context") { context in
            let patch = try context.jsonObject(mediaTypes: ["application/merge-patch+json", "application/json"])
            return try mutate(context, .patchContext(.object(patch)))
        }
        router.on("POST", "/v1/sessions/{id}/intents") { context in
            let fields = Fields(object: try context.jsonObject())
            try fields.only(["intents"])
            guard let items = fields.object["intents"]?.arrayValue else {
                throw APIError(.invalidRequest, "'intents' is a required array of intents", param: "intents")
            }
            var intents: [Intent] = []
            for (index, item) in items.enumerated() {
                do throws(NavError) {
                    intents.append(try Intent(item: item, prefix: "intents.\(index)."))
                } catch {
                    var refusal = APIError(error)
                    refusal.members["index"] = .int(index)
                    throw refusal
                }
            }
            return try mutate(context, .batch(intents))
        }
        router.on("POST", "/v1/sessions/{id}/upgrade") { context in
            let fields = Fields(object: try context.jsonObject(optional: true))
            try fields.only(["version"])
            let version = try fields.int("version", range: 1...Int(Int32.max))
            return try mutate(context, change: .upgrade(version: version))
        }
        router.on("POST", "/v1/sessions/{id}/confirm") { context in
            let fields = Fields(object: try context.jsonObject())
            try fields.only(["token"])
            let token = try fields.string("token", required: true) ?? ""
            // A token never grows past a batch's intents: refuse a body-sized one before reading it.
            guard token.utf8.count <= 1 << 20 else { throw APIError(.invalidRequest, "'token' is too long", param: "token") }
            return try mutate(context, change: .confirmation(token: token))
        }
    }

    // MARK: Handlers

    private func create(_ context: RequestContext) throws -> HTTPResponse {
        let fields = Fields(object: try context.jsonObject(optional: true))
        try fields.only(["graph", "start", "context"])
        let graph = try fields.string("graph")
        let start = try fields.string("start")
        if let start { try checkLength(start, "start") }
        let sessionContext = try fields.object("context") ?? [:]
        // Before any replay: a retried create is no way around the backend token.
        try sessions.authorizeCreate(context.credentials)
        let respond = { (created: SessionService.Created) -> HTTPResponse in
            let view = sessions.view(of: created.session, events: created.events, token: (created.token, created.watchToken))
            return .sessionView(
                view, version: created.session.state.version, status: 201, headers: [("Location", "/v1/sessions/\(created.session.id)")]
            )
        }
        // A malformed key is refused before anything else, whichever the store.
        let key = try Self.idempotencyKey(context.request)
        // A create with a key keeps its answer with the session, counted among the kept answers
        // (``KeptAnswerLedger``); where the store keeps answers, sealed (it holds the token, which
        // no store keeps in the clear): ``SealedAnswer``.
        var keep: ((SessionService.Created) -> KeptAnswer?)?
        if let key {
            let fingerprint = Self.fingerprint(context.request)
            let sealing = sessions.store.keepsAnswers
            keep = { created in
                let response = respond(created)
                let body = sealing ? SealedAnswer.seal(response.body, key: key, fingerprint: fingerprint) : response.body
                return body.map {
                    KeptAnswer(
                        key: Self.storeKey(scope: "create", key), session: created.session.id, fingerprint: fingerprint,
                        status: response.status,
                        headers: response.headers, body: $0)
                }
            }
        }
        return try idempotent(context, scope: "create", key: key) { () throws in
            guard
                let created = try sessions.create(
                    graph: graph, start: start, context: sessionContext, credentials: context.credentials, keeping: keep)
            else { throw KeptElsewhere() }
            return respond(created)
        }
    }

    /// A create whose key another process kept meanwhile: it made no session, and the kept
    /// answer is the answer (``idempotent(_:scope:key:lockHeld:_:)`` replays it).
    private struct KeptElsewhere: Error {}

    private func list(_ context: RequestContext) throws -> HTTPResponse {
        try Admin.require(context, adminToken: adminToken)
        let limit = try Query.int(context, "limit", default: 100, range: 1...1000)
        // Summed up as they are read: one decoded session is held at a time.
        var summaries: [JSONValue] = []
        try sessions.storeCall { () throws(StoreError) in try sessions.store.list(limit: limit) { summaries.append(Wire.summary($0)) } }
        return .json(["sessions": .array(summaries)])
    }

    private func read(_ context: RequestContext) throws -> HTTPResponse {
        // `?version=V`: the view as the change to V left it (docs/design.md, "History").
        if context.request.query["version"] != nil {
            let version = try Query.int(context, "version", default: 1, range: 1...Int.max)
            let past = try sessions.view(of: context.parameter("id"), credentials: context.credentials, at: version)
            return .sessionView(past.bytes, version: past.version)
        }
        let session = try sessions.read(context.parameter("id"), credentials: context.credentials, access: .read)
        return .sessionView(sessions.view(of: session), version: session.state.version)
    }

    /// `{"changes": [record...], "oldest": V, "next": V}`: the session's retained records in the
    /// full form, oldest first, after version `after` (exclusive), at most `limit` (1–1000, 100).
    private func history(_ context: RequestContext) throws -> HTTPResponse {
        // Parameters first: bad input is a 400 before anything else is looked at.
        let after = try Query.int(context, "after", default: 0, range: 0...Int.max)
        let limit = try Query.int(context, "limit", default: 100, range: 1...1000)
        let page = try sessions.history(of: context.parameter("id"), credentials: context.credentials, after: after, limit: limit)
        var writer = FeedRoutes.startPage(page.entries, member: "changes")
        writer.writeLiteral(",\"oldest\":")
        if let oldest = page.oldest { writer.writeInt(oldest) } else { writer.writeLiteral("null") }
        writer.writeLiteral(",\"next\":")
        writer.writeInt(page.next)
        writer.writeLiteral("}")
        return .json(bytes: writer.finish())
    }

    private func delete(_ context: RequestContext) throws -> HTTPResponse {
        let id = context.parameter("id")
        try sessions.delete(id, credentials: context.credentials, ifMatch: Self.ifMatch(context.request.headers))
        idempotency?.forget(session: id)
        return HTTPResponse(status: 204)
    }

    /// A path over the limit is refused with the body's other shape errors, before `If-Match`
    /// and the session are looked at (NavCore checks it again when it parses the path).
    private func checkLength(_ path: String, _ member: String) throws(APIError) {
        let limit = sessions.graphs.limits.maxPathLength
        guard path.utf8.count <= limit else {
            throw APIError(.invalidPath, "'\(member)' is longer than \(limit) bytes", offset: limit)
        }
    }

    /// Every change: the session service's use case, answered with the session view, a retry
    /// with the same `Idempotency-Key` answered again from the first answer.
    private func mutate(_ context: RequestContext, _ intent: Intent) throws -> HTTPResponse {
        try mutate(context, change: .intent(intent))
    }

    private func mutate(_ context: RequestContext, change: SessionService.Change) throws -> HTTPResponse {
        let id = context.parameter("id")
        // The answer kept for a keyed change is written once and is the answer too: one buffer,
        // however many places hold it (a store's write, the client's response).
        let render = { (mutation: SessionService.Mutation) in
            HTTPResponse.sessionView(sessions.answer(to: mutation), version: mutation.session.state.version)
        }
        var kept: (version: Int, response: HTTPResponse)?
        let respond = { (mutation: SessionService.Mutation) in
            if let kept, kept.version == mutation.session.state.version { return kept.response }
            return render(mutation)
        }
        // A malformed key is refused before anything else, whichever the store.
        let key = try Self.idempotencyKey(context.request)
        // A change with a key keeps its answer, counted among the kept answers
        // (``KeptAnswerLedger``): where the store keeps answers, in the change's own write.
        var keep: ((SessionService.Mutation) -> KeptAnswer)?
        if let key {
            let fingerprint = Self.fingerprint(context.request)
            keep = { mutation in
                var response = render(mutation)
                let answer = KeptAnswer(
                    key: Self.storeKey(scope: id, key), session: id, fingerprint: fingerprint, status: response.status,
                    headers: response.headers, body: response.body)
                // The answer in the kept answer's buffer (of its own size). A lost race writes the
                // change again, and keeps the answer of the one written.
                response.body = answer.body
                kept = (mutation.session.state.version, response)
                return answer
            }
        }
        return try sessions.apply(
            change, to: id, credentials: context.credentials, ifMatch: Self.ifMatch(context.request.headers),
            once: { change in try idempotent(context, scope: id, key: key, lockHeld: true, change) },
            keep: keep, answer: respond
        )
    }

    /// Where the store files the answer to `key` about session `scope` (or `create`): the
    /// session's id and a digest of the key (``SealedAnswer/changeKeyDigest(_:)``), or a create's
    /// own digest (``SealedAnswer/storeKey(_:)``), so the database never holds a client's key
    /// (one also used for a create would open that create's sealed answer).
    static func storeKey(scope: String, _ key: String) -> String {
        scope == "create" ? SealedAnswer.storeKey(key) : scope + " " + SealedAnswer.changeKeyDigest(key)
    }

    /// The answer the store kept for this key (another process may have answered the first try),
    /// where the store keeps answers. A create's is sealed, and opened with the key and the
    /// request's `fingerprint`; the key with another request is refused.
    private func keptAnswer(_ scope: String, _ key: String, fingerprint: [UInt8]) throws -> IdempotencyCache.Record? {
        guard sessions.store.keepsAnswers else { return nil }
        guard
            let kept = try sessions.storeCall({ () throws(StoreError) in try sessions.store.keptAnswer(Self.storeKey(scope: scope, key)) })
        else { return nil }
        var body = kept.body
        if scope == "create" {
            // Refused here, not by the replay: a record still sealed must not be remembered.
            guard kept.fingerprint == fingerprint else { throw Self.reused(key) }
            guard let opened = SealedAnswer.open(kept.body, key: key, fingerprint: fingerprint) else {
                throw ServiceError(.internal, "the kept answer to a create could not be opened")
            }
            body = opened
        }
        return .init(
            fingerprint: kept.fingerprint, response: HTTPResponse(status: kept.status, headers: kept.headers, body: body),
            session: kept.session,
            givenAt: kept.createdAt)
    }

    private static func reused(_ key: String) -> APIError {
        APIError(.idempotencyKeyReused, "Idempotency-Key '\(key)' was used with another request")
    }

    /// Replays the first answer to a request retried with the same `Idempotency-Key` and body.
    private func idempotent(
        _ context: RequestContext, scope: String, key: String?, lockHeld: Bool = false, _ body: () throws -> HTTPResponse
    ) throws -> HTTPResponse {
        // The session an answer is about: the one changed, or the one a create made (its Location).
        guard let key else { return try body() }
        let cacheKey = Self.storeKey(scope: scope, key)
        let fingerprint = Self.fingerprint(context.request)
        func replay(_ record: IdempotencyCache.Record) throws -> HTTPResponse {
            guard record.fingerprint == fingerprint else { throw Self.reused(key) }
            var replay = record.response
            replay.headers.append(("Idempotent-Replayed", "true"))
            return replay
        }
        // A create's answer names a session that may have ended since (expired, or deleted through
        // another process): then it is forgotten and the create made anew, as after a delete
        // here; it is kept for as long as its session lives. A change's replay needs no look (it
        // comes after the session's token was checked), but its answer is kept for the session
        // TTL only, as long as the store keeps it, so that every process forgets it together.
        func stillThere(_ record: IdempotencyCache.Record) throws -> Bool {
            guard scope == "create", let session = record.session else { return sessions.isKept(since: record.givenAt) }
            if try sessions.exists(session) { return true }
            idempotency?.forget(session: session)
            return false
        }
        func run(swept: Bool = false) throws -> HTTPResponse {
            if let record = idempotency?.lookup(cacheKey), try stillThere(record) { return try replay(record) }
            if let record = try keptAnswer(scope, key, fingerprint: fingerprint), try stillThere(record) {
                return try replay(record)
            }
            let response: HTTPResponse
            do {
                response = try body()
            } catch let error where (error as? ServiceError)?.code == .versionConflict || error is KeptElsewhere {
                // Another process may have applied this key meanwhile (its answer kept first):
                // this change or create then wrote nothing, and the first answer is the answer.
                guard let record = try keptAnswer(scope, key, fingerprint: fingerprint) else {
                    guard error is KeptElsewhere else { throw error }
                    throw APIError(.idempotencyKeyReused, "Idempotency-Key '\(key)' was used by a create whose session has ended")
                }
                // A create's answer about a session that has expired but is not swept yet holds the
                // key in the store: sweep (the sweep deletes it with the session), then create anew.
                if error is KeptElsewhere, !(try stillThere(record)) {
                    guard !swept else {
                        throw ServiceError(
                            .storeUnavailable, "the answer kept under this Idempotency-Key has ended and could not be swept yet")
                    }
                    _ = try sessions.sweep()
                    return try run(swept: true)
                }
                return try replay(record)
            }
            // Held here only when the ledger counts it: it admitted the answer before the change
            // was applied, and an answer that went unkept (a create past its budget) is not held.
            if let idempotency, (200..<300).contains(response.status), sessions.answers.holds(cacheKey) {
                let session =
                    scope == "create"
                    ? response.headers.first { $0.0 == "Location" }.map { String($0.1.dropFirst("/v1/sessions/".count)) } : scope
                idempotency.store(
                    cacheKey, .init(fingerprint: fingerprint, response: response, session: session, givenAt: sessions.currentTime()))
            }
            return response
        }
        return lockHeld ? try run() : try sessions.serialised(cacheKey) { () throws in try run() }
    }

    /// A POST's, PUT's or PATCH's `Idempotency-Key`, nil without one (a DELETE needs none: a
    /// retried one is refused as `session_not_found`, having changed nothing more); without the blanks around it (RFC 9110 §5.5:
    /// they are not part of a field's value), so `k` and `k ` are one key. Printable ASCII
    /// only (the key is part of a cache key, and is never text a log or a C call could take for
    /// something else), and sent once: two keys would be joined into a third (`a, b`) that
    /// neither retry names, so a request with two is refused rather than applied under it.
    static func idempotencyKey(_ request: HTTPRequest) throws(APIError) -> String? {
        guard ["POST", "PUT", "PATCH"].contains(request.method), let key = try request.singleHeader("Idempotency-Key") else { return nil }
        guard !key.isEmpty, key.utf8.count <= 200, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw APIError(.invalidRequest, "Idempotency-Key must be 1 to 200 printable ASCII characters", param: "Idempotency-Key")
        }
        return key
    }

    /// What makes a retry the same request (docs/design.md, "Idempotency"): the route, the `If-Match` value,
    /// and the body as parsed JSON, written canonically (keys sorted, numbers in one form, no
    /// blanks), so `{"a":1, "b":2}` and `{ "b": 2.0,"a":1 }` are one body. Only requests with
    /// an `Idempotency-Key` pay for it; their body has already been parsed once by the handler.
    static func fingerprint(_ request: HTTPRequest) -> [UInt8] {
        var text = Array((request.method + " " + request.path + "\n").utf8)
        // A marker byte tells "no If-Match" from any value the header can have.
        if let ifMatch = request.headers["if-match"] {
            text.append(UInt8(ascii: "="))
            text += Array(ifMatch.trimmingCharacters(in: " \t").utf8)
        } else {
            text.append(0)
        }
        text.append(UInt8(ascii: "\n"))
        if request.body.isEmpty {
            // An optional body left out is the empty object.
            text += Array("{}".utf8)
        } else if let body = try? JSONValue(parsing: request.body) {
            text += body.jsonBytes
        } else {
            text += request.body
        }
        return SHA256.hash(text)
    }

    /// The request's `If-Match` precondition, if it sent one (see ``IfMatch``).
    static func ifMatch(_ headers: HTTPHeaders) -> IfMatch? {
        headers["if-match"].map(IfMatch.init)
    }
}

/// Query parameters with bounds.
enum Query {
    /// The largest integer a JSON number holds exactly everywhere (2^53 − 1), the schema's bound.
    static let maxSafeInteger = 9_007_199_254_740_991

    /// A query integer in `range`, written as decimal digits (a `-` allowed first): no `+`, blanks or fractions.
    static func int(_ context: RequestContext, _ name: String, default value: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let text = context.request.query[name] else { return value }
        guard let number = DecimalDigits.parse(text.utf8, sign: .minus), range.contains(number) else {
            throw APIError(
                .invalidRequest, "query parameter '\(name)' must be an integer in \(range.lowerBound)...\(range.upperBound)", param: name)
        }
        return number
    }
}

/// The admin token check: 403 when none is configured or the token is wrong, 401 when none is sent.
enum Admin {
    static func require(_ context: RequestContext, adminToken: TokenDigest?) throws(APIError) {
        guard let adminToken else {
            throw APIError(.forbidden, "no admin token is configured (--admin-token or NAVD_ADMIN_TOKEN)")
        }
        guard let presented = context.bearer else {
            throw APIError(.unauthorized, "send the admin token as 'Authorization: Bearer <token>'")
        }
        guard presented.matches(adminToken) else {
            throw APIError(.forbidden, "the admin token is not valid")
        }
    }
}
