import Logging
import NavCore
import NavHTTP
import NavJSON
import NavSessions
import NavWebhooks
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon put together: graphs, sessions, routes. Handles every HTTP request.
///
/// Built by ``Application/init(configuration:store:logger:)`` so tests can call it
/// without a socket, exactly as the server does.
package final class Application: HTTPHandler {
    package struct Configuration: Sendable {
        package var adminToken: String?
        /// When set, creating a session needs it (or the admin token): `--backend-token`.
        package var backendToken: String?
        package var sessions = SessionService.Configuration()
        package var limits = Limits.defaults
        /// Origins whose pages may call the API (`--cors-origin`; `*` for any).
        package var corsOrigins: [String] = []
        /// The most watchers (streams, long polls) of the daemon: half of its connections.
        package var maxWatchers = 4096
        /// The most watchers of one session: `--max-watchers-per-session`.
        package var maxWatchersPerSession = 16
        /// The most bytes buffered for all streams together: `--max-watcher-buffer`.
        package var maxWatcherBuffer = 64 << 20
        /// Heavy graph jobs at once (`--max-graph-work`): the `graph_work` budget.
        package var maxGraphWork = 1

        package init(
            adminToken: String? = nil, backendToken: String? = nil, sessions: SessionService.Configuration = SessionService.Configuration(),
            limits: Limits = .defaults, corsOrigins: [String] = [], maxWatchers: Int = 4096, maxWatchersPerSession: Int = 16,
            maxWatcherBuffer: Int = 64 << 20, maxGraphWork: Int = 1
        ) {
            self.adminToken = adminToken
            self.backendToken = backendToken
            self.sessions = sessions
            self.limits = limits
            self.corsOrigins = corsOrigins
            self.maxWatchers = maxWatchers
            self.maxWatchersPerSession = maxWatchersPerSession
            self.maxWatcherBuffer = maxWatcherBuffer
            self.maxGraphWork = maxGraphWork
        }
    }

    package let graphs: GraphRegistry
    package let sessions: SessionService
    let metrics = Metrics()
    /// The daemon-wide budgets of what clients can make navd hold, shown at `/metrics`.
    package let budgets: Budgets
    /// The answers kept under an `Idempotency-Key` in the daemon's memory, on a store that keeps
    /// none (nil on one that does: they are held there only).
    let answersInMemory: IdempotencyCache?
    package let ready: Readiness
    /// The feed's webhook endpoints (none until the daemon starts them): `GET /v1/webhooks`, `/metrics`.
    package let webhooks = Webhooks()
    private let responder: Responder
    /// What each route of `responder` leads to, by the route's index.
    private let handlers: [RouteHandler]
    /// Each route's metrics slot (its template's), by the route's index.
    private let metricSlots: [Int]
    /// Whether each route, by index, is a session intent (counted in `navd_intents_total`).
    private let intentRoutes: [Bool]
    private let logger: Logger
    /// The sink `logger` writes to, if request lines may go there directly (see `Daemon.accessLog(for:)`).
    private let accessLog: LogSink?
    private let requestCounter = Atomic<UInt64>(0)
    /// When a store outage was last logged (monotonic ms): one line a second, not one a request.
    private let storeOutageLogged = Atomic<Int64>(0)
    private let requestPrefix: String
    private let cors: CORSPolicy

    package init(
        graphs: GraphRegistry? = nil, configuration: Configuration, store: any SessionStore, logger: Logger,
        accessLog: LogSink? = nil, budgets: Budgets = Budgets(),
        now: @escaping @Sendable () -> Int64 = Clock.milliseconds
    ) {
        self.logger = logger
        self.accessLog = accessLog
        self.budgets = budgets
        let graphs = graphs ?? GraphRegistry(limits: configuration.limits)
        // A durable store keeps the graph versions and allocates their numbers.
        if let durable = store as? any GraphStore { graphs.attach(durable) }
        self.graphs = graphs
        self.ready = Readiness(probe: { store.isAvailable() })
        let adminDigest = configuration.adminToken.map(Token.digest)
        var sessionConfiguration = configuration.sessions
        sessionConfiguration.adminToken = adminDigest
        sessionConfiguration.backendToken = configuration.backendToken.map(Token.digest)
        sessionConfiguration.maxWatchersPerSession = configuration.maxWatchersPerSession
        sessionConfiguration.watcherBudget = budgets.make("watchers", limit: configuration.maxWatchers)
        let buffers = StreamBuffers(budget: budgets.make("watcher_buffer_bytes", limit: configuration.maxWatcherBuffer))
        let answerBudget = budgets.make("idempotency_bytes", limit: sessionConfiguration.maxIdempotencyBytes)
        sessionConfiguration.sessionBudget = budgets.make("session_bytes", limit: sessionConfiguration.maxSessionBytes)
        // Diagrams, uploads and long replays of a session's past share the heavy work's slots.
        let graphWork = Budget(resource: "graph_work", limit: configuration.maxGraphWork)
        sessionConfiguration.heavyWork = graphWork
        let sessions = SessionService(
            store: store, graphs: graphs, configuration: sessionConfiguration, answerBudget: answerBudget, now: now)
        self.sessions = sessions
        var random = SystemRandomNumberGenerator()
        self.requestPrefix = String(random.next() as UInt32, radix: 36) + "-"
        self.cors = CORSPolicy(origins: configuration.corsOrigins)
        var routes = Routes()
        let sessionRoutes = SessionRoutes(sessions: sessions, adminToken: adminDigest)
        sessionRoutes.register(in: &routes)
        answersInMemory = sessionRoutes.idempotency
        EventRoutes(sessions: sessions, buffers: buffers).register(in: &routes)
        FeedRoutes(sessions: sessions, adminToken: adminDigest, buffers: buffers).register(in: &routes)
        // Listed with the others at /metrics; the registry's memory budget too.
        budgets.add(graphs.memory)
        budgets.add(graphWork)
        GraphRoutes(graphs: graphs, sessions: sessions, adminToken: adminDigest, work: graphWork).register(in: &routes)
        WebhookRoutes(webhooks: webhooks, adminToken: adminDigest).register(in: &routes)
        TrafficRoutes(graphs: graphs, sessions: sessions, adminToken: adminDigest).register(in: &routes)
        OperationsRoutes(metrics: metrics, sessions: sessions, ready: ready, budgets: budgets, webhooks: webhooks).register(in: &routes)
        WebClientRoutes().register(in: &routes)
        self.responder = routes.router.freeze()
        self.handlers = routes.handlers
        metricSlots = metrics.name(routes: responder.templates.map(\.template))
        intentRoutes = responder.templates.map(Self.isIntent)
    }

    var routeTemplates: [(method: String, template: String)] { responder.templates }

    package func handle(_ request: consuming HTTPRequest) -> HTTPResponse {
        let started = Clock.seconds()
        let requestID = requestID(for: request)
        let method = request.method
        var route = "unmatched"
        var routeIndex: Int?
        var response: HTTPResponse
        let origin = cors.isEnabled ? request.headers["origin"] : nil
        if method == "OPTIONS", let origin, let requested = request.headers["access-control-request-method"],
            case let methods = responder.methods(path: request.path), methods.contains(requested),
            let preflight = cors.preflight(origin: origin, methods: methods)
        {
            response = preflight
            response.headers.append(("X-Request-Id", requestID))
            var slot = 0
            if case .methodNotAllowed(let index, _, _) = responder.match(method: method, path: request.path) { slot = metricSlots[index] }
            metrics.recordRequest(method: method, slot: slot, status: response.status, seconds: Clock.seconds() - started)
            return response
        }
        switch responder.match(method: method, path: request.path) {
        case .found(let index, let template, let parameters):
            route = template
            routeIndex = index
            if let name = request.repeatedQuery {
                // Which of its values a proxy or a log read is not known: none is picked here.
                let name = String(name.prefix(100))
                let problem = APIError(.invalidRequest, "query parameter '\(name)' is given more than once", param: name)
                if intentRoutes[index] { metrics.recordIntent(Self.intentResult(problem.code)) }
                response = failure(problem, route: template, requestID: requestID)
                break
            }
            // The request moves into the context: a copy would retain (and later release) each
            // of its strings, headers and body.
            let context = RequestContext(request: request, parameters: parameters, requestID: requestID)
            do {
                response = try handlers[index](context)
                if intentRoutes[index] {
                    metrics.recordIntent(response.status < 300 ? .applied : Self.intentResult(status: response.status))
                }
            } catch {
                let problem = APIError(answering: error)
                if intentRoutes[index] { metrics.recordIntent(Self.intentResult(problem.code)) }
                response = failure(problem, route: template, requestID: requestID)
            }
        case .methodNotAllowed(let index, let template, let allowed):
            // Counted under its route: the route exists, the method is wrong.
            route = template
            routeIndex = index
            var error = APIError(.methodNotAllowed, "\(method) is not allowed on \(template); use \(allowed.joined(separator: ", "))")
            error.headers = [("Allow", allowed.joined(separator: ", "))]
            response = error.response
        case .notFound:
            response = APIError(.notFound, "no route \(method) \(request.path.prefix(200))").response
        }
        if let deferred = response.deferred {
            // A long poll: counted and logged with the answer it gives, when it gives it.
            deferred.addHeaders([("X-Request-Id", requestID)] + cors.headers(for: origin))
            let slot = routeIndex.map { metricSlots[$0] } ?? 0
            deferred.onResolve { [self, route] answer in
                let seconds = Clock.seconds() - started
                metrics.recordRequest(method: method, slot: slot, status: answer.status, seconds: seconds)
                if logger.logLevel <= .info {
                    logRequest(method: method, route: route, status: answer.status, seconds: seconds, requestID: requestID)
                }
            }
            return response
        }
        response.headers.append(("X-Request-Id", requestID))
        if cors.isEnabled { response.headers += cors.headers(for: origin) }
        let seconds = Clock.seconds() - started
        metrics.recordRequest(method: method, slot: routeIndex.map { metricSlots[$0] } ?? 0, status: response.status, seconds: seconds)
        if logger.logLevel <= .info {
            logRequest(method: method, route: route, status: response.status, seconds: seconds, requestID: requestID)
        }
        return response
    }

    /// The request log record, `msg=request method=GET ms=0.3 request_id=… route=/v1/sessions/{id}
    /// status=200`. With an ``accessLog`` sink the line is written straight into its buffer, as
    /// ``LineLogHandler`` would write it, without swift-log's event, message string, metadata and
    /// handler copies (5,400 → 2,300 instructions a request); without one (another swift-log
    /// backend, or metadata on the logger) it goes through `logger` with the fields as metadata.
    private func logRequest(method: String, route: String, status: Int, seconds: Double, requestID: String) {
        if let accessLog {
            accessLog.writeLine(level: .info, label: logger.label, message: "request") { line in
                Self.appendRequestFields(method: method, route: route, status: status, seconds: seconds, requestID: requestID, to: &line)
            }
        } else {
            logger.info(
                "request",
                metadata: [
                    "method": "\(method.prefix(Self.methodLogLimit))", "ms": "\(Double(Self.tenths(seconds)) / 10)",
                    "request_id": "\(requestID)",
                    "route": "\(route)", "status": "\(status)"
                ])
        }
    }

    static func appendRequestFields(method: String, route: String, status: Int, seconds: Double, requestID: String, to line: inout LogLine)
    {
        // The client chose the method: escaped and cut short like any client text in a log line.
        line.field("method", method, limit: Self.methodLogLimit)
        line.field("ms", tenths: tenths(seconds))
        // A client's X-Request-Id is printable ASCII already (a quote or backslash in it is escaped).
        line.field("request_id", requestID, limit: 128)
        line.field("route", route)
        line.field("status", number: status)
    }

    /// Milliseconds in tenths: 0.00034 s → 3 (0.3 ms).
    private static func tenths(_ seconds: Double) -> Int {
        let tenths = (max(0, seconds) * 10_000).rounded()
        return tenths < Double(Int.max) ? Int(tenths) : Int.max
    }

    /// Bytes of a request's method written to its log line (methods are short words).
    static let methodLogLimit = 32

    package func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        var response = APIError(.payloadTooLarge, "the body is larger than \(limit) bytes").response
        response.headers.append(("Connection", "close"))
        response.headers.append(("X-Request-Id", requestID(for: request)))
        metrics.recordRequest(method: request.method, slot: 0, status: 413, seconds: 0)
        return response
    }

    /// A confirmation's token carries the intent it confirms, as base64 (docs/design.md, "Leave
    /// confirmation"): an intent as large as `--max-body` allows makes a token a third larger,
    /// so `POST …/confirm` takes half as much again, and a kilobyte for the rest of the token.
    package func bodyLimit(for request: HTTPRequest, configured: Int) -> Int {
        guard request.method == "POST", request.path.hasPrefix("/v1/sessions/"), request.path.hasSuffix("/confirm") else {
            return configured
        }
        return configured + configured / 2 + 1024
    }

    package func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        refused(request, APIError(.malformedRequest, reason))
    }

    package func unsupportedTransferCoding(_ request: HTTPRequest, coding: String) -> HTTPResponse {
        refused(
            request,
            APIError(
                .unsupportedTransferCoding,
                "the transfer coding \"\(coding)\" is not supported; send the body with Content-Length or Transfer-Encoding: chunked"))
    }

    /// The answer to a request the HTTP server refused before routing it (its head is malformed
    /// or its framing ambiguous): `error`, closing the connection, counted and logged as a request.
    private func refused(_ request: HTTPRequest, _ error: APIError) -> HTTPResponse {
        let started = Clock.seconds()
        let requestID = requestID(for: request)
        var response = error.response
        response.headers.append(("Connection", "close"))
        response.headers.append(("X-Request-Id", requestID))
        let seconds = Clock.seconds() - started
        metrics.recordRequest(method: request.method, slot: 0, status: response.status, seconds: seconds)
        if logger.logLevel <= .info {
            logRequest(method: request.method, route: "malformed", status: response.status, seconds: seconds, requestID: requestID)
        }
        return response
    }

    /// The client's `X-Request-Id` when it sent a sensible one, else a new id.
    private func requestID(for request: HTTPRequest) -> String {
        if let sent = request.headers["x-request-id"], !sent.isEmpty, sent.utf8.count <= 128,
            sent.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        {
            return sent
        }
        return String(requestPrefix, decimal: requestCounter.add(1, ordering: .relaxed).newValue)
    }

    private func failure(_ error: APIError, route: String, requestID: String) -> HTTPResponse {
        if error.code == .internal {
            logger.error(
                "internal error",
                metadata: ["route": "\(route)", "request_id": "\(requestID)", "cause": "\(error.logMessage ?? error.detail)"])
            return APIError(.internal, "an internal error occurred; request id \(requestID)").response
        }
        if error.code == .storeUnavailable {
            let now = Int64(Clock.seconds() * 1000)
            let last = storeOutageLogged.load(ordering: .relaxed)
            if now - last >= 1000, storeOutageLogged.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged {
                logger.warning(
                    "store unavailable",
                    metadata: ["route": "\(route)", "request_id": "\(requestID)", "cause": "\(error.logMessage ?? error.detail)"])
            }
        }
        return error.response
    }

    /// A session intent: a change asked of one session (navigate, transitions, exit, back, params,
    /// state, …), not a read, a deletion or a preflight.
    static func isIntent(_ route: (method: String, template: String)) -> Bool {
        ["POST", "PUT", "PATCH"].contains(route.method) && route.template.hasPrefix("/v1/sessions/{id}/")
    }

    /// What an intent's problem says of it: navigation refused it, or it never got that far.
    static func intentResult(_ code: APIError.Code) -> Metrics.IntentResult {
        switch code {
        case .transitionRefused, .notRemovable, .stackUnderflow, .versionConflict, .unknownScene, .unknownTransition, .unknownGraph,
            .invalidParams, .invalidPath, .stackTooDeep, .unknownCommand, .commandRefused, .confirmationRequired, .upgradeRefused:
            .refused
        case .malformedJSON, .invalidRequest, .payloadTooLarge, .unsupportedMediaType, .idempotencyKeyReused, .methodNotAllowed,
            .invalidGraph,
            .malformedRequest, .unsupportedTransferCoding:
            .invalid
        case .unauthorized, .forbidden: .unauthorized
        case .sessionNotFound, .notFound: .notFound
        case .tooManySessions, .storeUnavailable, .tooManyRequests, .overCapacity, .shuttingDown: .unavailable
        case .graphInUse, .cursorExpired, .versionExpired: .refused
        case .internal: .failed
        }
    }

    /// The same for an error answer a handler returned rather than threw.
    static func intentResult(status: Int) -> Metrics.IntentResult {
        switch status {
        case 401: .unauthorized
        case 404: .notFound
        case 400, 405, 413, 415, 501: .invalid
        case 429, 503: .unavailable
        case 500...: .failed
        default: .refused
        }
    }
}

/// A ``Budget`` counts the bytes of NavHTTP's stream buffers (``StreamBuffers``) as it counts
/// everything else, so that they show at `/metrics` with the other budgets.
extension Budget: ByteBudget {}
