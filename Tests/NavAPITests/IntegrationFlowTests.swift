import Foundation
import NavWire
import Testing

@testable import NavTestSupport

/// End-to-end flows against the real `navd` binary. Every answer is checked against
/// `openapi.yaml` by the harness (a violation is an issue at the request's line).

// MARK: - KabuKit Sample1

/// KabuKit's Sample1 (`Examples/kabukit.json`): A and B push each other, the prev button
/// exits, and the root A started with `false` cannot be removed.
@Suite(.sharedDaemon(graphs: ["Examples/kabukit.json"]))
struct KabuKitSample1FlowTests {
    @Test func pushAThenBThenAAndExitBackToTheRoot() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        #expect(session.created["path"] == "/A_root")
        #expect(session.created["graph"] == ["name": "kabukit", "version": 1])
        #expect(session.created.top?["state"] == ["prevEnabled": false])
        #expect(session.created.eventNames == ["transitionStart", "awake:A_root", "willAppear:A_root", "didAppear:A_root", "transitionEnd"])

        var answer = try navd.transition(session, "a")
        #expect(answer.status == 200)
        var view = try answer.json()
        #expect(view["path"] == "/A_root/A")
        #expect(view["version"] == 2)
        #expect(view.top?["state"] == ["prevEnabled": true])
        #expect(
            view.eventNames == [
                "transitionStart", "awake:A", "willDisappear:A_root", "willAppear:A", "didDisappear:A_root", "didAppear:A", "transitionEnd"
            ])

        answer = try navd.transition(session, "b")
        #expect(try answer.json()["path"] == "/A_root/A/B")
        answer = try navd.transition(session, "a")
        view = try answer.json()
        #expect(view["path"] == "/A_root/A/B/A")
        #expect(view["screens"]?.array?.compactMap { $0["id"]?.string } == ["e1", "e2", "e3", "e4"])
        #expect(
            view.eventNames == [
                "transitionStart", "awake:A", "willDisappear:B", "willAppear:A", "didDisappear:B", "didAppear:A", "transitionEnd"
            ])
        #expect(answer.headers["etag"] == "\"4\"")

        answer = try navd.exit(session)
        view = try answer.json()
        #expect(answer.status == 200)
        #expect(view["path"] == "/A_root/A/B")
        #expect(
            view.eventNames == [
                "transitionStart", "willDisappear:A", "willAppear:B", "didDisappear:A", "didAppear:B", "remove:A", "transitionEnd"
            ])
        #expect(try navd.exit(session).json()["path"] == "/A_root/A")
        #expect(try navd.exit(session).json()["path"] == "/A_root")

        // The root (Sample1A started with false): KabuKit's exitScene does nothing. navd
        // refuses it; docs/design.md, "Intents" gives the root's own rule, stack_underflow, precedence.
        let refused = try navd.exit(session)
        #expect(refused.status == 409)
        #expect(refused.code == "stack_underflow")
        #expect(try navd.back(session).code == "stack_underflow")
        let after = try navd.view(session)
        #expect(after["version"] == 7)
        #expect(after["path"] == "/A_root")
    }

    @Test func aNonRemovableSceneRefusesExitBackAndNavigationAway() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        #expect(try navd.transition(session, "b").json()["path"] == "/A_root/B")
        // A second Sample1A with argument false, above the root.
        let pushed = try navd.navigate(session, "A_root")
        #expect(try pushed.json()["path"] == "/A_root/B/A_root")
        let logged = try navd.events(session).json()["next"]

        for refused in [
            try navd.exit(session), try navd.back(session), try navd.back(session, count: 2), try navd.navigate(session, "^/A_root")
        ] {
            #expect(refused.status == 409)
            #expect(refused.code == "not_removable", "\(refused)")
        }
        let unchanged = try navd.view(session)
        #expect(unchanged["version"] == 3)
        #expect(unchanged["path"] == "/A_root/B/A_root")
        #expect(try navd.events(session).json()["next"] == logged)

        // Pushing over it and exiting back to it is fine: only its own removal is refused.
        #expect(try navd.transition(session, "a").json()["path"] == "/A_root/B/A_root/A")
        #expect(try navd.exit(session).json()["path"] == "/A_root/B/A_root")
        #expect(try navd.exit(session).code == "not_removable")
    }
}

// MARK: - DeepTransition's news app

@Suite(.sharedDaemon())
struct NewsFlowTests {
    /// Collects every event the answers carry, to compare with the event log at the end.
    final class EventTrail: @unchecked Sendable {
        var events: [JSON] = []

        /// Checks a successful mutation answer and keeps its events.
        func take(_ answer: HTTPMessage, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON {
            try #require((200..<300).contains(answer.status), "\(answer)", sourceLocation: sourceLocation)
            let view = try answer.json()
            let version = try #require(view["version"]?.int, sourceLocation: sourceLocation)
            #expect(answer.headers["etag"] == "\"\(version)\"", sourceLocation: sourceLocation)
            for event in view["events"]?.array ?? [] {
                #expect(event["transition"] == .int(version), "event \(event) of version \(version)", sourceLocation: sourceLocation)
                events.append(event)
            }
            return view
        }
    }

    static let user: JSON = ["user": "u1", "locale": "ja"]

