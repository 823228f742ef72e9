import NavJSON
import Testing

@testable import NavCore

/// docs/design.md, "Flows" rule by rule, as transcripts on the example graphs: `news.json`'s settings (behind a
/// login), edit_profile (asks before it is left, driven by commands) and pick_category (a picker
/// that returns a value), and `stopwatch.json` (UseCaseKit's stopwatch).
@Suite struct FlowTranscriptTests {
    func news(context: [String: JSONValue] = ["locale": "ja"], start: String? = nil) throws -> TestSession {
        try TestSession(try #require(Fixtures.news), context: context, start: start)
    }

    func stopwatch() throws -> TestSession {
        try TestSession(try #require(Fixtures.graph("stopwatch.json")))
    }

    /// The events of the last change, as `"type scene"` (`"type"` alone on session-wide events).
    func kinds(_ events: [LifecycleEvent]) -> [String] { events.summary }

    // MARK: Redirect and resume

    @Test func aDeepLinkBehindALoginShowsTheLoginAndWaits() throws {
        var session = try news()
        #expect(
            try session.navigate("^/top/settings") == [
                "transitionStart", "awake login", "willDisappear top", "willAppear login", "didDisappear top", "didAppear login",
                "transitionEnd"
            ])
        #expect(session.path == "/top!login")
        #expect(session.state.pending == "/top/settings")
        #expect(session.state.version == 2)
    }

    @Test func theLoginResumesTheDeepLinkInTheSameChange() throws {
        var session = try news()
        try session.navigate("settings")
        let before = session.state
        let events = try session.apply(.patchContext(["user": "ann"]))
        #expect(
            events == [
                "contextChanged", "transitionStart", "awake settings", "willDisappear login", "willAppear settings", "didDisappear login",
                "didAppear settings", "remove login", "transitionEnd"
            ])
        #expect(session.path == "/top/settings")
        #expect(session.state.pending == nil)
        #expect(session.state.version == before.version + 1)
        let changed = session.log.suffix(events.count)
        #expect(changed.allSatisfy { $0.transition == before.version + 1 })
        #expect(changed.first?.detail == .keys(["user"]))
        // The screen made after the login sees the user.
        #expect(session.state.top?.deps == ["user": "ann"])
    }

