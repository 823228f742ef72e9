import NavCore
import NavJSON
import NavSnapshot
import NavWire
import Testing

/// A session survives being written to a store as JSON text and read back on its graph.
@Suite struct SnapshotTests {
    static let context: [String: JSONValue] = ["user": "u1", "locale": "ja"]

    /// Intents that lead to an interesting state, from a fresh session on news.json.
    struct Journey: CustomTestStringConvertible, Sendable {
        let name: String
        let intents: [Intent]
        var testDescription: String { name }
    }

    static let journeys: [Journey] = [
        .init(name: "start only", intents: []),
        .init(name: "pushed with typed params", intents: [.navigate("list_news(category=3)/show_news(id=9)")]),
        .init(name: "modal with its own navigation stack", intents: [.navigate("!/list_coupon/show_coupon(id=88)")]),
        .init(
            name: "tab switch saves the left tab's stack",
            intents: [.navigate("home#friend/show_friend(name=ken)"), .navigate("^/top/home#profile/help")]
        ),
        .init(
            name: "both tabs saved in turn, modal over the tab bar",
            intents: [
                .navigate("home#profile/help"), .navigate("../..#friend"), .navigate("show_friend(name=a%2Cb%20c)"),
                .navigate("!login")
            ]
        ),
        .init(
            name: "state patched, including a saved screen",
            intents: [
                .navigate("home#profile"),
                .patchState(screen: "e3", patch: ["draft": ["bio": "hi", "tags": ["a", "b"]], "zoom": 1.5, "n": nil]),
                .navigate("..#friend"),
                .patchState(screen: "e3", patch: ["editing": true])
            ]
        ),
        .init(name: "params replaced", intents: [.navigate("list_news"), .setParams(screen: "e2", params: ["category": 7])])
    ]

    static func state(after journey: Journey, graph: Graph) throws -> SessionState {
        let navigator = Navigator(graph: graph)
        var state = try navigator.start(context: context).state
        for intent in journey.intents {
            state = try navigator.apply(intent, to: state).state
        }
        return state
    }

    /// The snapshot as a store keeps it: JSON text.
    static func storeAndLoad(_ state: SessionState, graph: Graph) throws -> SessionState {
        let text = String(decoding: state.snapshotBytes, as: UTF8.self)
        return try SessionState(snapshot: try JSONValue(parsing: text), graph: graph)
    }

    @Test(arguments: journeys)
    func roundTrip(_ journey: Journey) throws {
        let graph = try #require(Fixtures.news)
        let state = try Self.state(after: journey, graph: graph)
        let restored = try Self.storeAndLoad(state, graph: graph)
        #expect(restored == state)
        #expect(restored.snapshotBytes == state.snapshotBytes)
        #expect(restored.path.description == state.path.description)
        #expect(restored.allScreens.map(\.id) == state.allScreens.map(\.id))
    }

    @Test(arguments: journeys)
    func restoredSessionCarriesOnIdentically(_ journey: Journey) throws {
        let graph = try #require(Fixtures.news)
        let navigator = Navigator(graph: graph)
        let state = try Self.state(after: journey, graph: graph)
        let restored = try Self.storeAndLoad(state, graph: graph)
        for intent: Intent in [.navigate("^/top/home#friend/show_friend(name=z)"), .navigate("^/top!login"), .exit()] {
            let original = Self.result(navigator, intent, state)
            let again = Self.result(navigator, intent, restored)
            #expect(original.map(\.events) == again.map(\.events), "\(intent)")
            #expect(original.map(\.state) == again.map(\.state), "\(intent)")
        }
    }

    static func result(_ navigator: Navigator, _ intent: Intent, _ state: SessionState) -> Result<Outcome, NavError> {
        do {
            return .success(try navigator.apply(intent, to: state))
        } catch {
            return .failure(error)
        }
    }

    @Test func tabBarAndSavedStacksAreInTheSnapshot() throws {
        let graph = try #require(Fixtures.news)
        let state = try Self.state(after: Self.journeys[3], graph: graph)
        let bar = try #require((try JSONValue(parsing: state.snapshotBytes))["screens"]?.arrayValue?[1])
        #expect(bar["scene"] == "home")
        #expect(bar["tabs"]?["selected"] == "profile")
        let saved = try #require(bar["tabs"]?["saved"]?["friend"]?.arrayValue)
        #expect(saved.map { $0["scene"] } == ["friend", "show_friend"])
        #expect(saved.map { $0["id"] } == ["e3", "e4"])
        #expect(saved[1]["params"] == ["name": "ken"])
        #expect((try JSONValue(parsing: state.snapshotBytes))["schema"] == .int(SessionState.snapshotSchema))
    }

