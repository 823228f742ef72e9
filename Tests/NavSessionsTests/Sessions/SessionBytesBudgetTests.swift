import Foundation
import Logging
import NavHTTP
import NavJSON
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavSessions
@testable import NavTestSupport

/// All sessions together are bounded by `--max-session-bytes`, the budget `session_bytes`
/// (`docs/design.md`, "Sessions' bytes"): a create or a change that would take the daemon's
/// sessions past it is 503 `over_capacity` with `Retry-After` and changes nothing; a change that
/// adds nothing always goes through; what a deleted or expired session held is given back, and a
/// restart counts what the store holds. Without it, 100,000 sessions (`--max-sessions`) of up to
/// 16 MiB each (the engine's bounds on one session) could take a terabyte.
@Suite struct SessionBytesBudgetTests {
    typealias Kind = IdempotencyBudgetTests.Kind

    static func status(_ response: HTTPResponse) -> String {
        "\(response.status) \(String(decoding: response.body, as: UTF8.self).prefix(300))"
    }

    /// Creates a session of the news graph, then gives its top screen `stateBytes` of state.
    /// - Returns: the session, and the answer to the step that was refused, if one was.
    static func fatSession(_ navd: Clocked, stateBytes: Int) throws -> (session: (id: String, token: String)?, refused: HTTPResponse?) {
        let created = navd.send("POST", "/v1/sessions", body: #"{"graph":"news"}"#)
        guard created.status == 201 else { return (nil, created) }
        let json = try JSONValue(parsing: created.body)
        let session = (id: try #require(json["id"]?.stringValue), token: try #require(json["token"]?.stringValue))
        let patched = patch(navd, session, #"{"blob":"\#(String(repeating: "x", count: stateBytes))"}"#)
        return (session, patched.status == 200 ? nil : patched)
    }

    static func patch(_ navd: Clocked, _ session: (id: String, token: String), _ body: String) -> HTTPResponse {
        navd.send(
            "PATCH", "/v1/sessions/\(session.id)/screens/e1/state", token: session.token, body: body,
            contentType: "application/merge-patch+json")
    }

    @Test(arguments: Kind.allCases)
    func growthPastTheBudgetIsRefusedAndChangesNothing(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try IdempotencyBudgetTests.open(kind, folder)
        defer { store.close() }
        let limit = 256 << 10
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: limit)
        var sessions: [(id: String, token: String)] = []
        var refused: HTTPResponse?
        // Sessions of 20 KB of state each, until one step of them is refused.
        for _ in 0..<64 {
            let (session, refusal) = try Self.fatSession(navd, stateBytes: 20_000)
            if let session { sessions.append(session) }
            if let refusal {
                refused = refusal
                break
            }
        }
        let refusal = try #require(refused, "64 sessions of 20 KB fitted in a budget of 256 KiB")
        #expect(refusal.status == 503 && IdempotencyBudgetTests.code(refusal) == "over_capacity", "\(Self.status(refusal))")
        #expect(IdempotencyBudgetTests.header(refusal, "retry-after") != nil)
        // What is counted is what the store holds, within the limit.
        let used = navd.application.sessions.sessionBytes.used
        #expect(used <= limit)
        #expect(used == (try store.storedSessionBytes()))
        #expect(try navd.budget("session_bytes") == (used, limit))

        // Full: a change that would grow a session is refused and changes nothing ...
        let first = try #require(sessions.first)
        let version = try navd.version(first)
        let grown = Self.patch(navd, first, #"{"more":"\#(String(repeating: "y", count: 40_000))"}"#)
        #expect(grown.status == 503 && IdempotencyBudgetTests.code(grown) == "over_capacity", "\(Self.status(grown))")
        #expect(try navd.version(first) == version)
        #expect(navd.application.sessions.sessionBytes.used == used)
        // ... one that adds nothing goes through, and gives back what it takes off.
        #expect(navd.navigate(first, "^/top/list_news(category=1)", key: nil).status == 200)
        #expect(Self.patch(navd, first, #"{"blob":null}"#).status == 200)
        #expect(navd.application.sessions.sessionBytes.used < used - 19_000)
        #expect(navd.application.sessions.sessionBytes.used == (try store.storedSessionBytes()))

        // A deleted session gives back what it held: a new one of the same size fits again.
        let last = try #require(sessions.last)
        #expect(navd.send("DELETE", "/v1/sessions/\(last.id)", token: last.token).status == 204)
        let (again, refusedAgain) = try Self.fatSession(navd, stateBytes: 20_000)
        #expect(again != nil && refusedAgain == nil, "\(refusedAgain.map(Self.status) ?? "")")
        #expect(navd.application.sessions.sessionBytes.used == (try store.storedSessionBytes()))

        // Expired sessions give back theirs.
        navd.advance(seconds: 25 * 3600)
        #expect(try navd.application.sessions.sweep() > 0)
        #expect(navd.application.sessions.sessionBytes.used == 0)
        #expect(try store.storedSessionBytes() == 0)
    }

    /// What the store holds counts from the start: sessions made before a restart fill the budget
    /// as they did before it.
    @Test func aRestartCountsTheSessionsTheStoreHolds() throws {
        let folder = try TemporaryFolder()
        var held = 0
        do {
            let (store, graphs) = try IdempotencyBudgetTests.open(.sqlite, folder)
            defer { store.close() }
            let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20)
            for _ in 0..<5 { _ = try Self.fatSession(navd, stateBytes: 10_000) }
            held = navd.application.sessions.sessionBytes.used
            #expect(held > 50_000)
        }
        let (store, graphs) = try IdempotencyBudgetTests.open(.sqlite, folder)
        defer { store.close() }
        let navd = try Clocked(
            store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: held + 5_000, addGraph: false)
        try StoreFactory.restoreGraphs(from: store, into: graphs, logger: Logger(label: "test"))
        #expect(navd.application.sessions.sessionBytes.used == held)
        let (_, refusal) = try Self.fatSession(navd, stateBytes: 10_000)
        let refused = try #require(refusal, "a session fitted into what the stored sessions already take")
        #expect(refused.status == 503, "\(Self.status(refused))")
    }
}