    @Test func coldStartDeepLinkModalStackTabsLinksParamsStateAndTheEventLog() throws {
        let navd = try DaemonHarness.shared()
        let trail = EventTrail()

        // Cold start straight into a tab's stack.
        let session = try navd.createSession(start: "/top/home#friend/show_friend(name=ken)", context: Self.user)
        var view = session.created
        trail.events += view["events"]?.array ?? []
        #expect(view["version"] == 1)
        #expect(view["path"] == "/top/home#friend/show_friend(name=ken)")
        #expect(view["context"] == Self.user)
        #expect(view.sceneNames == ["top", "home", "friend", "show_friend"])
        #expect(
            view.eventNames == [
                "transitionStart", "awake:top", "awake:home", "awake:friend", "awake:show_friend",
                "willAppear:show_friend", "didAppear:show_friend", "transitionEnd"
            ])
        #expect(view["events"]?[0]?["from"] == "" && view["events"]?[0]?["to"] == "/top/home#friend/show_friend(name=ken)")
        #expect(view["screens"]?[1]?["tabs"] == ["selected": "friend", "saved": [:]])
        #expect(view["screens"]?[0]?["container"] == "navigation")
        #expect(view["screens"]?[3]?["params"] == ["name": "ken"])

        // A modal with its own navigation stack, two screens in one transition.
        view = try trail.take(try navd.navigate(session, "!/list_coupon/show_coupon(id=88)"))
        #expect(view["path"] == "/top/home#friend/show_friend(name=ken)!/list_coupon/show_coupon(id=88)")
        #expect(
            view.eventNames == [
                "transitionStart", "awake:list_coupon", "awake:show_coupon", "willDisappear:show_friend", "willAppear:show_coupon",
                "didDisappear:show_friend", "didAppear:show_coupon", "transitionEnd"
            ])
        #expect(view["screens"]?[4]?["segue"] == "!" && view["screens"]?[4]?["container"] == "navigation")
        #expect(view.top?["params"] == ["id": 88])

