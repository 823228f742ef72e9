import Dispatch
import NavCore
import NavHTTP
import NavJSON
import NavSessions
import NavWire

/// `GET /v1/sessions/{id}/events` (docs/design.md, "Live sessions"): one resource in three forms — a page of the
/// retained log, a long poll (`wait=S`) that answers as soon as there is an event after `after`,
/// and, with `Accept: text/event-stream`, a stream that follows the session live.
struct EventRoutes: Sendable {
    let sessions: SessionService
    /// The most a stream buffers for a client that does not read: past it the watcher is dropped.
    var streamBuffer = 512 * 1024
    /// The budget of bytes all streams buffer (`--max-watcher-buffer`); none when nil.
    var buffers: StreamBuffers?

    /// Seconds a client refused for a watcher budget is asked to wait: watchers come and go
    /// (a long poll lasts at most ``maxWait``), so a slot is usually free again soon.
    static let retryAfter = "5"

    /// The longest long poll, in seconds.
    static let maxWait = 60

    /// A page of the log ends once it holds this many bytes of events, however many `limit`
    /// allowed, as a feed page does: a result's event carries up to 16 KiB of a client's value,
    /// so a thousand made an answer of 16 MB that a client could ask for and never read.
    static let pageBytes = FeedPage.maxBytes

    func register(in router: inout Routes) {
        router.on("GET", "/v1/sessions/{id}/events") { context in try events(context) }
    }

    private func events(_ context: RequestContext) throws -> HTTPResponse {
        let id = context.parameter("id")
        // Every parameter is checked before the session is looked at: bad input is a 400 first.
        let after = try Query.int(context, "after", default: 0, range: 0...Query.maxSafeInteger)
        let limit = try Query.int(context, "limit", default: 100, range: 1...1000)
        let wait = try Query.int(context, "wait", default: 0, range: 0...Self.maxWait)
        let lastEventID = try Self.lastEventID(context)
        let credentials = try Self.credentials(context)
        if Self.acceptsEventStream(context) {
            return try stream(
                id, credentials: credentials, after: lastEventID ?? context.request.query["after"].map { _ in after }, context: context)
        }
        let page = { @Sendable (after: Int) throws(ServiceError) -> (HTTPResponse, Int) in
            let (version, events, from) = try sessions.events(of: id, credentials: credentials, after: after, limit: limit)
            var writer = JSONWriter(reservingCapacity: 64 + 128 * events.count)
            writer.writeEventPage(events, next: events.last?.seq ?? from, maxBytes: Self.pageBytes)
            return (.session(bytes: writer.finish(), version: version), from)
        }
        let (first, from) = try page(lastEventID ?? after)
        guard wait > 0, context.request.method == "GET", Self.isEmptyPage(first) else { return first }
        // Waits for what comes after the page it would have answered: an `after` past the newest
        // event waits for the next one, not for one past `after` that may never come.
        return try LongPoll.start(id, sessions: sessions, seconds: wait) { () throws(ServiceError) in try page(from).0 }
    }

