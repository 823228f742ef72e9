import Foundation
import Logging
import NavHTTP
import NavJSON
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// The answers kept under an `Idempotency-Key` are bounded per session and in all, in memory and
/// in the store alike (`docs/design.md`, "Idempotency answers"): the oldest are forgotten first,
/// never one younger than a minute, and a keyed request that would need that is refused
/// (429 for the session's budget, 503 for the daemon's) and changes nothing.
///
/// The application is called directly with a clock the test moves, so "a minute later" costs
/// no time; requests go in as the HTTP server hands them over.
@Suite struct IdempotencyBudgetTests {
    static let document = Clocked.document

    static func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name }?.1
    }

    static func code(_ response: HTTPResponse) -> String? {
        (try? JSONValue(parsing: response.body))?["code"]?.stringValue
    }

    enum Kind: String, CaseIterable { case memory, sqlite }

    /// The store of `kind` in `folder`, and the graphs it decodes sessions with.
    static func open(_ kind: Kind, _ folder: TemporaryFolder) throws -> (any SessionStore, GraphRegistry) {
        let graphs = GraphRegistry()
        switch kind {
        case .memory: return (MemoryStore(), graphs)
        case .sqlite:
            return (
                try StoreFactory.open(
                    "sqlite:\(folder.path)/navd.db?compact=8", graphs: graphs, connections: 1, logger: Logger(label: "test")), graphs
            )
        }
    }

    @Test(arguments: Kind.allCases)
    func aSessionsOldestAnswersAreForgottenFirstAndNeverOneYoungerThanAMinute(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try Self.open(kind, folder)
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 64 << 10, total: 1 << 20)
        let session = try navd.session()
        var answers: [HTTPResponse] = []
        for index in 0..<6 {
            navd.advance(seconds: 61)
            let answer = navd.navigate(session, "^/top/list_news(category=1)/show_news(id=\(index + 1))", key: "k\(index)")
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            answers.append(answer)
            #expect(navd.answers.bytes(of: session.id) <= 64 << 10)
        }
        // Each answer is the whole view, state included: four of them do not fit in 64 KiB.
        #expect(try navd.evicted() >= 2)
        // The newest are replayed; the oldest was forgotten: its retry is applied anew.
        let replay = navd.navigate(session, "^/top/list_news(category=1)/show_news(id=6)", key: "k5")
        #expect(Self.header(replay, "idempotent-replayed") == "true")
        #expect(replay.body == answers[5].body)
        let before = try navd.version(session)
        let anew = navd.navigate(session, "^/top/list_news(category=1)/show_news(id=1)", key: "k0")
        #expect(anew.status == 200)
        #expect(Self.header(anew, "idempotent-replayed") == nil, "a forgotten key is a new request")
        #expect(try navd.version(session) == before + 1)

        // No time passes now: once only answers younger than a minute stand in the way, a keyed
        // request is refused, says when to retry, and changes nothing.
        var refused: (HTTPResponse, path: String, key: String)?
        for index in 0..<6 where refused == nil {
            let version = try navd.version(session)
            let path = "^/top/list_news(category=1)/show_news(id=\(20 + index))"
            let answer = navd.navigate(session, path, key: "young\(index)")
            if answer.status == 429 {
                refused = (answer, path, "young\(index)")
                #expect(try navd.version(session) == version, "a refused request changes nothing")
            } else {
                #expect(answer.status == 200)
            }
        }
        let (answer, path, key) = try #require(refused, "the session's budget was never reached")
        #expect(Self.code(answer) == "too_many_requests")
        let retryAfter = try #require(Self.header(answer, "retry-after").flatMap { Int($0) })
        #expect((1...60).contains(retryAfter))
        #expect(navd.answers.bytes(of: session.id) <= 64 << 10)
        // Unkeyed changes are never refused by it.
        #expect(navd.navigate(session, "^/top/list_news(category=1)/show_news(id=40)", key: nil).status == 200)
        // Once that answer is old enough, the same request goes through.
        navd.advance(seconds: Int64(retryAfter))
        let later = navd.navigate(session, path, key: key)
        #expect(later.status == 200 && Self.header(later, "idempotent-replayed") == nil)
        let budget = try navd.budget()
        #expect(budget.limit == 1 << 20 && budget.used == navd.answers.bytes && budget.used <= budget.limit)
    }

    /// The daemon's budget: the oldest answers of any session old enough go first; when only
    /// young ones are left, a keyed request is 503 `over_capacity`, and unkeyed ones still pass.
    @Test(arguments: Kind.allCases)
    func theDaemonsBudgetForgetsAnySessionsOldestAndThenRefusesKeyedRequestsOnly(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try Self.open(kind, folder)
        defer { store.close() }
        let total = 96 << 10
        let navd = try Clocked(store: store, graphs: graphs, perSession: 64 << 10, total: total)
        let first = try navd.session()
        for index in 0..<3 {
            #expect(navd.navigate(first, "^/top/list_news(category=1)/show_news(id=\(index + 1))", key: "a\(index)").status == 200)
        }
        let firstBytes = navd.answers.bytes(of: first.id)
        #expect(firstBytes > 32 << 10)
        navd.advance(seconds: 61)
        var overCapacity: HTTPResponse?
        var sessions: [(id: String, token: String)] = []
        for index in 0..<8 where overCapacity == nil {
            let session = try navd.session()
            sessions.append(session)
            let before = try navd.version(session)
            let answer = navd.navigate(session, "^/top/list_news(category=1)/show_news(id=\(index + 1))", key: "b\(index)")
            #expect(try navd.budget().used <= total)
            if answer.status == 503 {
                overCapacity = answer
                #expect(try navd.version(session) == before, "a refused request changes nothing")
                // Unkeyed changes are never refused by the budget.
                #expect(navd.navigate(session, "^/top/list_news(category=1)/show_news(id=9)", key: nil).status == 200)
            } else {
                #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            }
        }
        let refusal = try #require(overCapacity, "the daemon's budget was never reached")
        #expect(Self.code(refusal) == "over_capacity")
        #expect(Self.header(refusal, "retry-after").flatMap { Int($0) }.map { (1...60).contains($0) } == true)
        // The first session's answers were the oldest: forgotten before anyone was refused.
        #expect(navd.answers.bytes(of: first.id) == 0)
        #expect(try navd.evicted() == 3)
        // Its retry is a new request, which needs room too: once the answers in the way are a
        // minute old, it is applied anew.
        navd.advance(seconds: 61)
        let replay = navd.navigate(first, "^/top/list_news(category=1)/show_news(id=3)", key: "a2")
        #expect(
            replay.status == 200 && Self.header(replay, "idempotent-replayed") == nil, "\(String(decoding: replay.body, as: UTF8.self))")
    }

    /// A keyed flood of large answers leaves no more in SQLite's table than the budget, and a
    /// restart counts what the table holds.
    @Test func sqliteKeepsNoMoreAnswerBytesThanTheBudgetAndCountsThemAfterARestart() throws {
        let folder = try TemporaryFolder()
        let total = 128 << 10
        let session: (id: String, token: String)
        let version: Int
        do {
            let (store, graphs) = try Self.open(.sqlite, folder)
            let navd = try Clocked(store: store, graphs: graphs, perSession: 64 << 10, total: total)
            let sessions = [try navd.session(), try navd.session()]
            for index in 0..<40 {
                navd.advance(seconds: 61)
                let answer = navd.navigate(
                    sessions[index % 2], "^/top/list_news(category=1)/show_news(id=\(index + 1))", key: "flood\(index)")
                try #require(answer.status == 200)
            }
            session = sessions[1]
            version = try navd.version(session)
            store.close()
        }
        let connection = try SQLiteConnection(path: "\(folder.path)/navd.db")
        let statement = try connection.statement(
            "SELECT COUNT(*), COALESCE(SUM(length(body) + length(headers) + length(key) + length(fingerprint)), 0) FROM idempotency")
        _ = try statement.step()
        let (rows, bytes) = (statement.int(0), statement.int(1))
        statement.reset()
        connection.close()
        #expect(rows >= 2)
        #expect(bytes <= Int64(total), "\(rows) answers of \(bytes) bytes kept")

        let (store, graphs) = try Self.open(.sqlite, folder)
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 64 << 10, total: total, addGraph: false)
        try StoreFactory.restoreGraphs(from: store, into: graphs, logger: Logger(label: "test"))
        #expect(navd.answers.bytes >= Int(bytes) && navd.answers.bytes <= total)
        #expect(try navd.budget().used == navd.answers.bytes)
        #expect(try navd.version(session) == version, "every acknowledged change is kept")
    }

    /// Keyed `PUT` (screen params) and `PATCH` (screen state) are honoured like keyed POSTs.
    @Test func keyedPutAndPatchAreReplayedAndAReusedKeyIsRefused() throws {
        let navd = try InProcessHarness()
        let session = try navd.createSession()
        #expect(try navd.navigate(session, "^/top/list_news(category=1)").status == 200)
        let screen = try #require(try navd.view(session)["screens"]?.array?.last?["id"]?.string)
        let params = ["Idempotency-Key": "params-1"]
        let put = try navd.send(
            "PUT", session.url + "/screens/\(screen)/params", json: ["category": 2], token: session.token, headers: params)
        #expect(put.status == 200)
        let version = try navd.view(session)["version"]?.int
        let putAgain = try navd.send(
            "PUT", session.url + "/screens/\(screen)/params", json: ["category": 2], token: session.token, headers: params)
        #expect(putAgain.status == 200 && putAgain.headers["idempotent-replayed"] == "true", "\(putAgain)")
        #expect(try putAgain.json() == (try put.json()))
        // Meanwhile the session moves on: a replay applies nothing again.
        #expect(try navd.send("PUT", session.url + "/screens/\(screen)/params", json: ["category": 5], token: session.token).status == 200)
        let replayed = try navd.send(
            "PUT", session.url + "/screens/\(screen)/params", json: ["category": 2], token: session.token, headers: params)
        #expect(replayed.headers["idempotent-replayed"] == "true")
        #expect(try navd.view(session)["screens"]?.array?.last?["params"]?["category"]?.int == 5)
        let reused = try navd.send(
            "PUT", session.url + "/screens/\(screen)/params", json: ["category": 3], token: session.token, headers: params)
        #expect(reused.status == 422 && reused.code == "idempotency_key_reused", "\(reused)")

        let state = ["Idempotency-Key": "state-1", "Content-Type": "application/merge-patch+json"]
        let target = session.url + "/screens/e1/state"
        let patch = try navd.send(
            "PATCH", target, json: ["count": 1], token: session.token, headers: state, contentType: "application/merge-patch+json")
        #expect(patch.status == 200)
        #expect(
            try navd.send("PATCH", target, json: ["count": 7], token: session.token, contentType: "application/merge-patch+json").status
                == 200)
        let patchAgain = try navd.send(
            "PATCH", target, json: ["count": 1], token: session.token, headers: state, contentType: "application/merge-patch+json")
        #expect(patchAgain.status == 200 && patchAgain.headers["idempotent-replayed"] == "true", "\(patchAgain)")
        #expect(try navd.view(session)["screens"]?.array?.first?["state"]?["count"]?.int == 7, "nothing applied again")
        let patchReused = try navd.send(
            "PATCH", target, json: ["count": 2], token: session.token, headers: state, contentType: "application/merge-patch+json")
        #expect(patchReused.status == 422 && patchReused.code == "idempotency_key_reused")
        #expect(version != nil)
        _ = navd.stop()
    }
}
