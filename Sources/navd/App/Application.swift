import Logging
import NavCore
import NavHTTP
import NavJSON
import NavServer
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The daemon put together: graphs, sessions, routes. Handles every HTTP request.
///
/// Built by ``Application/init(configuration:store:logger:)`` so tests can call it
/// without a socket, exactly as the server does.
final class Application: HTTPHandler {
    struct Configuration: Sendable {
        var adminToken: String?
        /// When set, creating a session needs it (or the admin token): `--backend-token`.
        var backendToken: String?
        var sessions = SessionService.Configuration()
        var limits = Limits()
        /// Origins whose pages may call the API (`--cors-origin`; `*` for any).
        var corsOrigins: [String] = []
    }

    let graphs: GraphRegistry
    let sessions: SessionService
    let metrics = Metrics()
    let ready: Readiness
    private let responder: Responder
    /// What each route of `responder` leads to, by the route's index.
    private let handlers: [RouteHandler]
    private let logger: Logger
    /// The sink `logger` writes to, if request lines may go there directly (see `Daemon.accessLog(for:)`).
    private let accessLog: LogSink?
    private let requestCounter = Atomic<UInt64>(0)
    /// When a store outage was last logged (monotonic ms): one line a second, not one a request.
    private let storeOutageLogged = Atomic<Int64>(0)
    private let requestPrefix: String
    private let cors: CORSPolicy

    init(
        graphs: GraphRegistry? = nil, configuration: Configuration, store: any SessionStore, logger: Logger,
        accessLog: LogSink? = nil,
        now: @escaping @Sendable () -> Int64 = Clock.milliseconds
    ) {
        self.logger = logger
        self.accessLog = accessLog
        let graphs = graphs ?? GraphRegistry(limits: configuration.limits)
        // A durable store keeps the graph versions and allocates their numbers.
        if let durable = store as? any GraphStore { graphs.attach(durable) }
        self.graphs = graphs
        self.ready = Readiness(probe: { store.isAvailable() })
        let adminDigest = configuration.adminToken.map(Token.digest)
        var sessionConfiguration = configuration.sessions
        sessionConfiguration.adminToken = adminDigest
        sessionConfiguration.backendToken = configuration.backendToken.map(Token.digest)
        let sessions = SessionService(store: store, graphs: graphs, configuration: sessionConfiguration, now: now)
        self.sessions = sessions
        var random = SystemRandomNumberGenerator()
        self.requestPrefix = String(random.next() as UInt32, radix: 36) + "-"
        self.cors = CORSPolicy(origins: configuration.corsOrigins)
        var routes = Routes()
        SessionRoutes(sessions: sessions, adminToken: adminDigest)
            .register(in: &routes)
        EventRoutes(sessions: sessions).register(in: &routes)
        GraphRoutes(graphs: graphs, sessions: sessions, adminToken: adminDigest).register(in: &routes)
        OperationsRoutes(metrics: metrics, sessions: sessions, ready: ready).register(in: &routes)
        WebClientRoutes().register(in: &routes)
        self.responder = routes.router.freeze()
        self.handlers = routes.handlers
        metrics.name(routes: responder.templates.map(\.template))
    }

    var routeTemplates: [(method: String, template: String)] { responder.templates }

