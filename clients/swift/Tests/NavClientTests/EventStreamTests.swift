import AsyncHTTPClient
import Foundation
import NavClient
import Testing

/// The event stream against a live navd, through a proxy the tests cut and freeze.
@Suite("NavClient's event stream")
struct EventStreamTests {
    /// A fast resume for tests (the daemon asks for 2 s).
    static let options = EventStream.Options(idleTimeout: .seconds(20), reconnectDelay: .milliseconds(100))

    @Test func aWatcherFollowsAnotherClientAndResumesAfterACutWithNothingMissedOrTwice() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let proxy = try CuttableProxy(to: navd.port)
        defer { proxy.close() }
        let writer = navd.client()
        let created = try await writer.createSession()
        let session = writer.session(created)
        // The watcher reaches navd through the proxy, with the read-only watch token.
        let watcher = navd.client(via: proxy.port).watcher(created)
        let stream = Collector(watcher.watch(options: Self.options))

        #expect(await stream.waitForView(1))
        var applied: [LifecycleEvent] = []
        applied += try await session.navigate("list_news").events
        #expect(await stream.waitForView(2))
        let seenBeforeCut = stream.events.map(\.seq)
        #expect(seenBeforeCut == applied.map(\.seq))

        // The connection drops; while the watcher's new one waits, another client makes two changes.
        proxy.hold()
        proxy.cut()
        #expect(await stream.wait { _ in proxy.accepted == 2 })
        applied += try await session.link("show", params: ["id": 1]).events
        applied += try await session.back().events
        proxy.release()

        #expect(await stream.waitForView(4))
        // The resumed stream sends the view, then the retained events after Last-Event-ID: each
        // its own message, which may arrive in reads of their own.
        #expect(await stream.wait { $0.events.count >= applied.count })
        #expect(stream.events == applied, "nothing missed, nothing twice")
        #expect(stream.messages.contains(.reconnected(lastEventID: seenBeforeCut.last)))
        // The views: one on each connect and one after each live change.
        #expect(stream.views.map(\.version) == [1, 2, 4])
        #expect(stream.views.last?.path == "/top/list_news(category=0)")

        // And it goes on live.
        applied += try await session.navigate("^/top").events
        #expect(await stream.waitForView(5))
        #expect(stream.events == applied)
        #expect(proxy.accepted == 2)

