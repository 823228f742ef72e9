import AsyncHTTPClient
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A client of one navd: typed calls for its operations, problem documents thrown as
/// ``NavClientError/problem(_:)``, and a session's event stream as an `AsyncSequence` that
/// resumes after a dropped connection (``NavSession/watch(after:options:)``).
///
/// ```swift
/// let navd = NavClient(serverURL: URL(string: "http://127.0.0.1:8080")!)
/// let created = try await navd.createSession(context: ["locale": "ja"])
/// let session = navd.session(created)
/// let moved = try await session.navigate("list_news/show_news(id=44)")
/// print(moved.path, moved.events.map(\._type))
/// ```
///
/// Calls go through ``api``, the client swift-openapi-generator writes from openapi.yaml (every
/// operation, the web client's files too), on AsyncHTTPClient. A `NavClient` is a value: copies
/// share the HTTP client and its connection pool.
public struct NavClient: Sendable {
    public struct Configuration: Sendable {
        /// The AsyncHTTPClient to send with; its connection pool is shared by every copy.
        public var httpClient: HTTPClient
        /// The longest wait for an answer to begin: above 60 s, the longest long poll
        /// (``NavSession/events(after:limit:wait:)``). An event stream's body is not bounded by it.
        public var timeout: Duration

        public init(httpClient: HTTPClient = Configuration.sharedHTTPClient, timeout: Duration = .seconds(90)) {
            self.httpClient = httpClient
            self.timeout = timeout
        }

