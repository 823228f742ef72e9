import Foundation
import Testing

@testable import NavTestSupport

/// docs/design.md, "Flows" over HTTP, as a client drives it: every answer is held to openapi.yaml by the harness.
@Suite struct FlowRoutesTests {
    static let adminToken = "flows-admin-token-0123"
    static let backendToken = "flows-backend-token-0123"

    func eventTypes(_ answer: HTTPMessage) throws -> [String] {
        try answer.json()["events"]?.array?.compactMap { $0["type"]?.string } ?? []
    }

    @Test func aLoginResumesTheDeepLinkItInterrupted() throws {
        let navd = try startNavd()
        let session = try navd.createSession(context: ["locale": "ja"])
        let redirected = try navd.navigate(session, "settings")
        #expect(redirected.status == 200)
        #expect(try redirected.json()["path"] == "/top!login")
        #expect(try redirected.json()["pending"] == "/top/settings")
        #expect(try navd.view(session)["pending"] == "/top/settings")

        let login = try navd.send(
            "PATCH", session.url + "/context", json: ["user": "ann"], token: session.token, contentType: "application/merge-patch+json")
        #expect(login.status == 200, "\(login)")
        let view = try login.json()
        #expect(view["path"] == "/top/settings")
        #expect(view["pending"] == nil)
        #expect(view["context"] == ["locale": "ja", "user": "ann"])
        #expect(try eventTypes(login).prefix(2) == ["contextChanged", "transitionStart"])
        #expect(view["events"]?[0]?["keys"] == ["user"])
        #expect(view["events"]?[0]?["screen"] == .null)
        #expect(login.headers["etag"] == "\"3\"")
        // The event log keeps what the answer said, details included.
        let log = try navd.events(session, after: 0).json()
        #expect(log["events"]?.array?.first { $0["type"] == "contextChanged" }?["keys"] == ["user"])
    }

    @Test func aContextChangeIsBoundByMaxContextAsACreationIs() throws {
        let navd = try startNavd(arguments: ["--max-context", "64"])
        let session = try navd.createSession(context: ["user": "u1"])
        let large = try navd.send(
            "PATCH", session.url + "/context", json: ["bio": .string(String(repeating: "x", count: 80))], token: session.token)
        #expect(large.status == 400 && large.code == "invalid_request", "\(large)")
        #expect(try large.json()["param"] == "context")
        #expect(try navd.send("PATCH", session.url + "/context", json: ["bio": "short"], token: session.token).status == 200)
        #expect(try navd.view(session)["context"] == ["bio": "short", "user": "u1"])
    }

    @Test func withABackendTokenOnlyTheBackendChangesAContext() throws {
        let navd = try startNavd(arguments: ["--backend-token", Self.backendToken, "--admin-token", Self.adminToken])
        let session = try navd.createSession(headers: ["Authorization": "Bearer \(Self.backendToken)"])
        let own = try navd.send("PATCH", session.url + "/context", json: ["user": "mallory"], token: session.token)
        #expect(own.status == 401 && own.code == "unauthorized", "\(own)")
        let batched = try navd.send(
            "POST", session.url + "/intents", json: ["intents": [["context": ["user": "mallory"]]]], token: session.token)
        #expect(batched.status == 401, "\(batched)")
        #expect(try navd.view(session)["context"] == [:])
        // The session's own token still drives the rest of the session.
        #expect(try navd.navigate(session, "help").status == 200)
        let backend = try navd.send("PATCH", session.url + "/context", json: ["user": "ann"], token: Self.backendToken)
        #expect(backend.status == 200, "\(backend)")
        #expect(try navd.send("PATCH", session.url + "/context", json: ["user": nil], token: Self.adminToken).status == 200)
        // The backend token learns 404 for a session that does not exist; it opens nothing else.
        let missing = try navd.send("PATCH", "/v1/sessions/0d41b7e2c95a4f38b6e1a7c3d2f05e9b/context", json: [:], token: Self.backendToken)
        #expect(missing.status == 404 && missing.code == "session_not_found")
        #expect(try navd.send("GET", session.url, token: Self.backendToken).status == 401)
    }

