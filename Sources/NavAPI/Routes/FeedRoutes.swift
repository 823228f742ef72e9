import NavHTTP
import NavJSON
import NavSessions
import NavWire

/// `GET /v1/feed` and `POST /v1/feed/purge` (docs/design.md, "Navigation analytics"): every
/// applied change's record, as a page, a long poll (`wait=S`), or with `Accept:
/// text/event-stream` a stream that follows the feed live; and forgetting records.
struct FeedRoutes: Sendable {
    let sessions: SessionService
    let adminToken: TokenDigest?
    /// The most a stream buffers for a client that does not read: past it the stream ends `lagging`.
    var streamBuffer = 1 << 20
    /// The budget of bytes all streams buffer (`--max-watcher-buffer`); none when nil.
    var buffers: StreamBuffers?

    func register(in router: inout Routes) {
        router.on("GET", "/v1/feed") { context in try feed(context) }
        router.on("POST", "/v1/feed/purge") { context in try purge(context) }
    }

    private func feed(_ context: RequestContext) throws -> HTTPResponse {
        // Parameters first: bad input is a 400 before anything else is looked at.
        let limit = try Query.int(context, "limit", default: 100, range: 1...1000)
        let wait = try Query.int(context, "wait", default: 0, range: 0...EventRoutes.maxWait)
        let form = try Self.form(context)
        let (start, param) = try Self.start(context)
        try authorize(context, form: form)
        if EventRoutes.acceptsEventStream(context) {
            return try FeedStream.start(
                sessions: sessions, from: start, param: param, form: form, context: context, bufferLimit: streamBuffer, pool: buffers)
        }
        let page = { @Sendable (start: FeedStart) throws(ServiceError) -> (HTTPResponse, FeedCursor) in
            let page = try sessions.feed(from: start, limit: limit, form: form, param: param)
            return (.json(bytes: Self.json(page)), page.next)
        }
        let (first, next) = try page(start)
        guard wait > 0, context.request.method == "GET", Self.isEmptyPage(first) else { return first }
        // Waits for what comes after the page it answered (an empty page's `next`), and for a
        // `since` still from that time. Each empty read moves the start past what it looked at,
        // so a wake reads only what came since the one before.
        let from = Locked(start.continuing(after: FeedPage(entries: [], next: next)))
        return try LongPoll.start(
            SessionService.feedWatchKey, sessions: sessions, seconds: wait, limit: Int.max, isEmpty: Self.isEmptyPage
        ) { () throws(ServiceError) in
            let start = from.withLock { $0 }
            let (response, next) = try page(start)
            from.withLock { $0 = start.continuing(after: FeedPage(entries: [], next: next)) }
            return response
        }
    }

    /// `{"records": [...], "next": CURSOR}`.
    static func json(_ page: FeedPage) -> [UInt8] {
        var writer = startPage(page.entries, member: "records")
        writer.writeLiteral(",\"next\":")
        writer.writeString(page.next.description)
        writer.writeLiteral("}")
        return writer.finish()
    }

    /// A writer holding `{"<member>":[...]` with `entries` in it, for the rest of a page to follow:
    /// a feed page's records, a session history's changes.
    static func startPage(_ entries: [FeedEntry], member: String) -> JSONWriter {
        var writer = JSONWriter(reservingCapacity: 64 + entries.reduce(0) { $0 + $1.members.count + 96 })
        writer.writeLiteral("{")
        writer.writeString(member)
        writer.writeLiteral(":[")
        for (index, entry) in entries.enumerated() {
            if index > 0 { writer.writeLiteral(",") }
            entry.write(into: &writer)
        }
        writer.writeLiteral("]")
        return writer
    }

    static func isEmptyPage(_ response: HTTPResponse) -> Bool {
        response.status == 200 && response.body.starts(with: Array("{\"records\":[]".utf8))
    }

    /// `form`: `analytics` (the default) or `full`.
    private static func form(_ context: RequestContext) throws(APIError) -> FeedForm {
        guard let text = context.request.query["form"] else { return .analytics }
        guard let form = FeedForm(rawValue: text) else {
            throw APIError(.invalidRequest, "query parameter 'form' must be analytics or full", param: "form")
        }
        return form
    }