    @Test func aContextThatStillLacksTheRequirementKeepsWaiting() throws {
        var session = try news()
        try session.navigate("settings")
        #expect(try session.apply(.patchContext(["locale": "en", "theme": "dark"])) == ["contextChanged"])
        #expect(session.log.last?.detail == .keys(["locale", "theme"]))
        #expect(session.state.pending == "/top/settings")
        #expect(session.path == "/top!login")
        // State and params changes keep it too; another navigation settles it.
        try session.apply(.patchState(screen: try #require(session.state.top?.id), patch: ["typed": "a"]))
        #expect(session.state.pending == "/top/settings")
        try session.navigate("help")
        #expect(session.state.pending == nil)
        #expect(try session.apply(.patchContext(["user": "ann"])) == ["contextChanged"])
        #expect(session.path == "/top!login/help")
    }

    @Test func aResumeRefusedForAnotherReasonLetsTheContextChangeAlone() throws {
        var session = try news()
        try session.navigate("!onboarding")
        // Waiting for a user while a screen that cannot be removed is on top.
        session.state.pending = "/top/settings"
        #expect(try session.apply(.patchContext(["user": "ann"])) == ["contextChanged"])
        #expect(session.state.pending == nil)
        #expect(session.path == "/top!onboarding")
    }

    @Test func aContextChangeThatChangesNothingIsANoOp() throws {
        var session = try news(context: ["locale": "ja", "user": "u1"])
        let before = session.state
        #expect(try session.apply(.patchContext(["locale": "ja"])) == [])
        #expect(try session.apply(.patchContext(["absent": nil])) == [])
        #expect(session.state == before)
        // null removes a key.
        #expect(try session.apply(.patchContext(["user": nil])) == ["contextChanged"])
        #expect(session.state.context == ["locale": "ja"])
    }

    @Test func aContextOverItsLimitIsRefusedAndChangesNothing() throws {
        let session = try TestSession(try #require(Fixtures.news), limits: Limits(maxContextBytes: 64))
        let error = session.refuse(.patchContext(["bio": .string(String(repeating: "x", count: 80))]), .invalidRequest)
        #expect(error?.param == "context")
        session.refuse(.patchContext([1]), .invalidRequest)
    }

    @Test func redirectsChainAtMostFiveTimes() throws {
        // s1 → s2 → … each behind a key of its own, the last to a plain scene.
        var scenes: [String: Scene] = ["home": Scene(name: "home"), "end": Scene(name: "end")]
        for step in 1...6 {
            scenes["s\(step)"] = Scene(name: "s\(step)", requires: ["k\(step)"], redirect: step == 6 ? "end" : "s\(step + 1)")
        }
        let graph = Graph(name: "chain", start: "/home", scenes: scenes)
        var session = try TestSession(graph)
        session.refuse(.navigate("s1"), .transitionRefused)
        // Five redirects are followed.
        try session.navigate("s2")
        #expect(session.path == "/home/end")
        #expect(session.state.pending == "/home/s2")
    }

    // MARK: Results

    @Test func aPickerHandsItsChoiceToTheScreenItReveals() throws {
        var session = try news(start: "/top/list_news")
        try session.navigate("!pick_category")
        let list = try #require(session.screen("list_news")?.id)
        #expect(
            try session.apply(.exit(result: ["category": 3])) == [
                "transitionStart", "willDisappear pick_category", "willAppear list_news", "didDisappear pick_category",
                "didAppear list_news",
                "remove pick_category", "result list_news", "transitionEnd"
            ])
        let result = try #require(session.log.dropLast().last)
        #expect(result.type == .result && result.screen == list && result.from == "pick_category")
        #expect(result.detail == .value(["category": 3]))
        #expect(session.log.last?.seq == result.seq + 1)
        #expect(session.state.eventCounter == session.log.last?.seq)
    }

    @Test func backHandsItsResultToTheScreenItReveals() throws {
        var session = try news(start: "/top/list_news/show_news(id=1)")
        #expect(
            try session.apply(.back(2, result: "done")).suffix(4) == ["remove show_news", "remove list_news", "result top", "transitionEnd"]
        )
        #expect(session.log.dropLast().last?.from == "show_news")
    }

    @Test func aResultOverItsLimitIsRefusedAndChangesNothing() throws {
        let session = try news(start: "/top/list_news")
        let error = session.refuse(.exit(result: .string(String(repeating: "x", count: 16 * 1024))), .invalidRequest)
        #expect(error?.param == "result")
    }

    // MARK: Commands

    @Test func theStopwatchIsAStateMachineOnTheServer() throws {
        var session = try stopwatch()
        let id = try #require(session.state.top?.id)
        func run(_ name: String, _ args: [String: JSONValue] = [:]) throws -> [String] {
            try session.apply(.command(screen: id, name: name, args: args))
        }
        // UseCaseKit: reset only while paused.
        let refused = session.refuse(.command(screen: id, name: "reset"), .commandRefused)
        #expect(refused?.pointer == "/mode")
        #expect(try run("start") == ["stateChanged stopwatch"])
        #expect(session.log.last?.detail == .command("start"))
        #expect(try run("tick", ["count": 3]) == ["stateChanged stopwatch"])
        #expect(try run("stop") == ["stateChanged stopwatch"])
        #expect(session.state.top?.state == ["mode": "paused", "count": 3])
        // A stopped watch starts again from where it paused.
        #expect(try run("start") == ["stateChanged stopwatch"])
        #expect(session.state.top?.state == ["mode": "counting", "count": 3])
        _ = try run("stop")
        _ = try run("reset")
        #expect(session.state.top?.state == ["mode": "stopped", "count": 0])
    }

    @Test func aCommandsArgumentsAreChecked() throws {
        let session = try stopwatch()
        let id = try #require(session.state.top?.id)
        var counting = session
        try counting.apply(.command(screen: id, name: "start"))
        #expect(counting.refuse(.command(screen: id, name: "tick"), .invalidParams)?.param == "count")
        #expect(counting.refuse(.command(screen: id, name: "tick", args: ["count": 1, "lap": 2]), .invalidParams)?.param == "lap")
        counting.refuse(.command(screen: id, name: "lap"), .unknownCommand)
        counting.refuse(.command(screen: "e99", name: "start"), .notFound)
    }

    @Test func aCommandThatNavigatesIsOneChange() throws {
        var session = try news()
        try session.navigate("edit_profile")
        let form = try #require(session.state.top?.id)
        try session.apply(.command(screen: form, name: "type", args: ["text": "hello"]))
        #expect(session.state.top?.state == ["bio": "hello", "dirty": true])
        let version = session.state.version
        // save: the patch clears `dirty`, so going back asks nothing.
        #expect(
            try session.apply(.command(screen: form, name: "save")) == [
                "stateChanged edit_profile", "transitionStart", "willDisappear edit_profile", "willAppear top", "didDisappear edit_profile",
                "didAppear top", "remove edit_profile", "transitionEnd"
            ])
        #expect(session.state.version == version + 1)
        #expect(session.log.suffix(8).allSatisfy { $0.transition == version + 1 })
        #expect(session.path == "/top")
    }

    // MARK: Leave confirmation

    @Test func aFormWithUnsavedTextAsksBeforeItIsLeft() throws {
        var session = try news()
        try session.navigate("edit_profile")
        let form = try #require(session.state.top?.id)
        // Clean: it goes without asking.
        var clean = session
        #expect(try clean.apply(.exit()).contains("remove edit_profile"))
        try session.apply(.command(screen: form, name: "type", args: ["text": "draft"]))
        for intent: Intent in [
            .exit(), .back(1), .navigate("^/top"), .link(name: "top", params: [:]), .batch([.navigate("help"), .navigate("^/top")])
        ] {
            #expect(session.refuse(intent, .confirmationRequired)?.screen == form, "\(intent)")
        }
        // Covering it removes nothing: no question.
        #expect(try session.apply(.navigate("help")).contains("awake help"))
        // Confirmed, it goes.
        let outcome = try session.navigator.apply(.navigate("^/top"), to: session.state, confirmed: true)
        #expect(outcome.state.path.description == "/top")
    }