    /// The stream: the view now, then the retained events after `after` (if given), then every
    /// change as it is applied.
    private func stream(_ id: String, credentials: Credentials, after: Int?, context: RequestContext) throws -> HTTPResponse {
        let session = try sessions.read(id, credentials: credentials, access: .read)
        let headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]
        if context.request.method == "HEAD" { return HTTPResponse(status: 200, headers: headers) }
        let stream = ResponseStream(bufferLimit: streamBuffer, pool: buffers, farewell: EventStream.lagging)
        let current = session.state.eventCounter
        let watcher = EventStream(
            id: id, sessions: sessions, stream: stream, lastSeq: min(after ?? current, current), viewSeq: current
        )
        // Counted first: a refused stream is a problem answer, and nothing was written for it.
        try Self.add(watcher, to: id, in: sessions.live)
        stream.onClose { [sessions] in sessions.live.remove(watcher, from: id) }
        var opening = JSONWriter(reservingCapacity: 1024)
        opening.writeHeartbeatAnnouncement(seconds: sessions.live.heartbeatSeconds)
        opening.writeRetry(milliseconds: 2000)
        opening.writeViewMessage(sessions.view(of: session))
        stream.write(opening.finish())
        sessions.live.messagesSent.add(1, ordering: .relaxed)
        // The retained events after `after`, and whatever was applied between reading the session
        // and adding the watcher, come from the store. Only then: a catch-up coalesces the views
        // of the changes it reads, while changes seen live each bring their own.
        let missed = (try? sessions.store.load(id)).flatMap { $0 }.map { $0.state.eventCounter > current } ?? true
        if missed || (after.map { $0 < current } ?? false) { watcher.refresh() }
        return HTTPResponse(status: 200, headers: headers, stream: stream)
    }

    /// `Last-Event-ID`, which EventSource sends when it reconnects: it wins over `?after=`, since
    /// EventSource reconnects to the same URL. Not a number: 400.
    private static func lastEventID(_ context: RequestContext) throws(APIError) -> Int? {
        guard let text = try context.request.singleHeader("Last-Event-ID") else { return nil }
        guard let value = DecimalDigits.parse(text.utf8), value <= Query.maxSafeInteger else {
            throw APIError(.invalidRequest, "Last-Event-ID must be an event's seq (decimal digits)", param: "Last-Event-ID")
        }
        return value
    }

    /// The bearer token, from `Authorization` or else from `?access_token=`: there only the watch
    /// token is taken (an EventSource cannot send headers; a URL ends up in logs).
    private static func credentials(_ context: RequestContext) throws(APIError) -> Credentials {
        if context.request.headers["authorization"] != nil { return context.credentials }
        guard let token = context.request.query["access_token"] else { return context.credentials }
        return Credentials(bearer: Token.digest(token), inURL: true)
    }

    /// Adds a watcher within its budgets, or answers why not (docs/design.md, "Watchers"): 429
    /// `too_many_requests` when its session has as many as one may, 503 `over_capacity` when the
    /// daemon has, 503 `shutting_down` once navd is stopping; each with `Retry-After`.
    static func add(_ watcher: any SessionWatcher, to id: String, in live: LiveSessions, limit: Int? = nil) throws(APIError) {
        do throws(WatchRefusal) {
            try live.add(watcher, to: id, limit: limit)
        } catch {
            var problem: APIError
            switch error {
            case .sessionFull(let limit):
                problem = APIError(
                    .tooManyRequests,
                    "this session already has \(limit) watchers (streams and long polls), the most one session may have; close one first")
                problem.headers = [("Retry-After", retryAfter)]
            case .daemonFull(let limit):
                problem = APIError(
                    .overCapacity, "navd already holds \(limit) watchers (streams and long polls), the most it may; retry later")
                problem.headers = [("Retry-After", retryAfter)]
            case .shuttingDown:
                problem = shuttingDown
            }
            throw problem
        }
    }

    /// What a watcher is answered when navd stops under it (a long poll), or one that arrives
    /// once it is stopping: retry, against another instance or this one restarted.
    static var shuttingDown: APIError {
        var problem = APIError(.shuttingDown, "navd is shutting down; retry, and another instance (or this one, restarted) answers")
        problem.headers = [("Retry-After", "1")]
        return problem
    }

    /// Whether the client asks for the stream: `text/event-stream` named in `Accept` with a weight
    /// above 0 and not below that of JSON (`application/json`, or else `application/*` or `*/*`).
    /// As content negotiation reads `Accept` (RFC 9110 §12.5.1): `q=0` means "not acceptable".
    static func acceptsEventStream(_ context: RequestContext) -> Bool {
        guard let accept = context.request.headers["accept"] else { return false }
        var stream = 0.0
        var json: Double?
        var wildcard: Double?
        for item in accept.split(separator: ",") {
            let parameters = item.split(separator: ";")
            guard let first = parameters.first else { continue }
            var weight = 1.0
            for parameter in parameters.dropFirst() {
                let trimmed = String(parameter).trimmingCharacters(in: " \t")
                guard trimmed.hasPrefix("q=") || trimmed.hasPrefix("Q=") else { continue }
                // A weight that is not a number in 0...1 makes the range not acceptable.
                weight = Double(trimmed.dropFirst(2)).flatMap { (0...1).contains($0) ? $0 : nil } ?? 0
            }
            switch RequestContext.mediaType(String(first)) {
            case "text/event-stream": stream = max(stream, weight)
            case "application/json": json = max(json ?? 0, weight)
            case "application/*", "*/*": wildcard = max(wildcard ?? 0, weight)
            default: break
            }
        }
        return stream > 0 && stream >= (json ?? wildcard ?? 0)
    }

    /// Whether `response` is a page with no events (a long poll waits on, or ends with, one).
    static func isEmptyPage(_ response: HTTPResponse) -> Bool {
        response.status == 200 && response.body.starts(with: Array("{\"events\":[]".utf8))
    }
}

/// One stream's watcher: writes each change's messages to the client, in `seq` order, none
/// skipped, none twice. A change it receives in order goes straight out; anything else (the
/// retained events on connect, a change it missed or saw only in the store) it reads from the
/// store on the live queue, and the view after it.
final class EventStream: SessionWatcher {
    private struct Progress {
        /// The last event's `seq` written to the client.
        var lastSeq: Int
        /// The `eventCounter` of the last view written.
        var viewSeq: Int
        /// A catch-up is running (or scheduled); live changes wait for it.
        var catchingUp = false
        /// Something arrived during the catch-up: it runs once more.
        var again = false
        var done = false
    }

