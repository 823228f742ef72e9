import NavJSON
import NavSnapshot
import NavWire
import PropertyBased
import Testing

@testable import NavCore

/// Parameter keys and values from every entry point keep the stage printable: the stage's path
/// text parses back to the same stage (docs/design.md, "Paths").
@Suite struct ParamKeyTests {
    /// `free` has no params schema (any key goes, if the grammar can print it); `typed` has one;
    /// links put a client's value in a param's place, a key's and a name's (the validator fills placeholders
    /// with `0` to check a template, so a name's place needs a scene `0`).
    static let graph: Result<Graph, GraphError> = Result { () throws(GraphError) in
        try Graph.decode(
            json: Array(
                """
                {"name": "keys", "start": "/top/free",
                 "scenes": {"top": {}, "free": {}, "0": {}, "typed": {"params": {"id": {"type": "int"}, "q": {"type": "string"}}}},
                 "links": {"show": {"path": "typed(id=1,q={q})"}, "free": {"path": "free(k={v})"}, "named": {"path": "{scene}"},
                           "keyed": {"path": "free({k}=1)"}}}
                """.utf8)
        ).graph
    }

    static func start() throws -> (Navigator, SessionState) {
        let navigator = Navigator(graph: try graph.get())
        return (navigator, try navigator.start().state)
    }

    /// Every ASCII character, and a few beyond.
    static let pool: [Character] = (0..<128).map { Character(Unicode.Scalar(UInt8($0))) } + ["é", "日", "\u{85}"]