        view = try trail.take(try navd.back(session))
        #expect(view["path"] == "/top/home#friend/show_friend(name=ken)!/list_coupon")
        #expect(
            view.eventNames == [
                "transitionStart", "willDisappear:show_coupon", "willAppear:list_coupon", "didDisappear:show_coupon",
                "didAppear:list_coupon", "remove:show_coupon", "transitionEnd"
            ])

        // Switching tabs saves friend's stack up to its first modal; the modal is removed.
        view = try trail.take(try navd.navigate(session, "^/top/home#profile/help"))
        #expect(view["path"] == "/top/home#profile/help")
        #expect(
            view.eventNames == [
                "transitionStart", "awake:profile", "awake:help", "willDisappear:list_coupon", "willAppear:help",
                "didDisappear:list_coupon", "didAppear:help", "remove:list_coupon", "transitionEnd"
            ])
        let tabs = try #require(view["screens"]?[1]?["tabs"])
        #expect(tabs["selected"] == "profile")
        #expect(tabs["saved"]?["friend"]?.array?.compactMap { $0["id"]?.string } == ["e3", "e4"])
        let profile = try #require(view["screens"]?[2])
        #expect(profile["scene"] == "profile")
        #expect(profile["deps"] == ["user": "u1", "locale": "ja"])
        #expect(profile["state"] == ["editing": false])
        let profileID = try #require(profile["id"]?.string)

        // Switching back restores the saved stack: the same screens, no awake, no remove.
        view = try trail.take(try navd.navigate(session, "^/top/home#friend"))
        #expect(view["path"] == "/top/home#friend/show_friend(name=ken)")
        #expect(
            view.eventNames == [
                "transitionStart", "willDisappear:help", "willAppear:show_friend", "didDisappear:help", "didAppear:show_friend",
                "transitionEnd"
            ])
        #expect(view.top?["id"] == "e4")
        #expect(view["screens"]?[1]?["tabs"]?["saved"]?["profile"]?.array?.compactMap { $0["scene"]?.string } == ["profile", "help"])

        // A saved (covered) screen's state can be patched too.
        view = try trail.take(try navd.patchState(session, screen: profileID, ["seen": true]))
        #expect(view.eventNames == ["stateChanged:profile"])
        view = try trail.take(try navd.navigate(session, "^/top/home#profile"))
        #expect(view["path"] == "/top/home#profile/help")
        #expect(
            view.eventNames == [
                "transitionStart", "willDisappear:show_friend", "willAppear:help", "didDisappear:show_friend", "didAppear:help",
                "transitionEnd"
            ])
        #expect(view["screens"]?[2]?["state"] == ["editing": false, "seen": true])

        // State: RFC 7396 merge patches, as merge-patch+json and as plain JSON.
        view = try trail.take(try navd.patchState(session, screen: profileID, ["editing": true, "draft": ["bio": "hi"], "seen": nil]))
        #expect(view.eventNames == ["stateChanged:profile"])
        #expect(view["screens"]?[2]?["state"] == ["editing": true, "draft": ["bio": "hi"]])
        view = try trail.take(try navd.patchState(session, screen: profileID, ["draft": nil], contentType: "application/json"))
        #expect(view["screens"]?[2]?["state"] == ["editing": true])
        let version = view["version"]
        view = try trail.take(try navd.patchState(session, screen: profileID, ["editing": true]))
        #expect(view["version"] == version)
        #expect(view.eventNames == [])
        let unknownScreen = try navd.patchState(session, screen: "e999", ["a": 1])
        #expect(unknownScreen.status == 404 && unknownScreen.code == "not_found")

        // A global link, then a scene link with a typed param.
        view = try trail.take(try navd.transition(session, "top"))
        #expect(view["path"] == "/top")
        // Every screen that goes gets `remove`, top to root, the tab bar's saved stacks included.
        #expect(
            view.eventNames == [
                "transitionStart", "willDisappear:help", "willAppear:top", "didDisappear:help", "didAppear:top",
                "remove:help", "remove:profile", "remove:show_friend", "remove:friend", "remove:home", "transitionEnd"
            ])
        view = try trail.take(try navd.transition(session, "news", params: ["category": 3]))
        #expect(view["path"] == "/top/list_news(category=3)")
        #expect(view.top?["params"] == ["category": 3])
        #expect(
            view.eventNames == [
                "transitionStart", "awake:list_news", "willDisappear:top", "willAppear:list_news", "didDisappear:top",
                "didAppear:list_news", "transitionEnd"
            ])
        let listID = try #require(view.top?["id"]?.string)

        // Navigating to where the session is: 200, same version, no events.
        let noOp = try navd.navigate(session, "^/top/list_news(category=3)")
        view = try trail.take(noOp)
        #expect(view["version"] == 11)
        #expect(view.eventNames == [])
        #expect(noOp.headers["etag"] == "\"11\"")

        // Params: replaced, not merged; defaults filled; typed by the scene's schema.
        view = try trail.take(try navd.setParams(session, screen: listID, ["category": 7]))
        #expect(view["path"] == "/top/list_news(category=7)")
        #expect(view.eventNames == ["paramsChanged:list_news"])
        view = try trail.take(try navd.setParams(session, screen: listID, [:]))
        #expect(view["path"] == "/top/list_news(category=0)")
        view = try trail.take(try navd.setParams(session, screen: listID, ["category": "5"]))
        #expect(view.top?["params"] == ["category": 5])
        let badParam = try navd.setParams(session, screen: listID, ["category": "x"])
        #expect(badParam.status == 422 && badParam.code == "invalid_params")
        #expect(try badParam.json()["param"] == "category")
        let notTop = try navd.setParams(session, screen: "e1", [:])
        #expect(notTop.status == 400 && notTop.code == "invalid_request")
        let noScreen = try navd.setParams(session, screen: "e999", [:])
        #expect(noScreen.status == 404 && noScreen.code == "not_found")

        view = try trail.take(try navd.transition(session, "show", params: ["id": 5]))
        #expect(view["path"] == "/top/list_news(category=5)/show_news(id=5)")

        // The event log holds exactly what the answers carried, paged with after/next.
        var logged: [JSON] = []
        var after = 0
        while true {
            let page = try navd.events(session, after: after, limit: 4).json()
            let events = page["events"]?.array ?? []
            #expect(events.count <= 4)
            if events.isEmpty {
                #expect(page["next"] == .int(after))
                break
            }
            #expect(page["next"] == events.last?["seq"])
            logged += events
            after = page["next"]?.int ?? Int.max
        }
        #expect(logged == trail.events)
        #expect(logged.compactMap { $0["seq"]?.int } == Array(1...logged.count))
        let everything = try navd.events(session).json()
        #expect(everything["events"]?.array?.count == min(100, logged.count))
        let tail = try navd.events(session, after: logged.count - 2).json()
        #expect(tail["events"]?.array == Array(logged.suffix(2)))
    }

    @Test func aProtectedSceneIsRefusedWithoutItsRequirementAndNothingChanges() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        let created = session.created["events"]?.array?.count ?? 0
        for path in ["home#profile", "^/top/home#profile/help"] {
            let refused = try navd.navigate(session, path)
            #expect(refused.status == 403)
            #expect(refused.code == "transition_refused")
        }
        let view = try navd.view(session)
        #expect(view["version"] == 1)
        #expect(view["path"] == "/top")
        let log = try navd.events(session, after: created).json()
        #expect(log["events"] == [])
        #expect(log["next"] == .int(created))

        // The same graph lets a session with a user in.
        let withUser = try navd.createSession(context: ["user": "u2"])
        let entered = try navd.navigate(withUser, "home#profile")
        #expect(entered.status == 200)
        #expect(try entered.json().top?["deps"] == ["user": "u2"])
    }

    /// Every transcript of `news-transcripts.json`, driven over HTTP.
    @Test(arguments: NewsTranscript.all)
    func transcript(_ transcript: NewsTranscript) throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession(context: transcript.context)
        var view = session.created
        for (number, step) in transcript.steps.enumerated() {
            let label = "\(transcript.name), step \(number + 1): \(step.text)"
            let answer: HTTPMessage
            if let path = step["navigate"]?.string {
                answer = try navd.navigate(session, path)
            } else if let link = step["link"] {
                answer = try navd.transition(session, link["name"]?.string ?? "", params: link["params"])
            } else if let count = step["back"]?.int {
                answer = try navd.back(session, count: count)
            } else if step["exit"] != nil {
                answer = try navd.exit(session)
            } else if let params = step["setParams"] {
                answer = try navd.setParams(session, screen: view.top?["id"]?.string ?? "", params)
            } else if let patch = step["patchState"] {
                let screen = view["screens"]?.array?.first { $0["scene"] == patch["scene"] }?["id"]?.string ?? ""
                answer = try navd.patchState(session, screen: screen, patch["patch"] ?? [:])
            } else {
                Issue.record("unknown step \(label)")
                continue
            }
            if let code = step["error"]?.string {
                #expect(answer.code == code, "\(label): \(answer)")
                #expect((400..<500).contains(answer.status), "\(label)")
                let problem = try answer.json()
                if let param = step["param"] { #expect(problem["param"] == param, "\(label)") }
                if let offset = step["offset"] { #expect(problem["offset"] == offset, "\(label)") }
                let after = try navd.view(session)
                #expect(after["version"] == view["version"] && after["path"] == view["path"], "\(label): a refusal changed the session")
                continue
            }
            try #require(answer.status == 200, "\(label): \(answer)")
            let previous = view
            view = try answer.json()
            if let path = step["path"] { #expect(view["path"] == path, "\(label)") }
            if let events = step["events"]?.array {
                let expected = events.map { pair in (pair.array ?? []).compactMap(\.string).joined(separator: ":") }
                #expect(view.eventNames == expected, "\(label)")
                let expectedVersion = (previous["version"]?.int ?? 0) + (expected.isEmpty ? 0 : 1)
                #expect(view["version"] == .int(expectedVersion), "\(label)")
            }
            for (field, value) in step["top"]?.object ?? [:] {
                #expect(view.top?[field] == value, "\(label): top.\(field)")
            }
        }
    }

    @Test func ifMatchRefusesAStaleVersionAndChangesNothing() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        let moved = try navd.navigate(session, "list_news")
        #expect(moved.headers["etag"] == "\"2\"")
        let logged = try navd.events(session).json()["next"]

        let stale: [String: String] = ["If-Match": "\"1\""]
        let refusals = [
            try navd.navigate(session, "help", headers: stale),
            try navd.transition(session, "login", headers: stale),
            try navd.exit(session, headers: stale),
            try navd.send("POST", session.url + "/back", json: [:], token: session.token, headers: stale),
            try navd.send("PUT", session.url + "/screens/e2/params", json: ["category": 4], token: session.token, headers: stale),
            try navd.send(
                "PATCH", session.url + "/screens/e2/state", json: ["a": 1], token: session.token, headers: stale,
                contentType: "application/merge-patch+json"),
            try navd.navigate(session, "help", headers: ["If-Match": "\"abc\""]),
            try navd.navigate(session, "help", headers: ["If-Match": "\"3\""])
        ]
        for refused in refusals {
            #expect(refused.status == 412, "\(refused)")
            #expect(refused.code == "version_conflict")
        }
        let view = try navd.view(session)
        #expect(view["version"] == 2)
        #expect(view["path"] == "/top/list_news(category=0)")
        #expect(try navd.events(session).json()["next"] == logged)

        let matching = try navd.navigate(session, "show_news(id=1)", headers: ["If-Match": "\"2\""])
        #expect(matching.status == 200)
        #expect(matching.headers["etag"] == "\"3\"")
        let any = try navd.exit(session, headers: ["If-Match": "*"])
        #expect(any.status == 200)
        #expect(try any.json()["version"] == 4)
    }

    /// If-Match is a list of entity tags compared strongly (RFC 9110 §13.1.1), and DELETE honours it.
    @Test func ifMatchIsAStrongListAndDeleteHonoursIt() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        #expect(try navd.navigate(session, "list_news").status == 200)

        // At version 2: a weak tag never matches, nor does a list without "2", a tag spelled
        // otherwise, or a value that is not a list of entity tags.
        for ifMatch in [#"W/"2""#, #""1", "3""#, #"W/"2", "3""#, #""02""#, #""2"#, #"2"#, #""2" "3""#, #""1", *"#, ""] {
            let refused = try navd.navigate(session, "help", headers: ["If-Match": ifMatch])
            #expect(refused.status == 412 && refused.code == "version_conflict", "If-Match \(ifMatch): \(refused)")
            #expect(refused.headers["etag"] == #""2""#)
        }
        // A body the schema forbids is refused as such, whatever the precondition says.
        let long = try navd.navigate(session, String(repeating: "a", count: 5000), headers: ["If-Match": #""1""#])
        #expect(long.status == 400 && long.code == "invalid_path", "\(long)")
        #expect(try navd.view(session)["version"] == 2)
        // Any listed strong tag matching is a match.
        let listed = try navd.navigate(session, "show_news(id=1)", headers: ["If-Match": #""1", W/"3", "2""#])
        #expect(listed.status == 200, "\(listed)")
        #expect(listed.headers["etag"] == #""3""#)
        let spaced = try navd.exit(session, headers: ["If-Match": #" "7" ,"3","#])
        #expect(spaced.status == 200, "\(spaced)")

        // DELETE: a stale If-Match is 412 and nothing is deleted; a matching one deletes.
        let stale = try navd.send("DELETE", session.url, token: session.token, headers: ["If-Match": #""3""#])
        #expect(stale.status == 412 && stale.code == "version_conflict", "\(stale)")
        let weak = try navd.send("DELETE", session.url, token: session.token, headers: ["If-Match": #"W/"4""#])
        #expect(weak.status == 412 && weak.code == "version_conflict", "\(weak)")
        #expect(try navd.view(session)["version"] == 4)
        let gone = try navd.send("DELETE", session.url, token: session.token, headers: ["If-Match": #""3", "4""#])
        #expect(gone.status == 204, "\(gone)")

        // `*` matches any version of a session that exists.
        let other = try navd.createSession()
        #expect(try navd.send("DELETE", other.url, token: other.token, headers: ["If-Match": "*"]).status == 204)
    }

    /// A retry is the same request when its route, If-Match and parsed body are (docs/design.md, "Idempotency").
    @Test func anIdempotentRetryComparesParsedJSONAndIfMatch() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        let key = "json-\(UUID().uuidString)"
        func post(_ route: String, _ body: String, _ headers: [String: String] = [:]) throws -> HTTPMessage {
            try navd.request(
                "POST", session.url + route,
                headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "application/json", "Idempotency-Key": key].merging(
                    headers
                ) { $1 },
                body: Array(body.utf8)
            )
        }
        let first = try post("/transitions", #"{"name":"news","params":{"category":3}}"#, ["If-Match": #""1""#])
        #expect(first.status == 200, "\(first)")
        // The same JSON with other blanks, member order and number spelling: the first answer again.
        let retry = try post("/transitions", "{ \"params\" : { \"category\" : 3.0 } ,\n \"name\": \"news\" }", ["If-Match": #""1""#])
        #expect(retry.status == 200, "\(retry)")
        #expect(retry.headers["idempotent-replayed"] == "true")
        #expect(retry.body == first.body)
        // Another If-Match, no If-Match, another route or another body: the key was used for another request.
        for reused in [
            try post("/transitions", #"{"name":"news","params":{"category":3}}"#, ["If-Match": #""2""#]),
            try post("/transitions", #"{"name":"news","params":{"category":3}}"#),
            try post("/navigate", #"{"path":"help"}"#, ["If-Match": #""1""#]),
            try post("/transitions", #"{"name":"news","params":{"category":4}}"#, ["If-Match": #""1""#])
        ] {
            #expect(reused.status == 422 && reused.code == "idempotency_key_reused", "\(reused)")
        }
        #expect(try navd.view(session)["version"] == 2)
    }

    /// Whatever openapi.yaml's request schemas forbid is 400 invalid_request naming the member,
    /// and changes nothing.
    @Test func bodiesAndQueriesTheSchemaForbidsAreRefusedWithTheirParam() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        #expect(try navd.navigate(session, "list_news").status == 200)
        let cases: [(String, String, String, String)] = [
            ("POST", "/v1/sessions", #"{"start": null}"#, "start"),
            ("POST", "/v1/sessions", #"{"graph": null}"#, "graph"),
            ("POST", "/v1/sessions", #"{"context": null}"#, "context"),
            ("POST", "/v1/sessions", #"{"bogus": 1}"#, "bogus"),
            ("POST", session.url + "/navigate", #"{"path": null}"#, "path"),
            ("POST", session.url + "/navigate", #"{}"#, "path"),
            ("POST", session.url + "/transitions", #"{"name": "news", "params": null}"#, "params"),
            ("POST", session.url + "/transitions", #"{"name": "news", "params": {"category": null}}"#, "params.category"),
            ("POST", session.url + "/transitions", #"{"name": "news", "params": {"category": [3]}}"#, "params.category"),
            ("POST", session.url + "/back", #"{"count": 2147483648}"#, "count"),
            ("POST", session.url + "/back", #"{"count": 1.0}"#, "count"),
            ("POST", session.url + "/back", #"{"count": 1e0}"#, "count"),
            ("POST", session.url + "/back", #"{"count": 0}"#, "count"),
            ("POST", session.url + "/back", #"{"count": null}"#, "count"),
            ("POST", session.url + "/exit", #"{"outcome": 1}"#, "outcome"),
            ("PUT", session.url + "/screens/e2/params", #"{"category": null}"#, "category"),
            ("PUT", session.url + "/screens/e2/params", #"{"category": {"a": 1}}"#, "category")
        ]
        for (method, target, body, param) in cases {
            let answer = try navd.request(
                method, target, headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "application/json"],
                body: Array(body.utf8)
            )
            #expect(answer.status == 400 && answer.code == "invalid_request", "\(method) \(target) \(body): \(answer)")
            #expect(try answer.json()["param"] == .string(param), "\(method) \(target) \(body): \(answer)")
        }
        for query in ["after=9007199254740992", "after=%2B1", "after=1.0", "limit=1e2", "limit=%205"] {
            let answer = try navd.send("GET", session.url + "/events?" + query, token: session.token)
            #expect(answer.status == 400 && answer.code == "invalid_request", "\(query): \(answer)")
        }
        #expect(try navd.send("GET", session.url + "/events?after=9007199254740991", token: session.token).status == 200)
        let view = try navd.view(session)
        #expect(view["version"] == 2 && view["path"] == "/top/list_news(category=0)", "\(view)")
    }

    /// A replay never hands out a session that is gone: deleting a session forgets the answers
    /// about it, so a create retried after its session was deleted creates a new one (and a
    /// change retried after the delete finds no session).
    @Test func aReplayNeverPointsAtADeletedSession() throws {
        let navd = try DaemonHarness.shared()
        let key = "create-\(UUID().uuidString)"
        let headers = ["Content-Type": "application/json", "Idempotency-Key": key]
        let first = try navd.request("POST", "/v1/sessions", headers: headers, body: Array("{}".utf8))
        #expect(first.status == 201)
        let replay = try navd.request("POST", "/v1/sessions", headers: headers, body: Array("{}".utf8))
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(replay.body == first.body)
        let id = try #require(try first.json()["id"]?.string)
        let token = try #require(try first.json()["token"]?.string)
        let changeKey = ["Idempotency-Key": "change-\(UUID().uuidString)"]
        #expect(
            try navd.send("POST", "/v1/sessions/\(id)/navigate", json: ["path": "help"], token: token, headers: changeKey).status == 200)
        #expect(try navd.send("DELETE", "/v1/sessions/\(id)", token: token).status == 204)

        let afterDelete = try navd.request("POST", "/v1/sessions", headers: headers, body: Array("{}".utf8))
        #expect(afterDelete.status == 201)
        #expect(afterDelete.headers["idempotent-replayed"] == nil)
        let newID = try #require(try afterDelete.json()["id"]?.string)
        let newToken = try #require(try afterDelete.json()["token"]?.string)
        #expect(newID != id)
        #expect(try navd.send("GET", "/v1/sessions/\(newID)", token: newToken).status == 200)
        // The change's answer went with its session: the retry is evaluated again, and refused.
        #expect(
            try navd.send("POST", "/v1/sessions/\(id)/navigate", json: ["path": "help"], token: token, headers: changeKey).status == 401)
    }

    @Test func anIdempotentRetryGetsTheFirstAnswerAndAppliesOnce() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        let key: [String: String] = ["Idempotency-Key": "retry-\(UUID().uuidString)"]

        let first = try navd.navigate(session, "list_news/show_news(id=9)", headers: key)
        let retry = try navd.navigate(session, "list_news/show_news(id=9)", headers: key)
        #expect(first.status == 200 && retry.status == 200)
        #expect(retry.body == first.body)
        #expect(retry.headers["etag"] == first.headers["etag"])
        #expect(retry.headers["idempotent-replayed"] == "true")
        #expect(try navd.view(session)["version"] == 2)

        let reused = try navd.navigate(session, "help", headers: key)
        #expect(reused.status == 422)
        #expect(reused.code == "idempotency_key_reused")
        #expect(try navd.view(session)["path"] == "/top/list_news(category=0)/show_news(id=9)")

        // Keys belong to a session: another session applies its own request under the same key.
        let other = try navd.createSession()
        let elsewhere = try navd.navigate(other, "list_news/show_news(id=9)", headers: key)
        #expect(elsewhere.status == 200)
        #expect(try elsewhere.json()["id"] == .string(other.id))

        // A refusal is not kept: the retry is evaluated again.
        let refusalKey: [String: String] = ["Idempotency-Key": "refused-\(UUID().uuidString)"]
        #expect(try navd.navigate(session, "nosuch", headers: refusalKey).code == "unknown_scene")
        #expect(try navd.navigate(session, "nosuch", headers: refusalKey).code == "unknown_scene")

        // Creating a session: the retry returns the same session (and token), once.
        let createKey: [String: String] = ["Idempotency-Key": "create-\(UUID().uuidString)"]
        let body: JSON = ["context": ["user": "u9"]]
        let created = try navd.send("POST", "/v1/sessions", json: body, headers: createKey)
        let again = try navd.send("POST", "/v1/sessions", json: body, headers: createKey)
        #expect(created.status == 201 && again.status == 201)
        #expect(again.body == created.body)
        #expect(again.headers["location"] == created.headers["location"])
        let otherBody = try navd.send("POST", "/v1/sessions", json: ["context": ["user": "u8"]], headers: createKey)
        #expect(otherBody.status == 422)
        #expect(otherBody.code == "idempotency_key_reused")

        let tooLong = try navd.navigate(session, "help", headers: ["Idempotency-Key": String(repeating: "k", count: 201)])
        #expect(tooLong.status == 400 && tooLong.code == "invalid_request")
    }

    @Test func sessionRoutesNeedTheSessionsOwnToken() throws {
        let navd = try DaemonHarness.shared()
        let mine = try navd.createSession()
        let theirs = try navd.createSession()

        for answer in [
            try navd.request("GET", mine.url),
            try navd.send("POST", mine.url + "/navigate", json: ["path": "help"]),
            try navd.request("GET", mine.url + "/events"),
            try navd.request("DELETE", mine.url),
            try navd.request("GET", mine.url, headers: ["Authorization": "Basic dTpw"]),
            try navd.request("GET", mine.url, headers: ["Authorization": "Bearer"])
        ] {
            #expect(answer.status == 401, "\(answer)")
            #expect(answer.code == "unauthorized")
            #expect(answer.headers["www-authenticate"] == "Bearer", "no token sent: a bare challenge (RFC 6750 §3)")
        }
        // A wrong token gets one answer whether or not the session exists (RFC 6750 §3.1
        // invalid_token): another session's token, a made-up one, a token on an id that was
        // never issued, a deleted session's own token. The bodies are byte for byte the same,
        // so nothing tells a token holder which sessions exist.
        let nowhere = "/v1/sessions/0d41b7e2c95a4f38b6e1a7c3d2f05e9b"
        var wrong = [
            try navd.send("GET", mine.url, token: theirs.token),
            try navd.send("POST", mine.url + "/navigate", json: ["path": "help"], token: theirs.token),
            try navd.send("GET", mine.url, token: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
            try navd.send("GET", nowhere, token: mine.token),
            try navd.send("POST", nowhere + "/navigate", json: ["path": "help"], token: mine.token),
            try navd.send("DELETE", mine.url, token: theirs.token),
            try navd.send("DELETE", nowhere, token: mine.token)
        ]
        #expect(try navd.view(mine)["version"] == 1)

        let deleted = try navd.send("DELETE", mine.url, token: mine.token)
        #expect(deleted.status == 204)
        #expect(deleted.body.isEmpty)
        wrong += [try navd.get(mine), try navd.navigate(mine, "help"), try navd.send("GET", mine.url + "/events", token: mine.token)]
        for answer in wrong {
            #expect(answer.status == 401, "\(answer)")
            #expect(answer.code == "unauthorized")
            #expect(answer.headers["www-authenticate"] == #"Bearer error="invalid_token""#)
            #expect(answer.body == wrong[0].body, "\(answer)")
        }
        #expect(try navd.view(theirs)["version"] == 1)
    }

    @Test func adminRoutesAreForbiddenWithoutAConfiguredAdminToken() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        for answer in [
            try navd.request("GET", "/v1/sessions"),
            try navd.send("GET", "/v1/sessions", token: session.token),
            try navd.send(
                "PUT", "/v1/graphs/news", json: ["name": "news", "start": "/top", "scenes": ["top": [:]]], token: "0123456789abcdef")
        ] {
            #expect(answer.status == 403, "\(answer)")
            #expect(answer.code == "forbidden")
        }
        let graphs = try navd.request("GET", "/v1/graphs").json()
        #expect(graphs == ["graphs": [["name": "news", "version": 1, "start": "/top"]]])
        let graph = try navd.request("GET", "/v1/graphs/news").json()
        #expect(graph["version"] == 1)
        #expect(graph["document"]?["scenes"]?["profile"]?["requires"] == ["user"])
    }
}

/// One case of `Tests/NavCoreTests/Fixtures/news-transcripts.json` (a copy of
/// `shared/conformance/news-transcripts.json`).
struct NewsTranscript: Sendable, CustomTestStringConvertible {
    var name: String
    var context: JSON?
    var steps: [JSON]

    var testDescription: String { name }

    static let all: [NewsTranscript] = {
        let url = DaemonHarness.packageRoot.appendingPathComponent("Tests/NavCoreTests/Fixtures/news-transcripts.json")
        guard let data = FileManager.default.contents(atPath: url.path), let document = try? JSON(parsing: Array(data)) else {
            return [NewsTranscript(name: "news-transcripts.json is missing", context: nil, steps: [["unreadable": true]])]
        }
        return (document["cases"]?.array ?? []).map { item in
            NewsTranscript(name: item["name"]?.string ?? "?", context: item["context"], steps: item["steps"]?.array ?? [])
        }
    }()
}

// MARK: - Admin token, graph upload

private let adminToken = "admin-0123456789abcdef"

@Suite(.sharedDaemon(arguments: ["--admin-token", adminToken]))
struct AdminFlowTests {
    static let admin: [String: String] = ["Authorization": "Bearer \(adminToken)"]

    static let shopJSON: JSON = [
        "name": "shop", "start": "/catalog",
        "scenes": [
            "catalog": ["links": ["item": ["path": "item(sku={sku})"]]],
            "item": ["params": ["sku": ["type": "string", "required": true]]]
        ]
    ]

    static let shopYAML = """
        name: shop
        start: /catalog
        scenes:
          catalog:
            links:
              item: {path: "item(sku={sku})"}
              cart: {path: "!cart"}
          item:
            params:
              sku: {type: string, required: true}
          cart: {}
        """

    @Test func theAdminTokenListsSessionsAndOpensEverySession() throws {
        let navd = try DaemonHarness.shared()
        let session = try navd.createSession()
        let missing = try navd.request("GET", "/v1/sessions")
        #expect(missing.status == 401 && missing.code == "unauthorized")
        for wrong in ["Bearer admin-0123456789abcdeX", "Bearer \(session.token)"] {
            let answer = try navd.request("GET", "/v1/sessions", headers: ["Authorization": wrong])
            #expect(answer.status == 403 && answer.code == "forbidden")
        }
        let listed = try navd.request("GET", "/v1/sessions", headers: Self.admin)
        #expect(listed.status == 200)
        let sessions = try listed.json()["sessions"]?.array ?? []
        #expect(sessions.contains { $0["id"] == .string(session.id) && $0["path"] == "/top" && $0["version"] == 1 })

        let read = try navd.request("GET", session.url, headers: Self.admin)
        #expect(read.status == 200)
        let moved = try navd.send("POST", session.url + "/navigate", json: ["path": "list_news"], headers: Self.admin)
        #expect(try moved.json()["version"] == 2)

        // Only the admin token learns that a session does not exist (a session's token gets 401).
        let deleted = try navd.request("DELETE", session.url, headers: Self.admin)
        #expect(deleted.status == 204)
        for answer in [
            try navd.request("GET", session.url, headers: Self.admin),
            try navd.send("POST", session.url + "/navigate", json: ["path": "help"], headers: Self.admin),
            try navd.request("GET", "/v1/sessions/0d41b7e2c95a4f38b6e1a7c3d2f05e9b", headers: Self.admin)
        ] {
            #expect(answer.status == 404 && answer.code == "session_not_found", "\(answer)")
        }
        let holder = try navd.send("GET", session.url, token: session.token)
        #expect(holder.status == 401 && holder.code == "unauthorized", "\(holder)")
    }

    @Test func graphsUploadAsJSONThenYAMLAsNewVersions() throws {
        let navd = try DaemonHarness.shared()
        let first = try navd.request(
            "PUT", "/v1/graphs/shop", headers: Self.admin.merging(["Content-Type": "application/json"]) { $1 }, body: Self.shopJSON.bytes)
        #expect(first.status == 201, "\(first)")
        #expect(try first.json()["name"] == "shop" && first.json()["version"] == 1)
        let early = try navd.createSession(graph: "shop")
        #expect(early.created["graph"] == ["name": "shop", "version": 1])

        let second = try navd.request(
            "PUT", "/v1/graphs/shop", headers: Self.admin.merging(["Content-Type": "application/yaml"]) { $1 },
            body: Array(Self.shopYAML.utf8))
        #expect(second.status == 200, "\(second)")
        #expect(try second.json()["version"] == 2)
        #expect(try second.json()["warnings"] == [])

        let read = try navd.request("GET", "/v1/graphs/shop").json()
        #expect(read["version"] == 2)
        #expect(read["start"] == "/catalog")
        #expect(read["document"]?["scenes"]?["cart"] == [:])
        let list = try navd.request("GET", "/v1/graphs").json()["graphs"]?.array ?? []
        #expect(list.contains(["name": "shop", "version": 2, "start": "/catalog"]))

        // New sessions take the latest version; old ones keep theirs.
        let late = try navd.createSession(graph: "shop")
        #expect(late.created["graph"] == ["name": "shop", "version": 2])
        #expect(try navd.transition(late, "cart").json()["path"] == "/catalog!cart")
        #expect(try navd.transition(early, "cart").code == "unknown_transition")
        #expect(try navd.transition(early, "item", params: ["sku": "a b"]).json()["path"] == "/catalog/item(sku=a%20b)")
    }

    /// Found by schemathesis: a link's `description` of the wrong type was stored as a new version.
    @Test func aGraphWhoseDescriptionsAreNotStringsIsRefused() throws {
        let navd = try DaemonHarness.shared()
        let json = Self.admin.merging(["Content-Type": "application/json"]) { $1 }
        let document = #"{"name": "described", "start": "/a", "scenes": {"a": {}}, "links": {"home": {"path": "^/a", "description": {}}}}"#
        let refused = try navd.request("PUT", "/v1/graphs/described", headers: json, body: Array(document.utf8))
        #expect(refused.status == 422 && refused.code == "invalid_graph", "\(refused)")
        #expect(try refused.json()["issues"]?.array?.contains { $0["pointer"] == "/links/home/description" } == true)
        #expect(try navd.request("GET", "/v1/graphs/described").status == 404, "nothing was stored")
    }

    @Test func anInvalidGraphIsRefusedWithEveryIssueAndItsPointer() throws {
        let navd = try DaemonHarness.shared()
        let json = Self.admin.merging(["Content-Type": "application/json"]) { $1 }
        let broken: JSON = [
            "name": "broken", "start": "/home",
            "scenes": ["up": [:], "home": ["links": ["go": ["path": "nowhere"]]]],
            "links": ["back": ["path": "^/missing"]]
        ]
        let refused = try navd.request("PUT", "/v1/graphs/broken", headers: json, body: broken.bytes)
        #expect(refused.status == 422)
        #expect(refused.code == "invalid_graph")
        let issues = try refused.json()["issues"]?.array ?? []
        let pointers = Set(issues.compactMap { $0["pointer"]?.string })
        #expect(pointers.isSuperset(of: ["/scenes/up", "/scenes/home/links/go/path", "/links/back/path"]), "\(issues)")
        #expect(issues.allSatisfy { $0["severity"] == "error" || $0["severity"] == "warning" })
        #expect(try navd.request("GET", "/v1/graphs/broken").code == "not_found")

        let misnamed = try navd.request("PUT", "/v1/graphs/other", headers: json, body: Self.shopJSON.bytes)
        #expect(misnamed.status == 422 && misnamed.code == "invalid_graph")
        #expect(try misnamed.json()["issues"]?[0]?["pointer"] == "/name")

        let badYAML = try navd.request(
            "PUT", "/v1/graphs/shop", headers: Self.admin.merging(["Content-Type": "application/yaml"]) { $1 },
            body: Array("name: [shop\nstart: {".utf8))
        #expect(badYAML.status == 422 && badYAML.code == "invalid_graph", "\(badYAML)")
        #expect(try badYAML.json()["issues"]?[0]?["pointer"] == "")
        let badJSON = try navd.request("PUT", "/v1/graphs/shop", headers: json, body: Array("{\"name\":".utf8))
        #expect(badJSON.status == 400 && badJSON.code == "malformed_json")
        let text = try navd.request(
            "PUT", "/v1/graphs/shop", headers: Self.admin.merging(["Content-Type": "text/plain"]) { $1 }, body: Self.shopJSON.bytes)
        #expect(text.status == 415 && text.code == "unsupported_media_type")
        let anonymous = try navd.request("PUT", "/v1/graphs/shop", headers: ["Content-Type": "application/json"], body: Self.shopJSON.bytes)
        #expect(anonymous.status == 401 && anonymous.code == "unauthorized")
        let wrong = try navd.request(
            "PUT", "/v1/graphs/shop", headers: ["Content-Type": "application/json", "Authorization": "Bearer admin-0123456789abcdeX"],
            body: Self.shopJSON.bytes)
        #expect(wrong.status == 403 && wrong.code == "forbidden")
    }
}