    let id: String
    private let sessions: SessionService
    private let stream: ResponseStream
    private let progress: Locked<Progress>
    /// Events read from the store at a time while catching up.
    private static let page = 250

    init(id: String, sessions: SessionService, stream: ResponseStream, lastSeq: Int, viewSeq: Int) {
        self.id = id
        self.sessions = sessions
        self.stream = stream
        self.progress = Locked(Progress(lastSeq: lastSeq, viewSeq: viewSeq))
        // Shed for lagging, by this watcher or by the pool of stream buffers: let go at once
        // (never under `progress`: the pool may shed this stream while another's write holds it).
        stream.onShed { [weak self, sessions, id] in
            guard let self else { return }
            sessions.live.remove(self, from: id)
            sessions.live.watchersDropped.add(1, ordering: .relaxed)
        }
    }

    func receive(_ change: LiveChange) {
        let behind = progress.withLock { progress -> Bool in
            guard !progress.done, change.seqs.upperBound > progress.lastSeq else { return false }
            guard !progress.catchingUp, change.seqs.lowerBound == progress.lastSeq + 1 else {
                // Out of order for this watcher: the store has it, in order.
                return Self.startCatchUp(&progress)
            }
            progress.lastSeq = change.seqs.upperBound
            progress.viewSeq = change.session.state.eventCounter
            send(change.messages, messages: change.events.count + 1, &progress)
            return false
        }
        if behind { scheduleCatchUp() }
    }

    func refresh() {
        if progress.withLock({ Self.startCatchUp(&$0) }) { scheduleCatchUp() }
    }

    func end(_ reason: EndReason) {
        progress.withLock { progress in
            guard !progress.done else { return }
            progress.done = true
            var message = JSONWriter(reservingCapacity: 64)
            message.writeEndMessage(reason: reason.rawValue)
            if stream.write(message.finish()) { sessions.live.messagesSent.add(1, ordering: .relaxed) }
            stream.finish()
        }
    }

    func ping() {
        progress.withLock { progress in
            guard !progress.done else { return }
            send(.ping, messages: 0, &progress)
        }
    }

    /// Whether a catch-up should be scheduled now (none is running; else the running one goes again).
    private static func startCatchUp(_ progress: inout Progress) -> Bool {
        guard !progress.done else { return false }
        if progress.catchingUp {
            progress.again = true
            return false
        }
        progress.catchingUp = true
        return true
    }

    private func scheduleCatchUp(after delay: Double = 0) {
        sessions.live.run(after: delay) { self.catchUp() }
    }

    /// Reads what the client has not had from the store: events a page at a time (paced by the
    /// client: while its buffer is half full, the next page waits), then the view.
    private func catchUp() {
        do throws(StoreError) {
            while !progress.withLock({ $0.done }) {
                guard let session = try sessions.store.load(id), !sessions.isExpired(session) else {
                    let gone = try sessions.store.load(id) == nil
                    sessions.live.remove(self, from: id)
                    end(gone ? .deleted : .expired)
                    return
                }
                let lastSeq = progress.withLock { $0.lastSeq }
                if session.state.eventCounter > lastSeq {
                    if stream.bufferedCount > streamBufferHalf {
                        scheduleCatchUp(after: 0.05)
                        return
                    }
                    let events = try sessions.store.events(of: id, after: lastSeq, limit: Self.page)
                    let wrote = progress.withLock { progress -> Bool in
                        let fresh = events.filter { $0.seq > progress.lastSeq }
                        guard !progress.done, let last = fresh.last else { return false }
                        var messages = JSONWriter(reservingCapacity: 200 * fresh.count)
                        messages.writeLifecycleMessages(fresh)
                        progress.lastSeq = last.seq
                        send(messages.finish(), messages: fresh.count, &progress)
                        return true
                    }
                    // Nothing newer retained (trimmed away, or a counter ahead of its log): the view says where it is.
                    if !wrote { progress.withLock { $0.lastSeq = max($0.lastSeq, session.state.eventCounter) } }
                    continue
                }
                let finished = progress.withLock { progress -> Bool in
                    guard !progress.done else { return true }
                    if progress.viewSeq < session.state.eventCounter, progress.lastSeq == session.state.eventCounter {
                        var message = JSONWriter(reservingCapacity: 1024)
                        message.writeViewMessage(sessions.view(of: session))
                        progress.viewSeq = session.state.eventCounter
                        send(message.finish(), messages: 1, &progress)
                    }
                    if progress.again {
                        progress.again = false
                        return false
                    }
                    progress.catchingUp = false
                    return true
                }
                if finished { return }
            }
        } catch {
            // The store cannot be read now: try again shortly (the client keeps its place).
            scheduleCatchUp(after: 1)
        }
    }

