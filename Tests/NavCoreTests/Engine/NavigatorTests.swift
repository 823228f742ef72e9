import NavJSON
import NavSnapshot
import NavWire
import Testing

@testable import NavCore

/// Navigator rules beyond the news transcripts, each as "given this session and this intent, expect exactly this".
@Suite struct NavigatorTests {
    static let user: [String: JSONValue] = ["user": "u1", "locale": "ja"]

    func news(context: [String: JSONValue] = [:], limits: Limits = Limits()) throws -> TestSession {
        try TestSession(try #require(Fixtures.news), context: context, limits: limits)
    }

    // MARK: Actions

    @Test func actionsListTheTopScenesLinksThenTheGlobalOnesAndHowFarBackGoes() throws {
        var session = try news(context: Self.user)
        func actions() -> (links: [String], exit: Bool, back: Int) {
            let actions = session.navigator.actions(for: session.state)
            return (actions.links.map { "\($0.name)(\($0.params.joined(separator: ",")))" }, actions.exit, actions.back)
        }
        // The root: its own links by name, then the global ones; nothing to exit or go back from.
        #expect(actions() == (["coupons()", "news(category)", "login()", "top()"], false, 0))
        try session.navigate("list_news/show_news(id=4)")
        #expect(actions() == (["login()", "top()"], true, 2))
        try session.navigate("..")
        #expect(actions() == (["show(id)", "login()", "top()"], true, 1))
        // A tab bar leaves with its last tab: from a tab root, back 2 reaches the root.
        try session.navigate("^/top/home#profile/help")
        #expect(actions() == (["login()", "top()"], true, 3))
        // A tab bar at the root leaves with its tab only if something stays.
        try session.navigate("^/home#friend/show_friend(name=a)")
        #expect(actions() == (["login()", "top()"], true, 1))
        try session.navigate("..")
        #expect(actions() == (["login()", "top()"], false, 0))
        try session.navigate("^/top/home#profile/help")
        // A screen that cannot be removed stops back and exit where it stands.
        try session.navigate("onboarding")
        #expect(actions() == (["login()", "top()"], false, 0))
        try session.navigate("help")
        #expect(actions() == (["login()", "top()"], true, 1))
    }

    // MARK: Start

    @Test func startOpensWithOneTransition() throws {
        let session = try news()
        #expect(session.path == "/top")
        #expect(session.log.summary == ["transitionStart", "awake top", "willAppear top", "didAppear top", "transitionEnd"])
        #expect(session.log.first?.from == "")
        #expect(session.log.last?.to == "/top")
        #expect(session.state.version == 1)
        #expect(session.state.screens.map(\.id) == ["e1"])
        #expect(session.state.screens[0].container == .navigation)
    }

    @Test func startAtAnotherPath() throws {
        let session = try TestSession(try #require(Fixtures.news), context: Self.user, start: "^/top/home#profile")
        #expect(session.path == "/top/home#profile")
        #expect(
            session.log.summary == [
                "transitionStart", "awake top", "awake home", "awake profile", "willAppear profile", "didAppear profile",
                "transitionEnd"
            ])
    }

    @Test func startRefusals() throws {
        let navigator = Navigator(graph: try #require(Fixtures.news))
        #expect(throws: NavError(.invalidPath, "unclosed '('", offset: 4)) { try navigator.start(at: "/top(") }
        #expect(throws: NavError.self) { try navigator.start(at: "..") }
        #expect(throws: NavError.self) { try navigator.start(at: "") }
        #expect((try? navigator.start(at: "home#profile"))?.state == nil)
    }

    // MARK: Modals

    @Test func modalWithItsOwnNavigationStack() throws {
        var session = try news()
        #expect(
            try session.navigate("!/list_coupon/show_coupon(id=1)") == [
                "transitionStart", "awake list_coupon", "awake show_coupon", "willDisappear top", "willAppear show_coupon",
                "didDisappear top", "didAppear show_coupon", "transitionEnd"
            ])
        #expect(session.path == "/top!/list_coupon/show_coupon(id=1)")
        let modal = session.state.screens[1]
        #expect((modal.segue, modal.container) == (.modal, .navigation))
        #expect((session.state.screens[2].segue, session.state.screens[2].container) == (.push, Container.none))

        // Pushes go onto the modal's own stack.
        try session.navigate("show_coupon(id=2)")
        #expect(session.path == "/top!/list_coupon/show_coupon(id=1)/show_coupon(id=2)")
        try session.navigate("..")
        #expect(session.path == "/top!/list_coupon/show_coupon(id=1)")

        // The container is part of a component: a bare modal is another screen.
        #expect(
            try session.navigate("^/top!list_coupon") == [
                "transitionStart", "awake list_coupon", "willDisappear show_coupon", "willAppear list_coupon",
                "didDisappear show_coupon", "didAppear list_coupon", "remove show_coupon", "remove list_coupon", "transitionEnd"
            ])
        #expect(session.path == "/top!list_coupon")
        #expect(session.state.screens[1].container == .none)

        try session.apply(.exit())
        #expect(session.path == "/top")
    }