    /// Where to start: `Last-Event-ID` (a stream's reconnection), else `after` (with `since`,
    /// from the first record at or after it among those after the cursor), else `since`, else the
    /// oldest record retained. Each one given is checked, whichever wins: bad input is a
    /// 400 even where another parameter would have been used. - Returns: where to start, and the
    /// parameter a cursor came from (a cursor the feed never gave is refused naming it).
    private static func start(_ context: RequestContext) throws(APIError) -> (FeedStart, String) {
        var lastEventID: FeedCursor?
        if let text = try context.request.singleHeader("Last-Event-ID") {
            guard let cursor = FeedCursor(text) else {
                throw APIError(.invalidRequest, "Last-Event-ID must be a feed cursor, as a record's cursor", param: "Last-Event-ID")
            }
            lastEventID = cursor
        }
        var after: FeedCursor?
        if let text = context.request.query["after"] {
            guard let cursor = FeedCursor(text) else {
                throw APIError(
                    .invalidRequest, "query parameter 'after' must be a cursor the feed gave ('next', a record's cursor)", param: "after")
            }
            after = cursor
        }
        var since: Int64?
        if let text = context.request.query["since"] {
            guard let time = Timestamp.milliseconds(parsing: text) else {
                throw APIError(
                    .invalidRequest, "query parameter 'since' must be an RFC 3339 time, such as 2026-11-27T16:00:00Z", param: "since")
            }
            since = time
        }
        // A stream that reconnects has had records, so its `since` (in the URL it reconnects to)
        // no longer applies: a later record may be a millisecond older than an earlier one.
        if let lastEventID { return (.after(lastEventID), "Last-Event-ID") }
        if let after { return (since.map { .since($0, after: after) } ?? .after(after), "after") }
        if let since { return (.since(since), "since") }
        return (.oldest, "after")
    }

    /// The admin token, or the backend token for the analytics form; every other token (a
    /// session's, a watch token) is refused as on every admin route.
    private func authorize(_ context: RequestContext, form: FeedForm) throws(APIError) {
        let backend = sessions.configuration.backendToken
        guard adminToken != nil || backend != nil else {
            throw APIError(.forbidden, "no admin token is configured (--admin-token or NAVD_ADMIN_TOKEN)")
        }
        guard let presented = context.bearer else {
            throw APIError(.unauthorized, "send the admin or the backend token as 'Authorization: Bearer <token>'")
        }
        // Both compared, whichever matches, so the time taken does not tell which it was.
        let isAdmin = adminToken.map { presented.matches($0) } ?? false
        let isBackend = backend.map { presented.matches($0) } ?? false
        guard isAdmin || (isBackend && form == .analytics) else {
            if isBackend {
                throw APIError(.forbidden, "the full form carries every value of every session: only the admin token reads it")
            }
            throw APIError(.forbidden, "the feed is read with the admin token or the backend token")
        }
    }

    /// `{"session": ID}` or `{"attribute": KEY, "value": V}` → `{"purged": N}`.
    private func purge(_ context: RequestContext) throws -> HTTPResponse {
        try Admin.require(context, adminToken: adminToken)
        let body = Fields(object: try context.jsonObject())
        for key in body.object.keys.sorted() where !["session", "attribute", "value"].contains(key) {
            throw APIError(.invalidRequest, "unknown field '\(key)'", param: key)
        }
        let purge: FeedPurge
        if let session = try body.string("session") {
            guard body.object["attribute"] == nil, body.object["value"] == nil else {
                throw APIError(.invalidRequest, "purge by session or by attribute, not both", param: "attribute")
            }
            purge = .session(session)
        } else if let attribute = try body.string("attribute") {
            guard let value = body.object["value"] else {
                throw APIError(.invalidRequest, "'value' is required with 'attribute'", param: "value")
            }
            purge = .attribute(attribute, value)
        } else {
            throw APIError(.invalidRequest, "name a 'session', or an 'attribute' and its 'value'", param: "session")
        }
        let purged = try sessions.purgeFeed(purge)
        return .json(["purged": .int(purged)])
    }
}