    private var streamBufferHalf: Int { stream.bufferLimit / 2 }

    /// The `end` message of a client dropped for not keeping up: its stream's farewell.
    static let lagging: [UInt8] = {
        var message = JSONWriter(reservingCapacity: 64)
        message.writeEndMessage(reason: EndReason.lagging.rawValue)
        return message.finish()
    }()

    /// Writes to the client, or drops a client that cannot keep up: its stream is shed (what it
    /// has not started reading is freed, then `end` with `lagging`; the stream's shed handler lets
    /// the watcher go), and it resumes with `Last-Event-ID`.
    private func send(_ bytes: [UInt8], messages: Int, _ progress: inout Progress) {
        if stream.bufferedCount + bytes.count > stream.bufferLimit - Self.endRoom {
            progress.done = true
            if !stream.shed(with: Self.lagging) { sessions.live.remove(self, from: id) }
            return
        }
        if stream.write(bytes) {
            sessions.live.messagesSent.add(messages, ordering: .relaxed)
        } else {
            progress.done = true
            sessions.live.remove(self, from: id)
        }
    }

    /// Buffer room kept for the `end` message.
    private static let endRoom = 128
}

/// A long poll: answers the first page with an event after `after`, or an empty page after the
/// wait; deleted or expired sessions answer as the plain route does (the page is asked again).
final class LongPoll: SessionWatcher {
    private let id: String
    private let sessions: SessionService
    private let answer: DeferredResponse
    private let page: @Sendable () throws(ServiceError) -> HTTPResponse
    private let isEmpty: @Sendable (HTTPResponse) -> Bool

    private init(
        id: String, sessions: SessionService, page: @escaping @Sendable () throws(ServiceError) -> HTTPResponse,
        isEmpty: @escaping @Sendable (HTTPResponse) -> Bool
    ) {
        self.id = id
        self.sessions = sessions
        self.answer = DeferredResponse()
        self.page = page
        self.isEmpty = isEmpty
    }

    /// Starts waiting, as a watcher of the session (within its budgets: see
    /// ``EventRoutes/add(_:to:in:limit:)``); a client that hangs up lets its slot go at once.
    /// - Parameters:
    ///   - id: the session watched, or ``SessionService/feedWatchKey`` with `limit` for the feed.
    ///   - isEmpty: whether a page is one to wait on (an event page with no events by default).
    static func start(
        _ id: String, sessions: SessionService, seconds: Int, limit: Int? = nil,
        isEmpty: @escaping @Sendable (HTTPResponse) -> Bool = EventRoutes.isEmptyPage,
        page: @escaping @Sendable () throws(ServiceError) -> HTTPResponse
    ) throws(APIError) -> HTTPResponse {
        let poll = LongPoll(id: id, sessions: sessions, page: page, isEmpty: isEmpty)
        try EventRoutes.add(poll, to: id, in: sessions.live, limit: limit)
        poll.answer.onHangUp { [sessions] in sessions.live.remove(poll, from: id) }
        // A change applied between the first page and the line above: looked for once more.
        poll.refresh()
        // Weakly: a poll answered or hung up early is freed now, not when its wait would have ended
        // (a client opening and dropping long polls fast would otherwise pile them up for a minute).
        // While it waits, its session's watchers hold it.
        sessions.live.queue.asyncAfter(deadline: .now() + .seconds(seconds)) { [weak poll] in poll?.give(final: true) }
        return HTTPResponse(deferred: poll.answer)
    }

    func receive(_ change: LiveChange) { refresh() }

    func refresh() {
        sessions.live.queue.async { self.give(final: false) }
    }

    /// The session ended: answered as the page would be now. The daemon stops: answered at once,
    /// 503 `shutting_down`, whatever the store (which is about to close).
    func end(_ reason: EndReason) {
        if reason == .shutdown {
            answer.resolve(EventRoutes.shuttingDown.response)
            return
        }
        sessions.live.queue.async { self.give(final: true) }
    }

    func ping() {}

    /// Answers with the page if it has events (or, when `final`, whatever it is).
    private func give(final: Bool) {
        guard !answer.isResolved else { return }
        let response: HTTPResponse
        do {
            response = try page()
        } catch {
            response = APIError(answering: error).response
        }
        guard final || !isEmpty(response) else { return }
        if answer.resolve(response) { sessions.live.remove(self, from: id) }
    }
}
