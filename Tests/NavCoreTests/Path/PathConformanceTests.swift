import NavJSON
import Testing

@testable import NavCore

/// Every vector of DeepTransition's own test suite (`deeptransition-paths.jsonl`) is a test.
///
/// `Path.resolving(_:)` and `Path.diff(from:to:)` are written on the rules a navigation runs
/// (`ParsedExpression.resolved(on:rebuild:)`, `StageDiff`), and the resolve and diff vectors are
/// also run through the engine itself: its resolve over a stage's screens, and whole navigations.
@Suite struct PathConformanceTests {
    struct Vector: CustomTestStringConvertible, Sendable {
        let line: Int
        let json: JSONValue
        var testDescription: String {
            "line \(line): \(json["op"]?.stringValue ?? "") \(json["input"]?.stringValue ?? json["from"]?.stringValue ?? json["append"]?.stringValue ?? "")"
        }
    }

    static let vectors: [Vector] = Fixtures.jsonLines("deeptransition-paths.jsonl").enumerated().map {
        Vector(line: $0.offset + 1, json: $0.element)
    }

    @Test func allSixtyNineVectorsAreLoaded() {
        #expect(Self.vectors.count == 69)
    }

    @Test(arguments: vectors)
    func vector(_ vector: Vector) throws {
        let json = vector.json
        switch json["op"]?.stringValue {
        case "parse":
            let path = try Path.parse(try #require(json["input"]?.stringValue))
            #expect(path.description == json["canonical"]?.stringValue)
            let expected = try #require(json["components"]?.arrayValue)
            #expect(path.components.count == expected.count)
            for (component, want) in zip(path.components, expected) {
                #expect(component.name == want["id"]?.stringValue)
                #expect(component.segue.rawValue == want["segue"]?.stringValue)
                #expect((component.container == .navigation ? "Navigation" : "None") == want["container"]?.stringValue)
                #expect(JSONValue.object(component.params.mapValues(JSONValue.string)) == want["params"])
            }
            #expect(Self.tokens(path) == json["tokens"]?.stringValue)
            #expect(try Path.parse(path.description) == path)
        case "resolve":
            let base = try Path.parse(try #require(json["base"]?.stringValue))
            let expression = try PathExpression.parse(try #require(json["input"]?.stringValue))
            let resolved = base.resolving(expression)
            #expect(resolved.description == json["expected"]?.stringValue)
            #expect(resolved.description == json["canonical"]?.stringValue)
        case "diff":
            let from = try Path.parse(try #require(json["from"]?.stringValue))
            let to = try Path.parse(try #require(json["to"]?.stringValue))
            let diff = Path.diff(from: from, to: to)
            #expect(diff.common.description == json["common"]?.stringValue)
            #expect(JSONValue.array(diff.remove.map { .string($0.description) }) == json["remove"])
            #expect(JSONValue.array(diff.add.map { .string($0.description) }) == json["add"])
        case "append":
            let base = try Path.parse(try #require(json["base"]?.stringValue))
            let appended = try Path.parse(try #require(json["append"]?.stringValue))
            #expect(base.appending(appended).description == json["expected"]?.stringValue)
        default:
            Issue.record("unknown op in line \(vector.line)")
        }
    }

    static let resolveVectors = vectors.filter { $0.json["op"]?.stringValue == "resolve" }
    static let diffVectors = vectors.filter { $0.json["op"]?.stringValue == "diff" }

    @Test func theEngineVectorsAreAllThere() {
        #expect(Self.resolveVectors.count == 47)
        #expect(Self.diffVectors.count == 5)
    }

    /// The resolve vectors through the engine's own resolve (`Navigator.resolve(_:on:)`): the
    /// expression parsed as a navigation parses it, resolved against screens showing the base path.
    @Test(arguments: resolveVectors)
    func resolveVectorOnTheEngine(_ vector: Vector) throws {
        let json = vector.json
        let base = try Path.parse(try #require(json["base"]?.stringValue))
        let screens = Self.screens(showing: base)
        let text = try #require(json["input"]?.stringValue)
        let expression = try PathParser<TextComponent>.with(text) { (parser) throws(PathError) in try parser.parseExpression() }
        let navigator = Navigator(graph: Graph(name: "conformance", start: "/a", scenes: [:]))
        let resolved = Path(
            navigator.resolve(expression, on: screens).map { source in
                switch source {
                case .kept(let index): screens[index].component
                case .component(let component): component.pathComponent
                }
            }
        )
        #expect(resolved.description == json["expected"]?.stringValue)
    }

    /// The diff vectors as navigations from `from` to `^to` on a graph of their scenes: the screens
    /// kept are the common prefix, the screens removed (top first) are `remove` in reverse, the
    /// screens created are `add`.
    @Test(arguments: diffVectors)
    func diffVectorAsANavigation(_ vector: Vector) throws {
        let json = vector.json
        let from = try Path.parse(try #require(json["from"]?.stringValue))
        let to = try Path.parse(try #require(json["to"]?.stringValue))
        let navigator = Navigator(graph: Self.graph(of: [from, to]))
        var before = SessionState()
        if !from.isEmpty {
            before = try navigator.apply(.navigate("^" + from.description), to: before).state
        }
        #expect(before.path == from)
        let outcome = try navigator.apply(.navigate("^" + to.description), to: before)
        let after = outcome.state
        #expect(after.path == to)
        let removed = outcome.events.filter { $0.type == .remove }.compactMap { event in
            before.screens.first { $0.id == event.screen }
        }
        let created = outcome.events.filter { $0.type == .awake }.compactMap { event in
            after.screens.first { $0.id == event.screen }
        }
        let kept = Array(after.screens.dropLast(created.count))
        #expect(kept == Array(before.screens.prefix(kept.count)))
        #expect(Path(kept.map(\.component)).description == json["common"]?.stringValue)
        #expect(JSONValue.array(removed.reversed().map { .string($0.component.description) }) == json["remove"])
        #expect(JSONValue.array(created.map { .string($0.component.description) }) == json["add"])
    }

    /// Screens showing `path`, as a stage would hold them (params as strings, as on a scene without a schema).
    static func screens(showing path: Path) -> [Screen] {
        path.components.enumerated().map { position, component in
            Screen(
                id: "e\(position + 1)", scene: component.name, segue: component.segue, container: component.container,
                params: ScreenParams(component.params.mapValues(ParamValue.string))
            )
        }
    }

    /// A graph with a scene, without a params schema, for every name in `paths`; a scene followed
    /// by a tab (`#`) is a tab bar of the tabs that follow it.
    static func graph(of paths: [Path]) -> Graph {
        var tabs: [String: [String]] = [:]
        var names: [String] = []
        for path in paths {
            for (position, component) in path.components.enumerated() {
                if !names.contains(component.name) { names.append(component.name) }
                guard position > 0, component.segue == .tab else { continue }
                let bar = path.components[position - 1].name
                if !(tabs[bar] ?? []).contains(component.name) { tabs[bar, default: []].append(component.name) }
            }
        }
        var scenes: [String: Scene] = [:]
        for name in names {
            scenes[name] = Scene(name: name, kind: tabs[name].map(Scene.Kind.tabs) ?? .screen)
        }
        return Graph(name: "conformance", start: "/" + (names.first ?? ""), scenes: scenes)
    }

    /// DeepTransition's token stream, rebuilt from the parsed structure.
    static func tokens(_ path: Path) -> String {
        var tokens: [String] = []
        for component in path.components {
            tokens.append(component.segue.rawValue)
            if component.container == .navigation, component.segue != .push { tokens.append("/") }
            tokens.append("VC(\(component.name))")
            for key in component.params.keys.sorted() {
                tokens.append("Key(\(key))")
                tokens.append("Val(\(component.params[key] ?? ""))")
            }
        }
        tokens.append("$")
        return tokens.joined(separator: " ")
    }
}
