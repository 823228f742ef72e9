import Foundation
import Testing

@testable import NavTestSupport

/// `GET /v1/sessions/{id}?version=V` (docs/design.md, "History"): every retained version of a
/// session read back equal to the view its change answered, whatever the intent that made it.
@Suite(.serialized) struct PastVersionTests {
    static let admin = HistoryRoutesTests.admin

    /// A change's answer as the view at its version shows it: without events or tokens.
    static func viewOf(_ answer: HTTPMessage) throws -> JSON {
        guard case .object(var members) = try answer.json() else { return .null }
        for key in ["events", "token", "watchToken"] { members[key] = nil }
        return .object(members)
    }

    static func at(_ navd: any NavdHarness, _ session: NavdSession, _ version: String, token: String? = nil) throws -> HTTPMessage {
        try navd.send("GET", session.url + "?version=" + version, token: token ?? session.token)
    }

    /// Walks one session through links, deep paths, tabs, modals, a redirect and the context
    /// change that resumes it, a result, a command, a confirmation, a batch, state and params,
    /// back, and an upgrade to another graph version, keeping every answer by its version.
    static func walk(_ navd: any NavdHarness) throws -> (NavdSession, [Int: JSON]) {
        var answers: [Int: JSON] = [:]
        let created = try navd.send("POST", "/v1/sessions", json: ["context": ["locale": "ja"]])
        try #require(created.status == 201)
        let session = NavdSession(
            id: try #require(try created.json()["id"]?.string), token: try #require(try created.json()["token"]?.string),
            created: try created.json())
        answers[1] = try viewOf(created)
        func keep(_ answer: HTTPMessage, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON {
            try #require(answer.status == 200, "\(answer)", sourceLocation: sourceLocation)
            let view = try viewOf(answer)
            let version = try #require(view["version"]?.int, sourceLocation: sourceLocation)
            #expect(answers[version] == nil, sourceLocation: sourceLocation)
            answers[version] = view
            return view
        }
        let token = session.token
        let url = session.url
        _ = try keep(navd.send("POST", url + "/transitions", json: ["name": "news", "params": ["category": 2]], token: token))
        _ = try keep(navd.navigate(session, "^/top/home#friend/show_friend(name=ken)"))
        let redirected = try keep(navd.navigate(session, "^/top/settings"))
        #expect(redirected["pending"] == "/top/settings")
        let resumed = try keep(navd.send("PATCH", url + "/context", json: ["user": "ann"], token: token))
        #expect(resumed["path"] == "/top/settings")
        _ = try keep(navd.navigate(session, "^/top/home#friend/show_friend(name=ken)"))
        _ = try keep(navd.navigate(session, "^/top/home#profile"))
        _ = try keep(navd.navigate(session, "^/top/list_news!pick_category"))
        _ = try keep(navd.send("POST", url + "/exit", json: ["result": ["category": 3]], token: token))
        let form = try keep(navd.navigate(session, "^/top/edit_profile"))
        let editor = try #require(form["screens"]?.array?.last?["id"]?.string)
        _ = try keep(
            navd.send("POST", url + "/screens/\(editor)/commands", json: ["name": "type", "args": ["text": "draft"]], token: token))
        let asked = try navd.send("POST", url + "/back", json: ["result": "kept"], token: token)
        #expect(asked.code == "confirmation_required")
        let confirmation = try #require(try asked.json()["confirmation"]?["token"]?.string)
        _ = try keep(navd.send("POST", url + "/confirm", json: ["token": .string(confirmation)], token: token))
        let batch = try keep(
            navd.send(
                "POST", url + "/intents",
                json: ["intents": [["navigate": "^/top/list_news(category=1)"], ["link": "show", "params": ["id": 9]]]], token: token))
        let shown = try #require(batch["screens"]?.array?.last?["id"]?.string)
        _ = try keep(navd.send("PATCH", url + "/screens/\(shown)/state", json: ["read": true], token: token))
        _ = try keep(navd.send("PUT", url + "/screens/\(shown)/params", json: ["id": 10], token: token))
        _ = try keep(navd.back(session))
        // Version 2 of the graph: list_news gains a sort with a default.
        let news = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"), encoding: .utf8)
        let next = news.replacingOccurrences(
            of: #""category": {"type": "int", "default": 0}"#,
            with: #""category": {"type": "int", "default": 0}, "sort": {"type": "string", "default": "new"}"#)
        #expect(next != news)
        let uploaded = try navd.request(
            "PUT", "/v1/graphs/news", headers: ["Content-Type": "application/json", "Authorization": "Bearer \(Self.admin)"],
            body: Array(next.utf8))
        #expect(uploaded.status == 200, "\(uploaded)")
        let upgraded = try keep(navd.send("POST", url + "/upgrade", json: [:], token: token))
        #expect(upgraded["graph"]?["version"] == 2)
        _ = try keep(navd.send("POST", url + "/transitions", json: ["name": "show", "params": ["id": 12]], token: token))
        return (session, answers)
    }

    @Test(arguments: ["memory", "sqlite", "postgres"]) func everyVersionReadsBackAsItsChangeAnsweredIt(store: String) throws {
        var cluster: PostgresCluster?
        defer { cluster?.stop() }
        let navd: any NavdHarness
        if store == "postgres" {
            let started = try PostgresCluster()
            cluster = started
            navd = try startNavd(store: started.url, arguments: ["--admin-token", Self.admin])
        } else {
            navd = try HistoryRoutesTests.start(store)
        }
        let (session, answers) = try Self.walk(navd)
        let current = try #require(answers.keys.max())
        #expect(Array(answers.keys.sorted()) == Array(1...current))
        for version in 1...current {
            let past = try Self.at(navd, session, String(version))
            #expect(past.status == 200, "version \(version): \(past)")
            #expect(past.headers["etag"] == "\"\(version)\"")
            #expect(try past.json() == answers[version], "version \(version)")
        }
        // The watch token and the admin token read the past too.
        let watch = try #require(session.created["watchToken"]?.string)
        #expect(try Self.at(navd, session, "3", token: watch).json() == answers[3])
        #expect(try Self.at(navd, session, "3", token: Self.admin).json() == answers[3])
        // The current version is the plain view.
        #expect(try Self.at(navd, session, String(current)).body == (try navd.get(session).body))
        #expect(try navd.stop() == 0)
    }

    @Test func badVersionsAreRefusedWithParam() throws {
        let navd = try HistoryRoutesTests.start()
        let session = try navd.createSession()
        let other = try navd.createSession()
        #expect(try navd.navigate(session, "list_news").status == 200)
        for text in ["0", "-1", "abc", "", "1.0"] {
            let answer = try Self.at(navd, session, text)
            #expect(answer.status == 400 && answer.code == "invalid_request", "\(text)")
            #expect(try answer.json()["param"] == "version", "\(text)")
        }
        let above = try Self.at(navd, session, "3")
        #expect(above.status == 404 && above.code == "not_found")
        #expect(try above.json()["param"] == "version")
        let stranger = try Self.at(navd, session, "1", token: other.token)
        #expect(stranger.status == 401)
        #expect(stranger.body == (try navd.send("GET", session.url, token: other.token).body))
        #expect(try navd.stop() == 0)
    }

    @Test func aVersionWhoseRecordsWereSweptHasExpired() throws {
        // Past --max-feed-bytes the oldest records go with the write that passed it.
        let navd = try HistoryRoutesTests.start(arguments: ["--max-feed-bytes", "64K"])
        let session = try navd.createSession()
        #expect(try navd.navigate(session, "list_news").status == 200)
        #expect(try navd.navigate(session, "help").status == 200)
        for _ in 0..<130 { _ = try navd.createSession() }
        let expired = try Self.at(navd, session, "2")
        #expect(expired.status == 410 && expired.code == "version_expired", "\(expired)")
        #expect(try expired.json()["param"] == "version")
        // The current version needs no record.
        #expect(try Self.at(navd, session, "3").status == 200)
        #expect(try navd.stop() == 0)
    }

    @Test func aPurgedSessionsPastHasExpiredCheckpointsNotwithstanding() throws {
        let navd = try HistoryRoutesTests.start()
        let session = try navd.createSession()
        for index in 0..<70 { #expect(try navd.navigate(session, "^/top/list_news(category=\(index))").status == 200) }
        #expect(try Self.at(navd, session, "66").status == 200)
        let purged = try navd.send("POST", "/v1/feed/purge", json: ["session": .string(session.id)], token: Self.admin)
        #expect(purged.status == 200)
        // Version 64 has a checkpoint; its records are gone all the same.
        for version in ["1", "64", "65", "66"] {
            #expect(try Self.at(navd, session, version).code == "version_expired", "\(version)")
        }
        #expect(try Self.at(navd, session, "71").status == 200)
        #expect(try navd.stop() == 0)
    }

    @Test func aVersionOnAGraphVersionSinceRemovedHasExpired() throws {
        let navd = try HistoryRoutesTests.start()
        let session = try navd.createSession()
        #expect(try navd.navigate(session, "list_news").status == 200)
        let news = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"), encoding: .utf8)
        let admin = ["Content-Type": "application/json", "Authorization": "Bearer \(Self.admin)"]
        let next = news.replacingOccurrences(of: #""help":        {}"#, with: #""help":        {"description": "v2"}"#)
        #expect(next != news)
        #expect(try navd.request("PUT", "/v1/graphs/news", headers: admin, body: Array(next.utf8)).status == 200)
        let upgraded = try navd.send("POST", session.url + "/upgrade", json: [:], token: session.token)
        #expect(try upgraded.json()["version"] == 3, "\(upgraded)")
        #expect(try Self.at(navd, session, "2").status == 200)
        let removed = try navd.request("DELETE", "/v1/graphs/news?version=1", headers: admin)
        #expect(removed.status == 204, "\(removed)")
        let expired = try Self.at(navd, session, "2")
        #expect(expired.status == 410 && expired.code == "version_expired", "\(expired)")
        #expect(try Self.at(navd, session, "3").status == 200)
        #expect(try navd.stop() == 0)
    }
}
