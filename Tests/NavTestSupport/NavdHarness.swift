import Foundation
import Testing

/// How a test's requests reach navd.
enum Transport: String, Sendable, CustomStringConvertible {
    /// The `navd` binary, spawned, over a loopback socket (``DaemonHarness``): for what needs a
    /// process — sockets and raw bytes on the wire, signals, restarts, `kill -9`, the memory of a
    /// process, several processes, the CLI.
    case process
    /// The `Application` that `navd serve` builds, called as its HTTP server calls it, in the
    /// test's own process (``InProcessHarness``): for everything else.
    case inProcess

    /// Where tests that need no process run: in process, unless `NAVD_TEST_TRANSPORT=process`
    /// sends them to the binary, to hold both transports to the same tests.
    static let preferred: Transport = {
        let chosen = ProcessInfo.processInfo.environment["NAVD_TEST_TRANSPORT"] ?? ""
        return Transport(rawValue: chosen) ?? .inProcess
    }()

    var description: String { rawValue }

    /// Starts navd with `options` on this transport.
    func start(_ options: HarnessOptions) throws -> any NavdHarness {
        switch self {
        case .process: try DaemonHarness(options)
        case .inProcess: try InProcessHarness(options)
        }
    }
}

/// How to start navd: the arguments of `navd serve`, whichever the transport.
struct HarnessOptions: Sendable {
    /// Graph files, relative to the package root.
    var graphs: [String] = ["Examples/news.json"]
    var store: String = "memory"
    /// More `navd serve` options, e.g. `["--admin-token", "…"]`.
    var arguments: [String] = []
}

/// Starts navd for a test that needs no process, on ``Transport/preferred`` (in process).
func startNavd(
    graphs: [String] = ["Examples/news.json"], store: String = "memory", arguments: [String] = [],
    transport: Transport = .preferred
) throws -> any NavdHarness {
    try transport.start(HarnessOptions(graphs: graphs, store: store, arguments: arguments))
}

/// One navd under test and the client API the tests use on it, whatever the transport: a
/// request goes in as a client sends it, the answer comes back as a client reads it
/// (``HTTPMessage``), and every answer goes through the ``OpenAPIValidator`` — a violation is
/// recorded as an `Issue` at the caller's line.
protocol NavdHarness: AnyObject, Sendable {
    var transport: Transport { get }
    /// The spec the answers are held to; nil when openapi.yaml did not load (every check then
    /// records that).
    var validator: OpenAPIValidator? { get }
    /// What navd logged.
    var log: String { get }

    /// Sends one request — `fields` as given, after `Host` and `Connection: close` — and reads
    /// its answer, unvalidated.
    func exchange(_ method: String, _ target: String, fields: [(name: String, value: String)], body: [UInt8]) throws -> HTTPMessage

    /// Stops navd as SIGTERM does: stop accepting, drain, close the store.
    /// - Returns: the exit status (0 for a clean drain).
    @discardableResult
    func stop() throws -> Int32
}

extension NavdHarness {
    typealias Session = NavdSession