    @Test func aResultReachesTheScreenRevealed() throws {
        let navd = try startNavd()
        let session = try navd.createSession(start: "/top/list_news!pick_category")
        let picked = try navd.send("POST", session.url + "/exit", json: ["result": ["category": 3]], token: session.token)
        #expect(picked.status == 200, "\(picked)")
        let events = try #require(try picked.json()["events"]?.array)
        #expect(events.suffix(2).map { $0["type"] } == ["result", "transitionEnd"])
        #expect(events.dropLast().last?["value"] == ["category": 3])
        #expect(events.dropLast().last?["from"] == "pick_category")
        #expect(events.dropLast().last?["scene"] == "list_news")
        let tooLarge = try navd.send(
            "POST", session.url + "/back", json: ["result": .string(String(repeating: "x", count: 17_000))], token: session.token)
        #expect(tooLarge.status == 400 && tooLarge.code == "invalid_request")
        #expect(try tooLarge.json()["param"] == "result")
    }

    /// Results carry a client's values, up to 16 KiB each: a page of the event log ends once it
    /// holds 1 MiB of events, whatever its `limit`, and paging on from `next` reads the rest.
    @Test func anEventLogPageEndsAtItsBytesAndPagingOnReadsEveryEventOnce() throws {
        let navd = try startNavd()
        let session = try navd.createSession(start: "/top/list_news!pick_category")
        let value = JSON.string(String(repeating: "r", count: 16_000))
        var newest = 0
        for round in 0..<70 {
            if round > 0 { #expect(try navd.navigate(session, "!pick_category").status == 200) }
            let picked = try navd.send("POST", session.url + "/exit", json: ["result": value], token: session.token)
            try #require(picked.status == 200, "\(picked)")
            newest = try #require(try picked.json()["events"]?.array?.last?["seq"]?.int)
        }
        var seqs: [Int] = []
        var results = 0
        var after = 0
        var pages = 0
        while true {
            let answer = try navd.events(session, after: after, limit: 1000)
            #expect(answer.body.count < (1 << 20) + 17_000, "a page of \(answer.body.count) bytes")
            let page = try answer.json()
            let events = try #require(page["events"]?.array)
            if events.isEmpty { break }
            seqs += events.compactMap { $0["seq"]?.int }
            results += events.filter { $0["type"] == "result" && $0["value"] == value }.count
            after = try #require(page["next"]?.int)
            #expect(after == seqs.last)
            pages += 1
        }
        #expect(pages >= 2)
        #expect(seqs == Array(1...newest))
        #expect(results == 70)
    }

    /// A token carries the intent it confirms as base64, a third larger than the intent: one
    /// refused for an intent near `--max-body` is still confirmed, by the server's own framing.
    @Test(arguments: [Transport.process, .inProcess])
    func aConfirmationOfAnIntentNearTheBodyLimitIsTaken(_ transport: Transport) throws {
        let navd = try startNavd(arguments: ["--max-body", "4096"], transport: transport)
        defer { _ = try? navd.stop() }
        let session = try navd.createSession(start: "/top/edit_profile")
        let typed = try navd.send(
            "POST", session.url + "/screens/e2/commands", json: ["name": "type", "args": ["text": "draft"]], token: session.token)
        #expect(typed.status == 200, "\(typed)")
        let result = String(repeating: "r", count: 3_900)
        let asked = try navd.send("POST", session.url + "/back", json: ["result": .string(result)], token: session.token)
        #expect(asked.status == 409 && asked.code == "confirmation_required", "\(asked)")
        let token = try #require(try asked.json()["confirmation"]?["token"]?.string)
        #expect(token.utf8.count > 4096)
        let confirmed = try navd.send("POST", session.url + "/confirm", json: ["token": .string(token)], token: session.token)
        #expect(confirmed.status == 200, "\(confirmed.status) \(confirmed.text.prefix(200))")
        // Other routes keep the configured limit.
        let other = try navd.send(
            "POST", session.url + "/navigate", json: ["path": .string("/top/" + String(repeating: "x", count: 4_200))], token: session.token
        )
        #expect(other.status == 413, "\(other.status)")
    }

    @Test func aConfirmationTokenIsSingleUseAndDiesWithTheNextChange() throws {
        let navd = try startNavd()
        let session = try navd.createSession(start: "/top/edit_profile")
        let other = try navd.createSession(start: "/top/edit_profile")
        for target in [session, other] {
            let typed = try navd.send(
                "POST", target.url + "/screens/e2/commands", json: ["name": "type", "args": ["text": "draft"]], token: target.token)
            #expect(typed.status == 200, "\(typed)")
        }
        let asked = try navd.send("POST", session.url + "/back", json: ["result": "kept"], token: session.token)
        #expect(asked.status == 409 && asked.code == "confirmation_required", "\(asked)")
        let confirmation = try #require(try asked.json()["confirmation"])
        #expect(confirmation["screen"] == "e2")
        #expect(confirmation["intent"] == ["back": 1, "result": "kept"])
        let token = try #require(confirmation["token"]?.string)
        #expect(try navd.view(session)["version"] == 2)

        // Another session's token, or a forged one, confirms nothing.
        #expect(try navd.send("POST", other.url + "/confirm", json: ["token": .string(token)], token: other.token).status == 412)
        let forged = token.dropLast(2) + (token.hasSuffix("00") ? "11" : "00")
        #expect(
            try navd.send("POST", session.url + "/confirm", json: ["token": .string(String(forged))], token: session.token).status == 412)
        for garbage in ["", "1.2.3", "x"] {
            let answer = try navd.send("POST", session.url + "/confirm", json: ["token": .string(garbage)], token: session.token)
            #expect(answer.status == 412 && answer.code == "version_conflict", "\(answer)")
        }

        let confirmed = try navd.send("POST", session.url + "/confirm", json: ["token": .string(token)], token: session.token)
        #expect(confirmed.status == 200, "\(confirmed)")
        #expect(try confirmed.json()["path"] == "/top")
        #expect(try eventTypes(confirmed).suffix(2) == ["result", "transitionEnd"])
        let again = try navd.send("POST", session.url + "/confirm", json: ["token": .string(token)], token: session.token)
        #expect(again.status == 412 && again.headers["etag"] == "\"3\"", "\(again)")

        // A token goes stale when anything else changes the session first.
        let staleAsked = try navd.exit(other)
        let stale = try #require(try staleAsked.json()["confirmation"]?["token"]?.string)
        #expect(try navd.patchState(other, screen: "e2", ["note": 1]).status == 200)
        #expect(try navd.send("POST", other.url + "/confirm", json: ["token": .string(stale)], token: other.token).status == 412)
        #expect(try navd.view(other)["path"] == "/top/edit_profile")
    }

