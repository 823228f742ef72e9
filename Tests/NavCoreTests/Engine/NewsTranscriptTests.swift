import NavCore
import NavJSON
import NavWire
import Testing

/// Every step of `news-transcripts.json`: the resulting path, the exact events, the top screen's
/// fields, and for refusals the code with no change at all.
@Suite struct NewsTranscriptTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let json: JSONValue
        var testDescription: String { json["name"]?.stringValue ?? "?" }
    }

    static let cases: [Case] = (Fixtures.json("news-transcripts.json")["cases"]?.arrayValue ?? []).map(Case.init)

    @Test func transcriptsAreLoaded() {
        #expect(Self.cases.count >= 10)
    }

    @Test(arguments: cases)
    func transcript(_ testCase: Case) throws {
        let navigator = Navigator(graph: try #require(Fixtures.news))
        var state = try navigator.start(context: testCase.json["context"]?.objectValue ?? [:]).state
        for (number, step) in (testCase.json["steps"]?.arrayValue ?? []).enumerated() {
            let intent = try Self.intent(step, state: state)
            let comment = Comment(rawValue: "step \(number + 1): \(step.jsonString)")
            if let code = step["error"]?.stringValue {
                do {
                    _ = try navigator.apply(intent, to: state)
                    Issue.record(Comment(rawValue: "expected \(code): \(comment.rawValue)"))
                } catch {
                    #expect(error.code.name == code, comment)
                    if let param = step["param"]?.stringValue { #expect(error.param == param, comment) }
                    if let offset = step["offset"]?.intValue { #expect(error.offset == offset, comment) }
                }
                continue
            }
            let outcome = try navigator.apply(intent, to: state)
            if let path = step["path"]?.stringValue {
                #expect(outcome.state.path.description == path, comment)
            }
            if let events = step["events"]?.arrayValue {
                let expected = events.map { pair in (pair.arrayValue ?? []).compactMap(\.stringValue) }
                let actual = outcome.events.map { event in
                    [event.type.rawValue] + (event.type == .transitionStart || event.type == .transitionEnd ? [] : [event.scene ?? ""])
                }
                #expect(actual == expected, comment)
                #expect(outcome.state.version == state.version + (events.isEmpty ? 0 : 1), comment)
            }
            if let top = step["top"]?.objectValue, let screen = outcome.state.top {
                for (field, value) in top {
                    #expect((try JSONValue(parsing: screen.wireBytes))[field] == value, comment)
                }
            }
            state = outcome.state
        }
    }

    static func intent(_ step: JSONValue, state: SessionState) throws -> Intent {
        if let path = step["navigate"]?.stringValue { return .navigate(path) }
        if let link = step["link"] {
            return .link(name: link["name"]?.stringValue ?? "", params: link["params"]?.objectValue ?? [:])
        }
        if let count = step["back"]?.intValue { return .back(count) }
        if step["exit"] != nil { return .exit() }
        if let params = step["setParams"]?.objectValue { return .setParams(screen: state.top?.id ?? "", params: params) }
        if let patch = step["patchState"] {
            let scene = patch["scene"]?.stringValue
            let screen = try #require(state.screens.last { $0.scene == scene })
            return .patchState(screen: screen.id, patch: patch["patch"] ?? .null)
        }
        throw TranscriptError.unknownStep(step.jsonString)
    }

    enum TranscriptError: Error { case unknownStep(String) }
}
