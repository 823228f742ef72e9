import Foundation
import NavClient
import Testing

/// clients/swift/README.md's example, as written there (the renderer aside), run against a live navd:
/// the example compiles, and does what the README says.
@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRuns() async throws {
        let daemon = try LiveNavd()
        defer { #expect(daemon.stop() == 0) }
        var rendered: [(screens: [Screen], actions: Actions)] = []
        var replayed: [LifecycleEvent] = []
        var ended: EventStream.EndReason?
        func render(_ screens: [Screen], _ actions: Actions) { rendered.append((screens, actions)) }
        func replay(_ event: LifecycleEvent) { replayed.append(event) }

        // From here to the loop, clients/swift/README.md's lines.
        let navd = NavClient(serverURL: URL(string: "http://127.0.0.1:\(daemon.port)")!)
        let created = try await navd.createSession(context: ["locale": "ja"])
        let session = navd.session(created)  // acts with the session's token

        let moved = try await session.navigate("list_news/show_news(id=44)")
        print(moved.path, moved.version, moved.events.map(\._type))
        _ = try await session.back()  // to list_news
        _ = try await session.link("show", params: ["id": 3])

        // (Not in the README: a form left dirty, so that the back below asks first.)
        let form = try await session.navigate("edit_profile")
        _ = try await session.command("type", screen: form.top?.id ?? "", args: ["text": "hi"])

        var confirmed = false
        do {
            _ = try await session.navigate("^/top/settings")  // behind a login: redirected, `pending`
            _ = try await session.patchContext(["user": "ann"])  // the login resumes it, one version
            _ = try await session.back()
        } catch .problem(let problem) where problem.code == .confirmationRequired {
            _ = try await session.confirm(problem.confirmation!)  // "leave anyway"
            confirmed = true
        } catch .problem(let problem) {
            print(problem.code, problem.detail, problem.param ?? "", problem.offset ?? -1)
        }
        // The redirect put the login over the dirty form; the login's resume would have left the
        // form, so it asked, and the confirmation applied the context change and the resume.
        #expect(confirmed)
        let view = try await session.view()
        #expect(view.path == "/top/settings")
        #expect(view.pending == nil)
        #expect(JSONValue(view.context)["user"] == "ann")

        // The loop, ended by deleting the session once it has seen the view.
        let deleter = Task {
            try await Task.sleep(for: .milliseconds(300))
            try await session.delete()
        }
        for try await message in navd.watcher(created).watch() {
            switch message {
            case .view(let view): render(view.screens, view.actions)
            case .lifecycle(let event): replay(event)  // in seq order, none missed, none twice
            case .end(let reason): ended = reason  // deleted, expired, shutdown
            case .ping, .reconnected: break
            }
        }
        try await deleter.value
        #expect(ended == .deleted)
        #expect(rendered.count == 1)
        #expect(rendered.first?.screens.last?.scene == "settings")
        #expect(replayed.isEmpty)
    }
}