    @Test func aBatchNamesTheItemItRefused() throws {
        let navd = try startNavd()
        let session = try navd.createSession()
        let refused = try navd.send(
            "POST", session.url + "/intents", json: ["intents": [["navigate": "list_news"], ["navigate": "nosuch"]]], token: session.token)
        #expect(refused.status == 422 && refused.code == "unknown_scene")
        #expect(try refused.json()["index"] == 1)
        let malformed = try navd.send(
            "POST", session.url + "/intents", json: ["intents": [["navigate": "help"], ["back": 0]]], token: session.token)
        #expect(malformed.status == 400 && malformed.code == "invalid_request")
        #expect(try malformed.json()["index"] == 1)
        #expect(try malformed.json()["param"] == "intents.1.back")
        #expect(try navd.view(session)["version"] == 1)

        let applied = try navd.send(
            "POST", session.url + "/intents",
            json: [
                "intents": [
                    ["link": "news", "params": ["category": 2]], ["link": "show", "params": ["id": 9]],
                    ["state": ["screen": "e3", "patch": ["read": true]]]
                ]
            ], token: session.token)
        #expect(applied.status == 200, "\(applied)")
        let view = try applied.json()
        #expect(view["version"] == 2)
        #expect(view["path"] == "/top/list_news(category=2)/show_news(id=9)")
        #expect(view["events"]?.array?.allSatisfy { $0["transition"] == 2 } == true)
        #expect(try eventTypes(applied).last == "stateChanged")
    }