    func handle(_ request: consuming HTTPRequest) -> HTTPResponse {
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
            metrics.recordRequest(method: method, route: nil, status: response.status, seconds: Clock.seconds() - started)
            return response
        }
        switch responder.match(method: method, path: request.path) {
        case .found(let index, let template, let parameters):
            route = template
            routeIndex = index
            // The request moves into the context: a copy would retain (and later release) each
            // of its strings, headers and body.
            let context = RequestContext(request: request, parameters: parameters, requestID: requestID)
            do {
                response = try handlers[index](context)
            } catch {
                response = failure(APIError(answering: error), route: template, requestID: requestID)
            }
        case .methodNotAllowed(let template, let allowed):
            route = template
            var error = APIError(.methodNotAllowed, "\(method) is not allowed on \(template); use \(allowed.joined(separator: ", "))")
            error.headers = [("Allow", allowed.joined(separator: ", "))]
            response = error.response
        case .notFound:
            response = APIError(.notFound, "no route \(method) \(request.path.prefix(200))").response
        }
        if let deferred = response.deferred {
            // A long poll: counted and logged with the answer it gives, when it gives it.
            deferred.addHeaders([("X-Request-Id", requestID)] + cors.headers(for: origin))
            deferred.onResolve { [self, route, routeIndex] answer in
                let seconds = Clock.seconds() - started
                metrics.recordRequest(method: method, route: routeIndex, status: answer.status, seconds: seconds)
                if logger.logLevel <= .info {
                    logRequest(method: method, route: route, status: answer.status, seconds: seconds, requestID: requestID)
                }
            }
            return response
        }
        response.headers.append(("X-Request-Id", requestID))
        if origin != nil { response.headers += cors.headers(for: origin) }
        let seconds = Clock.seconds() - started
        metrics.recordRequest(method: method, route: routeIndex, status: response.status, seconds: seconds)
        if method != "GET", method != "HEAD", route.hasPrefix("/v1/sessions/{id}") {
            metrics.recordTransition(Self.outcome(response))
        }
        if logger.logLevel <= .info {
            logRequest(method: method, route: route, status: response.status, seconds: seconds, requestID: requestID)
        }
        return response
    }

    /// The request log line, `request method=GET ms=0.3 request_id=… route=/v1/sessions/{id}
    /// status=200`: the message carries the fields (keys sorted, as metadata would print), so a
    /// request costs no metadata dictionary. With an ``accessLog`` sink the line is written
    /// straight into its buffer, as ``LineLogHandler`` would write it, without swift-log's
    /// event, message string and handler copies (5,400 → 2,300 instructions a request); without
    /// one it goes through `logger`.
    private func logRequest(method: String, route: String, status: Int, seconds: Double, requestID: String) {
        if let accessLog {
            accessLog.writeLine(level: .info, label: logger.label) { line in
                Self.appendRequestFields(method: method, route: route, status: status, seconds: seconds, requestID: requestID, to: &line)
            }
        } else {
            var line: [UInt8] = []
            line.reserveCapacity(96 + route.utf8.count + requestID.utf8.count)
            Self.appendRequestFields(method: method, route: route, status: status, seconds: seconds, requestID: requestID, to: &line)
            logger.info(Logger.Message(stringLiteral: String(decoding: line, as: UTF8.self)))
        }
    }

    static func appendRequestFields(method: String, route: String, status: Int, seconds: Double, requestID: String, to line: inout [UInt8]) {
        line.appendLiteral("request method=")
        // The client chose the method: escaped and cut short like any client text in a log line.
        line.appendEscaped(method, limit: Self.methodLogLimit)
        line.appendLiteral(" ms=")
        let tenths = Int((max(0, seconds) * 10_000).rounded())
        line.appendDecimal(tenths / 10)
        line.append(UInt8(ascii: "."))
        line.appendDecimal(tenths % 10)
        line.appendLiteral(" request_id=")
        // A client's X-Request-Id is printable ASCII already; a backslash in it is still escaped,
        // so that it cannot pass for one of the log's own escapes.
        line.appendEscaped(requestID, limit: 128)
        line.appendLiteral(" route=")
        line.appendUTF8(route)
        line.appendLiteral(" status=")
        line.appendDecimal(status)
    }

    /// Bytes of a request's method written to its log line (methods are short words).
    static let methodLogLimit = 32

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        var response = APIError(.payloadTooLarge, "the body is larger than \(limit) bytes").response
        response.headers.append(("Connection", "close"))
        response.headers.append(("X-Request-Id", requestID(for: request)))
        metrics.recordRequest(method: request.method, route: nil, status: 413, seconds: 0)
        return response
    }

    func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        let started = Clock.seconds()
        let requestID = requestID(for: request)
        var response = APIError(.invalidRequest, reason).response
        response.headers.append(("Connection", "close"))
        response.headers.append(("X-Request-Id", requestID))
        let seconds = Clock.seconds() - started
        metrics.recordRequest(method: request.method, route: nil, status: response.status, seconds: seconds)
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
            logger.error("internal error", metadata: ["route": "\(route)", "request_id": "\(requestID)", "cause": "\(error.logMessage ?? error.detail)"])
            return APIError(.internal, "an internal error occurred; request id \(requestID)").response
        }
        if error.code == .storeUnavailable {
            let now = Int64(Clock.seconds() * 1000)
            let last = storeOutageLogged.load(ordering: .relaxed)
            if now - last >= 1000, storeOutageLogged.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged {
                logger.warning("store unavailable", metadata: ["route": "\(route)", "request_id": "\(requestID)", "cause": "\(error.logMessage ?? error.detail)"])
            }
        }
        return error.response
    }

    private static func outcome(_ response: HTTPResponse) -> String {
        guard response.status < 300 else {
            return "refused"
        }
        return "answered"
    }
}