    static func text(_ count: ClosedRange<Int>) -> Generator<String, Shrink.None<String>> {
        Generator { rng in
            String((0..<Int.random(in: count, using: &rng)).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] })
        }
    }

    /// Keys drawn mostly from every character, some from name characters only, so both answers are common.
    static let key = Generator<String, Shrink.None<String>> { rng in
        let names = Array("abz_.-09AZ")
        let count = Int.random(in: 1...4, using: &rng)
        if Bool.random(using: &rng) {
            return String((0..<count).map { _ in names[Int.random(in: 0..<names.count, using: &rng)] })
        }
        return String((0..<count).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] })
    }

    static let params = zip(key, text(0...6)).array(of: 1...3)
        .map { pairs in Dictionary(pairs, uniquingKeysWith: { first, _ in first }).mapValues(JSONValue.string) }

    /// What a user relies on: the printed path reads back as the stage, and navigating to it changes nothing.
    static func expectRoundTrip(_ state: SessionState, navigator: Navigator, _ comment: Comment) throws {
        let text = state.pathText
        let parsed = try Path.parse(text)
        #expect(parsed == state.path, comment)
        #expect(parsed.description == text, comment)
        let again = try navigator.apply(.navigate("^" + text), to: state)
        #expect(!again.changed, comment)
    }

    @Test func theReportedKeysAreRefusedAndNamed() throws {
        let (navigator, state) = try Self.start()
        let top = try #require(state.top)
        let reported = #expect(throws: NavError.self) {
            try navigator.apply(.setParams(screen: top.id, params: ["a)/evil(x": "1", "k=v,z": "2"]), to: state)
        }
        #expect(reported?.code == .invalidParams)
        #expect(reported?.param == "a)/evil(x")
        for key in [";d", "", ".", "..", "a b", "k=v", "é", "a/b", "x!", "#t", "^"] {
            let error = #expect(throws: NavError.self, "\(key)") {
                try navigator.apply(.setParams(screen: top.id, params: [key: "5"]), to: state)
            }
            #expect(error?.code == .invalidParams, "\(key)")
            #expect(error?.param == key, "\(key)")
        }
        // Good keys with values holding every delimiter are kept, and printed so that they read back.
        let outcome = try navigator.apply(.setParams(screen: top.id, params: ["a.b-c_9": ",)(%=/!#^ é\u{1}"]), to: state)
        try Self.expectRoundTrip(outcome.state, navigator: navigator, "")
    }

    @Test func paramsChangesKeepTheStagePrintable() async throws {
        let (navigator, start) = try Self.start()
        var outcomes = (accepted: 0, refused: 0)
        await propertyCheck(count: 2_000, input: Self.params) { (params: [String: JSONValue]) throws in
            let comment = Comment(rawValue: JSONValue.object(params).jsonString)
            let before = start.snapshotBytes
            do {
                let outcome = try navigator.apply(.setParams(screen: try #require(start.top).id, params: params), to: start)
                outcomes.accepted += 1
                #expect(params.keys.allSatisfy { $0.isValidPathName }, comment)
                try Self.expectRoundTrip(outcome.state, navigator: navigator, comment)
                // A later transition starts from the printed text, which still reads back.
                let next = try navigator.apply(.navigate("typed(id=2)"), to: outcome.state)
                let from = try #require(next.events.first?.from)
                #expect(try Path.parse(from) == outcome.state.path, comment)
            } catch let error as NavError {
                outcomes.refused += 1
                #expect(error.code == .invalidParams, comment)
                #expect(error.param.map { !$0.isValidPathName } == true, comment)
                #expect(start.snapshotBytes == before, comment)
            }
        }
        #expect(outcomes.accepted > 100 && outcomes.refused > 100, "\(outcomes)")
    }

    @Test func linkValuesStayOneValue() async throws {
        let (navigator, start) = try Self.start()
        await propertyCheck(count: 1_000, input: Self.text(0...8)) { (value: String) throws in
            let comment = Comment(rawValue: String(reflecting: value))
            let shown = try navigator.apply(.link(name: "free", params: ["v": .string(value)]), to: start)
            #expect(shown.state.top?.params["k"] == .string(value), comment)
            #expect(shown.state.screens.count == start.screens.count + (shown.changed ? 1 : 0), comment)
            try Self.expectRoundTrip(shown.state, navigator: navigator, comment)
            let typed = try navigator.apply(.link(name: "show", params: ["q": .string(value)]), to: start)
            #expect(typed.state.top?.params["q"] == .string(value), comment)
            try Self.expectRoundTrip(typed.state, navigator: navigator, comment)
        }
    }

    @Test func aValueInANamesPlaceNamesOneSceneOrIsRefused() async throws {
        let (navigator, start) = try Self.start()
        let pieces = ["typed", "free", "top", ".", "..", "/", "!", "#", "^", "(", ")", "=", ",", "%", "up", "up", "n=2", "a", " "]
        let value = Generator<String, Shrink.None<String>> { rng in
            (0..<Int.random(in: 1...4, using: &rng)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)] }.joined()
        }
        await propertyCheck(count: 1_000, input: value) { (value: String) throws in
            do {
                let outcome = try navigator.apply(.link(name: "named", params: ["scene": .string(value)]), to: start)
                // Only a name of the graph, pushed as one screen, with nothing else.
                #expect(["typed", "free", "top"].contains(value), "\(value) led to \(outcome.state.pathText)")
                #expect(outcome.state.screens.count == start.screens.count + 1, "\(value)")
                #expect(outcome.state.top?.scene == value && outcome.state.top?.params.count ?? 0 <= 1, "\(value)")
            } catch let error as NavError {
                #expect([NavError.Code.invalidPath, .unknownScene].contains(error.code), "\(value): \(error)")
            }
        }
    }

    @Test(arguments: ["typed/free", "..", ".", "free!typed", "typed#x", "top(a=1)", "free(k=1)/typed", "%2E%2E", "^/top", "up"])
    func aValueInANamesPlaceIsOneNameOrRefused(_ value: String) throws {
        let (navigator, start) = try Self.start()
        do {
            let outcome = try navigator.apply(.link(name: "named", params: ["scene": .string(value)]), to: start)
            Issue.record("\(value) led to \(outcome.state.pathText)")
        } catch {
            #expect([NavError.Code.invalidPath, .unknownScene].contains(error.code), "\(value): \(error)")
        }
        #expect(throws: NavError.self) {
            try navigator.apply(.link(name: "keyed", params: ["k": .string(value)]), to: start)
        }
        // A plain name still works in both places.
        #expect(try navigator.apply(.link(name: "named", params: ["scene": "typed"]), to: start).state.top?.scene == "typed")
        #expect(try navigator.apply(.link(name: "keyed", params: ["k": "a.b"]), to: start).state.top?.params["a.b"] == .string("1"))
    }

    @Test func aSnapshotWithAKeyTheGrammarCannotPrintIsRefused() throws {
        let (navigator, start) = try Self.start()
        let top = try #require(start.top)
        let good = try navigator.apply(.setParams(screen: top.id, params: ["k": "v"]), to: start).state
        var text = String(decoding: good.snapshotBytes, as: UTF8.self)
        let restored = try SessionState(snapshot: JSONValue(parsing: text), graph: navigator.graph)
        #expect(restored == good)
        text = text.replacing(#"{"k":"v"}"#, with: #"{"a)/evil(x":"v"}"#)
        #expect(text != String(decoding: good.snapshotBytes, as: UTF8.self))
        #expect(throws: SnapshotError.self) { try SessionState(snapshot: JSONValue(parsing: text), graph: navigator.graph) }
    }
}