        /// The HTTP client NavClients share unless given another: AsyncHTTPClient's own shared
        /// client but for its connect timeout, 5 s rather than 90. AsyncHTTPClient retries a
        /// refused connection until that timeout (swift-server/async-http-client#743), so with
        /// 90 s a call to a daemon that is down would take 90 s to fail. Never shut down, as
        /// `HTTPClient.shared` is not.
        public static let sharedHTTPClient = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: HTTPClient.Configuration(timeout: .init(connect: .seconds(5)))
        )
    }

    /// navd's address, e.g. `http://127.0.0.1:8080`.
    public let serverURL: URL
    /// The bearer token every call sends, if any: a session's token, its watch token, the admin
    /// token or the backend token.
    public let token: String?
    public let configuration: Configuration
    /// The generated client: one method per operation of openapi.yaml. Problem documents come out
    /// of it as thrown errors too (a `ClientError` whose `underlyingError` is a ``NavProblem``).
    public let api: Client

    public init(serverURL: URL, token: String? = nil, configuration: Configuration = .init()) {
        self.serverURL = serverURL
        self.token = token
        self.configuration = configuration
        let nanoseconds =
            configuration.timeout.components.seconds * 1_000_000_000
            + configuration.timeout.components.attoseconds / 1_000_000_000
        let transport = AsyncHTTPClientTransport(
            configuration: .init(client: configuration.httpClient, timeout: .nanoseconds(nanoseconds))
        )
        var middlewares: [any ClientMiddleware] = [ProblemMiddleware(), HeaderFieldMiddleware()]
        if let token { middlewares.append(AuthorizationMiddleware(token: token)) }
        self.api = Client(serverURL: serverURL, transport: transport, middlewares: middlewares)
    }

    /// The same daemon with another token (nil: none).
    public func authorized(by token: String?) -> NavClient {
        NavClient(serverURL: serverURL, token: token, configuration: configuration)
    }

    /// A session, acted on with this client's token (a session token, or the admin token).
    public func session(id: String) -> NavSession {
        NavSession(id: id, client: self)
    }

    /// A session, acted on with `token`.
    public func session(id: String, token: String) -> NavSession {
        NavSession(id: id, client: authorized(by: token))
    }

    /// The session just created, acted on with its token.
    public func session(_ created: CreatedSession) -> NavSession {
        session(id: created.id, token: created.token)
    }

    /// The session just created, read with its watch token: its view, events and stream, never
    /// a change (navd refuses those with 401).
    public func watcher(_ created: CreatedSession) -> NavSession {
        session(id: created.id, token: created.watchToken)
    }

    // MARK: Sessions

    /// `POST /v1/sessions`: a new session on `graph` (the daemon's default graph when nil) at
    /// `start` (the graph's start path when nil), with a context that `requires` guards read.
    /// With `--backend-token`, the client must carry that token (or the admin token).
    public func createSession(
        graph: String? = nil, start: String? = nil, context: [String: JSONValue]? = nil, idempotencyKey: String? = nil
    ) async throws(NavClientError) -> CreatedSession {
        try await perform("createSession") {
            let output = try await api.createSession(
                headers: .init(idempotencyKey: idempotencyKey),
                body: .json(.init(graph: graph, start: start, context: context?.container))
            )
            guard case .created(let created) = output else { throw NavClientError.unexpected(output, operation: "createSession") }
            return try created.body.json
        }
    }

    /// `GET /v1/sessions` (admin): every session.
    public func sessions() async throws(NavClientError) -> [SessionSummary] {
        try await perform("listSessions") {
            let output = try await api.listSessions()
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "listSessions") }
            return try ok.body.json.sessions
        }
    }

    // MARK: Graphs

    /// `GET /v1/graphs`: the latest version of every graph.
    public func graphs() async throws(NavClientError) -> [GraphSummary] {
        try await perform("listGraphs") {
            let output = try await api.listGraphs()
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "listGraphs") }
            return try ok.body.json.graphs
        }
    }

    /// `GET /v1/graphs/{name}`: the latest version, or `version`.
    public func graph(_ name: String, version: Int? = nil) async throws(NavClientError) -> GraphDetail {
        try await perform("getGraph") {
            let output = try await api.getGraph(path: .init(name: name), query: .init(version: version))
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "getGraph") }
            return try ok.body.json
        }
    }

    /// `PUT /v1/graphs/{name}` (admin): a new version of a graph.
    public func putGraph(_ document: GraphDocument, name: String) async throws(NavClientError) -> GraphUploadResult {
        try await perform("putGraph") {
            let output = try await api.putGraph(path: .init(name: name), body: .json(document))
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "putGraph") }
            return try ok.body.json
        }
    }

    /// `PUT /v1/graphs/{name}` (admin) with a YAML document.
    public func putGraph(yaml: String, name: String) async throws(NavClientError) -> GraphUploadResult {
        try await perform("putGraph") {
            let output = try await api.putGraph(path: .init(name: name), body: .yaml(HTTPBody(yaml)))
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "putGraph") }
            return try ok.body.json
        }
    }

    /// `DELETE /v1/graphs/{name}?version=N` (admin): removes a version no session runs on, and
    /// frees its memory. The newest version, or one a session runs on, is refused with
    /// `graph_in_use`.
    public func deleteGraph(_ name: String, version: Int) async throws(NavClientError) {
        try await perform("deleteGraphVersion") {
            let output = try await api.deleteGraphVersion(path: .init(name: name), query: .init(version: version))
            guard case .noContent = output else { throw NavClientError.unexpected(output, operation: "deleteGraphVersion") }
        }
    }

    /// `POST /v1/graphs/{name}/upgrade` (admin): every session of the graph moved to the newest
    /// (or the given) version where its stage fits.
    public func upgradeSessions(ofGraph name: String, to version: Int? = nil) async throws(NavClientError) -> UpgradeReport {
        try await perform("upgradeGraphSessions") {
            let output = try await api.upgradeGraphSessions(path: .init(name: name), body: .json(.init(version: version)))
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "upgradeGraphSessions") }
            return try ok.body.json
        }
    }

    public typealias DiagramFormat = Operations.GetGraphDiagram.Input.Query.FormatPayload

    /// `GET /v1/graphs/{name}/diagram`: the graph drawn as SVG, or written as DOT or Mermaid.
    public func diagram(ofGraph name: String, format: DiagramFormat = .svg, version: Int? = nil) async throws(NavClientError) -> String {
        try await perform("getGraphDiagram") {
            let output = try await api.getGraphDiagram(path: .init(name: name), query: .init(format: format, version: version))
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "getGraphDiagram") }
            let body: HTTPBody
            switch ok.body {
            case .imageSvgXml(let svg): body = svg
            case .textVnd_graphviz(let dot): body = dot
            case .plainText(let mermaid): body = mermaid
            }
            return try await String(collecting: body, upTo: 64 << 20)
        }
    }

    // MARK: Operations

    /// `GET /healthz`: `ok` while the process serves.
    public func health() async throws(NavClientError) -> String {
        try await perform("health") {
            let output = try await api.health()
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "health") }
            return try ok.body.json.status
        }
    }

    /// `GET /readyz`: `ready`, or why not (`draining`, `store_unavailable`; a 503 answer, returned
    /// here rather than thrown, since it is the answer asked for).
    public func readiness() async throws(NavClientError) -> String {
        try await perform("ready") {
            switch try await api.ready() {
            case .ok(let ok): return try ok.body.json.status
            case .serviceUnavailable(let unavailable): return try unavailable.body.json.status
            case let output: throw NavClientError.unexpected(output, operation: "ready")
            }
        }
    }

    /// `GET /openapi.yaml`: the contract the daemon serves.
    public func openAPIDocument() async throws(NavClientError) -> String {
        try await perform("getOpenAPI") {
            let output = try await api.getOpenAPI()
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "getOpenAPI") }
            return try await String(collecting: ok.body.yaml, upTo: 16 << 20)
        }
    }
}

/// Runs one generated call, sorting whatever it throws into ``NavClientError``.
func perform<T>(_ operation: String, _ body: () async throws -> T) async throws(NavClientError) -> T {
    do {
        return try await body()
    } catch {
        throw NavClientError(error, operation: operation)
    }
}