    /// Sends one request (`Connection: close`, a `Content-Length` for a body or a POST, PUT or
    /// PATCH) and reads the answer, which is checked against the spec unless `validate` is false.
    @discardableResult
    func request(
        _ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = [],
        validate: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        var fields = headers
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method),
            fields.keys.first(where: { $0.lowercased() == "content-length" }) == nil
        {
            fields["Content-Length"] = String(body.count)
        }
        let sorted = fields.sorted(by: { $0.key < $1.key }).map { (name: $0.key, value: $0.value) }
        let answer = try exchange(method, target, fields: sorted, body: body)
        if validate { check(answer, method: method, target: target, sourceLocation: sourceLocation) }
        return answer
    }

    /// Records every violation of the spec by `answer` as an issue at the caller.
    func check(_ answer: HTTPMessage, method: String, target: String, sourceLocation: SourceLocation) {
        Self.recordViolations(of: answer, method: method, target: target, validator: validator, sourceLocation: sourceLocation)
    }

    /// Records one issue per violation of the spec by `answer`.
    static func recordViolations(
        of answer: HTTPMessage, method: String, target: String, validator: OpenAPIValidator?, sourceLocation: SourceLocation
    ) {
        guard let validator else {
            Issue.record("openapi.yaml did not load: \(String(describing: OpenAPIValidator.shared))", sourceLocation: sourceLocation)
            return
        }
        for violation in validator.validate(method: method, path: target, status: answer.status, headers: answer.headers, body: answer.body)
        {
            Issue.record("spec violation: \(violation)\n  body: \(answer.text.prefix(600))", sourceLocation: sourceLocation)
        }
    }

    /// A JSON request.
    @discardableResult
    func send(
        _ method: String, _ target: String, json: JSON? = nil, token: String? = nil, headers: [String: String] = [:],
        contentType: String = "application/json", sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        var fields = headers
        if let token { fields["Authorization"] = "Bearer \(token)" }
        if json != nil { fields["Content-Type"] = contentType }
        return try request(method, target, headers: fields, body: json?.bytes ?? [], sourceLocation: sourceLocation)
    }

    // MARK: Sessions

    /// `POST /v1/sessions`; expects 201.
    func createSession(
        graph: String? = nil, start: String? = nil, context: JSON? = nil, headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> NavdSession {
        var body: [String: JSON] = [:]
        if let graph { body["graph"] = .string(graph) }
        if let start { body["start"] = .string(start) }
        if let context { body["context"] = context }
        let answer = try send("POST", "/v1/sessions", json: .object(body), headers: headers, sourceLocation: sourceLocation)
        try #require(answer.status == 201, "create: \(answer)", sourceLocation: sourceLocation)
        let created = try answer.json()
        let id = try #require(created["id"]?.string, sourceLocation: sourceLocation)
        let token = try #require(created["token"]?.string, sourceLocation: sourceLocation)
        #expect(answer.headers["location"] == "/v1/sessions/\(id)", sourceLocation: sourceLocation)
        return NavdSession(id: id, token: token, created: created)
    }

    func get(_ session: NavdSession, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send("GET", session.url, token: session.token, sourceLocation: sourceLocation)
    }

    /// The session view (expects 200).
    func view(_ session: NavdSession, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON {
        let answer = try get(session, sourceLocation: sourceLocation)
        try #require(answer.status == 200, "GET session: \(answer)", sourceLocation: sourceLocation)
        return try answer.json()
    }

    func navigate(
        _ session: NavdSession, _ path: String, headers: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        try send(
            "POST", session.url + "/navigate", json: ["path": .string(path)], token: session.token, headers: headers,
            sourceLocation: sourceLocation)
    }

    func transition(
        _ session: NavdSession, _ name: String, params: JSON? = nil, headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        var body: [String: JSON] = ["name": .string(name)]
        if let params { body["params"] = params }
        return try send(
            "POST", session.url + "/transitions", json: .object(body), token: session.token, headers: headers,
            sourceLocation: sourceLocation)
    }

    func exit(_ session: NavdSession, headers: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> HTTPMessage
    {
        try send("POST", session.url + "/exit", token: session.token, headers: headers, sourceLocation: sourceLocation)
    }

    func back(_ session: NavdSession, count: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send(
            "POST", session.url + "/back", json: count.map { ["count": .int($0)] }, token: session.token, sourceLocation: sourceLocation)
    }

    func setParams(_ session: NavdSession, screen: String, _ params: JSON, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> HTTPMessage
    {
        try send("PUT", session.url + "/screens/\(screen)/params", json: params, token: session.token, sourceLocation: sourceLocation)
    }

    func patchState(
        _ session: NavdSession, screen: String, _ patch: JSON, contentType: String = "application/merge-patch+json",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        try send(
            "PATCH", session.url + "/screens/\(screen)/state", json: patch, token: session.token, contentType: contentType,
            sourceLocation: sourceLocation)
    }

    func events(_ session: NavdSession, after: Int? = nil, limit: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> HTTPMessage
    {
        let query = [after.map { "after=\($0)" }, limit.map { "limit=\($0)" }].compactMap { $0 }.joined(separator: "&")
        return try send(
            "GET", session.url + "/events" + (query.isEmpty ? "" : "?" + query), token: session.token, sourceLocation: sourceLocation)
    }
}

/// A session a test created: its id, its token, and the creation answer.
struct NavdSession: Sendable {
    var id: String
    var token: String
    /// The creation answer (a `CreatedSession`).
    var created: JSON
    var url: String { "/v1/sessions/\(id)" }
}

// MARK: - Sharing one navd in a suite

/// Starts one navd around a whole suite and stops it (expecting exit status 0) after the
/// suite's last test; tests reach it with ``DaemonHarness/shared(sourceLocation:)``.
struct SharedDaemon: SuiteTrait, TestScoping {
    var options: HarnessOptions
    var transport: Transport

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let daemon = try transport.start(options)
        do {
            try await DaemonHarness.$current.withValue(daemon) { try await function() }
        } catch {
            _ = try? daemon.stop()
            throw error
        }
        let status = try daemon.stop()
        #expect(status == 0, "navd exited with status \(status): \(daemon.log.suffix(2000))")
    }
}

extension Trait where Self == SharedDaemon {
    /// One `navd serve --store memory` for the suite, on ``Transport/preferred`` (in process)
    /// unless the suite needs the binary.
    static func sharedDaemon(graphs: [String] = ["Examples/news.json"], arguments: [String] = [], transport: Transport = .preferred)
        -> SharedDaemon
    {
        SharedDaemon(options: .init(graphs: graphs, arguments: arguments), transport: transport)
    }
}

// MARK: - Reading answers

extension JSON {
    /// `events` as `type` or `type:scene` strings, the transcripts' notation.
    var eventNames: [String] {
        (self["events"]?.array ?? []).map { event in
            let type = event["type"]?.string ?? "?"
            guard let scene = event["scene"]?.string else { return type }
            return type + ":" + scene
        }
    }

    /// The `scene` of every screen on the stage, root first.
    var sceneNames: [String] {
        (self["screens"]?.array ?? []).compactMap { $0["scene"]?.string }
    }

    /// The top screen.
    var top: JSON? { self["screens"]?.array?.last }
}