    @Test func aScreenAlwaysAskingAsksEvenInASavedTab() throws {
        var scenes = try #require(Fixtures.news).scenes
        scenes["show_friend"]?.confirmLeave = .always
        let graph = Graph(name: "news", start: "/top", scenes: scenes, links: try #require(Fixtures.news).links)
        var session = try TestSession(graph, context: ["user": "u1"])
        try session.navigate("^/top/home#friend/show_friend(name=ann)")
        // Switching tabs saves the stack: nothing is removed.
        try session.navigate("^/top/home#profile")
        // Leaving the tab bar removes the saved stack too.
        #expect(
            session.refuse(.navigate("^/top"), .confirmationRequired)?.screen
                == session.state.allScreens.first { $0.scene == "show_friend" }?.id)
    }

    @Test func aResumeThatWouldLeaveAFormAsksFirst() throws {
        var session = try news()
        try session.navigate("edit_profile")
        try session.apply(.command(screen: try #require(session.state.top?.id), name: "type", args: ["text": "x"]))
        session.state.pending = "/top/settings"
        session.refuse(.patchContext(["user": "ann"]), .confirmationRequired)
        let outcome = try session.navigator.apply(.patchContext(["user": "ann"]), to: session.state, confirmed: true)
        #expect(outcome.state.path.description == "/top/settings")
    }

    // MARK: Batches

    @Test func aBatchIsOneChangeCarryingEveryItemsEvents() throws {
        var session = try news(context: ["user": "u1"])
        let version = session.state.version
        let events = try session.apply(
            .batch([.navigate("^/top"), .link(name: "news", params: ["category": 2]), .link(name: "show", params: ["id": 7])]))
        #expect(events.filter { $0 == "transitionStart" }.count == 2)
        #expect(session.path == "/top/list_news(category=2)/show_news(id=7)")
        #expect(session.state.version == version + 1)
        #expect(session.log.suffix(events.count).allSatisfy { $0.transition == version + 1 })
    }

    @Test func aBatchIsAllOrNothing() throws {
        let session = try news()
        let refused = session.refuse(.batch([.navigate("list_news"), .navigate("nosuch"), .navigate("help")]), .unknownScene)
        #expect(refused?.index == 1)
        #expect(session.refuse(.batch([.navigate("help"), .batch([])]), .invalidRequest)?.index == 1)
        #expect(session.refuse(.batch(Array(repeating: .navigate("help"), count: 33)), .invalidRequest)?.param == "intents")
        var empty = session
        #expect(try empty.apply(.batch([])) == [])
        #expect(empty.state == session.state)
    }

    // MARK: Graph upgrades

    @Test func anUpgradeRetypesTheStageAndFillsNewDefaults() throws {
        var session = try news(start: "/top/list_news(category=3)")
        var scenes = try #require(Fixtures.news).scenes
        scenes["list_news"]?.params?["sort"] = ParamSpec(type: .string, defaultValue: .string("new"))
        scenes["list_news"]?.params?["category"] = ParamSpec(type: .number)
        let next = Navigator(graph: Graph(name: "news", start: "/top", scenes: scenes, links: try #require(Fixtures.news).links))
        let outcome = try next.upgrade(session.state, from: 1, to: 2)
        #expect(outcome.events.map(\.type) == [.graphChanged])
        #expect(outcome.events.first?.detail == .versions(from: 1, to: 2))
        #expect(outcome.events.first?.screen == nil)
        #expect(outcome.state.version == session.state.version + 1)
        #expect(outcome.state.path.description == "/top/list_news(category=3,sort=new)")
        session.state = outcome.state
        // The upgraded stage navigates on the new version.
        #expect(try next.apply(.navigate("^/top/list_news(category=3.5)"), to: session.state).changed)
    }

    @Test func anUpgradeThatDoesNotFitNamesEveryReason() throws {
        let session = try news(context: ["user": "u1"], start: "/top/home#friend/show_friend(name=ann)")
        var moved = session
        try moved.navigate("^/top/home#profile/help")
        var scenes = try #require(Fixtures.news).scenes
        scenes["show_friend"]?.params = ["id": ParamSpec(type: .int, required: true)]
        scenes["help"] = nil
        scenes["home"]?.kind = .tabs(["profile", "news"])
        let next = Navigator(graph: Graph(name: "news", start: "/top", scenes: scenes))
        do {
            _ = try next.upgrade(moved.state, from: 1, to: 2)
            Issue.record("the upgrade applied")
        } catch {
            #expect(error.code == .upgradeRefused)
            #expect(
                error.reasons?.map(\.pointer) == [
                    "/screens/1/tabs/saved/friend", "/screens/1/tabs/saved/friend/1/params/name",
                    "/screens/1/tabs/saved/friend/1/params/id",
                    "/screens/3/scene"
                ])
        }
    }
}