    @Test func modalOverModal() throws {
        var session = try news()
        try session.navigate("!/list_coupon!login")
        #expect(session.path == "/top!/list_coupon!login")
        #expect(
            try session.apply(.back(2)) == [
                "transitionStart", "willDisappear login", "willAppear top", "didDisappear login", "didAppear top", "remove login",
                "remove list_coupon", "transitionEnd"
            ])
    }

    // MARK: Tabs

    @Test func modalOverTabsIsRemovedByATabSwitch() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#friend/show_friend(name=ken)")
        let friendStack = Array(session.state.screens[2...])
        try session.navigate("!login")
        #expect(session.path == "/top/home#friend/show_friend(name=ken)!login")

        #expect(
            try session.navigate("^/top/home#profile") == [
                "transitionStart", "awake profile", "willDisappear login", "willAppear profile", "didDisappear login",
                "didAppear profile", "remove login", "transitionEnd"
            ])
        #expect(session.path == "/top/home#profile")
        // The tab is saved up to, not including, its first modal.
        #expect(session.state.screens[1].tabs?.saved["friend"] == friendStack)
        #expect(session.state.screens[1].tabs?.selected == "profile")

        try session.navigate("^/top/home#friend")
        #expect(session.path == "/top/home#friend/show_friend(name=ken)")
        #expect(Array(session.state.screens[2...]) == friendStack)
    }

    @Test func nonRemovableModalRefusesATabSwitch() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#friend")
        try session.navigate("!onboarding")
        let error = session.refuse(.navigate("^/top/home#profile"), .notRemovable)
        #expect(error?.message.contains("onboarding") == true)
        session.refuse(.navigate("../..#profile"), .notRemovable)
        session.refuse(.exit(), .notRemovable)
    }

    /// Found by `NavigatorPropertyTests`: a tab switch that removes a modal tab bar must remove the
    /// stacks saved in that bar too, with their events and their removability checked.
    @Test func tabSwitchRemovesTheSavedStacksOfAModalTabBar() throws {
        var session = try news(context: Self.user)
        try session.navigate("^/top/home#friend/list_news/help")
        try session.navigate("..!home")
        #expect(session.path == "/top/home#friend/list_news(category=0)!home#friend")
        try session.navigate("..#profile!login")
        #expect(session.path == "/top/home#friend/list_news(category=0)!home#profile!login")
        let innerBar = session.state.screens[4]
        let saved = try #require(innerBar.tabs?.saved["friend"])
        #expect(saved.map(\.scene) == ["friend"])

        let events = try session.navigate("^/top/home#profile/friend")
        #expect(session.path == "/top/home#profile/friend")
        // Top to root: the modal login, the inner tab, the inner bar's saved friend, the inner bar.
        #expect(events.filter { $0.hasPrefix("remove") } == ["remove login", "remove profile", "remove friend", "remove home"])
        #expect(session.log.filter { $0.type == .remove }.suffix(4).map(\.screen) == ["e9", "e8", saved[0].id, innerBar.id])
        let everywhere = Set(session.state.allScreens.map(\.id))
        #expect(!everywhere.contains(saved[0].id))
    }

    @Test func tabSwitchRefusesWhenAModalTabBarHoldsANonRemovableScreen() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#friend")
        try session.navigate("!home")
        try session.navigate("onboarding")
        #expect(session.path == "/top/home#friend!home#friend/onboarding")
        // Switching the inner bar's tab saves onboarding's stack; it is not removed.
        try session.navigate("../..#profile")
        #expect(session.path == "/top/home#friend!home#profile")
        #expect(session.state.screens[3].tabs?.saved["friend"]?.map(\.scene) == ["friend", "onboarding"])
        // Switching the outer bar's tab removes the modal bar, onboarding's saved stack with it: refused.
        session.refuse(.navigate("^/top/home#profile"), .notRemovable)
        session.refuse(.navigate("^/top"), .notRemovable)
    }

    @Test func relativeTabSwitch() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#friend")
        try session.navigate("..#profile")
        #expect(session.path == "/top/home#profile")
        try session.navigate("help")
        try session.navigate("../..#friend")
        #expect(session.path == "/top/home#friend")
        #expect(session.state.screens[1].tabs?.saved["profile"]?.map(\.scene) == ["profile", "help"])
        // A tabs scene named without a tab selects its first tab, restoring its saved stack.
        try session.navigate("^/top/home#profile")
        #expect(session.path == "/top/home#profile/help")
        try session.navigate("^/top/home")
        #expect(session.path == "/top/home#friend")
    }

    @Test func deepLinkIntoASavedTabReplacesItsStack() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#friend/show_friend(name=ken)")
        let friend = try #require(session.screen("friend"))
        let ken = try #require(session.screen("show_friend"))
        try session.navigate("^/top/home#profile")
        let profile = try #require(session.screen("profile"))

        let events = try session.navigate("^/top/home#friend/show_friend(name=bob)")
        #expect(
            events == [
                "transitionStart", "awake show_friend", "willDisappear profile", "willAppear show_friend", "didDisappear profile",
                "didAppear show_friend", "remove show_friend", "transitionEnd"
            ])
        #expect(session.path == "/top/home#friend/show_friend(name=bob)")
        // The tab root is kept (common prefix), the rest of the saved stack replaced.
        #expect(session.state.screens[2] == friend)
        #expect(session.state.screens[3].id != ken.id)
        #expect(session.log.last { $0.type == .remove }?.screen == ken.id)
        #expect(session.state.screens[1].tabs?.saved == ["profile": [profile]])
    }

    @Test func deepLinkToExactlyTheSavedStackRestoresIt() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#friend/show_friend(name=ken)")
        let stack = session.state.screens
        try session.navigate("^/top/home#profile")
        #expect(
            try session.navigate("^/top/home#friend/show_friend(name=ken)") == [
                "transitionStart", "willDisappear profile", "willAppear show_friend", "didDisappear profile",
                "didAppear show_friend", "transitionEnd"
            ])
        #expect(session.state.screens.map(\.id) == stack.map(\.id))
    }

    @Test func tabThatIsNotATabIsAnUnknownScene() throws {
        var session = try news(context: Self.user)
        session.refuse(.navigate("#friend"), .unknownScene)
        try session.navigate("home")
        #expect(session.path == "/top/home#friend")
        session.refuse(.navigate("^/top/home#help"), .unknownScene)
        session.refuse(.navigate("^/top/home#nosuch"), .unknownScene)
    }

    @Test func exitFromATabRootRemovesTheTabBarToo() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#profile/help")
        try session.navigate("^/top/home#friend")
        #expect(
            try session.apply(.exit()) == [
                "transitionStart", "willDisappear friend", "willAppear top", "didDisappear friend", "didAppear top",
                // Top to root, the tab bar's saved stacks with it.
                "remove friend", "remove help", "remove profile", "remove home", "transitionEnd"
            ])
        #expect(session.path == "/top")
    }

    @Test(arguments: [Intent.exit(), .back(1), .navigate(".."), .navigate("up"), .navigate("up(n=1)")])
    func goingUpFromATabRootLeavesTheTabBar(_ intent: Intent) throws {
        var session = try news()
        try session.navigate("home")
        try session.apply(intent)
        #expect(session.path == "/top")
    }

    @Test func tabBarAtTheRootCannotBeLeftEmpty() throws {
        var session = try news()
        try session.navigate("^/home#friend")
        #expect(session.path == "/home#friend")
        session.refuse(.exit(), .stackUnderflow)
        session.refuse(.back(1), .stackUnderflow)
        session.refuse(.navigate(".."), .stackUnderflow)
    }

    // MARK: No-ops

    @Test(arguments: ["^/top/list_news(category=0)", "^/top/list_news", "", "^/top/list_news(category=00)", "../list_news"])
    func navigatingToTheCurrentPathIsANoOp(_ path: String) throws {
        var session = try news()
        try session.navigate("list_news")
        let before = session.state
        let outcome = try session.navigator.apply(.navigate(path), to: before)
        #expect(outcome.events.isEmpty)
        #expect(!outcome.changed)
        #expect(outcome.state == before)
        #expect(outcome.state.snapshotBytes == before.snapshotBytes)
    }

    @Test func unchangedParamsAndStateAreNoOps() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#profile")
        let before = session.state
        let profile = try #require(session.screen("profile"))
        for intent: Intent in [
            .setParams(screen: profile.id, params: [:]),
            .patchState(screen: profile.id, patch: [:]),
            .patchState(screen: profile.id, patch: ["editing": false]),
            .patchState(screen: profile.id, patch: ["absent": nil])
        ] {
            let outcome = try session.navigator.apply(intent, to: before)
            #expect(outcome.events.isEmpty, "\(intent)")
            #expect(outcome.state == before, "\(intent)")
        }
    }

    @Test func statePatchThatChangesNothingOnTheWireIsANoOp() throws {
        var session = try news()
        try session.apply(.patchState(screen: "e1", patch: try JSONValue(parsing: #"{"zoom": 2.0}"#)))
        let version = session.state.version
        #expect(try session.apply(.patchState(screen: "e1", patch: try JSONValue(parsing: #"{"zoom": 2}"#))) == [])
        #expect(session.state.version == version)
    }

    // MARK: Limits

    @Test func stackTooDeep() throws {
        var session = try news(limits: Limits(maxDepth: 3))
        try session.navigate("list_news/show_news(id=1)")
        #expect(session.state.screens.count == 3)
        session.refuse(.navigate("!login"), .stackTooDeep)
        session.refuse(.link(name: "login", params: [:]), .stackTooDeep)
        // An implied tab counts too: /top/home#friend/show_friend is four deep.
        session.refuse(.navigate("^/top/home#friend/show_friend(name=a)"), .stackTooDeep)
        try session.navigate("^/top/home#friend")
        #expect(session.path == "/top/home#friend")
        let navigator = Navigator(graph: try #require(Fixtures.news), limits: Limits(maxDepth: 1))
        #expect(throws: NavError.self) { try navigator.start(at: "^/top/list_news") }
    }

    @Test func pathLengthAndParamCountLimits() throws {
        var session = try news(limits: Limits(maxPathLength: 20, maxParams: 2))
        let error = session.refuse(.navigate("help(aaaaaaaaaaaaaaaa=1)"), .invalidPath)
        #expect(error?.offset == 20)
        session.refuse(.navigate("help(a=1,b=2,c=3)"), .invalidParams)
        try session.navigate("help(a=1,b=2)")
        session.refuse(.setParams(screen: "e2", params: ["a": 1, "b": 2, "c": 3]), .invalidParams)
    }

    // MARK: Ids and sequence numbers

    static let script: [Intent] = [
        .navigate("list_news/show_news(id=1)"), .navigate(".."), .navigate("show_news(id=2)"),
        .link(name: "login", params: [:]), .exit(), .navigate("^/top/home#friend"), .navigate("..#profile"),
        .patchState(screen: "e7", patch: ["editing": true]), .navigate("^/top/home#friend/show_friend(name=x)"),
        .back(2), .navigate("list_news(category=4)"), .setParams(screen: "e10", params: ["category": 5])
    ]

    @Test func idsAreDeterministicCounters() throws {
        var one = try news(context: Self.user)
        var two = try news(context: Self.user)
        var created: [String] = ["e1"]
        for intent in Self.script {
            try one.apply(intent)
            try two.apply(intent)
            created += one.log.filter { $0.type == .awake && !created.contains($0.screen ?? "") }.compactMap(\.screen)
        }
        #expect(one.state == two.state)
        #expect(one.log == two.log)
        #expect(created == (1...one.state.screenCounter).map { "e\($0)" })
        #expect(one.state.screenCounter == 10)
        // Ids are never reused: show_news(id=1) was e3, the next show_news is e4.
        #expect(one.log.filter { $0.type == .awake && $0.scene == "show_news" }.map(\.screen) == ["e3", "e4"])
    }

    @Test func eventSequenceNumbersRunOnAcrossTransitions() throws {
        var session = try news(context: Self.user)
        var versions = [session.state.version]
        for intent in Self.script {
            try session.apply(intent)
            versions.append(session.state.version)
        }
        #expect(session.log.map(\.seq) == Array(1...session.log.count))
        #expect(session.state.eventCounter == session.log.count)
        #expect(versions == Array(1...Self.script.count + 1))
        // Every event names the version its change produced.
        #expect(Set(session.log.map(\.transition)) == Set(versions))
        for version in versions {
            let events = session.log.filter { $0.transition == version }
            #expect(events.map(\.seq) == Array(events[0].seq..<events[0].seq + events.count))
        }
    }

    // MARK: Refusals

    @Test func requiresRefusesTheTransition() throws {
        var session = try news()
        let error = session.refuse(.navigate("home#profile"), .transitionRefused)
        #expect(error?.message.contains("user") == true)
        try session.navigate("home")
        session.refuse(.navigate("..#profile"), .transitionRefused)
        let nullUser = try news(context: ["user": nil])
        nullUser.refuse(.navigate("home#profile"), .transitionRefused)
        var withUser = try news(context: Self.user)
        try withUser.navigate("home#profile")
        #expect(withUser.screen("profile")?.deps == ["user": "u1", "locale": "ja"])
    }

    @Test func requiresIsCheckedForEveryCreatedScreenAndNothingHappens() throws {
        var session = try news()
        try session.navigate("list_news")
        let before = session.state
        // The first screens would be fine; the last is refused, so none is created.
        session.refuse(.navigate("^/top/home#profile/help"), .transitionRefused)
        #expect(session.state == before)
    }

    @Test func linkRefusals() throws {
        var session = try news()
        let extra = session.refuse(.link(name: "news", params: ["category": 1, "extra": 2]), .invalidParams)
        #expect(extra?.param == "extra")
        let missing = session.refuse(.link(name: "news", params: [:]), .invalidParams)
        #expect(missing?.param == "category")
        let object = session.refuse(.link(name: "news", params: ["category": ["x": 1]]), .invalidParams)
        #expect(object?.param == "category")
        let typed = session.refuse(.link(name: "news", params: ["category": "x"]), .invalidParams)
        #expect(typed?.param == "category")
        session.refuse(.link(name: "nosuch", params: [:]), .unknownTransition)
        // A scene's links are available only while it is on top; global links always.
        try session.apply(.link(name: "news", params: ["category": 2]))
        session.refuse(.link(name: "coupons", params: [:]), .unknownTransition)
        try session.apply(.link(name: "login", params: [:]))
        #expect(session.path == "/top/list_news(category=2)!login")
    }

    @Test func linkParamsArePercentEncoded() throws {
        let document = #"""
            {"name": "search", "start": "/search",
             "scenes": {"search": {"links": {"find": {"path": "results(q={q},page={page})"}}}, "results": {}}}
            """#
        var session = try TestSession(try Graph.decode(json: Array(document.utf8)).graph)
        try session.apply(.link(name: "find", params: ["q": "a,b)c(%d é/#!", "page": 2]))
        #expect(session.screen("results")?.params == ["q": .string("a,b)c(%d é/#!"), "page": .string("2")])
        #expect(session.path == "/search/results(page=2,q=a%2Cb%29c%28%25d%20é/#!)")
        #expect(try Path.parse(session.path) == session.state.path)
    }

    @Test func exitAndBackRefusals() throws {
        var session = try news()
        session.refuse(.exit(), .stackUnderflow)
        session.refuse(.back(1), .stackUnderflow)
        session.refuse(.back(0), .invalidRequest)
        session.refuse(.back(-1), .invalidRequest)
        session.refuse(.navigate("up(n=1)"), .stackUnderflow)
        session.refuse(.navigate("^"), .stackUnderflow)
        try session.navigate("onboarding")
        session.refuse(.exit(), .notRemovable)
        session.refuse(.navigate("^/top/list_news"), .notRemovable)
        // Covered, the non-removable screen still refuses to be removed from under a modal.
        try session.navigate("!login")
        session.refuse(.back(2), .notRemovable)
        try session.apply(.exit())
        #expect(session.path == "/top/onboarding")
    }

    @Test func paramsAndStateRefusals() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#profile")
        session.refuse(.setParams(screen: "e2", params: [:]), .invalidRequest)
        session.refuse(.setParams(screen: "e99", params: [:]), .notFound)
        session.refuse(.setParams(screen: "e3", params: ["x": ["y"]]), .invalidParams)
        session.refuse(.patchState(screen: "e99", patch: [:]), .notFound)
        session.refuse(.patchState(screen: "e3", patch: [1]), .invalidRequest)
        session.refuse(.patchState(screen: "e3", patch: nil), .invalidRequest)
        session.refuse(.navigate("list_news(category=x)"), .invalidParams)
        session.refuse(.navigate("show_news(id=1,extra=2)"), .invalidParams)
        session.refuse(.navigate("nosuch"), .unknownScene)
        session.refuse(.navigate("/top("), .invalidPath)
    }

    @Test func patchStateReachesSavedScreens() throws {
        var session = try news(context: Self.user)
        try session.navigate("home#profile")
        try session.navigate("..#friend")
        let profile = try #require(session.state.screens[1].tabs?.saved["profile"]?.first)
        #expect(try session.apply(.patchState(screen: profile.id, patch: ["editing": true])) == ["stateChanged profile"])
        #expect(session.state.screens[1].tabs?.saved["profile"]?.first?.state == ["editing": true])
        try session.navigate("..#profile")
        #expect(session.screen("profile")?.state == ["editing": true])
    }

    @Test(arguments: [Int.min, -1, 0, 7, 10, 99, 100, 1_000_000_007, Int.max])
    func typedParamsPrintAsTheirCanonicalText(_ number: Int) throws {
        var session = try news()
        try session.navigate("list_news(category=\(number))")
        #expect(session.path == "/top/list_news(category=\(number))")
        #expect(session.log.last?.to == session.path)
        try session.apply(.setParams(screen: "e2", params: ["category": .int(number)]))
        try session.navigate("^/top/list_news(category=\(number))/show_news(id=\(number))")
        #expect(session.path.hasSuffix("/show_news(id=\(number))"))
    }

    @Test func setParamsReplacesAndTypes() throws {
        var session = try news()
        try session.navigate("show_news(id=3)")
        #expect(try session.apply(.setParams(screen: "e2", params: ["id": "4"])) == ["paramsChanged show_news"])
        #expect(session.path == "/top/show_news(id=4)")
        session.refuse(.setParams(screen: "e2", params: [:]), .invalidParams)
        try session.navigate("..")
        try session.navigate("help(a=1)")
        try session.apply(.setParams(screen: "e3", params: ["b": true, "c": 1.5]))
        #expect(session.path == "/top/help(b=true,c=1.5)")
    }

    /// Merge patches only grow state: past `maxStateBytes` a patch is refused and changes nothing.
    @Test func stateCannotGrowPastItsLimit() throws {
        var session = try TestSession(try #require(Fixtures.news), limits: Limits(maxStateBytes: 120))
        let top = try #require(session.state.top?.id)
        try session.apply(.patchState(screen: top, patch: ["note": .string(String(repeating: "a", count: 60))]))
        let refused = session.refuse(.patchState(screen: top, patch: ["more": .string(String(repeating: "b", count: 80))]), .invalidRequest)
        #expect(refused?.message.contains("limit 120") == true)
        // Removing a member always fits.
        try session.apply(.patchState(screen: top, patch: ["note": nil]))
    }
}