    @Test func upgradesMoveSessionsThatFitAndReportThoseThatDoNot() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.adminToken])
        let fits = try navd.createSession(start: "/top/list_news(category=1)")
        let stays = try navd.createSession(start: "/top/list_news(category=1)")
        let oldVersion = try navd.createSession(start: "/top/show_news(id=4)")
        // Version 2: list_news gains a sort with a default; show_news's id becomes a string.
        let news = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"), encoding: .utf8)
        let next = news.replacingOccurrences(
            of: #""category": {"type": "int", "default": 0}"#,
            with: #""category": {"type": "int", "default": 0}, "sort": {"type": "string", "default": "new"}"#
        ).replacingOccurrences(
            of: #""show_news":   {"params": {"id": {"type": "int", "required": true}}}"#,
            with: #""show_news":   {"params": {"slug": {"type": "string", "required": true}}}"#)
        #expect(next != news)
        let uploaded = try navd.request(
            "PUT", "/v1/graphs/news", headers: ["Content-Type": "application/json", "Authorization": "Bearer \(Self.adminToken)"],
            body: Array(next.utf8))
        #expect(uploaded.status == 200, "\(uploaded)")

        let moved = try navd.send("POST", fits.url + "/upgrade", json: [:], token: fits.token)
        #expect(moved.status == 200, "\(moved)")
        let view = try moved.json()
        #expect(view["graph"] == ["name": "news", "version": 2])
        #expect(view["path"] == "/top/list_news(category=1,sort=new)")
        #expect(view["events"]?[0]?["type"] == "graphChanged")
        #expect(view["events"]?[0]?["fromVersion"] == 1 && view["events"]?[0]?["toVersion"] == 2)
        #expect(try navd.send("POST", fits.url + "/upgrade", json: ["version": 2], token: fits.token).json()["events"] == [])
        let unknown = try navd.send("POST", fits.url + "/upgrade", json: ["version": 9], token: fits.token)
        #expect(unknown.status == 422 && unknown.code == "unknown_graph")
        // Back to version 1 does not fit: its list_news has no sort.
        let back = try navd.send("POST", fits.url + "/upgrade", json: ["version": 1], token: fits.token)
        #expect(back.status == 409 && back.code == "upgrade_refused")
        #expect(try back.json()["reasons"]?.array?.compactMap { $0["pointer"]?.string } == ["/screens/1/params/sort"])

        let report = try navd.send("POST", "/v1/graphs/news/upgrade", token: Self.adminToken)
        #expect(report.status == 200, "\(report)")
        let body = try report.json()
        #expect(body["upgraded"] == [.string(stays.id)])
        #expect(body["unchanged"] == [.string(fits.id)])
        let refused = try #require(body["refused"]?.array)
        #expect(refused.map { $0["id"] } == [.string(oldVersion.id)])
        #expect(refused.first?["problem"]?["code"] == "upgrade_refused")
        #expect(
            refused.first?["problem"]?["reasons"]?.array?.compactMap { $0["pointer"]?.string } == [
                "/screens/1/params/id", "/screens/1/params/slug"
            ])
        #expect(try navd.view(oldVersion)["graph"]?["version"] == 1)
        #expect(try navd.send("POST", "/v1/graphs/news/upgrade", token: fits.token).status == 403)
    }
}
