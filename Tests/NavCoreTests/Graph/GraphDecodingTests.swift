import NavCore
import NavJSON
import Testing

/// Graph documents: every problem is found, named by a stable code and located by a JSON pointer.
@Suite struct GraphDecodingTests {
    /// Every issue a document produces, errors first: from a `GraphError`, or the warnings of a graph that loads.
    static func issues(_ document: String) -> [GraphIssue] {
        do {
            return try Graph.decode(json: Array(document.utf8)).warnings
        } catch {
            return error.issues
        }
    }

    /// A small document that triggers exactly one issue.
    struct Case: CustomTestStringConvertible, Sendable {
        let code: GraphIssue.Code
        let pointer: String
        let document: String
        var testDescription: String { "\(code.name) at \(pointer.isEmpty ? "(root)" : pointer)" }
    }

    static let cases: [Case] = [
        .init(code: .invalidJSON, pointer: "", document: #"{"name": "g", "start": "/a","#),
        .init(code: .invalidJSON, pointer: "", document: #"{"name": "g", "name": "h", "start": "/a", "scenes": {"a": {}}}"#),
        .init(code: .invalidType, pointer: "", document: #"["not", "an", "object"]"#),
        .init(code: .invalidType, pointer: "/name", document: #"{"name": 7, "start": "/a", "scenes": {"a": {}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/removable",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"removable": "yes"}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/container",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"container": "stack"}}}"#),
        .init(code: .invalidType, pointer: "/scenes/a/state", document: #"{"name": "g", "start": "/a", "scenes": {"a": {"state": [1]}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/inject/1",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"inject": ["user", 2]}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/requires",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"requires": "user"}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/links/go",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"links": {"go": "a"}}}}"#),
        .init(code: .invalidType, pointer: "/links", document: #"{"name": "g", "start": "/a", "scenes": {"a": {}}, "links": []}"#),
        .init(
            code: .invalidType, pointer: "/description", document: #"{"name": "g", "description": 1, "start": "/a", "scenes": {"a": {}}}"#),
        .init(code: .invalidType, pointer: "/version", document: #"{"name": "g", "version": "2", "start": "/a", "scenes": {"a": {}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/description",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"description": null}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/params/q/description",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"q": {"description": []}}}}}"#),
        .init(
            code: .invalidType, pointer: "/links/home/description",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {}}, "links": {"home": {"path": "^/a", "description": {}}}}"#),
        .init(code: .missingField, pointer: "/start", document: #"{"name": "g", "scenes": {"a": {}}}"#),
        .init(code: .missingField, pointer: "/name", document: #"{"start": "/a", "scenes": {"a": {}}}"#),
        .init(code: .unknownField, pointer: "/colour", document: #"{"name": "g", "start": "/a", "scenes": {"a": {}}, "colour": "red"}"#),
        .init(
            code: .unknownField, pointer: "/scenes/a/colour", document: #"{"name": "g", "start": "/a", "scenes": {"a": {"colour": "red"}}}"#
        ),
        .init(
            code: .unknownField, pointer: "/scenes/a/params/id/min",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"id": {"type": "int", "min": 0}}}}}"#),
        .init(
            code: .unknownField, pointer: "/links/home/method",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {}}, "links": {"home": {"path": "^/a", "method": "GET"}}}"#),
        .init(code: .invalidName, pointer: "/name", document: #"{"name": "my graph", "start": "/a", "scenes": {"a": {}}}"#),
        .init(
            code: .invalidName, pointer: "/scenes/a/params/b c",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"b c": {}}}}}"#),
        .init(
            code: .invalidName, pointer: "/scenes/a/links/go now",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"links": {"go now": {"path": "a"}}}}}"#),
        .init(code: .reservedName, pointer: "/scenes/up", document: #"{"name": "g", "start": "/up", "scenes": {"up": {}}}"#),
        .init(
            code: .unknownScene, pointer: "/scenes/a/links/go/path",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"links": {"go": {"path": "nosuch"}}}}}"#),
        .init(
            code: .unknownScene, pointer: "/scenes/t/tabs/1",
            document: #"{"name": "g", "start": "/t", "scenes": {"t": {"container": "tabs", "tabs": ["x", "nosuch"]}, "x": {}}}"#),
        .init(
            code: .unknownScene, pointer: "/links/go/path",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {}}, "links": {"go": {"path": "^/a!nosuch"}}}"#),
        .init(
            code: .invalidTemplate, pointer: "/scenes/a/links/show/path",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"links": {"show": {"path": "a(id={id)"}}}}}"#),
        .init(
            code: .invalidTemplate, pointer: "/scenes/a/links/show/path",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"links": {"show": {"path": "a(id={a b})"}}}}}"#),
        .init(
            code: .invalidTemplate, pointer: "/scenes/a/links/show/path",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"links": {"show": {"path": "a/../a(id={id})"}}}}}"#),
        .init(
            code: .invalidTemplate, pointer: "/links/show/path",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {}}, "links": {"show": {"path": "a(id={id}"}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "/nosuch", "scenes": {"a": {}}, "links": {"home": {"path": "^/a"}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "/a(", "scenes": {"a": {}}, "links": {"home": {"path": "^/a"}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "../a", "scenes": {"a": {}}, "links": {"home": {"path": "^/a"}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "up(n=2)", "scenes": {"a": {}}, "links": {"home": {"path": "^/a"}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "^", "scenes": {"a": {}}, "links": {"home": {"path": "^/a"}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "/a(id=x)", "scenes": {"a": {"params": {"id": {"type": "int"}}}}}"#),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params/id/type",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"id": {"type": "integer"}}}}}"#),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params/id/default",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"id": {"type": "int", "default": "x"}}}}}"#),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params/id/default",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"id": {"type": "int", "default": 1.5}}}}}"#),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params/id/default",
            document:
                #"{"name": "g", "start": "/a(id=1)", "scenes": {"a": {"params": {"id": {"type": "int", "required": true, "default": 1}}}}}"#
        ),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params/id/required",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"id": {"type": "int", "required": "yes"}}}}}"#),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params/id",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": {"id": "int"}}}}"#),
        .init(
            code: .invalidParamSchema, pointer: "/scenes/a/params",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"params": ["id"]}}}"#),
        .init(
            code: .invalidTabs, pointer: "/scenes/t/tabs",
            document: #"{"name": "g", "start": "/t", "scenes": {"t": {"container": "tabs", "tabs": []}}}"#),
        .init(
            code: .invalidTabs, pointer: "/scenes/t/tabs",
            document: #"{"name": "g", "start": "/t", "scenes": {"t": {"container": "tabs"}}}"#),
        .init(
            code: .invalidTabs, pointer: "/scenes/t/tabs/1",
            document: #"{"name": "g", "start": "/t", "scenes": {"t": {"container": "tabs", "tabs": ["x", "x"]}, "x": {}}}"#),
        .init(code: .invalidTabs, pointer: "/scenes/a/tabs", document: #"{"name": "g", "start": "/a", "scenes": {"a": {"tabs": ["a"]}}}"#),
        // docs/design.md, "Flows": redirects, leave confirmations and commands.
        .init(
            code: .invalidType, pointer: "/scenes/a/redirect",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"requires": ["u"], "redirect": 1}}}"#),
        .init(
            code: .invalidRedirect, pointer: "/scenes/a/redirect",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"requires": ["u"], "redirect": "b("}, "b": {}}}"#),
        .init(
            code: .unknownScene, pointer: "/scenes/a/redirect",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"requires": ["u"], "redirect": "!nosuch"}}}"#),
        .init(
            code: .redirectCycle, pointer: "/scenes/a/redirect",
            document: #"{"name": "g", "start": "/c", "scenes": {"a": {"requires": ["u"], "redirect": "/c/a"}, "c": {}}}"#),
        .init(
            code: .invalidPointer, pointer: "/scenes/a/confirmLeave",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"confirmLeave": "dirty"}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/confirmLeave",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"confirmLeave": 1}}}"#),
        .init(
            code: .invalidPointer, pointer: "/scenes/a/commands/go/when/mode",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"commands": {"go": {"when": {"mode": ["x"]}}}}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/commands/go/when/~1mode",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"commands": {"go": {"when": {"/mode": []}}}}}}"#),
        .init(
            code: .invalidType, pointer: "/scenes/a/commands/go/patch",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"commands": {"go": {"patch": [1]}}}}}"#),
        .init(
            code: .invalidTemplate, pointer: "/scenes/a/commands/go/navigate",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"commands": {"go": {"navigate": "a/../b"}}}}}"#),
        .init(
            code: .unknownScene, pointer: "/scenes/a/commands/go/navigate",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"commands": {"go": {"navigate": "!nosuch"}}}}}"#),
        .init(
            code: .unknownField, pointer: "/scenes/a/commands/go/then",
            document: #"{"name": "g", "start": "/a", "scenes": {"a": {"commands": {"go": {"then": "a"}}}}}"#),
        // docs/design.md, "Graphs": bounds of a document, its start path and its name.
        .init(
            code: .invalidName, pointer: "/name",
            document: #"{"name": "\#(String(repeating: "n", count: 65))", "start": "/a", "scenes": {"a": {}}}"#),
        .init(
            code: .invalidStart, pointer: "/start",
            document: #"{"name": "g", "start": "\#(String(repeating: "/a", count: 33))", "scenes": {"a": {}}}"#),
        .init(
            code: .tooLarge, pointer: "/scenes",
            document: #"{"name": "g", "start": "/s0", "scenes": {"# + (0...10_000).map { #""s\#($0)": {}"# }.joined(separator: ", ") + "}}"
        )
    ]

    @Test func everyCodeHasACase() {
        #expect(Set(Self.cases.map(\.code)) == Set(GraphIssue.Code.allCases))
    }

    @Test(arguments: cases)
    func exactlyOneIssue(_ testCase: Case) {
        let found = Self.issues(testCase.document)
        #expect(found.map(\.code) == [testCase.code], "\(found)")
        #expect(found.map(\.pointer) == [testCase.pointer], "\(found)")
        #expect(found.allSatisfy { !$0.message.isEmpty })
    }

    @Test func aRedirectCycleNamesEverySceneInIt() {
        let found = Self.issues(
            #"{"name": "g", "start": "/c", "scenes": {"a": {"requires": ["u"], "redirect": "b"}, "b": {"requires": ["v"], "redirect": "!a"}, "c": {"requires": ["w"], "redirect": "help"}, "help": {}}}"#
        )
        #expect(found.map(\.code) == [.redirectCycle, .redirectCycle])
        #expect(found.map(\.pointer) == ["/scenes/a/redirect", "/scenes/b/redirect"])
    }

    @Test func aRedirectWithoutRequirementsIsAWarning() {
        let found = Self.issues(#"{"name": "g", "start": "/a", "scenes": {"a": {"redirect": "b"}, "b": {}}}"#)
        #expect(found.map(\.code) == [.invalidRedirect])
        #expect(found.map(\.severity) == [.warning])
    }

    @Test func everyIssueIsAnError() {
        for testCase in Self.cases {
            #expect(Self.issues(testCase.document).map(\.severity) == [.error], "\(testCase.testDescription)")
        }
    }

    /// Any scene can be reached by a deep path, so a scene that no start path, link or tab leads
    /// to is not a likely mistake and is not warned about (docs/design.md, "Graph documents").
    @Test func aSceneNothingLeadsToIsNotWarnedAbout() throws {
        let (graph, warnings) = try Graph.decode(
            json: Array(#"{"name": "g", "start": "/a", "scenes": {"a": {}, "b": {}, "c": {"container": "tabs", "tabs": ["b"]}}}"#.utf8))
        #expect(graph.scenes.keys.sorted() == ["a", "b", "c"])
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test func severalProblemsAreReportedAtOnce() throws {
        let document = #"""
            {"name": "g", "start": "/a(", "colour": "red",
             "scenes": {
               "a": {"removable": "yes", "params": {"id": {"type": "integer"}},
                     "links": {"go": {"path": "nosuch"}, "bad": {"path": "a(id={id)"}}},
               "up": {},
               "t": {"container": "tabs", "tabs": []},
               "lost": {}
             }}
            """#
        let error = #expect(throws: GraphError.self) { try Graph.decode(json: Array(document.utf8)) }
        let found = Set((error?.issues ?? []).map { "\($0.code.name) \($0.pointer)" })
        #expect(
            found == [
                "unknown_field /colour",
                "invalid_type /scenes/a/removable",
                "invalid_param_schema /scenes/a/params/id/type",
                "unknown_scene /scenes/a/links/go/path",
                "invalid_template /scenes/a/links/bad/path",
                "reserved_name /scenes/up",
                "invalid_tabs /scenes/t/tabs",
                "invalid_start /start"
            ])
        #expect((error?.issues ?? []).allSatisfy { $0.severity == .error })
        #expect(error?.description.split(separator: "\n").count == error?.issues.count)
    }

    @Test func pointersEscapeSlashAndTilde() {
        let found = Self.issues(#"{"name": "g", "start": "/a", "scenes": {"a": {}, "b/c~d": {}}}"#)
        #expect(found.contains { $0.code == .invalidName && $0.pointer == "/scenes/b~1c~0d" })
    }

    @Test func descriptionsAreAllowedAtTopLevelSceneParamAndLink() throws {
        let document = #"""
            {"name": "g", "description": "a graph", "start": "/a",
             "scenes": {"a": {"description": "the root", "params": {"q": {"type": "string", "description": "query"}},
                              "links": {"self": {"path": "a", "description": "again"}}}}}
            """#
        let (graph, warnings) = try Graph.decode(json: Array(document.utf8))
        #expect(warnings.isEmpty)
        #expect(graph.scenes["a"]?.links["self"]?.template == "a")
    }

    @Test func decodedSceneFields() throws {
        let document = #"""
            {"name": "g", "start": "/t",
             "scenes": {"t": {"container": "tabs", "tabs": ["q", "p"]},
                        "p": {"params": {"id": {"type": "int", "required": true}, "n": {"type": "number", "default": 1.5},
                                         "b": {"type": "bool", "default": false}, "s": {}},
                              "removable": false, "inject": ["user"], "requires": ["user"], "state": {"k": [1]}},
                        "q": {}}}
            """#
        let (graph, _) = try Graph.decode(json: Array(document.utf8))
        let p = try #require(graph.scenes["p"])
        #expect(graph.scenes["t"]?.tabs == ["q", "p"])
        #expect(
            p.params == [
                "id": ParamSpec(type: .int, required: true),
                "n": ParamSpec(type: .number, defaultValue: .number(1.5)),
                "b": ParamSpec(type: .bool, defaultValue: .bool(false)),
                "s": ParamSpec(type: .string)
            ])
        #expect(p.removable == false)
        #expect(p.inject == ["user"])
        #expect(p.requires == ["user"])
        #expect(p.state == ["k": [1]])
        #expect(graph.scenes["q"]?.params == nil)
        #expect(graph.scenes["q"]?.removable == true)
    }

    // MARK: The example graphs

    /// The graphs shipped in `Examples/` load without warnings (news.json is DeepTransition's
    /// sample: its tab bar and their screens are reached only by deep links, which is no mistake).
    static let examples: [(file: String, warnings: [String])] = [("news.json", []), ("kabukit.json", []), ("stopwatch.json", [])]

    @Test(arguments: examples.map(\.file))
    func exampleGraphLoads(_ file: String) throws {
        let data = try #require(Fixtures.exampleBytes(file))
        let (graph, warnings) = try Graph.decode(json: data)
        #expect(warnings.map(\.pointer) == Self.examples.first { $0.file == file }?.warnings)
        #expect(!graph.scenes.isEmpty)
    }

    /// The example is the conformance fixture, every scene and link as it is there, plus the
    /// scenes that show the flows (docs/design.md, "Flows") (a redirect, a leave confirmation, a picker).
    @Test func fixtureNewsIsTheExampleWithTheFlowScenes() throws {
        let example = try JSONValue(parsing: try #require(Fixtures.exampleBytes("news.json")))
        let fixture = Fixtures.json("news.json")
        var members = try #require(example.objectValue)
        var scenes = try #require(members["scenes"]?.objectValue)
        #expect(
            Set(scenes.keys).subtracting(fixture["scenes"]?.objectValue?.keys ?? [:].keys) == ["edit_profile", "pick_category", "settings"])
        for added in ["edit_profile", "pick_category", "settings"] { scenes[added] = nil }
        members["scenes"] = .object(scenes)
        #expect(JSONValue.object(members) == fixture)
    }
}
