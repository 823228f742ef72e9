import NavCore
import NavJSON
import Testing

/// KabuKit's Sample1 (`Examples/kabukit.json`): A and B push each other with links `a` and `b`; the prev
/// button is `exitScene()`, which does nothing for a scene that is not removable.
@Suite struct KabuKitTests {
    func sample() throws -> TestSession {
        try TestSession(try #require(Fixtures.kabukit))
    }

    @Test func graphLoadsWithoutWarningsAndDocumentsItsModel() throws {
        let bytes = try #require(Fixtures.exampleBytes("kabukit.json"))
        let (graph, warnings) = try Graph.decode(json: bytes)
        #expect(warnings.isEmpty)
        #expect(graph.scenes.keys.sorted() == ["A", "A_root", "B"])
        for scene in graph.scenes.values {
            #expect(scene.links.keys.sorted() == ["a", "b"])
            #expect(scene.links["a"]?.template == "A")
            #expect(scene.links["b"]?.template == "B")
        }
        #expect(graph.scenes["A_root"]?.removable == false)
        #expect(graph.scenes["A"]?.removable == true)
        #expect(graph.scenes["B"]?.removable == true)
        let document = try JSONValue(parsing: bytes)
        #expect(document["description"]?.stringValue?.isEmpty == false)
        for name in ["A", "A_root", "B"] {
            #expect(document["scenes"]?[name]?["description"]?.stringValue?.isEmpty == false, "\(name)")
        }
    }

    @Test func sequenceStartsWithANonRemovableA() throws {
        let session = try sample()
        #expect(session.path == "/A_root")
        #expect(session.state.screens[0].container == .navigation)
        // `prevButton.isEnabled = argument`: false for the scene the sequence starts with.
        #expect(session.state.top?.state == ["prevEnabled": false])
    }

    @Test func pushABThenAAndExitBackDown() throws {
        var session = try sample()
        #expect(
            try session.apply(.link(name: "b", params: [:])) == [
                "transitionStart", "awake B", "willDisappear A_root", "willAppear B", "didDisappear A_root", "didAppear B",
                "transitionEnd"
            ])
        #expect(session.path == "/A_root/B")
        #expect(
            try session.apply(.link(name: "a", params: [:])) == [
                "transitionStart", "awake A", "willDisappear B", "willAppear A", "didDisappear B", "didAppear A", "transitionEnd"
            ])
        #expect(session.path == "/A_root/B/A")
        #expect(session.state.top?.state == ["prevEnabled": true])
        #expect(session.state.screens.map(\.id) == ["e1", "e2", "e3"])

        // A pushed by link A has argument true: removable, so exitScene pops it (onRemove).
        #expect(
            try session.apply(.exit()) == [
                "transitionStart", "willDisappear A", "willAppear B", "didDisappear A", "didAppear B", "remove A", "transitionEnd"
            ])
        #expect(session.path == "/A_root/B")
        try session.apply(.exit())
        #expect(session.path == "/A_root")
        #expect(session.log.filter { $0.type == .remove }.map(\.screen) == ["e3", "e2"])
    }

    @Test func linksPushOnEveryScene() throws {
        var session = try sample()
        for name in ["a", "a", "b", "b", "a"] {
            try session.apply(.link(name: name, params: [:]))
        }
        #expect(session.path == "/A_root/A/A/B/B/A")
        try session.apply(.back(5))
        #expect(session.path == "/A_root")
        session.refuse(.link(name: "c", params: [:]), .unknownTransition)
        session.refuse(.link(name: "a", params: ["argument": true]), .invalidParams)
    }

    @Test func exitIsRefusedWhenNotRemovable() throws {
        var session = try sample()
        // The root: nothing to go back to, and A_root is not removable either way.
        session.refuse(.exit(), .stackUnderflow)
        // Replacing the root would remove it.
        let replaced = session.refuse(.navigate("^/B"), .notRemovable)
        #expect(replaced?.message.contains("A_root") == true)

        // A Sample1A created with argument false anywhere on the stack refuses exitScene.
        try session.apply(.link(name: "b", params: [:]))
        try session.navigate("A_root")
        #expect(session.path == "/A_root/B/A_root")
        let before = session.state
        session.refuse(.exit(), .notRemovable)
        session.refuse(.back(1), .notRemovable)
        session.refuse(.navigate(".."), .notRemovable)
        #expect(session.state == before)
        // What is pushed on top of it can still leave.
        try session.apply(.link(name: "a", params: [:]))
        try session.apply(.exit())
        #expect(session.path == "/A_root/B/A_root")
    }

    /// KabuKit's Scenario returns a value to the scene that started it: here B, pushed by A, exits
    /// with a result that A (revealed) receives right before the transition ends (docs/design.md, "Results").
    @Test func exitSceneHandsAResultToTheSceneUnder() throws {
        var session = try sample()
        try session.apply(.link(name: "a", params: [:]))
        try session.apply(.link(name: "b", params: [:]))
        let revealed = try #require(session.screen("A")?.id)
        #expect(
            try session.apply(.exit(result: ["picked": "b1"])) == [
                "transitionStart", "willDisappear B", "willAppear A", "didDisappear B", "didAppear A", "remove B", "result A",
                "transitionEnd"
            ])
        let result = try #require(session.log.dropLast().last)
        #expect(result.screen == revealed && result.from == "B" && result.detail == .value(["picked": "b1"]))
        // A refused exitScene hands nothing over: A_root is not removable.
        try session.apply(.back(1))
        session.refuse(.exit(result: 1), .stackUnderflow)
    }
}
