import AsyncHTTPClient
import Foundation
import NavClient
import Testing

/// NavClient driving a live navd (the repository's own binary) through the flows (docs/design.md, "Flows"), with
/// every refusal checked as a typed ``NavProblem``.
@Suite("NavClient against a live navd")
struct NavClientFlowTests {
    @Test func aSessionIsCreatedNavigatedLinkedAndGoesBackWithAResult() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let client = navd.client()
        #expect(try await client.health() == "ok")
        #expect(try await client.readiness() == "ready")
        #expect(try await client.graphs().map(\.name).sorted() == ["news", "stopwatch"])

        let created = try await client.createSession(context: ["user": "u1", "locale": "ja"])
        #expect(created.version == 1)
        #expect(created.path == "/top")
        #expect(created.events.map(\._type) == [.transitionStart, .awake, .willAppear, .didAppear, .transitionEnd])
        #expect(created.events.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(created.actions.links.map(\.name).contains("news"))
        #expect(JSONValue(try await client.session(created).view().context) == ["user": "u1", "locale": "ja"])
        let session = client.session(created)

        // A deep link: two screens pushed in one transition, the default filled in.
        let deep = try await session.navigate("list_news/show_news(id=44)")
        #expect(deep.version == 2)
        #expect(deep.path == "/top/list_news(category=0)/show_news(id=44)")
        #expect(deep.screens.map(\.scene) == ["top", "list_news", "show_news"])
        #expect(deep.top?.params.additionalProperties["id"]?.json == 44)
        #expect(deep.events.first?.from == "/top")
        #expect(deep.actions.back == 2)

        // Back one, then a named link with a typed parameter.
        let back = try await session.back()
        #expect(back.path == "/top/list_news(category=0)")
        let linked = try await session.link("show", params: ["id": 3])
        #expect(linked.path == "/top/list_news(category=0)/show_news(id=3)")
        #expect(linked.version == 4)

        // A picker: exit with a result, which the screen revealed receives right before
        // transitionEnd; back with a result likewise.
        _ = try await session.navigate("^/top/list_news!pick_category")
        let picked = try await session.exit(result: ["category": 3])
        #expect(picked.path == "/top/list_news(category=0)")
        let result = try #require(picked.events.first { $0._type == .result })
        #expect(result.scene == "list_news")
        #expect(result.from == "pick_category")
        #expect(result.value.map(JSONValue.init) == ["category": 3])
        #expect(picked.events.suffix(2).map(\._type) == [.result, .transitionEnd])
        _ = try await session.navigate("!pick_category")
        let backed = try await session.back(1, result: "sports")
        #expect(backed.events.first { $0._type == .result }?.value.map(JSONValue.init) == "sports")

        // A no-op keeps the version and emits nothing.
        let same = try await session.navigate("^/top/list_news")
        #expect(same.version == backed.version)
        #expect(same.events.isEmpty)

        // The retained log, paged.
        let log = try await session.events(after: 0, limit: 5)
        #expect(log.events.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(log.next == 5)
        let caughtUp = try await session.events(after: backed.events.last?.seq ?? 0)
        #expect(caughtUp.events.isEmpty)