    @Test func typedParamsOfEveryTypeRoundTrip() throws {
        let document = #"""
            {"name": "typed", "start": "/a(s=x%2Cy,i=-3,n=2.5,b=true)",
             "scenes": {"a": {"params": {"s": {"type": "string"}, "i": {"type": "int"}, "n": {"type": "number"},
                                         "b": {"type": "bool"}, "w": {"type": "number", "default": 3}},
                              "links": {"self": {"path": "a(n={n})"}}}}}
            """#
        let graph = try Graph.decode(json: Array(document.utf8)).graph
        let navigator = Navigator(graph: graph)
        var state = try navigator.start().state
        state = try navigator.apply(.link(name: "self", params: ["n": 1e-7]), to: state).state
        state = try navigator.apply(.link(name: "self", params: ["n": 4]), to: state).state
        #expect(state.path.description == "/a(b=true,i=-3,n=2.5,s=x%2Cy,w=3)/a(n=1e-07,w=3)/a(n=4,w=3)")
        let restored = try Self.storeAndLoad(state, graph: graph)
        #expect(restored == state)
        #expect(restored.screens[0].params == ["s": .string("x,y"), "i": .int(-3), "n": .number(2.5), "b": .bool(true), "w": .number(3)])
    }

    /// A store holds JSON text: whatever a client wrote into state must come back equal, numbers included.
    @Test func stateWrittenAsWholeDoublesRoundTrips() throws {
        let graph = try #require(Fixtures.news)
        let navigator = Navigator(graph: graph)
        var state = try navigator.start(context: Self.context).state
        let patch = try JSONValue(parsing: #"{"zoom": 2.0, "offsets": [0.0, 1.5, 3e2], "big": 1e300}"#)
        state = try navigator.apply(.patchState(screen: "e1", patch: patch), to: state).state
        let restored = try Self.storeAndLoad(state, graph: graph)
        #expect(restored == state)
        // And a restored session agrees with the live one on what is a change.
        let same = try JSONValue(parsing: #"{"zoom": 2}"#)
        #expect(try navigator.apply(.patchState(screen: "e1", patch: same), to: state).changed == false)
        #expect(try navigator.apply(.patchState(screen: "e1", patch: same), to: restored).changed == false)
    }

    // MARK: Refusals

    @Test func sceneRemovedFromTheGraphIsAnError() throws {
        var graph = try #require(Fixtures.news)
        let state = try Self.state(after: Self.journeys[1], graph: graph)
        let snapshot = try JSONValue(parsing: String(decoding: state.snapshotBytes, as: UTF8.self))
        graph.scenes["show_news"] = nil
        let error = #expect(throws: SnapshotError.self) { try SessionState(snapshot: snapshot, graph: graph) }
        #expect(error?.description == "screen e3: scene 'show_news' is not in graph 'news'")
    }

    @Test func sceneOfASavedTabRemovedFromTheGraphIsAnError() throws {
        var graph = try #require(Fixtures.news)
        let state = try Self.state(after: Self.journeys[3], graph: graph)
        graph.scenes["show_friend"] = nil
        #expect(throws: SnapshotError.self) { try SessionState(snapshot: try JSONValue(parsing: state.snapshotBytes), graph: graph) }
    }

    @Test func paramThatNoLongerFitsIsAnError() throws {
        var graph = try #require(Fixtures.news)
        let state = try Self.state(after: Self.journeys[1], graph: graph)
        graph.scenes["show_news"]?.params = ["slug": ParamSpec(type: .string)]
        #expect(throws: SnapshotError.self) { try SessionState(snapshot: try JSONValue(parsing: state.snapshotBytes), graph: graph) }
        graph.scenes["show_news"]?.params = ["id": ParamSpec(type: .bool)]
        #expect(throws: SnapshotError.self) { try SessionState(snapshot: try JSONValue(parsing: state.snapshotBytes), graph: graph) }
    }

    /// Edits of a good snapshot that make it unusable.
    struct Corruption: CustomTestStringConvertible, Sendable {
        let name: String
        let edit: @Sendable (inout [String: JSONValue]) -> Void
        var testDescription: String { name }
    }

    static func editScreen(_ index: Int, _ edit: @escaping @Sendable (inout [String: JSONValue]) -> Void)
        -> @Sendable (inout [String: JSONValue]) -> Void
    {
        { snapshot in
            guard var screens = snapshot["screens"]?.arrayValue, var screen = screens[index].objectValue else { return }
            edit(&screen)
            screens[index] = .object(screen)
            snapshot["screens"] = .array(screens)
        }
    }

    static let corruptions: [Corruption] = [
        .init(name: "no schema") { $0["schema"] = nil },
        .init(name: "future schema") { $0["schema"] = 3 },
        .init(name: "schema as text") { $0["schema"] = "1" },
        .init(name: "no version") { $0["version"] = nil },
        .init(name: "version as text") { $0["version"] = "3" },
        .init(name: "no screen counter") { $0["screenCounter"] = nil },
        .init(name: "no event counter") { $0["eventCounter"] = nil },
        .init(name: "context not an object") { $0["context"] = [] },
        .init(name: "no screens") { $0["screens"] = nil },
        .init(name: "empty stage") { $0["screens"] = [] },
        .init(name: "screen not an object") { $0["screens"] = ["e1"] },
        .init(name: "screen without id", edit: editScreen(0) { $0["id"] = nil }),
        .init(name: "screen with numeric id", edit: editScreen(0) { $0["id"] = 1 }),
        .init(name: "unknown segue", edit: editScreen(1) { $0["segue"] = "?" }),
        .init(name: "unknown container", edit: editScreen(0) { $0["container"] = "stack" }),
        .init(name: "params not an object", edit: editScreen(0) { $0["params"] = [] }),
        .init(name: "param not a scalar", edit: editScreen(0) { $0["params"] = ["x": ["y"]] }),
        .init(name: "deps missing", edit: editScreen(0) { $0["deps"] = nil }),
        .init(name: "state not an object", edit: editScreen(0) { $0["state"] = 3 }),
        .init(name: "duplicate id", edit: editScreen(1) { $0["id"] = "e1" }),
        .init(name: "tab bar on a plain scene", edit: editScreen(0) { $0["tabs"] = ["selected": "friend", "saved": [:]] }),
        .init(name: "tabs scene without its tab bar", edit: editScreen(1) { $0["tabs"] = nil }),
        .init(name: "tab bar without selection", edit: editScreen(1) { $0["tabs"] = ["saved": [:]] }),
        .init(name: "saved tab not a list", edit: editScreen(1) { $0["tabs"] = ["selected": "profile", "saved": ["friend": "e3"]] }),
        .init(
            name: "duplicate id in a saved tab",
            edit: editScreen(1) { screen in
                screen["tabs"] = ["selected": "profile", "saved": ["friend": [.object(screen)]]]
            })
    ]

    @Test(arguments: corruptions)
    func malformedSnapshotIsAnError(_ corruption: Corruption) throws {
        let graph = try #require(Fixtures.news)
        let state = try Self.state(after: Self.journeys[3], graph: graph)
        var members = try #require((try JSONValue(parsing: state.snapshotBytes)).objectValue)
        corruption.edit(&members)
        #expect(throws: SnapshotError.self) { try SessionState(snapshot: .object(members), graph: graph) }
    }

    @Test(arguments: ["null", "[]", "\"snapshot\"", "{}", #"{"schema": 1}"#])
    func notASnapshotIsAnError(_ text: String) throws {
        let graph = try #require(Fixtures.news)
        #expect(throws: SnapshotError.self) { try SessionState(snapshot: try JSONValue(parsing: text), graph: graph) }
    }

    // MARK: Events

    @Test func eventsRoundTripThroughTheirWireShape() throws {
        let graph = try #require(Fixtures.news)
        let navigator = Navigator(graph: graph)
        let start = try navigator.start(context: Self.context)
        let outcome = try navigator.apply(.navigate("home#profile/help"), to: start.state)
        for event in start.events + outcome.events {
            let text = [event].jsonBytes.dropFirst().dropLast()
            #expect(LifecycleEvent(json: try JSONValue(parsing: Array(text))) == event)
        }
        #expect(
            try JSONValue(parsing: Array(start.events.prefix(1)).jsonBytes) == [
                ["seq": 1, "type": "transitionStart", "screen": nil, "scene": nil, "transition": 1, "from": "", "to": "/top"]
            ])
        #expect(LifecycleEvent(json: ["seq": 1, "type": "teleport", "transition": 1]) == nil)
        #expect(LifecycleEvent(json: ["type": "awake", "transition": 1]) == nil)
    }
}