        // Deleting the session ends the stream: `end` with `deleted`, then no more.
        try await session.delete()
        #expect(await stream.wait { $0.finished })
        #expect(stream.messages.last == .end(.deleted))
        #expect(stream.error == nil)
    }

    @Test func aWatcherThatStartsAfterASeqGetsTheRetainedEventsFirst() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let client = navd.client()
        let created = try await client.createSession()
        let session = client.session(created)
        let moved = try await session.navigate("list_news/show_news(id=9)")

        let stream = Collector(session.watch(after: 3, options: Self.options))
        #expect(await stream.wait { $0.events.count == 2 + moved.events.count })
        // The current view, then every retained event after seq 3, in order.
        guard case .view(let view) = stream.messages.first else {
            Issue.record("the stream did not open with the view: \(stream.messages.prefix(2))")
            return
        }
        #expect(view.version == 2)
        #expect(stream.events.map(\.seq) == Array(4...(moved.events.last?.seq ?? 0)))
        #expect(Array(stream.events.dropFirst(2)) == moved.events)
        stream.cancel()
        #expect(await stream.wait { $0.finished })
        #expect(stream.error == nil)
    }

    @Test func aSilentConnectionIsReplacedAndItsMissedEventsReplayed() async throws {
        // Heartbeats every second; the watcher gives a connection 3 s of silence.
        let navd = try LiveNavd(arguments: ["--heartbeat", "1"])
        defer { #expect(navd.stop() == 0) }
        let proxy = try CuttableProxy(to: navd.port)
        defer { proxy.close() }
        let writer = navd.client()
        let created = try await writer.createSession()
        let session = writer.session(created)
        let options = EventStream.Options(idleTimeout: .seconds(3), reconnectDelay: .milliseconds(100))
        let stream = Collector(navd.client(via: proxy.port).watcher(created).watch(options: options))

        #expect(await stream.wait { $0.messages.contains(.ping) }, "a heartbeat arrives on a quiet stream")
        // The path goes dead without closing: the change below never crosses it.
        proxy.freeze()
        let missed = try await session.navigate("help").events
        // The watcher finds the silence, opens a new connection, and gets what it missed.
        #expect(await stream.wait(seconds: 15) { $0.events == missed })
        #expect(stream.messages.contains(.reconnected(lastEventID: nil)))
        #expect(proxy.accepted == 2)
        #expect(stream.views.last?.path == "/top/help")
    }

    @Test func aResumeTheDaemonRefusesEndsTheStreamWithTheProblem() async throws {
        let navd = try LiveNavd()
        defer { #expect(navd.stop() == 0) }
        let proxy = try CuttableProxy(to: navd.port)
        defer { proxy.close() }
        let writer = navd.client()
        let created = try await writer.createSession()
        let stream = Collector(navd.client(via: proxy.port).watcher(created).watch(options: Self.options))
        #expect(await stream.waitForView(1))

        // The session is deleted while the watcher is away: its resume is refused, typed.
        proxy.hold()
        proxy.cut()
        #expect(await stream.wait { _ in proxy.accepted == 2 })
        try await writer.session(created).delete()
        proxy.release()
        #expect(await stream.wait { $0.finished })
        #expect(stream.error?.problem?.code == .unauthorized)
    }

    @Test func aDaemonThatStopsEndsTheStreamWithShutdown() async throws {
        let navd = try LiveNavd()
        let client = navd.client()
        let created = try await client.createSession()
        let stream = Collector(client.watcher(created).watch(options: Self.options))
        #expect(await stream.waitForView(1))
        #expect(navd.stop() == 0)
        #expect(await stream.wait { $0.finished })
        #expect(stream.messages.last == .end(.shutdown))
        #expect(stream.error == nil)
    }

    @Test func aDaemonThatDiesAndStaysDownEndsTheStreamAfterTheAttempts() async throws {
        let navd = try LiveNavd()
        // A short connect timeout: AsyncHTTPClient retries a refused connection until it ends.
        let http = HTTPClient(configuration: .init(timeout: .init(connect: .milliseconds(300))))
        let client = NavClient(serverURL: navd.url, configuration: .init(httpClient: http))
        let created = try await client.createSession()
        let options = EventStream.Options(idleTimeout: .seconds(20), reconnectDelay: .milliseconds(50), maxConsecutiveFailures: 3)
        let stream = Collector(client.watcher(created).watch(options: options))
        #expect(await stream.waitForView(1))
        navd.crash()
        #expect(await stream.wait { $0.finished })
        guard case .transport(let operation, _) = stream.error else {
            Issue.record("expected a transport error, got \(String(describing: stream.error)) after \(stream.messages.suffix(2))")
            try await http.shutdown()
            return
        }
        #expect(operation == "listEvents")
        #expect(stream.messages.last == .view(try #require(stream.views.last)), "no `end`: the daemon died")
        try await http.shutdown()
    }

    @Test func aWatcherResumesAcrossARestartOfTheDaemonOnItsStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("navclient-restart-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = "sqlite:\(folder.path)/navd.db"
        var navd = try LiveNavd(store: store)
        let port = navd.port
        let http = HTTPClient(configuration: .init(timeout: .init(connect: .milliseconds(300))))
        let client = NavClient(serverURL: navd.url, configuration: .init(httpClient: http))
        let created = try await client.createSession()
        let session = client.session(created)
        let options = EventStream.Options(idleTimeout: .seconds(20), reconnectDelay: .milliseconds(200), maxConsecutiveFailures: 100)
        let stream = Collector(client.watcher(created).watch(options: options))
        #expect(await stream.waitForView(1))
        var applied = try await session.navigate("list_news").events
        #expect(await stream.waitForView(2))

        // Killed: no `end`; the watcher keeps trying while the daemon is down.
        navd.crash()
        try await Task.sleep(for: .milliseconds(500))
        #expect(!stream.finished)
        navd = try LiveNavd(port: port, store: store)
        defer { #expect(navd.stop() == 0) }
        applied += try await session.link("show", params: ["id": 5]).events

        #expect(await stream.waitForView(3))
        // The resumed stream sends the view first, then the retained events, which may come in reads of their own.
        #expect(await stream.wait { $0.events.count >= applied.count })
        #expect(stream.events == applied, "nothing missed, nothing twice, across the restart")
        #expect(
            stream.messages.contains(.reconnected(lastEventID: applied.first { $0.transition == 2 && $0._type == .transitionEnd }?.seq)))
        stream.cancel()
        #expect(await stream.wait { $0.finished })
        try await http.shutdown()
    }
}