        try await session.delete()
        let gone = await refusal { try await session.view() }
        #expect(gone?.code == .unauthorized)
        #expect(gone?.status == 401)
        #expect(gone?.wwwAuthenticate == #"Bearer error="invalid_token""#)
    }

    @Test func aRedirectWaitsAsPendingAndTheLoginResumesIt() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let client = navd.client()
        let session = client.session(try await client.createSession(context: ["locale": "ja"]))

        let redirected = try await session.navigate("^/top/settings")
        #expect(redirected.path == "/top!login")
        #expect(redirected.pending == "/top/settings")
        #expect(try await session.view().pending == "/top/settings")

        // The context change satisfies `requires`: the same change, one version, goes on to the
        // pending target (contextChanged first, then that transition, login removed).
        let resumed = try await session.patchContext(["user": "ann"])
        #expect(resumed.version == redirected.version + 1)
        #expect(resumed.path == "/top/settings")
        #expect(resumed.pending == nil)
        #expect(resumed.events.first?._type == .contextChanged)
        #expect(resumed.events.first?.keys == ["user"])
        #expect(resumed.events.first?.screen == nil)
        #expect(resumed.events.contains { $0._type == .remove && $0.scene == "login" })
        #expect(Set(resumed.events.map(\.transition)) == [resumed.version])
        #expect(resumed.top?.deps.value["user"] as? String == "ann")
    }

    @Test func aCommandChangesStateAndAFormAsksBeforeItIsLeft() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let client = navd.client()
        let session = client.session(try await client.createSession(context: ["user": "ann"]))

        let form = try await session.navigate("edit_profile")
        let screen = try #require(form.top?.id)
        let typed = try await session.command("type", screen: screen, args: ["text": "hello"])
        #expect(typed.events.map(\._type) == [.stateChanged])
        #expect(typed.events.first?.command == "type")
        #expect(JSONValue(try #require(typed.top).state) == ["bio": "hello", "dirty": true])

        // Leaving a dirty form asks first: a typed refusal carrying the confirmation.
        let asked = try #require(await refusal { try await session.back() })
        #expect(asked.code == .confirmationRequired)
        #expect(asked.status == 409)
        let confirmation = try #require(asked.confirmation)
        #expect(confirmation.screen == screen)
        #expect(try await session.view().version == typed.version)  // nothing changed

        let confirmed = try await session.confirm(confirmation)
        #expect(confirmed.path == "/top")
        #expect(confirmed.version == typed.version + 1)
        // The token dies with the change it applied.
        #expect(await refusal { try await session.confirm(confirmation) }?.code == .versionConflict)

        // A missing argument names it.
        let again = try await session.navigate("edit_profile")
        let missing = await refusal { try await session.command("type", screen: try #require(again.top?.id)) }
        #expect(missing?.code == .invalidParams)
        #expect(missing?.param == "text")

        // The stopwatch's state machine: reset only while paused, refused with the guard's pointer.
        let stopwatch = client.session(try await client.createSession(graph: "stopwatch"))
        let refused = try #require(await refusal { try await stopwatch.command("reset", screen: "e1") })
        #expect(refused.code == .commandRefused)
        #expect(refused.pointer == "/mode")
        _ = try await stopwatch.command("start", screen: "e1")
        _ = try await stopwatch.command("tick", screen: "e1", args: ["count": 3])
        let stopped = try await stopwatch.command("stop", screen: "e1")
        #expect(JSONValue(try #require(stopped.top).state) == ["count": 3, "mode": "paused"])
        #expect(await refusal { try await stopwatch.command("lap", screen: "e1") }?.code == .unknownCommand)
    }

    @Test func refusalsAreTypedProblemsAndChangeNothing() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let client = navd.client()
        let created = try await client.createSession()
        let session = client.session(created)

        let badPath = try #require(await refusal { try await session.navigate("list_news(") })
        #expect(badPath.code == .invalidPath)
        #expect(badPath.status == 400)
        #expect(badPath.offset != nil)

        let batch = try #require(
            await refusal {
                try await session.batch([.navigate("^/top"), .link("news", params: ["category": 2]), .navigate("nosuch")])
            })
        #expect(batch.code == .unknownScene)
        #expect(batch.index == 2)

        #expect(await refusal { try await session.exit() }?.code == .stackUnderflow)
        #expect(await refusal { try await session.link("nosuch") }?.code == .unknownTransition)
        let badParams = await refusal { try await session.link("news", params: ["category": "x"]) }
        #expect(badParams?.code == .invalidParams)
        #expect(badParams?.param == "category")

        // Optimistic concurrency: a stale If-Match is refused; the current one applies.
        #expect(await refusal { try await session.navigate("list_news", ifMatch: 7) }?.code == .versionConflict)
        let applied = try await session.navigate("list_news", ifMatch: 1)
        #expect(applied.version == 2)

        // A batch applies as one version.
        let batched = try await session.batch([.navigate("^/top"), .link("news", params: ["category": 2])])
        #expect(batched.version == 3)
        #expect(batched.path == "/top/list_news(category=2)")
        #expect(Set(batched.events.map(\.transition)) == [3])

        // Idempotency: a retry gets the first answer again; the same key with another body is refused.
        let first = try await session.navigate("^/top", idempotencyKey: "k1")
        let retried = try await session.navigate("^/top", idempotencyKey: "k1")
        #expect(retried == first)
        #expect(await refusal { try await session.navigate("help", idempotencyKey: "k1") }?.code == .idempotencyKeyReused)

        // The watch token reads, never changes.
        let watcher = client.watcher(created)
        #expect(try await watcher.view().version == first.version)
        let write = try #require(await refusal { try await watcher.navigate("help") })
        #expect(write.code == .unauthorized)
        // No token at all.
        let anonymous = try #require(await refusal { try await client.session(id: created.id).view() })
        #expect(anonymous.code == .unauthorized)
        #expect(anonymous.wwwAuthenticate == "Bearer")

        // What the spec does not describe is not a problem: libmicrohttpd's bare 414 for a URL
        // longer than it buffers.
        do {
            _ = try await client.session(id: String(repeating: "a", count: 60_000), token: created.token).view()
            Issue.record("a 60,000-character URL was answered")
        } catch {
            guard case .unexpectedResponse(let operation, let status, _) = error else {
                Issue.record("expected an unexpected response, got \(error)")
                return
            }
            #expect(operation == "getSession")
            #expect(status == 414)
        }

        #expect(await refusal { try await client.createSession(graph: "shop") }?.code == .unknownGraph)
        #expect(await refusal { try await client.graph("shop") }?.code == .notFound)
        #expect(try await session.view().version == first.version)
    }

    @Test func graphsAreReadDrawnUploadedAndSessionsUpgraded() async throws {
        let navd = try LiveNavd(arguments: ["--admin-token", "admin-secret-0123456789"])
        defer { #expect(navd.stop() == 0) }
        let client = navd.client()
        let admin = navd.client(token: "admin-secret-0123456789")

        let news = try await client.graph("news")
        #expect(news.version == 1)
        #expect(news.start == "/top")
        #expect(try await client.diagram(ofGraph: "news", format: .dot).hasPrefix("digraph"))
        #expect(try await client.diagram(ofGraph: "news").contains("<svg"))
        #expect(try await client.openAPIDocument().contains("operationId: listEvents"))

        // Uploading needs the admin token.
        let yaml = """
            name: news
            start: /top
            scenes:
              top: {links: {news: {path: "list_news(category={category})"}}}
              list_news: {params: {category: {type: int, default: 0}}}
            """
        #expect(await refusal { try await client.putGraph(yaml: yaml, name: "news") }?.code == .unauthorized)
        let session = client.session(try await client.createSession())
        _ = try await session.navigate("list_news/show_news(id=1)")
        let uploaded = try await admin.putGraph(yaml: yaml, name: "news")
        #expect(uploaded.version == 2)

        // show_news is gone in version 2: the upgrade is refused with every reason.
        let refused = try #require(await refusal { try await session.upgrade() })
        #expect(refused.code == .upgradeRefused)
        #expect(refused.reasons?.isEmpty == false)
        #expect(refused.reasons?.first?.pointer.hasPrefix("/screens/") == true)

        let moved = try await session.back()
        let upgraded = try await session.upgrade()
        #expect(upgraded.graph.version == 2)
        #expect(upgraded.version == moved.version + 1)
        #expect(upgraded.events.map(\._type) == [.graphChanged])
        #expect(upgraded.events.first?.fromVersion == 1)
        #expect(upgraded.events.first?.toVersion == 2)
        #expect(try await admin.sessions().map(\.id) == [session.id])

        // Version 1 runs no session now and can be removed; version 2 is the newest.
        #expect(await refusal { try await admin.deleteGraph("news", version: 2) }?.code == .graphInUse)
        try await admin.deleteGraph("news", version: 1)
        #expect(await refusal { try await admin.graph("news", version: 1) }?.code == .notFound)
        #expect(await refusal { try await admin.deleteGraph("news", version: 1) }?.code == .notFound)

        // An invalid graph is refused with its issues.
        let invalid = try #require(
            await refusal { try await admin.putGraph(yaml: "name: bad\nstart: /nowhere\nscenes: {a: {}}\n", name: "bad") })
        #expect(invalid.code == .invalidGraph)
        #expect(invalid.issues?.isEmpty == false)
    }

    @Test func aDaemonThatIsDownIsATransportError() async throws {
        let port = try LiveNavd.freePort()
        let client = NavClient(serverURL: URL(string: "http://127.0.0.1:\(port)")!)
        let started = ContinuousClock.now
        defer { #expect(ContinuousClock.now - started < .seconds(8), "a refused connection fails within the connect timeout") }
        do {
            _ = try await client.createSession()
            Issue.record("a session was created on a port nothing listens on")
        } catch {
            guard case .transport(let operation, _) = error else {
                Issue.record("expected a transport error, got \(error)")
                return
            }
            #expect(operation == "createSession")
        }
    }
}
