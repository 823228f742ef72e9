import NavCore
import NavJSON
import Testing

/// Every vector of DeepTransition's own test suite (`deeptransition-paths.jsonl`) is a test.
@Suite struct PathConformanceTests {
    struct Vector: CustomTestStringConvertible, Sendable {
        let line: Int
        let json: JSONValue
        var testDescription: String { "line \(line): \(json["op"]?.stringValue ?? "") \(json["input"]?.stringValue ?? json["from"]?.stringValue ?? json["append"]?.stringValue ?? "")" }
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
