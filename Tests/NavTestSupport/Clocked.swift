import Foundation
import Logging
import NavHTTP
import NavJSON
import Testing

@testable import NavAPI
@testable import NavSessions

/// navd's application on a store, with budgets of kept answers and a clock of its own.
final class Clocked: Sendable {
    /// `Examples/news.json`, the graph every application here serves.
    static let document: JSONValue? = try? JSONValue(
        parsing: Array((try? Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))) ?? Data()))

    let application: Application
    let clock = Locked(Int64(1_700_000_000_000))

    /// - Parameter addGraph: false for a store that holds the graph already (restore it after).
    /// - Parameter sessionBytes: `--max-session-bytes`.
    init(
        store: any SessionStore, graphs: GraphRegistry, perSession: Int, total: Int, sessionBytes: Int = 1 << 30, addGraph: Bool = true
    ) throws {
        let clock = clock
        var configuration = Application.Configuration()
        configuration.sessions.maxIdempotencyBytesPerSession = perSession
        configuration.sessions.maxIdempotencyBytes = total
        configuration.sessions.maxSessionBytes = sessionBytes
        configuration.sessions.maxContextBytes = 64 * 1024
        application = Application(
            graphs: graphs, configuration: configuration, store: store, logger: Logger(label: "test"), now: { clock.withLock { $0 } })
        if addGraph { _ = try graphs.add(try #require(Self.document)) }
    }

    var answers: KeptAnswerLedger { application.sessions.answers }

    func advance(seconds: Int64) {
        clock.withLock { $0 += seconds * 1000 }
    }

    func send(
        _ method: String, _ path: String, token: String? = nil, key: String? = nil, body: String = "{}",
        contentType: String = "application/json"
    ) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("content-type", contentType)
        if let token { headers.add("authorization", "Bearer \(token)") }
        if let key { headers.add("idempotency-key", key) }
        return application.handle(HTTPRequest(method: method, path: path, headers: headers, body: Array(body.utf8)))
    }

    /// A session of the news graph whose top screen holds `stateBytes` of state, so that
    /// every answer about it (its whole view) is about that large.
    func session(stateBytes: Int = 16 * 1024) throws -> (id: String, token: String) {
        let created = send("POST", "/v1/sessions", body: #"{"graph":"news"}"#)
        try #require(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let json = try JSONValue(parsing: created.body)
        let id = try #require(json["id"]?.stringValue)
        let token = try #require(json["token"]?.stringValue)
        let blob = String(repeating: "x", count: stateBytes)
        let patched = send(
            "PATCH", "/v1/sessions/\(id)/screens/e1/state", token: token, body: #"{"blob":"\#(blob)"}"#,
            contentType: "application/merge-patch+json")
        try #require(patched.status == 200, "\(String(decoding: patched.body, as: UTF8.self))")
        return (id, token)
    }

    func navigate(_ session: (id: String, token: String), _ path: String, key: String?) -> HTTPResponse {
        send("POST", "/v1/sessions/\(session.id)/navigate", token: session.token, key: key, body: #"{"path":"\#(path)"}"#)
    }

    func version(_ session: (id: String, token: String)) throws -> Int {
        let view = send("GET", "/v1/sessions/\(session.id)", token: session.token)
        return try #require(try JSONValue(parsing: view.body)["version"]?.intValue)
    }

    /// `navd_idempotency_evicted_total` as `/metrics` shows it.
    func evicted() throws -> Int {
        let text = String(decoding: send("GET", "/metrics").body, as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("navd_idempotency_evicted_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// `navd_budget_used` and `navd_budget_limit` of `resource` as `/metrics` shows them.
    func budget(_ resource: String = "idempotency_bytes") throws -> (used: Int, limit: Int) {
        let text = String(decoding: send("GET", "/metrics").body, as: UTF8.self)
        func value(_ metric: String) throws -> Int {
            let prefix = "\(metric){resource=\"\(resource)\"} "
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(prefix) })
            return try #require(Int(line.dropFirst(prefix.count)))
        }
        return (try value("navd_budget_used"), try value("navd_budget_limit"))
    }
}
