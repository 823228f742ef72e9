import Foundation
import Testing

@testable import NavTestSupport

/// `GET /v1/sessions/{id}/history` (docs/design.md, "History"): the session's own records in the
/// full form, paged by version, opened by its tokens and the admin token only.
@Suite(.serialized) struct HistoryRoutesTests {
    static let admin = "history-admin-token-0123456789"

    /// A daemon on `store`: `memory`, or `sqlite` on a file of its own.
    static func start(_ store: String = "memory", arguments: [String] = []) throws -> any NavdHarness {
        var spec = "memory"
        if store == "sqlite" {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-history-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            spec = "sqlite:\(directory.path)/navd.db"
        }
        return try startNavd(store: spec, arguments: ["--admin-token", admin] + arguments)
    }

    static func history(_ navd: any NavdHarness, _ session: NavdSession, _ query: String = "", token: String? = nil) throws
        -> HTTPMessage
    {
        try navd.send("GET", session.url + "/history" + (query.isEmpty ? "" : "?" + query), token: token ?? session.token)
    }

    @Test(arguments: ["memory", "sqlite"]) func aSessionReadsItsOwnRecordsInTheFullFormPagedByVersion(store: String) throws {
        let navd = try Self.start(store)
        let session = try navd.createSession(context: ["user": "u1"])
        #expect(try navd.navigate(session, "/top/list_news(category=2)").status == 200)
        #expect(try navd.send("PATCH", session.url + "/context", json: ["locale": "ja"], token: session.token).status == 200)
        #expect(try navd.back(session).status == 200)

        let all = try Self.history(navd, session).json()
        let changes = all["changes"]?.array ?? []
        #expect(changes.map { $0["version"]?.int } == [1, 2, 3, 4])
        #expect(changes.map { $0["kind"]?.string } == ["create", "navigate", "context", "back"])
        #expect(changes.allSatisfy { $0["form"]?.string == "full" && $0["session"]?.string == session.id })
        // The full form: values, not keys.
        #expect(changes[0]["intent"]?["create"]?["context"] == ["user": "u1"])
        #expect(changes[2]["intent"] == ["context": ["locale": "ja"]])
        #expect(all["oldest"]?.int == 1)
        #expect(all["next"]?.int == 4)

        let first = try Self.history(navd, session, "limit=2").json()
        #expect(first["changes"]?.array?.map { $0["version"]?.int } == [1, 2])
        #expect(first["next"]?.int == 2)
        let second = try Self.history(navd, session, "after=2&limit=2").json()
        #expect(second["changes"]?.array?.map { $0["version"]?.int } == [3, 4])
        #expect(second["oldest"]?.int == 1)
        let empty = try Self.history(navd, session, "after=4").json()
        #expect(empty["changes"]?.array?.isEmpty == true)
        #expect(empty["next"]?.int == 4)
        let past = try Self.history(navd, session, "after=99").json()
        #expect(past["next"]?.int == 99)
        #expect(try navd.stop() == 0)
    }

    @Test func theWatchTokenAndTheAdminTokenReadItAnotherSessionsTokenIsRefusedAsOnTheView() throws {
        let navd = try Self.start()
        let session = try navd.createSession()
        let other = try navd.createSession()
        let watch = try #require(session.created["watchToken"]?.string)
        #expect(try Self.history(navd, session, token: watch).status == 200)
        #expect(try Self.history(navd, session, token: Self.admin).status == 200)
        let refused = try Self.history(navd, session, token: other.token)
        let view = try navd.send("GET", session.url, token: other.token)
        #expect(refused.status == 401)
        #expect(refused.code == "unauthorized")
        #expect(refused.body == view.body)
        #expect(refused.headers["www-authenticate"] == view.headers["www-authenticate"])
        #expect(try navd.request("GET", session.url + "/history").status == 401)
        // Not in the URL: the watch token is taken there only by the event stream.
        #expect(try navd.request("GET", session.url + "/history?access_token=\(watch)").status == 401)
        #expect(try navd.stop() == 0)
    }

    @Test func badAfterOrLimitIs400WithParam() throws {
        let navd = try Self.start()
        let session = try navd.createSession()
        for (query, param) in [
            ("after=abc", "after"), ("after=-1", "after"), ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=x", "limit")
        ] {
            let answer = try Self.history(navd, session, query)
            #expect(answer.status == 400, "\(query)")
            #expect(try answer.json()["param"]?.string == param, "\(query)")
        }
        #expect(try navd.stop() == 0)
    }

    @Test func theAdminReadsAnEndedSessionsHistoryItsOwnTokenNoLonger() throws {
        let navd = try Self.start()
        let session = try navd.createSession()
        #expect(try navd.send("DELETE", session.url, token: session.token).status == 204)
        #expect(try Self.history(navd, session).status == 401)
        let ended = try Self.history(navd, session, token: Self.admin).json()
        #expect(ended["changes"]?.array?.map { $0["kind"]?.string } == ["create", "end"])
        let unknown = NavdSession(id: String(repeating: "a", count: 32), token: "x", created: [:])
        #expect(try Self.history(navd, unknown, token: Self.admin).code == "session_not_found")
        #expect(try navd.stop() == 0)
    }

    @Test func withTheFeedOffThereIsNoHistory() throws {
        let navd = try Self.start(arguments: ["--feed-retention", "0"])
        let session = try navd.createSession()
        #expect(try Self.history(navd, session).status == 404)
        #expect(try navd.stop() == 0)
    }
}
